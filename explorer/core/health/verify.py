"""Verifying candidates with the model itself, the way Land & Bartolo do
("Fishing for Magikarp", EMNLP 2024): three prompts that ask a base model to
repeat a token, three tokens generated greedily after each, and the highest
probability the model gives the token at any of those steps in any prompt.
A model that cannot repeat a token has, in effect, never learned it.

* below :data:`STRONG` (0.001): **verified**;
* below :data:`THRESHOLD` (0.01): **weakly verified**;
* otherwise **rejected** (the model knows the token).

The prompts are written around a placeholder word the tokenizer keeps whole
(a long alphabetic piece that survives ``encode(decode([i, i])) == [i, i]``);
after encoding, every placeholder id is replaced by the candidate's id, so a
token no text encodes to can still be asked about and the candidate is
never re-tokenised. No chat template: the prompts suit base and instruction
models alike.

Only where the whole model can be loaded as a causal language model (a GGUF
file, or a Hugging Face folder whose architecture predicts the next token);
an encoder such as MiniLM, or a file holding only the embedding, has no
next token to ask for. Loading takes seconds and memory, so it runs on
request, in a worker. No Qt here.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.sources.runnable import runnable_model
from explorer.core.tokens.tokenize import HFTokenizer

__all__ = ["THRESHOLD", "STRONG", "STEPS", "PROMPTS", "Verification", "VerificationResult", "VerifyUnavailable",
           "model_source", "iter_verify", "prompt_ids", "placeholder_id", "status_of"]

#: below this probability the model cannot repeat the token: verified (weakly)
THRESHOLD = 0.01
#: below this: verified (strongly)
STRONG = 0.001
#: tokens generated greedily after each prompt
STEPS = 3
#: (name, repeats, preamble, question, answer): the prompt is preamble +
#: (question + answer) * repeats + question + the answer up to the token,
#: with {token} standing for the candidate
PROMPTS = (
    ("repeat device", 20, "This device repeats its input exactly, as shown in these 100 identical trials.",
     "\nInput: «{token}»\nOutput:", " «{token}»"),
    ("assistant", 0, "This helpful assistant explains what a phrase means, replying with identical responses "
     "to identical questions for reliability.",
     "\nUser: What does 'edslfkj' mean?\nAssistant: 'edslfkj' has no specific meaning I am aware of."
     "\nUser: what does '{token}' mean?\nAssistant:", " '{token}'"),
    ("repeated", 50, "Below is the output, as you can see it's just giving the same phrase repeated "
     "indefinitely:\n", "{token}", "{token}"),
)
_BATCH = 8


def prompt_text(prompt: tuple, word: str) -> str:
    """The prompt's text with ``word`` where the candidate goes."""
    _, repeats, preamble, question, answer = prompt
    open_answer = answer[: answer.index("{")]
    text = preamble + (question + answer) * repeats + question + open_answer
    return text.replace("{token}", word)


def status_of(probability: float) -> str:
    """"verified", "weakly verified" or "rejected" for a maximum probability."""
    if probability < STRONG:
        return "verified"
    if probability < THRESHOLD:
        return "weakly verified"
    return "rejected"


class VerifyUnavailable(ExplorerError):
    """The model cannot be run here; the message says why."""


@dataclass(frozen=True)
class Verification:
    """What the model said about one token.

    Attributes
    ----------
    id : int
    piece : str
    probability : float
        The highest probability the model gave the token at any of the
        :data:`STEPS` greedy steps after any prompt (0..1).
    confirmed : bool
        Below :data:`THRESHOLD`: the model cannot repeat it (verified, weakly
        or strongly).
    """

    id: int
    piece: str
    probability: float
    confirmed: bool

    @property
    def status(self) -> str:
        """"verified", "weakly verified" or "rejected" (:func:`status_of`)."""
        return status_of(self.probability)

    def as_json(self) -> dict:
        return {"id": self.id, "piece": self.piece, "max_probability": self.probability, "status": self.status}


@dataclass(frozen=True)
class VerificationResult:
    """Attributes
    ----------
    spec : str
    model : str
        What was loaded ("SmolLM2-135M-Instruct.Q4_1.gguf (LlamaForCausalLM)").
    results : tuple of Verification
        In the order asked.
    threshold : float
    prompts : int
    seconds : float
    """

    spec: str
    model: str
    results: tuple[Verification, ...]
    threshold: float
    prompts: int
    seconds: float

    def of(self, token_id: int) -> Verification | None:
        for v in self.results:
            if v.id == token_id:
                return v
        return None

    @property
    def confirmed_count(self) -> int:
        """Tokens below :data:`THRESHOLD` (verified, weakly or strongly)."""
        return sum(v.confirmed for v in self.results)

    def as_json(self) -> dict:
        """What ``health --verify --json`` prints under ``verification``."""
        return {"available": True, "model": self.model, "asked": len(self.results),
                "verified": self.confirmed_count, "verified_strongly": self.strong_count,
                "threshold": self.threshold, "strong_threshold": STRONG, "seconds": self.seconds,
                "results": [v.as_json() for v in self.results]}

    @property
    def strong_count(self) -> int:
        """Tokens below :data:`STRONG`."""
        return sum(v.probability < STRONG for v in self.results)


def model_source(table) -> tuple[str, dict]:
    """Where the whole model is: (folder, from_pretrained keyword arguments).

    Raises
    ------
    VerifyUnavailable
        With the reason (not a causal language model, no full model, no tokenizer).
    """
    if not isinstance(table.tokenizer, HFTokenizer):
        raise VerifyUnavailable(f"{table.name} has no tokenizer of its own to write a prompt with")
    found = runnable_model(table)  # the one check Cost › Context-free asks too
    if not found.ok:
        raise VerifyUnavailable(f"{table.name}: {found.reason}")
    if not found.causal:
        kind = ", ".join(found.architectures) or found.model_type or "unknown"
        raise VerifyUnavailable(f"{table.name} is not a transformers causal language model ({kind}): there is "
                                "no next token to ask for; the indicators stand on their own")
    return found.pretrained_args()


def placeholder_id(tok, candidates: Sequence[int] | None = None) -> int:
    """A token to write the prompts around: alphabetic, long, of many letters,
    and kept whole when written twice in a row (``encode(decode([i, i])) ==
    [i, i]``), so each place it stands in the encoded prompt is one id.

    Raises
    ------
    VerifyUnavailable
        When the tokenizer has no such token.
    """
    vocab = tok.get_vocab(with_added_tokens=False)
    ids = list(vocab.values()) if candidates is None else list(candidates)
    texts = tok.decode_batch([[int(i)] for i in ids], skip_special_tokens=False)
    scored = sorted(((len(set(t)), len(t), int(i)) for i, t in zip(ids, texts) if t.isalpha() and t.isascii()),
                    reverse=True)
    for _, _, i in scored[:200]:
        if tok.encode(tok.decode([i, i], skip_special_tokens=False), add_special_tokens=False).ids == [i, i]:
            return i
    raise VerifyUnavailable("the tokenizer has no word it keeps whole to write the prompts around")


def prompt_ids(tok, prompt: tuple, placeholder: int, token_id: int) -> list[int]:
    """The prompt encoded (with the tokenizer's own start token, if any) and
    every placeholder id replaced by ``token_id``."""
    word = tok.decode([placeholder], skip_special_tokens=False)
    ids = tok.encode(prompt_text(prompt, word)).ids
    want = 2 * prompt[1] + 1
    if sum(1 for i in ids if i == placeholder) != want:
        raise VerifyUnavailable(f"the prompt '{prompt[0]}' does not encode its placeholder word as one token "
                                f"{want} times; this tokenizer cannot be asked with it")
    return [token_id if i == placeholder else i for i in ids]


def _greedy_probabilities(model, seqs: list[list[int]], targets: list[int]) -> np.ndarray:
    """The highest probability of each target over :data:`STEPS` greedy steps
    after its sequence (sequences of one length, run as one batch; the keys
    and values of earlier positions are kept between steps)."""
    import inspect

    import torch

    # transformers 5 calls the key/value cache ``cache``; 4.x ``past_key_values``
    new_name = "cache" in inspect.signature(model.forward).parameters
    rows = torch.arange(len(seqs))
    want = torch.tensor(targets)
    best = torch.zeros(len(seqs), dtype=torch.float64)
    with torch.no_grad():
        out = model(input_ids=torch.tensor(seqs), use_cache=True)
        for step in range(STEPS):
            probs = torch.softmax(out.logits[:, -1, :].double(), dim=-1)
            best = torch.maximum(best, probs[rows, want])
            if step + 1 == STEPS:
                break
            nxt = probs.argmax(dim=-1, keepdim=True)
            kept = getattr(out, "cache", None)
            kept = out.past_key_values if kept is None else kept
            out = model(input_ids=nxt, use_cache=True, **{"cache" if new_name else "past_key_values": kept})
    return best.numpy()


def load_causal_model(table, leave_a_core: bool = True):
    """The table's whole model as a transformers causal LM, float32, eval
    mode, and its name in words.

    Raises
    ------
    VerifyUnavailable
    """
    folder, kwargs = model_source(table)
    import torch

    from explorer.core.runtime import quiet_transformers

    if leave_a_core:
        from explorer.core.runtime import limit_torch_threads

        limit_torch_threads()
    from transformers import AutoModelForCausalLM

    quiet_transformers()  # no progress bars on the terminal: the window and the CLI report progress
    try:
        model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, trust_remote_code=False,
                                                     dtype=torch.float32, **kwargs)
    except Exception as exc:  # noqa: BLE001 - any loader failure is a reason to give the user
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
        raise VerifyUnavailable(f"{table.name}: the whole model could not be loaded ({first})") from None
    return model.eval(), f"{kwargs.get('gguf_file') or Path(folder).name} ({type(model).__name__})"


def iter_verify(table, ids: Sequence[int], leave_a_core: bool = True) -> Iterator[tuple[float, str]]:
    """Generator for a worker: yields ``(fraction, message)``, returns a
    :class:`VerificationResult` for ``ids``.

    The model is loaded in float32 on the CPU (a GGUF file is dequantised),
    then the prompts are run, shortest first, for the tokens in small
    batches, :data:`STEPS` greedy steps each; Cancel is honoured between
    batches. A token the model repeats with probability :data:`THRESHOLD`
    or more after one prompt is rejected there and not asked again (its
    probability is then the highest seen so far, and at least the
    threshold); a verified token is asked all three prompts.

    Parameters
    ----------
    leave_a_core : bool
        Leave one core to the window (the command line uses every core).

    Raises
    ------
    VerifyUnavailable
    """
    t0 = time.perf_counter()
    model_source(table)  # says why not before anything slow
    ids = [int(i) for i in ids if 0 <= int(i) < table.vocab_size]
    yield 0.0, "Loading the model (seconds: it is read whole)…"
    model, name = load_causal_model(table, leave_a_core)
    tok = table.tokenizer.backend
    placeholder = placeholder_id(tok)
    prompts = sorted(PROMPTS, key=lambda p: len(prompt_text(p, "x")))
    best = np.zeros(len(ids))
    for n, prompt in enumerate(prompts):
        open_ = [k for k in range(len(ids)) if best[k] < THRESHOLD]
        for b in range(0, len(open_), _BATCH):
            batch = open_[b : b + _BATCH]
            seqs = [prompt_ids(tok, prompt, placeholder, ids[k]) for k in batch]
            probs = _greedy_probabilities(model, seqs, [ids[k] for k in batch])
            best[batch] = np.maximum(best[batch], probs)
            yield (0.1 + 0.9 * (n + (b + len(batch)) / max(1, len(open_))) / len(prompts),
                   f"Asking the model to repeat {len(ids)} tokens: prompt {n + 1} of {len(prompts)}, "
                   f"{b + len(batch)} of {len(open_)}")
    results = tuple(Verification(i, table.shown_piece(i).text, float(p), bool(p < THRESHOLD))
                    for i, p in zip(ids, best))
    return VerificationResult(table.spec, name, results, THRESHOLD, len(PROMPTS), time.perf_counter() - t0)
