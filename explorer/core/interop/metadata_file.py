"""The user's own metadata for the tokens: a CSV or TSV file (the Embedding
Projector's metadata file is one) whose header names a key column, ``id``
or ``piece`` (also ``token`` or ``word``), and any other columns. Each
column becomes a colouring of the projection (categories, or six bins of
equal counts for numbers), the filter's groups, and a search
(``column=value``). No Qt here.

A piece matches the row whose stored piece, or whose piece as the app shows
it (``␣queen``), or whose word start (``queen`` for ``Ġqueen``) it equals.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.arrays import unique_sorted
from explorer.core.errors import ExplorerError

__all__ = ["MetadataFileError", "MetadataColumn", "UserMetadata", "read_metadata_file", "metadata_file_job",
           "MAX_CATEGORIES"]

#: categories of a text column coloured apart; the rarer ones are "other"
MAX_CATEGORIES = 12
_BINS = 6
_ID_KEYS = ("id", "token_id", "index")
_PIECE_KEYS = ("piece", "token", "word")
_MAX_BYTES = 200 * 1024 * 1024


class MetadataFileError(ExplorerError):
    """A metadata file that cannot be used: says what was wrong and what to do."""


@dataclass(frozen=True, eq=False)
class MetadataColumn:
    """One column of the user's file over the whole vocabulary.

    Attributes
    ----------
    name : str
    labels : tuple of str
        The groups: the most common values (then ``other``), or bins of a number.
    codes : ndarray (V,) int64
        Index into ``labels``; -1 for a token the file does not name or leaves empty.
    text : ndarray (V,) object
        The cell as written ("" where none): what a search looks in.
    numeric : bool
        Every non-empty cell is a number (the groups are bins, in order).
    """

    name: str
    labels: tuple[str, ...]
    codes: np.ndarray
    text: np.ndarray
    numeric: bool = False


@dataclass(frozen=True, eq=False)
class UserMetadata:
    """What :func:`read_metadata_file` read: the columns, and how the rows matched the table."""

    path: str
    key: str
    columns: tuple[MetadataColumn, ...]
    rows: int
    matched: int
    unmatched: tuple[str, ...]

    def column(self, name: str) -> MetadataColumn | None:
        return next((c for c in self.columns if c.name == name), None)

    def search(self, query: str) -> tuple[MetadataColumn, np.ndarray] | None:
        """``column=value`` (case-insensitive, ``value`` anywhere in the cell): the column and
        the ids (ascending) whose cell holds it; None when the query names no column."""
        name, sep, value = query.partition("=")
        col = self.column(name.strip()) if sep else None
        if col is None:
            return None
        value = value.strip().lower()
        hit = np.fromiter((value in t.lower() if t else False for t in col.text), bool, len(col.text))
        return col, np.flatnonzero(hit).astype(np.int64)

    def describe(self) -> str:
        """One sentence: the file, its rows, how many matched a token and the columns."""
        missed = f"; {self.rows - self.matched:,} named no token (e.g. {', '.join(self.unmatched[:3])})" \
            if self.matched < self.rows else ""
        return (f"{Path(self.path).name}: {self.rows:,} rows by {self.key}, {self.matched:,} matched a token{missed}; "
                f"columns {', '.join(c.name for c in self.columns)}")


def _piece_ids(table) -> dict[str, int]:
    """Every way a piece may be written -> its id (the stored piece wins over the shown one)."""
    backwards = range(int(table.vocab_size) - 1, -1, -1)  # the lowest id wins among equals
    shown = {i: table.shown_piece(i).text for i in backwards}
    out = {text.lstrip("␣"): i for i, text in shown.items()}  # a word start by its word: the weakest
    out.update((text, i) for i, text in shown.items())
    out.update((table.piece(i), i) for i in backwards)  # the stored piece: the strongest
    return out


def _column(name: str, cells: list[str], ids: np.ndarray, v: int) -> MetadataColumn:
    text = np.full(v, "", object)
    text[ids] = cells
    filled = [c for c in cells if c != ""]
    try:
        numbers = np.array([float(c) for c in filled], np.float64)
        numeric = bool(len(numbers)) and bool(np.isfinite(numbers).all())
    except ValueError:
        numeric = False
    codes = np.full(v, -1, np.int64)
    if numeric:
        values = np.full(v, np.nan)
        values[ids] = [float(c) if c != "" else np.nan for c in cells]
        edges = unique_sorted(np.quantile(numbers, np.linspace(0, 1, _BINS + 1)[1:-1]))
        known = np.isfinite(values)
        codes[known] = np.digitize(values[known], edges)
        bounds = [numbers.min(), *edges, numbers.max()]
        labels = tuple(f"{lo:.3g} – {hi:.3g}" for lo, hi in zip(bounds[:-1], bounds[1:]))
        return MetadataColumn(name, labels, codes, text, True)
    values, counts = np.unique(np.asarray(filled, object), return_counts=True) if filled else ([], [])
    order = np.argsort(-np.asarray(counts), kind="stable")
    common = [str(values[k]) for k in order[:MAX_CATEGORIES]]
    labels = tuple(common + (["other"] if len(values) > MAX_CATEGORIES else []))
    index = {c: k for k, c in enumerate(common)}
    other = len(common) if len(values) > MAX_CATEGORIES else -1
    codes[ids] = [index.get(c, other) if c != "" else -1 for c in cells]
    return MetadataColumn(name, labels, codes, text)


def _rows(path: Path) -> list[list[str]]:
    try:
        if path.stat().st_size > _MAX_BYTES:
            raise MetadataFileError(f"{path.name} is larger than {_MAX_BYTES // 2**20} MiB: keep one row per token.")
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise MetadataFileError(f"{path.name} is not UTF-8 text: save it as UTF-8 CSV or TSV.") from None
    except OSError as exc:
        raise MetadataFileError(f"Could not read {path}: {exc.strerror or exc}.") from None
    tab = path.suffix.lower() in (".tsv", ".tab") or (path.suffix.lower() != ".csv" and "\t" in text[:4096])
    return [r for r in csv.reader(text.splitlines(), delimiter="\t" if tab else ",") if any(c.strip() for c in r)]


def read_metadata_file(path, table) -> UserMetadata:
    """Read the user's metadata file for ``table``; raises :class:`MetadataFileError`
    with what was wrong and what to do."""
    path = Path(path)
    rows = _rows(path)
    if len(rows) < 2:
        raise MetadataFileError(f"{path.name} has no rows under a header: the first row names the columns "
                                "(id or piece, then yours), one row per token follows.")
    header = [h.strip() for h in rows[0]]
    lower = [h.lower() for h in header]
    key_at = next((lower.index(k) for k in _ID_KEYS + _PIECE_KEYS if k in lower), None)
    if key_at is None:
        raise MetadataFileError(f"{path.name}'s first row names no id or piece column (it has "
                                f"{', '.join(header[:6])}): add one so each row names its token.")
    key = "id" if lower[key_at] in _ID_KEYS else "piece"
    others = [k for k in range(len(header)) if k != key_at and header[k]]
    if not others:
        raise MetadataFileError(f"{path.name} has only the {header[key_at]} column: add columns to colour by.")
    v = int(table.vocab_size)
    lookup = _piece_ids(table) if key == "piece" else None
    ids, kept, unmatched = [], [], []
    for r in rows[1:]:
        cell = r[key_at].strip() if key_at < len(r) else ""
        tid = (int(cell) if cell.lstrip("-").isdigit() else -1) if key == "id" else lookup.get(cell, -1)
        if 0 <= tid < v:
            ids.append(tid)
            kept.append(r)
        elif len(unmatched) < 5:
            unmatched.append(repr(cell))
    if not ids:
        raise MetadataFileError(f"None of the {len(rows) - 1:,} rows of {path.name} names a token of this model by "
                                f"{key} (e.g. {', '.join(unmatched[:3])}).")
    idx = np.asarray(ids, np.int64)
    columns = tuple(_column(header[k], [r[k].strip() if k < len(r) else "" for r in kept], idx, v) for k in others)
    return UserMetadata(str(path), key, columns, len(rows) - 1, len(ids), tuple(unmatched))


def metadata_file_job(path, table):
    """:func:`read_metadata_file` for a worker (reading every piece of a big
    vocabulary takes up to a second): yields progress, returns the
    :class:`UserMetadata`; a :class:`MetadataFileError` says what was wrong."""
    yield 0.0, f"Reading {Path(path).name}…"
    return read_metadata_file(path, table)
