"""``python -m explorer runs LOGDIR [--json]``: print a run recorded by
``explorer.record`` (EmbeddingRecorder, TrainerCallback), up to its last
whole step; a step cut mid-write is left out with a note. A missing or
empty directory is one ``error:`` line, exit 2 (cli.main prints it)."""

from __future__ import annotations

import json

from explorer.cli.output import print_table

__all__ = ["add_runs_parser", "cmd_runs", "SHOWN_STEPS"]

#: without --json, the table lists at most this many steps (the last ones)
SHOWN_STEPS = 20


def add_runs_parser(sub) -> None:
    r = sub.add_parser("runs", help="print a training run recorded with explorer.record (steps, rows, loss)")
    r.add_argument("logdir", metavar="LOGDIR", help="the directory EmbeddingRecorder or TrainerCallback writes")
    r.add_argument("--json", action="store_true",
                   help="the header and every whole step: step, loss, rows_with_gradient (ids), rows_changed "
                        "(count), rows_decay_only, norms; snapshots; notes")


def cmd_runs(args) -> int:
    from explorer.core.recording.reader import read_run

    run = read_run(args.logdir)
    if args.json:
        print(json.dumps(run.as_json(), allow_nan=False))
        return 0
    h = run.header
    optimizer = f", {h.optimizer}" + (f" (lr {h.lr:g}, weight decay {h.weight_decay:g})"
                                      if h.lr is not None and h.weight_decay is not None else "") if h.optimizer else ""
    print(f"{h.name}: E {h.vocab_size:,} x {h.dim:,} {h.dtype}, {'tied' if h.tied else 'untied'}"
          f"{', sparse gradients' if h.sparse else ''}{optimizer}; {len(run.steps):,} steps recorded, "
          f"{len(run.snapshots):,} snapshots")
    if run.steps:
        rows = [("step", "loss", "rows with gradient", "changed", "decay only", "grad norm", "update norm")]
        for s in run.steps[-SHOWN_STEPS:]:
            rows.append((f"{s.step:,}", f"{s.loss:.4f}" if s.loss is not None else "-",
                         f"{s.rows_with_gradient.size:,}", f"{s.rows_changed.size:,}", f"{s.rows_decay_only.size:,}",
                         f"{s.grad_norm:.4g}" if s.grad_norm is not None else "-", f"{s.update_norm:.4g}"))
        if len(run.steps) > SHOWN_STEPS:
            print(f"the last {SHOWN_STEPS} steps (--json prints all):")
        print_table(rows, right=range(7))
        moved = set()
        for s in run.steps:
            moved.update(s.rows_changed.tolist())
        print(f"rows never changed in the recorded steps: {h.vocab_size - len(moved):,} of {h.vocab_size:,}")
    if run.snapshots:
        print(f"latest snapshot: {run.snapshots[-1][1]} (open it: python -m explorer --watch {args.logdir})")
    for note in run.notes:
        print(f"note: {note}")
    return 0
