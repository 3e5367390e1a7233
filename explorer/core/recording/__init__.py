"""Recording a user's own training run, in the TensorBoard way: the training
loop writes a log directory, the app (``--watch``) and ``runs`` read it,
live or afterwards. No Qt here.

Writing: :class:`~explorer.core.recording.recorder.EmbeddingRecorder` in a
plain loop (``recorder.step()`` after ``optimizer.step()``), or
:class:`~explorer.core.recording.trainer_callback.TrainerCallback` in
``transformers.Trainer`` (imported lazily: it imports transformers).
Reading: :mod:`explorer.core.recording.reader`; the charts' metrics:
:mod:`explorer.core.recording.metrics`.

The log directory
-----------------
``run.json``
    The header, written once (atomically): ``format``
    ("explorer-embedding-recording"), ``version`` (1), ``name``,
    ``vocab_size``, ``dim``, ``tied``, ``has_output``, ``dtype``,
    ``sparse``, ``optimizer`` / ``lr`` / ``weight_decay`` (when known),
    ``every``, ``snapshot_every``, ``planned_steps``.
``steps.jsonl``
    One JSON object per recorded step, one line each, appended and flushed
    as one write with its newline last. A reader takes only lines ended by
    a newline, so it can follow the file while it grows, and a line cut by
    a crash (no newline) is ignored: the run reads up to the last whole
    step. Keys: ``step``, ``seconds`` (since the recorder was made),
    ``loss`` (or null), ``batch_distinct_ids``, ``rows_with_gradient``,
    ``rows_changed``, ``rows_decay_only``, and for tied tables
    ``input_rows_with_gradient``, for untied output matrices
    ``output_rows_with_gradient`` and ``output_grad_norm``; ``grad_norm`` /
    ``update_norm`` (Frobenius; the gradient's is null when it was cleared
    before ``step()``). A set of rows is ``{"n": count, "ids": [...]}`` or,
    when it holds more than half of the rows, ``{"n": count, "all_but":
    [...]}``: sparse row ids, never a dense gradient.
``snapshots/step-NNNNNNNNN.safetensors``
    The table after step N (``embed_tokens.weight``, and ``lm_head.weight``
    when untied), every ``snapshot_every`` steps, before the first step and
    at close; written to a temporary file and renamed, so a reader sees a
    whole file or none. ``snapshots/tokenizer.json`` when the tokenizer was
    given: a snapshot then opens in the app with its pieces.

Meanings
--------
A row *with a gradient* has a non-zero gradient row (taken by a tensor
hook on the weight as the backward pass computes it; sparse gradients of
``nn.Embedding(sparse=True)`` too). A row *changed* when any of its values
differs from the copy kept at the last recorded step. A row *changed by
weight decay only* changed without a gradient while the optimiser's
momentum for it (Adam's ``exp_avg``, SGD's ``momentum_buffer``) is exactly
zero: without weight decay it would not have moved (without an optimiser
given: every row that changed without a gradient).

Cost
----
Per recorded step, in passes over V × d: the hook's row norms of the
gradient (which give its norm too; an untied input table's gradient, zero
but for the batch's rows, takes two more passes to find them exactly),
the diff (a subtraction into a kept buffer, the row norms, the copy), and,
when rows changed without a gradient, one over the optimiser's momentum.
An untied output matrix's gradient rows are found the same way; it is not
diffed. Two copies of the table (the last recorded one and the buffer)
stay in memory. ``bench --record`` measures the share of a step: 1 to
7 % (noisy figures from a shared machine) on small GPT-2 and Llama models
whose table is a quarter of the parameters, about 10 % when the table is
nearly the whole model.
``every=k`` spreads it: the hooks of the steps in between only test a flag.
"""
