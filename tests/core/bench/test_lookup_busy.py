"""The lookup lesson on a busy machine (issue 23): a batch whose shortest calls
waited off the CPU is measured again, and flagged ``disturbed`` with a note if
it stays so. The machine is played by clocks of the test's own
(tests/support/clocks.py), so the outcome does not depend on this machine's
load; the real busy machine is measured by ``bench --busy``."""

from __future__ import annotations

import pytest
import torch

from explorer.core import bench
from explorer.core.bench.busy import BusyLookup, format_busy
from explorer.core.bench.timing import Timed, interleaved_times
from explorer.core.sources import open_table
from tests.support.clocks import PlayedMachine
from tests.support.jobs import drain

SPEC = "random:300x8"
BATCHES = (1, 8)
REPEATS = 3
#: timed calls in one attempt at one batch: the gather's many and one each of the other two, per round
CALLS_PER_ATTEMPT = REPEATS * (bench.lookup.GATHER_REPEATS_FACTOR + 2)


def _measure(machine: PlayedMachine):
    return bench.bench_lookup(open_table(SPEC), batch_sizes=BATCHES, repeats=REPEATS, clocks=machine.clocks)


def test_a_machine_busy_throughout_is_measured_again_and_flagged():
    threads = torch.get_num_threads()
    m = _measure(PlayedMachine(busy_calls=None))
    assert torch.get_num_threads() == threads  # restored after timing at one thread
    assert m.threads == 1 and m.agree
    assert all(b.disturbed and b.attempts == bench.lookup.MAX_ATTEMPTS for b in m.batches)
    assert m.disturbed
    (note,) = [n for n in m.notes if "busy" in n]
    assert "batch 1, 8" in note and "Measure again" in note
    data = m.as_json()
    assert data["disturbed"] and all(b["disturbed"] for b in data["batches"])


def test_a_quiet_machine_is_measured_once_and_not_flagged():
    m = _measure(PlayedMachine(busy_calls=0))
    assert [b.attempts for b in m.batches] == [1, 1]
    assert not m.disturbed and not any("busy" in n for n in m.notes)
    assert not m.as_json()["disturbed"]


def test_a_busy_spell_during_the_first_attempt_is_measured_again_and_the_quiet_attempt_kept():
    machine = PlayedMachine(busy_calls=CALLS_PER_ATTEMPT)  # the whole first attempt at batch 1
    m = _measure(machine)
    first, second = m.batches
    assert first.attempts == 2 and not first.disturbed
    assert second.attempts == 1 and not second.disturbed
    assert machine.calls == 3 * CALLS_PER_ATTEMPT  # two attempts at batch 1, one at batch 8
    # the kept calls are the quiet attempt's: one played tick each
    assert first.gather_s == pytest.approx(1e-3) and first.onehot_s == pytest.approx(1e-3)
    assert not m.disturbed and not any("busy" in n for n in m.notes)


def test_one_busy_call_in_a_round_does_not_flag_the_best_call():
    m = _measure(PlayedMachine(busy_calls=1))  # only the very first gather call waited
    assert [b.attempts for b in m.batches] == [1, 1] and not m.disturbed
    assert m.batches[0].gather_median_s >= m.batches[0].gather_s


def test_a_call_that_waits_off_the_cpu_is_flagged_and_one_that_works_is_not():
    busy = interleaved_times({"f": lambda: None}, rounds=3, clocks=PlayedMachine(busy_calls=None).clocks)
    quiet = interleaved_times({"f": lambda: None}, rounds=3, clocks=PlayedMachine(busy_calls=0).clocks)
    assert busy["f"].disturbed and not quiet["f"].disturbed
    assert busy["f"].best_s == pytest.approx(10e-3) and quiet["f"].best_s == pytest.approx(1e-3)
    assert busy["f"].cpu_s == pytest.approx(1e-3)


def test_merged_keeps_the_shorter_best_call():
    a, b = Timed(2e-6, 3e-6, 2e-6), Timed(9e-3, 9e-3, 2e-6)
    assert a.merged(b) is a and b.merged(a) is a
    assert not a.disturbed and b.disturbed


@pytest.mark.parametrize("busy_calls", [0, CALLS_PER_ATTEMPT, None])
def test_progress_stays_in_order_when_a_batch_is_measured_again(busy_calls):
    progress, m = drain(bench.iter_bench_lookup(open_table(SPEC), batch_sizes=BATCHES, repeats=REPEATS,
                                                clocks=PlayedMachine(busy_calls).clocks))
    fractions = [f for f, _ in progress]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    again = [msg for _, msg in progress if "again" in msg]
    assert bool(again) == (busy_calls != 0)
    assert all(1 <= b.attempts <= bench.lookup.MAX_ATTEMPTS for b in m.batches)


def test_the_busy_benchmark_passes_when_the_lesson_holds_or_is_flagged():
    def result(busy_ratio, disturbed):
        return BusyLookup("random:20000x128", 2, (1, 8), (150.0, 40.0), (300.0, 50.0), busy_ratio, disturbed,
                          (1, 3), True)

    held = result((590.0, 21.0), (False, False))  # within 2x of the quiet range (150-300, 40-50)
    flagged = result((20.0, 60.0), (True, False))
    faked = result((20.0, 101.0), (False, False))  # a busy machine faked the lesson and said nothing
    assert held.passed and flagged.passed and not faked.passed
    assert faked.held == (False, False) and held.held == (True, True)
    assert "FAIL" in format_busy(faked) and "NOT flagged" in format_busy(faked)
    assert "PASS" in format_busy(flagged) and "flagged busy" in format_busy(flagged)
    assert held.as_json()["passed"] is True
