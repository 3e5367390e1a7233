"""Bytes, seconds, counts and shares written for people: the one home of the
app's units, and of text cut to a number of characters (:func:`shorten`).
No Qt here.

Sizes are decimal (1 kB = 1,000 bytes, 1 MB = 1000² bytes) as everywhere in
the app; binary units (KiB, MiB = 1024² bytes) only where asked. Two families:

* ``format_*``: text, table cells and reports, with two decimals and
  thousands separators (``'154.39 MB'``, ``'4.56 ms'``, ``'38.6 M'``);
* ``short_*``: axis ticks at powers of ten, no trailing zeros (``'1 GB'``,
  ``'10 µs'``, ``'100 k'``).
"""

from __future__ import annotations

__all__ = [
    "format_size",
    "format_bytes",
    "format_size_exact",
    "format_mb",
    "format_mib",
    "format_seconds",
    "format_count",
    "format_percent",
    "format_ordinal",
    "short_size",
    "short_count",
    "short_seconds",
    "shorten",
]

_DECIMAL_UNITS = ("kB", "MB", "GB", "TB")
_BINARY_UNITS = ("KiB", "MiB", "GiB", "TiB")


def format_size(n: float, binary: bool = False) -> str:
    """Bytes in the unit that keeps them readable, two decimals.

    Never rounds a size to 0.01 of a too-large unit, so a 2x difference
    between two small tables stays visible.

    Examples
    --------
    >>> format_size(154_389_504), format_size(154_389_504, binary=True)
    ('154.39 MB', '147.24 MiB')
    >>> format_size(2_101_350_000), format_size(12_800), format_size(999), format_size(5e15)
    ('2.10 GB', '12.80 kB', '999 bytes', '5,000.00 TB')
    """
    n = float(n)
    base = 1024 if binary else 1000
    units = _BINARY_UNITS if binary else _DECIMAL_UNITS
    if abs(n) < base:
        return f"{n:,.0f} bytes"
    p = 1
    while p < len(units) and abs(n) >= base ** (p + 1):
        p += 1
    return f"{n / base ** p:,.2f} {units[p - 1]}"


def format_bytes(n: float) -> str:
    """Bytes in decimal units and, in brackets, binary ones (where the two differ).

    Examples
    --------
    >>> format_bytes(154_389_504), format_bytes(512)
    ('154.39 MB (147.24 MiB)', '512 bytes')
    """
    if abs(float(n)) < 1000:
        return format_size(n)
    p = 1
    while p < len(_DECIMAL_UNITS) and abs(float(n)) >= 1000 ** (p + 1):
        p += 1
    return f"{format_size(n)} ({float(n) / 1024 ** p:,.2f} {_BINARY_UNITS[p - 1]})"


def format_size_exact(n: float | None) -> str:
    """A readable size and the exact count of bytes, for reports; ``'-'`` for None.

    Examples
    --------
    >>> format_size_exact(12_345_678), format_size_exact(None)
    ('12.35 MB (12,345,678 bytes)', '-')
    """
    if n is None:
        return "-"
    return f"{format_size(n)} ({int(n):,} bytes)"


def format_mb(n: float) -> str:
    """Always decimal megabytes, two decimals (sizes compared side by side).

    >>> format_mb(154_389_504)
    '154.39 MB'
    """
    return f"{float(n) / 1000**2:,.2f} MB"


def format_mib(n: float) -> str:
    """Always binary mebibytes, two decimals.

    >>> format_mib(154_389_504)
    '147.24 MiB'
    """
    return f"{float(n) / 1024**2:,.2f} MiB"


def format_seconds(s: float | None) -> str:
    """Seconds with a unit that suits their size; ``'-'`` for None.

    >>> format_seconds(12.34e-6), format_seconds(4.561e-3), format_seconds(7.891), format_seconds(None)
    ('12.3 µs', '4.56 ms', '7.89 s', '-')
    """
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:,.1f} µs"
    if s < 1:
        return f"{s * 1e3:,.2f} ms"
    return f"{s:,.2f} s"


def format_count(n: float) -> str:
    """A count (of parameters, say) in words.

    >>> format_count(38_597_376), format_count(1_050_673_152), format_count(12_800), format_count(12)
    ('38.6 M', '1.05 B', '12.8 k', '12')
    """
    n = float(n)
    if abs(n) >= 1e9:
        return f"{n / 1e9:,.2f} B"
    if abs(n) >= 1e6:
        return f"{n / 1e6:,.1f} M"
    if abs(n) >= 1e4:
        return f"{n / 1e3:,.1f} k"
    return f"{n:,.0f}"


def format_percent(fraction: float, decimals: int = 2, rest: float | None = None) -> str:
    """A share as a percentage that never rounds to a false 0 % or 100 %.

    ``rest`` is 1 - fraction when it is known more precisely than the
    subtraction gives it (1 - 0.99**4096 is 1.0 in floating point, yet the
    rest, 1.2e-18, is not 0): the share is then '> 99.99 %'.

    >>> format_percent(0.99956), format_percent(1e-9), format_percent(0.31), format_percent(float("nan"))
    ('99.96 %', '< 0.01 %', '31.00 %', '–')
    """
    x = float(fraction)
    if x != x:
        return "–"
    step = 10.0 ** -decimals
    pct = 100 * x
    below_one = x < 1 if rest is None else float(rest) > 0
    if x > 0 and pct < step:
        return f"< {step:.{decimals}f} %"
    if below_one and pct > 100 - step:
        return f"> {100 - step:.{decimals}f} %"
    return f"{pct:,.{decimals}f} %"


def format_ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``12th``, ``13th``, ``21st``, ``1,002nd``."""
    n = int(n)
    tens = abs(n) % 100
    suffix = "th" if 11 <= tens <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(abs(n) % 10, "th")
    return f"{n:,}{suffix}"


def _short(n: float, scales: tuple[tuple[str, float], ...], rest: str) -> str:
    for unit, scale in scales:
        if n >= scale * (1 - 1e-12):  # 10.0 ** -6 may fall an ulp short of 1e-6
            return f"{n / scale:g} {unit}"
    return f"{n:g}{rest}"


def short_size(n: float) -> str:
    """A tick label for a size in bytes (decimal units, ``B`` for bytes).

    >>> short_size(1e9), short_size(1e4), short_size(100)
    ('1 GB', '10 kB', '100 B')
    """
    return _short(n, (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)), " B")


def short_count(n: float) -> str:
    """A tick label for a count.

    >>> short_count(1e9), short_count(1e5), short_count(100)
    ('1 B', '100 k', '100')
    """
    return _short(n, (("B", 1e9), ("M", 1e6), ("k", 1e3)), "")


def short_seconds(s: float) -> str:
    """A tick label for a time.

    >>> short_seconds(1e-9), short_seconds(1e-5), short_seconds(0.1), short_seconds(100)
    ('1 ns', '10 µs', '100 ms', '100 s')
    """
    return _short(s, (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)), " s")


def shorten(text: str, n: int = 16) -> str:
    """``text`` cut to at most ``n`` characters, ending in "…" when cut (a label,
    a name in a table, an excerpt in a tooltip). Cutting to fit pixels is the
    view's job (``QFontMetrics.elidedText``).

    >>> shorten("unbelievable", 8), shorten("cat", 8), shorten("unbelievable", 1)
    ('unbelie…', 'cat', 'u…')
    """
    return text if len(text) <= n else text[: max(1, n - 1)] + "…"
