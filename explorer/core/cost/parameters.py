"""Parameters and memory of an embedding table.

Every figure here is a formula on V (rows) and d (columns); see FACTS.md,
"Parameters and memory". No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DTYPE_BYTES",
    "dtype_bytes",
    "params",
    "table_bytes",
    "adam_training_bytes",
    "factorised_params",
    "TableCost",
    "table_cost",
    "REFERENCE_MODELS",
    "REFERENCE_TIED",
    "DTYPE_ORDER",
    "DtypeBytes",
    "bytes_per_dtype",
    "tying_text",
    "factorised_break_even",
    "largest_saving_rank",
    "Factorisation",
    "factorisation",
    "RowLayout",
    "row_layout",
    "NamedCost",
    "comparison",
    "embedding_scale",
]

#: bytes per element of the plain dtypes a table can be viewed in
DTYPE_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}


def dtype_bytes(dtype: str) -> int:
    """Bytes per element of ``dtype`` (one of :data:`DTYPE_BYTES`)."""
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}") from None


def params(vocab_size: int, dim: int) -> int:
    """Parameters of a V x d table: V * d."""
    return int(vocab_size) * int(dim)


def table_bytes(vocab_size: int, dim: int, dtype: str = "float32") -> int:
    """Bytes of the whole table in ``dtype``: V * d * sizeof(dtype)."""
    return params(vocab_size, dim) * dtype_bytes(dtype)


def adam_training_bytes(vocab_size: int, dim: int, dtype: str = "float32") -> int:
    """Weights + gradient + Adam's two moments: 4 copies of the table."""
    return 4 * table_bytes(vocab_size, dim, dtype)


def factorised_params(vocab_size: int, dim: int, k: int) -> int:
    """Parameters of E ~ A (V x k) B (k x d): V*k + k*d."""
    return int(vocab_size) * int(k) + int(k) * int(dim)


@dataclass(frozen=True)
class TableCost:
    vocab_size: int
    dim: int
    params: int
    bytes_by_dtype: dict
    adam_bytes_float32: int
    row_bytes_float32: int
    #: share of the whole model's parameters, or None when unknown
    model_share: float | None
    #: parameters tying saves (an untied output projection is another V*d)
    tying_saves: int


def table_cost(vocab_size: int, dim: int, model_params: int | None = None) -> TableCost:
    p = params(vocab_size, dim)
    return TableCost(
        vocab_size=int(vocab_size),
        dim=int(dim),
        params=p,
        bytes_by_dtype={k: p * v for k, v in DTYPE_BYTES.items() if k != "float64"},
        adam_bytes_float32=adam_training_bytes(vocab_size, dim),
        row_bytes_float32=int(dim) * 4,
        model_share=(p / model_params) if model_params else None,
        tying_saves=p,
    )


#: (name, V, d, total model parameters or None)
REFERENCE_MODELS = [
    ("GPT-2 small", 50_257, 768, 124_439_808),
    ("GPT-2 XL", 50_257, 1_600, 1_557_611_200),
    ("BERT-base", 30_522, 768, 109_482_240),
    ("Llama 3 8B", 128_256, 4_096, 8_030_261_248),
    ("Llama 3 70B", 128_256, 8_192, 70_553_706_496),
    ("Gemma 2B", 256_000, 2_048, 2_506_172_416),
    ("Transformer (2017)", 37_000, 512, 65_000_000),
]


# --------------------------------------------------------------------------
# The cost card and the comparison (issue #7)
# --------------------------------------------------------------------------

#: the dtypes the cost card lists, in this order
DTYPE_ORDER = ("float32", "float16", "bfloat16", "int8")

#: whether the output projection reuses E in each reference model
REFERENCE_TIED = {
    "GPT-2 small": True,
    "GPT-2 XL": True,
    "BERT-base": True,  # the masked-LM head's decoder is the word-embedding matrix
    "Llama 3 8B": False,
    "Llama 3 70B": False,
    "Gemma 2B": True,
    "Transformer (2017)": True,  # one matrix for both embeddings and the pre-softmax projection
}


@dataclass(frozen=True)
class DtypeBytes:
    """Size of the table in one dtype.

    Attributes
    ----------
    dtype : str
    itemsize : int
        Bytes per element.
    bytes : int
        V * d * itemsize.
    mb, mib : float
        bytes / 1000**2 and bytes / 1024**2.
    """

    dtype: str
    itemsize: int
    bytes: int

    @property
    def mb(self) -> float:
        return self.bytes / 1000**2

    @property
    def mib(self) -> float:
        return self.bytes / 1024**2


def bytes_per_dtype(vocab_size: int, dim: int, dtypes=DTYPE_ORDER) -> list[DtypeBytes]:
    """The table's size in each of ``dtypes`` (V * d * sizeof(dtype))."""
    return [DtypeBytes(dt, dtype_bytes(dt), table_bytes(vocab_size, dim, dt)) for dt in dtypes]


def factorised_break_even(vocab_size: int, dim: int) -> float:
    """The k at which V*k + k*d equals V*d: k = V*d / (V + d).

    A factorisation with a smaller k has fewer parameters than E; the break-even
    is rarely a whole number, so say which ranks save with
    :func:`largest_saving_rank`, never with this value rounded.
    """
    v, d = int(vocab_size), int(dim)
    return v * d / (v + d) if v + d else 0.0


def largest_saving_rank(vocab_size: int, dim: int) -> int:
    """The largest k with V*k + k*d < V*d (0 when none saves).

    In integers, so no rounding can move it: for MiniLM (30,522 x 384) the
    break-even is 379.2 and k = 379 still saves (largest k = 379, not 378).
    """
    v, d = int(vocab_size), int(dim)
    if v <= 0 or d <= 0:
        return 0
    return (v * d - 1) // (v + d)


@dataclass(frozen=True)
class Factorisation:
    """E ~ A (V x k) B (k x d) against E itself.

    Attributes
    ----------
    vocab_size, dim, k : int
    params : int
        V*k + k*d.
    full_params : int
        V*d.
    break_even : float
        V*d / (V + d).
    largest_saving_k : int
        The largest k that still has fewer parameters than E.
    """

    vocab_size: int
    dim: int
    k: int
    params: int
    full_params: int
    break_even: float
    largest_saving_k: int

    @property
    def ratio(self) -> float:
        """params / (V*d); NaN for an empty table."""
        return self.params / self.full_params if self.full_params else float("nan")

    @property
    def saves(self) -> bool:
        return self.params < self.full_params


def factorisation(vocab_size: int, dim: int, k: int) -> Factorisation:
    """The factorised alternative of rank ``k`` to a V x d table."""
    return Factorisation(int(vocab_size), int(dim), int(k), factorised_params(vocab_size, dim, k),
                         params(vocab_size, dim), factorised_break_even(vocab_size, dim),
                         largest_saving_rank(vocab_size, dim))


@dataclass(frozen=True)
class RowLayout:
    """How one row is stored, and what it would take in float32.

    Attributes
    ----------
    dtype : str
        The stored type: float32, float16, bfloat16, or a GGUF type (Q8_0, F16 ...).
    dim : int
    row_bytes : int
        Bytes of one stored row: the row stride, offset of row i = i * row_bytes.
    block_values, block_bytes : int
        A block-quantised row is stored as blocks of ``block_values`` values,
        ``block_bytes`` bytes each (Q8_0: 32 values, 34 bytes: 32 int8 and one
        float16 scale). Plain dtypes: 1 value, itemsize bytes.
    float32_row_bytes : int
        d * 4: the same row as float32 (what lookups return).
    """

    dtype: str
    dim: int
    row_bytes: int
    block_values: int
    block_bytes: int
    float32_row_bytes: int

    @property
    def blocks(self) -> int:
        """Blocks per row (d for a plain dtype)."""
        return self.dim // self.block_values if self.block_values else 0

    @property
    def quantised(self) -> bool:
        """Stored in blocks of several values with their own scale."""
        return self.block_values > 1

    @property
    def bytes_per_value(self) -> float:
        return self.row_bytes / self.dim if self.dim else 0.0


def _quant_block(dtype: str) -> tuple[int, int] | None:
    """(values, bytes) of one block of GGML type ``dtype`` (e.g. Q8_0 -> (32, 34)), or None."""
    try:
        import gguf

        return tuple(int(x) for x in gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[dtype]])
    except (ImportError, KeyError, AttributeError):
        return None


def row_layout(dtype: str, dim: int, row_bytes: int) -> RowLayout:
    """The stored layout of a row of ``dim`` values taking ``row_bytes`` bytes.

    Plain dtypes are one value per element; GGUF block quantisations are
    looked up in the gguf package (imported only for them). A layout that
    cannot be told is described as ``row_bytes`` in one block.
    """
    dim, row_bytes = int(dim), int(row_bytes)
    if dtype in DTYPE_BYTES:
        block = (1, DTYPE_BYTES[dtype])
    else:
        block = _quant_block(dtype)
        if block is None or not block[0] or dim % block[0] or dim // block[0] * block[1] != row_bytes:
            block = (dim, row_bytes)
    return RowLayout(dtype, dim, row_bytes, block[0], block[1], dim * 4)


#: table kinds with no model around them: whether they would tie is not known


def tying_text(vocab_size: int, dim: int, tied: bool | None) -> str:
    """One sentence on weight tying for a V x d table."""
    p = params(vocab_size, dim)
    if tied is True:
        return f"Tied: the output projection reuses E, saving V × d = {p:,} parameters."
    if tied is False:
        return (f"Not tied: the output projection is a second V × d matrix ({p:,} more parameters); "
                "tying would save them.")
    return f"No output projection found (or it cannot be told); a tied one would reuse these {p:,} parameters."


@dataclass(frozen=True)
class NamedCost:
    """A model's name, its table cost and whether it ties its output projection."""

    name: str
    cost: TableCost
    tied: bool | None
    loaded: bool = False


def comparison(loaded: tuple[str, int, int, int | None, bool | None] | None = None) -> list[NamedCost]:
    """Cost of the reference tables, plus the loaded one, sorted by parameters.

    Parameters
    ----------
    loaded : (name, V, d, model_params or None, tied or None), optional

    Returns
    -------
    list of NamedCost, smallest table first.
    """
    out = [NamedCost(n, table_cost(v, d, p), REFERENCE_TIED.get(n)) for n, v, d, p in REFERENCE_MODELS]
    if loaded is not None:
        name, v, d, p, tied = loaded
        out.append(NamedCost(name, table_cost(v, d, p), tied, loaded=True))
    return sorted(out, key=lambda c: (c.cost.params, c.name))


def embedding_scale(dim: int) -> float:
    """sqrt(d_model), the factor the original Transformer multiplies embeddings by."""
    return float(int(dim)) ** 0.5 if dim > 0 else 0.0
