"""Argument vectors for every subcommand, and running the command line in
this process with a deadline, the way a user's shell would see it.

Values are drawn from pools of what a user might type or a script might
pass: numbers negative, huge and NaN, unknown models, empty strings, unicode
with lone surrogates (what invalid UTF-8 in argv becomes), and paths to a
folder, a device, a missing or a corrupt file. Options whose valid values
start long work (training steps, projection sizes) get only small valid
values; their invalid ones are all there.
"""

from __future__ import annotations

import contextlib
import io
import signal
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

__all__ = ["CommandHung", "CliOutcome", "run_cli", "argv_for", "COMMANDS", "make_paths"]


class CommandHung(BaseException):  # noqa: N818 (a BaseException, so no `except Exception` in the code swallows it)
    """The command did not finish within its deadline."""


@dataclass(frozen=True)
class CliOutcome:
    code: int
    out: str
    err: str


def _alarm(signum, frame):
    raise CommandHung("the command ran past its deadline")


def run_cli(argv: list[str], deadline_s: float) -> CliOutcome:
    """``explorer.cli.dispatch.main(argv)`` with stdout encoded strictly as UTF-8
    (a pipe's stdout: a lone surrogate printed raw fails there) and stderr as
    Python's own (backslashreplace); a command still running after
    ``deadline_s`` seconds raises :class:`CommandHung` (SIGALRM: main thread only)."""
    from explorer.cli.dispatch import main

    out_b, err_b = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_b, encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(err_b, encoding="utf-8", errors="backslashreplace", write_through=True)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, deadline_s)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as exc:  # --help, or argparse's own exit
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    out.flush()
    err.flush()
    return CliOutcome(code, out_b.getvalue().decode("utf-8"), err_b.getvalue().decode("utf-8"))


def make_paths(base: Path) -> dict[str, str]:
    """A folder that is not a model, a missing file, a corrupt model file, a text file, a file in a missing folder."""
    base.mkdir(parents=True, exist_ok=True)
    (base / "notamodel").mkdir(exist_ok=True)
    (base / "notamodel" / "readme.txt").write_text("nothing here")
    corrupt = base / "corrupt.safetensors"
    corrupt.write_bytes(b"\xff" * 8 + b"{not json" + b"\x00" * 100)
    text = base / "corpus.txt"
    text.write_text("the cat sat on the mat\n" * 20)
    return {"dir": str(base / "notamodel"), "missing": str(base / "missing.safetensors"),
            "corrupt": str(corrupt), "text": str(text), "in_missing_dir": str(base / "no" / "such" / "x"),
            "out": str(base / "out")}


TEXTS = ["", " ", "the cat", "cat", "sat", "\udcff\udcfe", "a\udc80b", "🙂", "日本語", "e\u0301", "-x", "--json",
         "\x00", "x" * 300, "robot", "ℌ𝔢𝔩𝔩𝔬", "\u202e", "--", "-"]
NUMBERS = ["0", "1", "2", "3", "-1", "-0", "nan", "NaN", "inf", "-inf", "1e309", "9" * 30, "-" + "9" * 30, "",
           "1.5", "0x10", "١٢", " 3 ", "3\udcff", "1_000"]
SMALL = ["1", "2", "3"]  # valid sizes that start short work
BAD_SIZES = ["0", "-1", "nan", "inf", "", "1e309", "9" * 30, "-" + "9" * 30, "x", "\udcff"]
CHEAP_MODELS = ["default", "toy:robot", "toy:cat-sat", "random:7x3", "random:40x8"]
BAD_MODELS = ["", "no/such-model-anywhere", "random:0x3", "random:-1x3", "random:nanx3", "random:99999999999x99999",
              "random:7", "toy:", "toy:nope", "\udcff", "☃", "gpt2", "hf:", "/dev/null", "/dev/zero", "/",
              "-", "--json"]


def _pool(kind: str, paths: dict[str, str]) -> list[str]:
    path_values = [paths["dir"], paths["missing"], paths["corrupt"], "/dev/null", "/dev/zero", "/proc/self/mem"]
    return {
        "model": CHEAP_MODELS + BAD_MODELS + path_values,
        "text": TEXTS,
        "number": NUMBERS,
        "size": SMALL + BAD_SIZES,
        "method": ["pca", "tsne", "PCA", "", "umap?", "\udcff"],
        "optimizer": ["sgd", "adam", "adamw", "sparse_adam", "", "Adam", "rmsprop", "\udcff"],
        "corpus": [paths["text"], *path_values, ""],
        "save": [paths["out"], paths["in_missing_dir"], "/dev/null", paths["corrupt"], "/proc/nope", ""],
        "bad_out": ["/dev/null", paths["corrupt"], "/proc/nope", paths["dir"] + "/readme.txt/x", ""],
        "bad_open": BAD_MODELS + path_values,
        "bad_size": BAD_SIZES,
        "logdir": [paths["dir"], paths["missing"], paths["corrupt"], paths["text"], "/dev/null", "/dev/zero", "/",
                   "", "\udcff"],
        "form": ["unit", "plain", "", "UNIT", "\udcff"],
    }[kind]


#: per command: option -> kind of value (None: a flag); "@" keys are positionals; "!" options always appear
COMMANDS: dict[str, dict[str, str | None]] = {
    "models": {"--json": None},
    "inspect": {"--model": "model", "--text": "text", "--k": "number", "--json": None, "--input-layer": None,
                "--output-layer": None},
    "health": {"--model": "model", "--top": "number", "--verify": "size", "--json": None},
    "project": {"--model": "model", "--method": "method", "--sample": "number", "--seed": "number",
                "--dims": "number", "--recompute": None, "--export-projector": "bad_out",
                "--export-atlas": "bad_out", "--json": None},
    "bench": {"!--lookup": "model", "--open": "bad_open", "--monkey": "bad_size", "--seed": "number",
              "--json": None},
    "train": {"!--steps": "size", "--tied": None, "--untied": None, "--sparse": None, "--optimizer": "optimizer",
              "--lr": "number", "--weight-decay": "number", "--dim": "size", "--batch-size": "size",
              "--seed": "number", "--corpus": "corpus", "--save": "save", "--json": None},
    "build-default": {"!--out": "bad_out"},
    "analogy": {"--model": "model", "@a": "text", "@b": "text", "@c": "text", "--top": "number", "--form": "form",
                "--json": None},
    "grad": {"--model": "model", "--text": "text", "--seed": "number", "--json": None},
    "runs": {"@logdir": "logdir", "--json": None},
}


@st.composite
def argv_for(draw, command: str, paths: dict[str, str]) -> list[str]:
    """One argument vector for ``command``: its options in any order, some
    repeated, some missing their value, with values from the pools, and now
    and then a stray word or ``--help``."""
    spec = COMMANDS[command]
    parts: list[list[str]] = []
    for name, kind in spec.items():
        forced = name.startswith("!")
        name = name.lstrip("!")
        times = 1 if forced else draw(st.sampled_from([0, 0, 1, 1, 1, 2]))
        for _ in range(times):
            if name.startswith("@"):
                parts.append([draw(st.sampled_from(_pool(kind, paths)))])
            elif kind is None:
                parts.append([name])
            elif draw(st.integers(0, 9)) == 0:
                parts.append([name])  # the value forgotten
            elif draw(st.booleans()):
                parts.append([f"{name}={draw(st.sampled_from(_pool(kind, paths)))}"])
            else:
                parts.append([name, draw(st.sampled_from(_pool(kind, paths)))])
    order = draw(st.permutations(range(len(parts)))) if parts else []
    argv = [command] + [a for i in order for a in parts[i]]
    # build-default's valid run trains the bundled model for minutes: no stray word may become its folder
    extras = [None] if command == "build-default" else [None] * 8 + ["--help", "-h", "--nope", "stray", "\udcff",
                                                                     "--json=1"]
    extra = draw(st.sampled_from(extras))
    if extra is not None:
        argv.insert(draw(st.integers(1, len(argv))), extra)
    return argv
