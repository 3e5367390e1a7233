"""Bytes, seconds, counts and shares as the app writes them (explorer.core.units)."""

from __future__ import annotations

import doctest

from explorer.core import units


def test_the_docstring_examples_hold():
    assert doctest.testmod(units).failed == 0


def test_format_bytes_gpt2_small():
    assert units.format_bytes(154_389_504) == "154.39 MB (147.24 MiB)"
    assert units.format_bytes(77_194_752) == "77.19 MB (73.62 MiB)"
    assert units.format_bytes(512) == "512 bytes"


def test_format_size_keeps_small_differences_visible():
    assert units.format_size(154_389_504) == "154.39 MB"
    assert units.format_size(154_389_504, binary=True) == "147.24 MiB"
    assert units.format_size(2_101_350_000) == "2.10 GB"
    assert units.format_size(12_800) == "12.80 kB" and units.format_size(6_400) == "6.40 kB"
    assert units.format_size(999) == "999 bytes"
    assert units.format_size(5e15) == "5,000.00 TB"


def test_format_percent_never_rounds_to_a_false_whole():
    inside = 0.99**768  # FACTS: 0.000444, so 99.956 % in the outer shell
    assert units.format_percent(1 - inside, rest=inside) == "99.96 %"
    inside = 0.99**4096
    assert 1 - inside == 1.0 and units.format_percent(1 - inside, rest=inside) == "> 99.99 %"
    assert units.format_percent(1.0) == "100.00 %" and units.format_percent(0.0) == "0.00 %"
    assert units.format_percent(1e-9) == "< 0.01 %" and units.format_percent(0.31) == "31.00 %"


def test_time_ticks_at_every_decade():
    want = {-9: "1 ns", -8: "10 ns", -7: "100 ns", -6: "1 µs", -5: "10 µs", -4: "100 µs", -3: "1 ms",
            -2: "10 ms", -1: "100 ms", 0: "1 s", 1: "10 s", 2: "100 s"}
    assert {k: units.short_seconds(10.0**k) for k in want} == want


def test_size_and_count_ticks():
    assert [units.short_size(10.0**k) for k in (2, 3, 7, 9, 12)] == ["100 B", "1 kB", "10 MB", "1 GB", "1 TB"]
    assert [units.short_count(10.0**k) for k in (2, 3, 7, 9, 11)] == ["100", "1 k", "10 M", "1 B", "100 B"]


def test_ordinals_follow_english():
    # the Matrix view's "every 3rd row": the teens take "th", the rest follow the last digit
    cases = {1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st",
             22: "22nd", 23: "23rd", 101: "101st", 111: "111th", 112: "112th", 1002: "1,002nd", 0: "0th"}
    assert {n: units.format_ordinal(n) for n in cases} == cases
