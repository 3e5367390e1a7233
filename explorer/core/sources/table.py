"""The opened table: :class:`EmbeddingTable`, immutable once built. No Qt here."""

from __future__ import annotations

import threading
import types
import warnings
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.core.arrays import unique_sorted
from explorer.core.jobs import run_to_end
from explorer.core.memory import require
from explorer.core.tokens.pieces import DisplayPiece, display_piece
from explorer.core.tokens.tokenize import Tokenizer

__all__ = ["EmbeddingTable", "StoredBuffer", "CACHE_ELEMENTS"]

# A user's array is held read-only (the app never writes into it), and torch warns, once per
# process, that writing through a tensor made from it would be undefined. Blocks of it are read
# in workers, where a catch_warnings around the call would swap the filters of every thread.
warnings.filterwarnings("ignore", message="The given NumPy array is not writable", category=UserWarning)

#: below this many elements a table's float32 copy is kept in memory (256 MB)
CACHE_ELEMENTS = 64 * 1024 * 1024
#: one block of :meth:`EmbeddingTable.iter_blocks` holds at most this many
#: values, whatever block size the caller asks for (a 16,384-row block of a
#: d = 65,536 table would be 4 GB)
_BLOCK_VALUES = CACHE_ELEMENTS
#: values read or normalised between two chances to stop, in the generators of the whole table
STEP_VALUES = 4 * 1024 * 1024
#: bytes per block of :meth:`EmbeddingTable.iter_native_blocks` (big blocks
#: keep torch's bfloat16 products at memory speed)
_NATIVE_BLOCK_BYTES = 128 * 1024 * 1024
#: rows per block of :meth:`EmbeddingTable.iter_native_blocks` at most: a pass makes several numbers a row
#: (a health check's norms, products and 16-number sketch), and the 128 MB of a one-column table's
#: 10,000,000 rows in one block held its pass 3.1 s without a chance to stop
_NATIVE_BLOCK_ROWS = 1 << 20


@dataclass(frozen=True)
class StoredBuffer:
    """Where the stored table starts in this process's memory.

    Attributes
    ----------
    address : int
        The address of row 0 (as ``tensor.data_ptr()`` or a memory map's).
    keep_alive : object
        Hold it as long as the address is shown, or the memory may be freed
        and reused.
    description : str
        What the address is, in words ("E.data_ptr() (float32 tensor, this process)").
    """

    address: int
    keep_alive: object
    description: str


class _Memo:
    """Derived arrays computed once per table, behind one lock: a worker
    thread and the GUI thread read the same table."""

    def __init__(self):
        self.lock = threading.RLock()
        # the output table's own: made in a moment, it must not wait behind the unit matrix (the
        # window asks for it while a worker may hold ``lock`` for seconds)
        self.output_lock = threading.Lock()
        self.full: np.ndarray | None = None
        self.unit: np.ndarray | None = None
        self.completions: list[str] | None = None
        self.finite: bool | None = None
        self.output: EmbeddingTable | None = None


@dataclass(frozen=True, eq=False)
class EmbeddingTable:
    """An opened input-embedding table E of shape (V, d).

    Rows are read lazily; :meth:`rows` returns float32 copies whatever the
    stored dtype. ``dtype`` and ``row_bytes`` describe the data *as stored*,
    which is what byte offsets refer to. The table does not change after it
    is built (use ``dataclasses.replace`` for a renamed copy); only derived
    arrays are memoised, under a lock. Tables compare by identity.

    Attributes
    ----------
    spec : str
        The spec that opens this table again.
    name : str
        A readable name.
    kind : str
        bundled, toy, random, package, folder, safetensors, gguf or cache.
    vocab_size, dim : int
        V and d (both at least 1).
    dtype : str
        Stored element type: float32, float16, bfloat16, or a GGUF type (Q8_0 ...).
    row_bytes : int
        Bytes of one stored row (the row stride).
    tokenizer : Tokenizer
    tied : bool or None
        Whether the output matrix is E itself; None when the files hold no
        output matrix (an encoder) or it cannot be read (see
        :mod:`explorer.core.sources.output`).
    model_params : int or None
        Parameters of the whole checkpoint (from headers), when known.
    path : Path or None
    disk_bytes : int or None
        Size of the files the table came from.
    tensor_name : str or None
        The embedding's name in the checkpoint.
    classes : Mapping[int, str] or None
        token id -> class name (bundled model and trained toys), read-only.
    notes : tuple of str
        Sentences for the user about this table.
    example_text : str
        A text to start with.
    output_how : str
        How tying was decided, in a sentence ("" for tables without a model).
    """

    spec: str
    name: str
    kind: str
    vocab_size: int
    dim: int
    dtype: str
    row_bytes: int
    tokenizer: Tokenizer
    _reader: object = field(repr=False)
    tied: bool | None = None
    model_params: int | None = None
    path: Path | None = None
    disk_bytes: int | None = None
    tensor_name: str | None = None
    classes: Mapping[int, str] | None = None
    notes: tuple[str, ...] = ()
    example_text: str = ""
    output_how: str = ""
    #: builds the output matrix's table when it is a second matrix (untied)
    _output: Callable[[], EmbeddingTable] | None = field(default=None, repr=False)
    _memo: _Memo = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # frozen: the only writes are these, while the table is being built
        object.__setattr__(self, "_memo", _Memo())
        object.__setattr__(self, "notes", tuple(self.notes))
        if self.classes is not None and not isinstance(self.classes, types.MappingProxyType):
            object.__setattr__(self, "classes", types.MappingProxyType(dict(self.classes)))

    # -- sizes ---------------------------------------------------------------
    @property
    def params(self) -> int:
        """V * d."""
        return self.vocab_size * self.dim

    @property
    def stored_bytes(self) -> int:
        """Bytes of the table as stored: V * row_bytes."""
        return self.vocab_size * self.row_bytes

    @property
    def itemsize(self) -> float:
        """Bytes per element as stored (fractional for block quantisations)."""
        return self.row_bytes / self.dim

    @property
    def trained_rows(self) -> int:
        """Rows the tokenizer can reach; rows beyond are padding rows that no
        text selects, kept out of neighbours and PCA."""
        return min(self.vocab_size, int(self.tokenizer.vocab_size))

    @property
    def fits_in_memory(self) -> bool:
        """Whether the float32 copy is small enough to keep (:data:`CACHE_ELEMENTS`)."""
        return self.params <= CACHE_ELEMENTS

    @property
    def holds_matrix(self) -> bool:
        """Whether the whole float32 table is already in memory (rows cost nothing)."""
        return self._memo.full is not None or self._reader.whole() is not None

    def byte_offset(self, token_id: int, dtype: str | None = None) -> int:
        """Offset of row ``token_id`` from the table's start: i * d * itemsize.

        With ``dtype`` None the stored layout is used (``row_bytes``);
        otherwise a plain dtype from :data:`cost.DTYPE_BYTES`.
        """
        from explorer.core.cost.parameters import dtype_bytes

        self.check_id(token_id)
        stride = self.row_bytes if dtype is None else self.dim * dtype_bytes(dtype)
        return int(token_id) * stride

    def check_id(self, token_id: int) -> None:
        """Raise TypeError for a non-integer id, IndexError for one outside 0..V-1."""
        if not isinstance(token_id, (int, np.integer)):
            raise TypeError(f"token ids must be integers, got {type(token_id).__name__}")
        if not 0 <= int(token_id) < self.vocab_size:
            raise IndexError(
                f"token id {int(token_id):,} is out of range: this table has rows 0 to {self.vocab_size - 1:,}"
            )

    # -- the other end ------------------------------------------------------------
    @property
    def has_output(self) -> bool:
        """Whether the output matrix can be read (E itself when tied)."""
        return self.tied is True or self._output is not None

    def output_table(self) -> EmbeddingTable | None:
        """The output matrix W_out (V, d) as a table: logits = h @ W_out.T.

        ``self`` when tied (the same rows); a table of the second matrix
        when untied (built once, read lazily like E); None when the files
        hold no output matrix.
        """
        if self.tied is True:
            return self
        if self._output is None:
            return None
        if self._memo.output is not None:
            return self._memo.output
        with self._memo.output_lock:
            if self._memo.output is None:
                self._memo.output = self._output()
            return self._memo.output

    # -- rows ----------------------------------------------------------------
    def _whole(self) -> np.ndarray | None:
        full = self._memo.full
        return full if full is not None else self._reader.whole()

    def rows(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Rows ``ids`` as float32, shape (len(ids), d), in the order given."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocab_size):
            bad = int(ids[(ids < 0) | (ids >= self.vocab_size)][0])
            self.check_id(bad)
        require(ids.size * self.dim * 4, f"reading {ids.size:,} rows of {self.dim:,} values", "ask for fewer rows")
        whole = self._whole()
        if whole is not None:
            return whole[ids]
        uniq, inverse = np.unique(ids, return_inverse=True)
        got = self._reader.read(uniq)
        return np.ascontiguousarray(got[inverse], dtype=np.float32)

    def row(self, token_id: int) -> np.ndarray:
        """Row ``token_id`` as float32, shape (d,)."""
        self.check_id(token_id)
        return self.rows([int(token_id)])[0]

    def block_rows_for(self, block_rows: int) -> int:
        """``block_rows`` capped so one block holds at most 64 M values (256 MB)."""
        return max(1, min(int(block_rows), _BLOCK_VALUES // self.dim))

    def iter_blocks(self, block_rows: int = 16384, stop: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (start, rows[start:start+n]) over the table, float32.

        Blocks hold ``block_rows`` rows, fewer for very wide tables (see
        :meth:`block_rows_for`); callers use ``len(rows)``.
        """
        stop = self.vocab_size if stop is None else min(stop, self.vocab_size)
        step = self.block_rows_for(block_rows)
        for start in range(0, stop, step):
            end = min(start + step, stop)
            whole = self._whole()
            if whole is not None:
                yield start, whole[start:end]
            else:
                yield start, np.asarray(self._reader.read_range(start, end), dtype=np.float32)

    def iter_native_blocks(self, block_bytes: int = _NATIVE_BLOCK_BYTES, stop: int | None = None) -> Iterator:
        """Yield (start, rows) over the table as torch tensors, for whole-table passes.

        A bfloat16 or float16 safetensors table comes as views of its
        memory-mapped file in the stored dtype (no float32 copy: torch
        multiplies bfloat16 natively); every other table as float32. Blocks
        hold about ``block_bytes`` bytes. A block is valid until the next one
        is asked for: its pages are then released from this process's memory.
        """
        stop = self.vocab_size if stop is None else min(stop, self.vocab_size)
        whole = self._whole()
        per_row = self.dim * (4 if whole is not None else self._reader.native_itemsize)
        step = max(1, min(int(block_bytes) // max(1, per_row), _BLOCK_VALUES // self.dim, _NATIVE_BLOCK_ROWS))
        for start in range(0, stop, step):
            end = min(start + step, stop)
            if whole is not None:
                import torch

                yield start, torch.from_numpy(whole[start:end])
                continue
            block = self._reader.native_range(start, end)
            try:
                yield start, block
            finally:
                del block
                self._reader.release_range(start, end)

    def matrix(self, progress: Callable[[float], None] | None = None) -> np.ndarray:
        """The whole table as float32 (V, d).

        Cached for tables that fit :data:`CACHE_ELEMENTS`; bigger ones are
        read every time.

        Raises
        ------
        MemoryLimitError
            When the machine does not have the memory for V x d float32.
        """
        whole = self._whole()
        if whole is not None:
            return whole
        with self._memo.lock:
            if self._memo.full is not None:
                return self._memo.full
            return run_to_end(self.iter_matrix(), progress)

    def iter_matrix(self) -> Generator[float, None, np.ndarray]:
        """:meth:`matrix` as a generator for a job: yields the fraction read after each block
        of at most :data:`STEP_VALUES` values (a chance to stop), returns the matrix (kept, as
        :meth:`matrix` keeps it). The loader's step had been the whole table at once: 1.4 s
        for a random 50,257 x 768."""
        whole = self._whole()
        if whole is not None:
            return whole
        if self._memo.full is not None:
            return self._memo.full
        require(self.params * 4, f"reading the whole {self.vocab_size:,} x {self.dim:,} table as float32")
        out = np.empty((self.vocab_size, self.dim), np.float32)
        for start, blk in self.iter_blocks(block_rows=max(1, STEP_VALUES // self.dim)):
            out[start : start + len(blk)] = blk
            yield (start + len(blk)) / self.vocab_size
        if not self.fits_in_memory:
            return out
        with self._memo.lock:
            if self._memo.full is None:
                self._memo.full = out
            return self._memo.full

    def unit_matrix(self) -> np.ndarray | None:
        """Trained rows scaled to unit L2 norm, float32 (trained_rows, d), cached.

        None for tables too big to hold (searches then stream). Rows with
        zero norm or non-finite values are NaN, so no search returns them.
        """
        if self._memo.unit is not None:
            return self._memo.unit
        if not self.fits_in_memory:
            return None
        with self._memo.lock:
            if self._memo.unit is not None:
                return self._memo.unit
            return run_to_end(self.iter_unit_matrix())

    def iter_unit_matrix(self) -> Generator[float, None, np.ndarray | None]:
        """:meth:`unit_matrix` as a generator for a job, yielding the fraction done after each
        block of rows: reading them (:meth:`iter_matrix`) to 0.5, normalising them to 1."""
        if self._memo.unit is not None:
            return self._memo.unit
        if not self.fits_in_memory:
            return None
        reading = self.iter_matrix()  # the first half of the way, when the rows are not read yet
        while True:
            try:
                yield 0.5 * next(reading)
            except StopIteration as stop:
                m = stop.value[: self.trained_rows]
                break
        require(2 * m.nbytes, f"normalising {m.shape[0]:,} rows for neighbour search")
        unit = np.empty(m.shape, np.float32)
        step = max(1, STEP_VALUES // max(1, self.dim))
        for start in range(0, len(m), step):
            blk = m[start : start + step]
            with np.errstate(invalid="ignore", over="ignore"):
                # squares summed in float64: in float32 any value above ~1.8e19 overflows
                # to an inf norm and would hide a finite row from every search
                norms = np.sqrt(np.einsum("ij,ij->i", blk, blk, dtype=np.float64)).astype(np.float32)
                bad = ~np.isfinite(norms) | (norms == 0)
                unit[start : start + len(blk)] = blk / np.where(bad, 1.0, norms)[:, None]
            unit[start : start + len(blk)][bad] = np.nan
            yield 0.5 + 0.5 * (start + len(blk)) / max(1, len(m))
        unit.flags.writeable = False
        with self._memo.lock:
            if self._memo.unit is None:
                self._memo.unit = unit
            return self._memo.unit

    def all_finite(self) -> bool:
        """Whether every value of the table is finite (no NaN, no inf); cached.

        One non-finite value turns a whole column of one-hot @ E into NaN while
        the gather stays finite, so comparisons of the two check this first.
        Tables that do not fit in memory are streamed once.
        """
        if self._memo.finite is not None:
            return self._memo.finite
        with self._memo.lock:
            if self._memo.finite is None:
                if self.fits_in_memory:
                    finite = bool(np.isfinite(self.matrix()).all())
                else:
                    finite = all(bool(np.isfinite(blk).all()) for _, blk in self.iter_blocks())
                self._memo.finite = finite
            return self._memo.finite

    def completion_pieces(self, limit: int = 200_000) -> list[str]:
        """Sorted distinct display forms of the trained rows' pieces, for
        search boxes; cached ([] past ``limit`` rows, too many to offer)."""
        return run_to_end(self.iter_completion_pieces(limit))

    def iter_completion_pieces(self, limit: int = 200_000, chunk: int = 8192) -> Iterator[tuple[float, str]]:
        """:meth:`completion_pieces` as a job: progress between chunks of ``chunk``
        rows (where a worker can stop it), the list as its return value.

        Reading every piece is Python work (0.3 s for MiniLM's 30,522, about
        1 s for SmolLM2's 49,152 here): asked for when a search box is first
        used, not while the model opens."""
        if self._memo.completions is not None:
            return self._memo.completions
        rows = self.trained_rows
        seen: set[str] = set()
        for start in range(0, rows if rows <= limit else 0, chunk):
            yield start / rows, "Listing the vocabulary for the search box…"
            seen.update(self.shown_piece(i).text for i in range(start, min(rows, start + chunk)))
        found = sorted(seen)
        with self._memo.lock:
            if self._memo.completions is None:
                self._memo.completions = found
            return self._memo.completions

    def sample_ids(self, n: int, seed: int = 0, include: Sequence[int] = ()) -> np.ndarray:
        """Sorted ids of ``n`` trained rows drawn without replacement, plus ``include``."""
        pool = self.trained_rows
        rng = np.random.default_rng(seed)
        if n >= pool:
            ids = np.arange(pool)
        else:
            ids = rng.choice(pool, size=n, replace=False)
        extra = np.asarray([i for i in include if 0 <= i < self.vocab_size], dtype=np.int64)
        return unique_sorted(np.concatenate([ids.astype(np.int64), extra]))

    def torch_table(self):
        """The stored table as a torch tensor (float32 for quantised GGUF).

        Used where the real memory layout matters (the lookup measurement).

        Raises
        ------
        MemoryLimitError
            When the machine does not have the memory for it.
        """
        import torch

        tensor = getattr(self._reader, "tensor", None)
        if tensor is not None:
            require(self.stored_bytes, f"loading the {self.vocab_size:,} x {self.dim:,} {self.dtype} table")
            return tensor()
        return torch.from_numpy(self.matrix())

    def stored_buffer(self) -> StoredBuffer:
        """The real address where the stored table starts in this process.

        For a quantised GGUF table it is that of its blocks in the
        memory-mapped file; otherwise ``torch_table().data_ptr()``.
        """
        raw = self._reader.stored()
        if isinstance(raw, np.ndarray) and str(self.dtype) not in ("float32", "float16", "bfloat16"):
            return StoredBuffer(
                int(raw.__array_interface__["data"][0]), raw,
                f"the {self.dtype} blocks of the memory-mapped GGUF file",
            )
        tensor = self.torch_table()
        return StoredBuffer(
            int(tensor.data_ptr()), tensor,
            f"E.data_ptr() ({str(tensor.dtype).replace('torch.', '')} tensor, this process)",
        )

    def piece(self, token_id: int) -> str:
        """The tokenizer's piece for ``token_id`` (``<id>`` when it has none)."""
        return self.tokenizer.piece(int(token_id))

    def shown_piece(self, token_id: int) -> DisplayPiece:
        """What the piece of ``token_id`` stands for, readable (decoded bytes,
        visible spaces; see :func:`explorer.core.tokens.pieces.display_piece`)."""
        return display_piece(self.tokenizer.piece(int(token_id)), self.tokenizer.family)
