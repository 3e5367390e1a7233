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
    "format_bytes",
    "REFERENCE_TIED",
    "DTYPE_ORDER",
    "DtypeBytes",
    "bytes_per_dtype",
    "tying_text",
    "factorised_break_even",
    "NamedCost",
    "comparison",
    "embedding_scale",
    "format_count",
    "format_mb",
    "format_mib",
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


def format_bytes(n: float) -> str:
    """Bytes in decimal and binary units, e.g. '154.39 MB (147.24 MiB)'."""
    n = float(n)
    if n < 1000:
        return f"{n:,.0f} bytes"
    for unit, bunit, p in (("kB", "KiB", 1), ("MB", "MiB", 2), ("GB", "GiB", 3), ("TB", "TiB", 4)):
        if n < 1000 ** (p + 1) or unit == "TB":
            return f"{n / 1000 ** p:,.2f} {unit} ({n / 1024 ** p:,.2f} {bunit})"
    raise AssertionError  # pragma: no cover


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

    A factorisation with a smaller k has fewer parameters than E.
    """
    v, d = int(vocab_size), int(dim)
    return v * d / (v + d) if v + d else 0.0


def tying_text(vocab_size: int, dim: int, tied: bool | None) -> str:
    """One sentence on weight tying for a V x d table."""
    p = params(vocab_size, dim)
    if tied is True:
        return f"Tied: the output projection reuses E, saving V × d = {p:,} parameters."
    if tied is False:
        return f"Not tied: the output projection is a second V × d matrix ({p:,} more parameters); tying would save them."
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


def format_count(n: float) -> str:
    """A parameter count in words: '38.6 M', '1.05 B', '12'."""
    n = float(n)
    if abs(n) >= 1e9:
        return f"{n / 1e9:,.2f} B"
    if abs(n) >= 1e6:
        return f"{n / 1e6:,.1f} M"
    if abs(n) >= 1e4:
        return f"{n / 1e3:,.1f} k"
    return f"{n:,.0f}"


def format_mb(n: float) -> str:
    """Decimal megabytes with two decimals: '154.39 MB'."""
    return f"{float(n) / 1000**2:,.2f} MB"


def format_mib(n: float) -> str:
    """Binary mebibytes with two decimals: '147.24 MiB'."""
    return f"{float(n) / 1024**2:,.2f} MiB"
