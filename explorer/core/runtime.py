"""Process-wide settings for the numeric libraries. No Qt here."""

from __future__ import annotations

import _thread
import contextlib
import gc
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator


def limit_torch_threads(import_torch: bool = True) -> None:
    """Leave a core free (for the GUI) on machines with more than one.

    With ``import_torch`` False nothing happens unless torch is already
    loaded: importing it costs over a second and is never done just for this.
    Safe to call any number of times.
    """
    if "torch" not in sys.modules and not import_torch:
        return
    # an import, not sys.modules["torch"]: another thread (the warm-up) may be
    # half-way through importing torch, and the import waits for it to finish
    # where the bare module would lack get_num_threads
    import torch
    n = os.cpu_count() or 1
    if n > 1 and torch.get_num_threads() >= n:
        torch.set_num_threads(n - 1)


def let_blas_threads_sleep() -> None:
    """Have OpenBLAS's threads sleep between tasks (``OPENBLAS_THREAD_TIMEOUT=4``); only before numpy is
    first imported, and a value the user set stays.

    OpenBLAS's threads wait for their next task by spinning, for 2^28 cycles (about 0.1 s) after each
    product of a worker, on a core the window's thread and the X server need. In a 5,000-action walk
    that was 7.6 s of a core, 92 ms of it inside one stall of the window; a product of 800 x 800 was
    followed by 104 ms of the process's CPU while it slept, and by none at 2^4 cycles, as fast.
    """
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")


def _glibc():
    """The C library when it is glibc (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "mallopt") else None
    except OSError:  # musl and friends: no libc.so.6
        return None


#: glibc's mallopt parameter for the size from which blocks are mapped on their own
_M_MMAP_THRESHOLD = -3
#: blocks from this size get their own mapping, unmapped (and given back) on free
MMAP_THRESHOLD_BYTES = 1 << 20


def return_big_blocks_at_once() -> bool:
    """Make every block of 1 MB or more its own memory mapping (glibc).

    glibc raises its mapping threshold each time a mapped block is freed,
    up to 32 MB, so after the first model the big arrays of the next ones
    come from the heaps of the threads that made them (the workers), and a
    dropped model's memory stayed with the process: a soak run grew 30-50 MB
    over 76 switches and kept 150-200 MB after leaving MiniLM. A fixed
    threshold keeps big blocks mapped, and free gives them back at once,
    with no lock held over the heaps (``malloc_trim`` after each switch
    did the same but held that lock for tens of milliseconds and stalled
    the window). Returns False
    where there is no glibc.
    """
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


#: how long a thread may hold the GIL while another waits for it (Python's default is 5 ms)
GIL_SWITCH_INTERVAL_S = 0.0002


def favour_the_gui_thread() -> None:
    """Hand the GIL over every 0.2 ms instead of every five (and every 0.02 ms while the window is
    in a turn: :data:`TURN_SWITCH_INTERVAL_S`).

    A paint runs many short Python callbacks between calls into Qt; each
    time the GUI thread gives the GIL up inside Qt, a worker running Python
    (indexing 128,000 pieces during a load, listing models) keeps it for the
    whole switch interval. Twenty callbacks per paint made a 100-170 ms stall
    of the window while the biggest table opened at 5 ms. Measured in a real
    window (MiniLM, 16 tab switches with resizes, a worker looping in
    Python): median stall 590-610 ms at 1 ms, 190-240 ms at 0.2 ms, 150-175 ms
    at 0.1-0.05 ms; 61-74 ms with no worker. Workers lose little: their heavy
    work runs in numpy and torch without the GIL, and model loads took as
    long at 0.2 ms as at 1 ms.
    """
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)


#: the switch interval while the window's thread is in a turn (:class:`WindowTurns`): a turn calls into Qt
#: hundreds of times, each call lets the GIL go, and a worker running Python takes it each time, keeping it
#: a whole interval once the window is back. Tab switches with resizes in a real window (the bundled model,
#: a thread looping in Python beside it; four rounds of 24 for each, alternated): median 90 ms (p90 155) at
#: 0.2 ms, 71 (126) at 0.05 ms in turns, 68 (117) at 0.02 ms, 69 (109) at 0.01 ms; 35 (46) with no such
#: thread (a run before). The price: a turn of pure Python beside that thread took 50 ms instead of 46
TURN_SWITCH_INTERVAL_S = 0.00002

#: the longest a worker waits at one of its yields for the window's thread to finish a turn
GIVE_WAY_MAX_S = 0.05
#: a turn of the window at least this long says the window is at work (a paint, a layout, a click's
#: signals), not just passing a timer or a job's progress on
BUSY_TURN_S = 0.008
#: a pause of the event loop at least this long between two turns is a rest: timers and input had their
#: turn (a loop with events waiting ends a turn and begins the next within a tenth of a millisecond)
REST_S = 0.001
#: how long after such a turn the workers keep stepping aside inside their steps (:meth:`WindowTurns.gate`)
LIVELY_FOR_S = 2.0


class WindowTurns:
    """Whether the window's thread is in a turn of its event loop, so that workers give way.

    However short the switch interval, the GIL is shared by turns: while a turn of the window
    (a click's signals and the paint after them) runs Python, each worker running Python takes
    its own share, and the turn lasts two or three times its work. With two jobs looping in
    Python in a real window (SmolLM2; chip clicks and tab switches), the median stall was
    97-114 ms and one action in two stalled over 100 ms; with workers giving way at their
    yields, 22-28 ms and two actions in seventy. The application reports its turns
    (:meth:`turn_began` at the first event it handles, :meth:`turn_ended` before it sleeps);
    :meth:`give_way` waits, at most :attr:`max_wait_s`, for the turn under way to end (a
    window that never rests still lets its workers on). Without an application nothing
    reports a turn and nothing waits.

    A step of a job can be long, and a turn that begins inside it still shares the GIL. While
    the window is :attr:`lively` (a turn of :data:`BUSY_TURN_S` or more has ended within
    :data:`LIVELY_FOR_S`), each step of a job runs under :meth:`gate`, a profile function that
    stops the worker at its next call while a turn is under way: once a turn, for at most
    :attr:`max_wait_s`, so a worker holding a lock the window waits for still goes on. With two
    workers looping in Python in a real window (SmolLM2), a resize's median stall went from
    99-106 to 48-59 ms (41 with no worker), a tab switch's from 46-53 to 23-29 (19). Profiling
    halves the speed of a worker's Python (numpy's and torch's work, without the GIL, not at all),
    so the gate is on only while the window is at work. Only steps after a long one (10 ms) were
    gated once, but no job knows its next step: a long one after short ones ran its Python beside
    every turn (in a walk, a load's 377 ms step under a 261 ms stall). A job cycling through 20
    steps of 2 ms and one of 150 ms, tab switches with resizes beside it (72 each, alternated, turns
    at :data:`TURN_SWITCH_INTERVAL_S`): median 48 ms, p90 96, 7 over 100 ms with the old rule; 42,
    71 and 2 with every step gated; 43, 59 and 1 with no job.

    A worker not stepping aside (a step begun before the turn, a job that does not give way, the gate's
    wait over) still takes the GIL at each of the window's calls into Qt. With ``turn_switch_interval_s``
    the GIL's switch interval is that while a turn is under way, and the process's own again at its end.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 turn_switch_interval_s: float | None = None) -> None:
        # held by the window's thread through each turn, a new one each turn. A lock of the C library's,
        # not an Event: a worker stopped by the gate may be anywhere in Python, inside an Event's own
        # wait too, holding that Event's lock (a wait there deadlocked a walk); waiting on this lock
        # runs no Python. A waiter takes the lock for a moment once the turn has ended, and may need
        # the GIL to let it go: one lock for every turn made the window wait for that, up to 18-22 ms
        # (p99 5-8 ms) at the start of a turn with two gated workers. A new turn takes a new lock.
        self._held = _thread.allocate_lock()
        self._holding = False  # whether the window's thread holds self._held
        self._threads = threading.local()  # each worker's gate
        self._clock = clock
        self.reporting = False  # set by whoever connects the event loop
        self.max_wait_s = GIVE_WAY_MAX_S
        #: the number of the turn under way; 0 while the window rests (read by :meth:`gate`)
        self.turn = 0
        self._turns = 0
        self._began = 0.0
        self._stretch_began = 0.0  # when the window last rested (:meth:`elapsed`)
        self._ended = -math.inf
        self._lively_until = 0.0
        self.turn_switch_interval_s = turn_switch_interval_s
        self._switch_intervals: tuple[float, float] | None = None  # outside a turn, and in it as Python has it

    @property
    def in_turn(self) -> bool:
        return self._holding

    @property
    def lively(self) -> bool:
        """True while a turn is under way or a busy one ended within :data:`LIVELY_FOR_S`."""
        return self.in_turn or self._clock() < self._lively_until

    def elapsed(self) -> float:
        """Seconds since the window last rested, while a turn is under way; 0 while it rests (or nothing
        reports turns).

        Not since the turn under way began: the event loop ends a turn before each of its passes, even
        with events waiting, and a pass delivers posted events before timers and input. A click's work
        in one turn and a job's result and the click's paint in the next made one stall, a timer of the
        window waiting through both: the result, in a turn of its own that had just begun, landed in
        the middle (a 20 ms click, a 20 ms result and a 20 ms paint: one gap of 63 ms). Turns that
        follow one another without a rest of :data:`REST_S` count as one."""
        return self._clock() - self._stretch_began if self.turn else 0.0

    def turn_began(self) -> None:
        if not self._holding:
            held = _thread.allocate_lock()
            held.acquire()
            self._held, self._holding = held, True
            if self.turn_switch_interval_s is not None:
                outside = sys.getswitchinterval()
                sys.setswitchinterval(self.turn_switch_interval_s)
                self._switch_intervals = outside, sys.getswitchinterval()
        self._turns += 1
        self._began = self._clock()
        if self._began - self._ended >= REST_S:
            self._stretch_began = self._began
        self.turn = self._turns

    def turn_ended(self) -> None:
        now = self._clock()
        if self.turn and now - self._began >= BUSY_TURN_S:
            self._lively_until = now + LIVELY_FOR_S
        self._ended = now
        self.turn = 0
        if self._holding:
            self._holding = False
            self._held.release()
        if self._switch_intervals is not None:
            outside, inside = self._switch_intervals
            self._switch_intervals = None
            if sys.getswitchinterval() == inside:  # not set by anyone else meanwhile (a notebook's cell)
                # Python keeps whole microseconds and truncates: its own value given back lost one a turn
                sys.setswitchinterval(round(outside * 1e6) / 1e6)

    def give_way(self, max_wait_s: float | None = None) -> bool:
        """Wait for the window's turn to end; False if it was still under way after ``max_wait_s``
        (by default :attr:`max_wait_s`, ``GIVE_WAY_MAX_S``)."""
        return _pass(self._held, self.max_wait_s if max_wait_s is None else max_wait_s)

    def gate(self) -> Callable | None:
        """A profile function (:func:`sys.setprofile`) for the calling worker thread: at the first call it
        makes in a turn of the window it waits for that turn to end, at most :attr:`max_wait_s`. None on
        the window's own thread (the main one), which never waits for itself."""
        if threading.current_thread() is threading.main_thread():
            return None
        waited = 0

        def step_aside(_frame, _event, _arg) -> None:
            nonlocal waited
            turn = self.turn
            if turn and turn != waited:
                waited = turn
                _pass(self._held, self.max_wait_s)

        self._threads.gate = step_aside  # for :meth:`between_steps` and :meth:`job_gate`
        return step_aside

    def no_gate(self) -> None:
        """For a job that does not give way: the calling worker has no gate while it runs (None)."""
        self._threads.gate = None

    def job_gate(self) -> Callable | None:
        """The gate of the job running in the calling worker (:meth:`gate`); None elsewhere."""
        return getattr(self._threads, "gate", None)

    def before_step(self, gate: Callable | None, always: bool = False, short: bool = False) -> None:
        """In a worker, before a step of its job: wait for the turn under way to end, then run the step
        under ``gate`` (:meth:`gate`, made in this thread) if the window is lively, else unprofiled.
        With ``always``, every step runs under the gate (a job of long steps nobody waits for); with
        ``short``, none does: a step known to be short meets a turn only at its start, where the worker
        waits anyway (a training step, 1-2 ms, lost a tenth of its speed profiled)."""
        if gate is None:  # the window's own thread (a job run there): its profiler, if any, is left alone
            self.give_way()
            return
        sys.setprofile(None)
        self.give_way()
        if always or (not short and self.lively):
            sys.setprofile(gate)

    def between_steps(self) -> None:
        """For a job that loops over short steps between two of its yields (training: 1-2 ms a step, a
        yield every tenth of a second): :meth:`before_step` for the calling worker, as at a yield, so
        each step waits for the window's turn, and, being short, runs unprofiled. Nothing off a worker."""
        gate = self.job_gate()
        if gate is not None:
            self.before_step(gate, short=True)


def _pass(lock, max_wait_s: float) -> bool:
    """Wait until ``lock`` is free, at most ``max_wait_s``, without taking it; True if it was."""
    if lock.acquire(max_wait_s > 0, max_wait_s if max_wait_s > 0 else -1):
        lock.release()
        return True
    return False


#: the window's turns, reported by explorer.app and read by the workers between their steps
WINDOW_TURNS = WindowTurns(turn_switch_interval_s=TURN_SWITCH_INTERVAL_S)


#: the nice value of the worker threads (Linux): when the cores are short, the window's thread and the
#: display server run first
WORKER_NICENESS = 10


def lower_this_thread() -> bool:
    """Give the calling thread (a worker) a lower CPU priority than the window's; True when it has one.

    Linux keeps a nice value per thread, so this leaves the GUI thread at the process's
    own. Elsewhere the call would lower the whole process, so it does nothing there.
    On two cores shared by the GUI thread, the X server and busy workers, the monkey
    saw a stall over 100 ms after one action in four while two or more jobs ran
    (one in fourteen with none). With training and a numpy/Python job running, a tab
    switch and its paint in a real window took a median 56-63 ms with workers at the
    window's priority and 34-40 ms with niced ones (three runs each, alternated); niced
    workers take what the window leaves. Safe to call again.
    """
    if not sys.platform.startswith("linux"):
        return False
    import threading

    tid = threading.get_native_id()
    try:
        if os.getpriority(os.PRIO_PROCESS, tid) < WORKER_NICENESS:
            os.setpriority(os.PRIO_PROCESS, tid, WORKER_NICENESS)
        return os.getpriority(os.PRIO_PROCESS, tid) >= WORKER_NICENESS
    except OSError:  # a sandbox that forbids it: the thread keeps its priority
        return False


def quiet_transformers() -> None:
    """No progress bars or info logs from transformers on the terminal (the
    window and the CLI say what is happening themselves).

    ``disable_progress_bar`` silences transformers' own bars; its GGUF
    converter draws a plain ``tqdm.auto`` bar ("Converting and de-quantizing
    GGUF tensors…") that this switch does not reach, so that module's bar is
    pointed at transformers' switchable one. Imports transformers: call it
    only where a model is about to be loaded.
    """
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:  # a transformers without GGUF support: nothing to silence
        return
    if hasattr(gguf_utils, "tqdm"):
        gguf_utils.tqdm = hf_logging.tqdm


_collector_lock = threading.RLock()  # (re-entered by a finalizer that pauses, during settle_collector)
_collector_pausers = 0
_collector_was_on = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No garbage collection while the block runs, in any thread.

    A worker that makes hundreds of thousands of containers in one C call
    (``json.loads`` of a 3.5 MB tokenizer.json makes 49,000 lists) sets off a
    full collection inside it, which walks every object in the process holding
    the GIL: 63-87 ms in the window with SmolLM2 loaded, on top of the parse,
    and the GUI thread stood still for both. The collector is off while any
    thread is in such a block, and on again (if it was on when the first one
    came in) when the last one leaves, so that two blocks in two threads never
    turn it on under each other.
    """
    global _collector_pausers, _collector_was_on
    with _collector_lock:
        if _collector_pausers == 0:
            _collector_was_on = gc.isenabled()
            gc.disable()
        _collector_pausers += 1
    try:
        yield
    finally:
        with _collector_lock:
            _collector_pausers -= 1
            if _collector_pausers == 0 and _collector_was_on:
                gc.enable()


#: objects the collector walks (outside the frozen generation) before an idle moment parks them
SETTLE_MIN_OBJECTS = 20_000


def settle_collector(min_objects: int = SETTLE_MIN_OBJECTS) -> int:
    """At an idle moment: collect the garbage among the objects the collector walks, then park
    the rest (``gc.freeze``), so that later full collections walk only what is made after.

    The warm-up parks what start-up made. What comes later stays in the walk: the modules a
    first t-SNE or UMAP imports (numba alone is tens of thousands of objects), a tokenizer's
    pieces, the views' charts. After a walk of 1,500 user actions 223,000 such objects were
    tracked, and a full collection (the collector's own, whenever the oldest generation has
    grown by a quarter) took 130-170 ms in whichever thread allocated, holding the GIL: the
    window stood still for it (634 ms once, on a busier process). Here the collection runs
    while the user is idle (109 ms for those 223,000), and what survives is parked.

    Nothing is parked that is garbage now: the collection comes first. A parked object freed
    later by its reference count is freed as before; only a reference cycle among parked
    objects is never collected (a model switched away is not one: it goes with its last
    reference). Returns how many objects were parked: 0 when fewer than ``min_objects`` were
    walked, the collector is off, or a thread is in :func:`collector_paused`.
    """
    with _collector_lock:  # held throughout: no thread enters a paused block meanwhile
        if _collector_pausers or not gc.isenabled() or len(gc.get_objects()) < min_objects:
            return 0
        before = gc.get_freeze_count()
        gc.collect()  # (after which park_after_full_collections, when on, has parked them already)
        gc.freeze()
        return gc.get_freeze_count() - before


def park_after_full_collections(on: bool = True) -> None:
    """After every full collection, in any thread, park what survived it (``gc.freeze``).

    :func:`settle_collector` parks only at idle moments, and a user who works on (or a walk of
    5,000 actions) gives it none. What came after the warm-up stayed in the collector's walk:
    late imports (numba, ``torch.distributed``, ``torch.onnx``), tokenizers' pieces, the views'
    charts. Each full collection walked it all again, holding the GIL: in a walk of 5,000 actions,
    6 of the 15 stalls over 100 ms were full collections of 96-198 ms in a worker.

    A full collection has just freed every cycle of garbage there was, so what it leaves is
    alive; parked, it is walked no more, and the next full collection walks only what came
    since. A parked object is still freed by its reference count; only a reference cycle it
    joins later, once garbage, stays (as with :func:`settle_collector`). Not while a thread is in
    :func:`collector_paused`. The app turns it on once warm, as it parks what the warm-up made,
    and off as it closes.
    """
    if on and _park_survivors not in gc.callbacks:
        gc.callbacks.append(_park_survivors)
    elif not on and _park_survivors in gc.callbacks:
        gc.callbacks.remove(_park_survivors)


def parking() -> bool:
    """Whether :func:`park_after_full_collections` is on."""
    return _park_survivors in gc.callbacks


def _park_survivors(phase: str, info: dict) -> None:
    # at "stop" the collection is over: its lists are whole, and the collector cannot start again inside
    if phase == "stop" and info.get("generation") == 2 and not _collector_pausers:
        gc.freeze()

