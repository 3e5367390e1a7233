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
