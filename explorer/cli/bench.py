"""``python -m explorer bench [--open SPEC] [--big] [--layouts] [--lookup SPEC] [--busy] [--gui] [--training] [--record]
[--monkey N [--seed S] [--stacks]] [--json]``: measure speed (explorer/core/bench, explorer/benchmarks); with no option,
the default set and the window's."""

from __future__ import annotations

import json
import os
import sys

from explorer.cli.errors import CliError
from explorer.cli.output import open_table

__all__ = ["add_bench_parser", "cmd_bench"]


def add_bench_parser(sub) -> None:
    b = sub.add_parser("bench", help="measure speed")
    b.add_argument("--open", dest="open_spec", default=None, metavar="SPEC",
                   help="embedding-only opening versus a full transformers load")
    b.add_argument("--big", action="store_true",
                   help="also open a 128,256 x 8,192 bf16 table written to a temp file and search its neighbours, "
                        "and check the token health of a 128,256 x 4,096 one and of MiniLM")
    b.add_argument("--layouts", action="store_true",
                   help="t-SNE of 5,000 MiniLM rows (total, first layout) and UMAP of 2,000, with trustworthiness")
    b.add_argument("--lookup", dest="lookup_spec", default=None, metavar="SPEC", help="gather vs one-hot on SPEC")
    b.add_argument("--busy", action="store_true",
                   help="the lookup lesson again while every core spins: holds within 2x or says the machine was busy")
    b.add_argument("--gui", action="store_true", help="selection latency, start-up and model opening in the window")
    b.add_argument("--training", action="store_true",
                   help="training steps per second headless and with the view's live charts")
    b.add_argument("--record", action="store_true",
                   help="the recorder's (explorer.record) share of a training step on small GPT-2 and Llama models")
    b.add_argument("--monkey", type=_actions, default=None, metavar="N",
                   help="a seeded random walk of N user actions through the window (a real one when a display is "
                        "set, e.g. under xvfb-run): exceptions, Qt warnings, the longest stall and its action")
    b.add_argument("--seed", type=int, default=0, help="seed of the --monkey walk")
    b.add_argument("--stacks", action="store_true",
                   help="with --monkey: sample the window thread's stack and say where each stall was")
    b.add_argument("--json", action="store_true")


def _actions(text: str) -> int:
    import argparse

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--monkey needs a whole number of actions, not {text!r}") from None
    if not 1 <= n <= 1_000_000:
        raise argparse.ArgumentTypeError("--monkey takes 1 to 1,000,000 actions")
    return n


def cmd_bench(args) -> int:
    from explorer.core import bench

    results = {}
    for option, value in (("--open", args.open_spec), ("--lookup", args.lookup_spec)):
        if value is not None and not value.strip():  # not "no option": the full default run would start
            raise CliError(f"{option} needs a model, e.g. {option} default")
    if args.open_spec:
        try:
            results["open"] = bench.bench_open(args.open_spec)
        except bench.BenchError as exc:
            raise CliError(str(exc)) from None
    if args.big:
        results["big_table"] = bench.bench_big_table()
    if args.layouts:
        from explorer.core.bench.layouts import bench_layouts

        results["layouts"] = bench_layouts()
    if args.lookup_spec:
        table = open_table(args.lookup_spec)
        results["lookup"] = bench.bench_lookup(table)
    if args.busy:
        from explorer.core.bench.busy import bench_lookup_busy

        results["busy"] = bench_lookup_busy()
    if args.gui:
        from explorer.benchmarks.gui import bench_gui

        results["gui"] = bench_gui()
    if args.training:
        from explorer.benchmarks.training import bench_training

        results["training"] = bench_training()
    if args.record:
        from explorer.core.bench.record import bench_record

        results["record"] = bench_record()
    if args.monkey:
        import faulthandler

        from explorer.benchmarks.monkey import bench_monkey

        # a walk that crashes the process (a fault in a library) ends with every thread's stack on stderr,
        # not with nothing: the walk is how such a crash is found
        if not faulthandler.is_enabled():
            faulthandler.enable(all_threads=True)
        results["monkey"] = bench_monkey(args.monkey, seed=args.seed, stacks=args.stacks)
    if not results:
        results = bench.bench_default()
        from explorer.benchmarks.gui import bench_gui

        results["gui"] = bench_gui()
    if args.json:
        print(json.dumps(bench.results_as_json(results), indent=1))
        return _end(results.get("monkey"))
    gui = results.pop("gui", None)
    monkey = results.pop("monkey", None)
    if monkey is not None:
        from explorer.benchmarks.monkey import format_monkey

        print(format_monkey(monkey))
    busy = results.pop("busy", None)
    if busy is not None:
        from explorer.core.bench.busy import format_busy

        print(format_busy(busy))
    training = results.pop("training", None)
    record = results.pop("record", None)
    if record is not None:
        from explorer.core.bench.record import format_record

        print(format_record(record))
    if training is not None:
        from explorer.benchmarks.training import format_training

        print(format_training(training))
    if results:
        print(bench.format_results(results))
    if gui is not None:
        from explorer.benchmarks.gui import format_gui

        print(format_gui(gui))
    return _end(monkey)


def _end(monkey) -> int:
    """0, once printed. A job still running after the walk's window closed (one long
    library call cannot stop) would meet the interpreter's teardown in its thread and
    crash the process: end it at once instead, as the app does on close."""
    if monkey is not None and not monkey.jobs_stopped:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0
