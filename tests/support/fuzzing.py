"""What every fuzz target checks, and the hypothesis settings they share."""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, settings

from explorer.core.errors import ExplorerError, user_message
from explorer.core.tokens.inspection import InspectLimits, inspect_text

#: what a fuzz module may allocate beyond the process's size when it starts
HEADROOM = 4 * 1024**3

#: examples per target in CI (each target's own default) unless a longer run is asked for
LONG_RUN = int(os.environ.get("EXPLORER_FUZZ_EXAMPLES", "0") or 0)


def fuzz_settings(ci_examples: int, long_share: float = 1.0):
    """Deterministic settings: derandomized, no database, no deadline (time
    is bounded by sizes, never by the clock). A long run gives each target
    ``long_share`` of the examples asked for (a slow target less)."""
    return settings(
        max_examples=max(ci_examples, int(LONG_RUN * long_share)) if LONG_RUN else ci_examples,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
    )


def check_error(exc: BaseException) -> None:
    """An error the user sees: our own type, one line, not empty, not a novel."""
    assert isinstance(exc, ExplorerError), f"{type(exc).__name__}: {exc}"
    msg = str(exc)
    assert msg.strip(), "empty message"
    assert len(msg.splitlines()) == 1 and "\n" not in msg and "\r" not in msg, repr(msg)
    assert len(msg) < 700, f"{len(msg)} characters"
    assert user_message(exc) == " ".join(msg.split())
    msg.encode("utf-8")  # printable: no lone surrogate


def outcome(fn, *args, **kwargs):
    """``fn(*args)``'s result, or the ExplorerError it raised (checked).
    Anything else propagates and fails the example."""
    try:
        return fn(*args, **kwargs)
    except ExplorerError as exc:
        check_error(exc)
        return exc


SMALL_LIMITS = InspectLimits(search_macs=200_000_000, scan_values=50_000_000, row_values=200_000)


def check_inspect(table, text: str, limits: InspectLimits = SMALL_LIMITS):
    """Run inspect's data function on ``text``; check the result's bounds,
    spans and strict JSON, or the error."""
    got = outcome(inspect_text, table, text, 3, limits)
    if isinstance(got, ExplorerError):
        return got
    w = got.work
    assert w.search_macs <= limits.search_macs and w.row_values <= limits.row_values
    assert w.scanned_values <= limits.scan_values
    for t, row in zip(got.tokens, got.rows):
        assert 0 <= t.start <= t.end <= len(got.text)
        if t.ok:
            assert 0 <= t.id < table.vocab_size
        else:  # kept, with its reason, and never a row index (issue 12)
            assert t.id == -1 or t.id >= table.vocab_size
            assert row is None
    assert len(got.text) == len(text)
    data = got.as_json()
    # bad tokens are counted in one note per kind, never one message each
    assert len(data["notes"]) <= len(table.notes) + 8
    assert all(len(n) < 700 for n in data["notes"])
    out = json.dumps(data, allow_nan=False)
    out.encode("utf-8")
    return got


def vm_data_bytes() -> int | None:
    """This process's data segment (what RLIMIT_DATA limits), from /proc, or None."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None
