"""What the monkey (``monkey.py``) listens to while it walks: exceptions that reach
``sys.excepthook``, Qt's warnings, RuntimeWarnings from any thread, and the RSS.

Module-level lists and functions, not methods: Qt keeps the installed message handler for the
life of the process, and modules imported during a walk (pyqtgraph's) keep the excepthook they
found, so a bound method there would keep the walk, and the window, alive.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
import traceback
from collections import Counter, deque
from pathlib import Path
from typing import NamedTuple

try:
    import resource
except ImportError:  # not on Windows: no disk reads are told there
    resource = None
#: getrusage's own thread where the system has one (Linux), else the process
_RUSAGE_MINE = getattr(resource, "RUSAGE_THREAD", getattr(resource, "RUSAGE_SELF", None))

__all__ = ["QT_SEEN", "EXCEPTIONS_SEEN", "WARNINGS_SEEN", "collect_qt_message", "collect_exception",
           "collect_warning", "rss_mb", "reference_loop_ms", "StackSampler", "Landings", "thread_places", "ReadyClock",
           "ThreadClocks", "Reading", "CollectionLog"]

#: what a platform says about itself, not about the app (pytest's qt_log_ignore has the same)
QT_NOISE = ("This plugin does not support propagateSizeHints",)
#: Qt warnings seen while a walk runs
QT_SEEN: list[str] = []
#: exceptions that reached sys.excepthook while a walk runs, formatted
EXCEPTIONS_SEEN: list[str] = []
#: RuntimeWarnings shown while a walk runs, from any thread: (the warning, where it was raised from:
#: the innermost frames of the stack that raised it, innermost first, on one line)
WARNINGS_SEEN: list[tuple[str, str]] = []
#: how many frames of a warning's stack its place keeps (a paint's: pyqtgraph's item and method)
STACK_FRAMES = 6


#: iterations of :func:`reference_loop_ms`'s loop (15 ms of Python on a quiet core of the VM it was chosen on)
REFERENCE_LOOP = 300_000


def reference_loop_ms(rounds: int = 5) -> float:
    """The median CPU time (ms) of ``rounds`` runs of a fixed loop of integer arithmetic: the same
    bytecode every time, no allocation beyond small ints, no I/O. How fast the machine runs
    Python at that moment (other tenants of a shared machine, its clock), not how fast the app is.
    The calling thread's CPU time, not the wall clock: waits for the GIL or for a core (the app's
    workers, busy at a walk's start) do not count. On a shared VM the two agreed to the millisecond
    when nothing else ran, and both went from 150 to 780 ms within the hour, with no time stolen
    by the hypervisor in /proc/stat: the cores themselves ran slower."""
    import statistics

    times = []
    for _ in range(rounds):
        t0, total = time.thread_time(), 0
        for i in range(REFERENCE_LOOP):
            total += i * i
        times.append((time.thread_time() - t0) * 1000)
    return statistics.median(times)


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError):
        return 0.0


class ReadyClock:
    """The seconds the thread that made it has spent ready to run, waiting for a core: Linux's
    per-thread scheduler statistics (``/proc/self/task/<tid>/schedstat``, its second field). Of a
    stall, what the window's thread did not work (its CPU time) it spent either ready and waiting for
    a core (this) or asleep: waiting for the GIL, a lock, the X server. Always 0 where the kernel
    keeps no such statistics (other systems)."""

    def __init__(self) -> None:
        try:
            self._fd = os.open(f"/proc/self/task/{threading.get_native_id()}/schedstat", os.O_RDONLY)
        except OSError:
            self._fd = None

    def __call__(self) -> float:
        if self._fd is None:
            return 0.0
        try:
            return int(os.pread(self._fd, 128, 0).split()[1]) / 1e9
        except (OSError, ValueError, IndexError):
            return 0.0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    __del__ = close


class Reading(NamedTuple):
    """What :class:`ThreadClocks` read at one moment (seconds, page faults, kilobytes)."""

    wall: float
    #: the thread's CPU time
    cpu: float
    #: the thread's time ready to run, waiting for a core (:class:`ReadyClock`)
    ready: float
    #: page faults that had to read from disk: the thread's, then the whole process's
    faults: int
    all_faults: int
    #: kilobytes the thread, then the whole process, had to read from disk (reads the page cache
    #: answered do not count)
    disk_kb: int
    all_disk_kb: int

    def since(self, before: Reading) -> Reading:
        return Reading(*(a - b for a, b in zip(self, before, strict=True)))


class ThreadClocks:
    """Reads the clocks of the thread that made it, with the process's disk reads: of a stall, the
    wall time; the thread's work (CPU), its wait for a core (:class:`ReadyClock`); and what had to
    come from disk, the thread's and the whole process's (``getrusage``: page faults that read, and
    blocks read). A thread asleep through a stall while the process read from disk waited for the
    disk, itself or through a lock (the GIL, an import's) held by the thread reading. A machine may
    drop files it thinks cold from its page cache (a VM's DAMON reclaim: after a minute unread), so
    what one walk reads from memory another reads from disk."""

    def __init__(self) -> None:
        self._ready = ReadyClock()

    def __call__(self) -> Reading:
        if resource is None:
            return Reading(time.perf_counter(), time.thread_time(), self._ready(), 0, 0, 0, 0)
        mine = resource.getrusage(_RUSAGE_MINE)
        every = resource.getrusage(resource.RUSAGE_SELF)
        return Reading(time.perf_counter(), time.thread_time(), self._ready(), mine.ru_majflt,
                       every.ru_majflt, mine.ru_inblock // 2, every.ru_inblock // 2)


def collect_qt_message(mode, context, message) -> None:
    from PySide6.QtCore import QtMsgType

    if mode in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg) \
            and not message.startswith(QT_NOISE):
        QT_SEEN.append(message)


def collect_exception(kind, value, tb) -> None:
    EXCEPTIONS_SEEN.append("".join(traceback.format_exception(kind, value, tb)))


def warning_place(frames: list[traceback.FrameSummary]) -> str:
    """The innermost ``STACK_FRAMES`` frames that raised a warning, innermost first, as
    ``file:line function`` (the warnings module's own frames and this hook left out), and
    whether the window's thread raised it. A warning numpy raises in a paint names only
    numpy's line; the frames say which item painted."""
    mine = [f for f in frames if Path(f.filename).name not in ("warnings.py", "listeners.py")]
    where = " < ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(mine[-STACK_FRAMES:]))
    thread = "window thread" if threading.current_thread() is threading.main_thread() else "other thread"
    return f"{where} [{thread}]"


def collect_warning(message, category, filename, lineno, file=None, line=None) -> None:
    if issubclass(category, RuntimeWarning):
        WARNINGS_SEEN.append((f"{category.__name__}: {message} ({filename}:{lineno})",
                              warning_place(traceback.extract_stack())))


class CollectionLog:
    """The garbage collections of the oldest generation, and any over :data:`GC_NOTED_S`, in any thread
    (``gc.callbacks``), while started: a full collection holds the GIL throughout, and every other
    thread, the window's too, waits for it asleep (no CPU, no core waited for, nothing read)."""

    def __init__(self, keep: int = 20_000):
        #: (start, end, generation, thread name) of the collections noted
        self.collections: deque = deque(maxlen=keep)
        self._started: dict[int, float] = {}

    def start(self) -> None:
        if self._on_gc not in gc.callbacks:
            gc.callbacks.append(self._on_gc)

    def stop(self) -> None:
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict) -> None:
        # the module's own time: an import here fails while the interpreter shuts down (a sampler a script
        # left running printed an error at each collection then)
        now, me = time.perf_counter(), threading.get_ident()
        if phase == "start":
            self._started[me] = now
            return
        began = self._started.pop(me, None)
        if began is not None and (info.get("generation") == 2 or now - began >= GC_NOTED_S):
            self.collections.append((began, now, info.get("generation"), threading.current_thread().name))

    def between(self, t0: float, t1: float) -> list[str]:
        """The collections noted that overlap ``t0``..``t1`` (perf_counter seconds), in words."""
        return [f"{'full ' if gen == 2 else ''}GC {1000 * (b - a):.0f} ms in {name}"
                for a, b, gen, name in list(self.collections) if a < t1 and b > t0]


class StackSampler:
    """The window thread's Python stack, sampled every ``interval_s`` by a daemon thread, so that
    a stall can say where the window's thread was while it lasted (:meth:`place`).

    A sample needs the GIL. When another thread held it through a stall, there are no samples
    of it, so the sampler also keeps what it can say of such a stall:

    - the garbage collections (:class:`CollectionLog`);
    - each time a sample came over :data:`STARVED_S` late, where every other thread was when the
      sampler got the GIL back: the one that held it is there, just past what it did.

    The sampler takes the GIL for a few microseconds per sample: a walk with it on runs the window
    a little slower, so its stall counts are not compared with a walk without it.
    """

    def __init__(self, interval_s: float = 0.01, keep: int = 20_000):
        self.interval_s = interval_s
        self._samples: deque = deque(maxlen=keep)
        self.gc_log = CollectionLog(keep)
        #: (last sample, late sample, the other threads' places) of the late samples
        self.starved: deque = deque(maxlen=keep)
        self._target = threading.main_thread().ident
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self.gc_log.start()
        self._thread = threading.Thread(target=self._run, name="stack sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.gc_log.stop()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.wait(self.interval_s):
            now = time.perf_counter()
            if now - last > STARVED_S:
                self.starved.append((last, now, tuple(thread_places())))
            try:
                frames = _stack_of(sys._current_frames().get(self._target))
            except Exception:  # noqa: BLE001 (the sample is lost, not the sampler)
                # walked a frame at a time while the window's thread runs between two of them, a
                # frame's f_back once gave an int (Python 3.11): the sampler's thread died with it
                # and the walk's stalls after that had no place
                frames = None
            if frames is not None:
                self._samples.append((time.perf_counter(), frames))
            last = now

    def place(self, t0: float, t1: float) -> str:
        """Where the window's thread was between ``t0`` and ``t1`` (perf_counter seconds): the
        innermost frame of the app's own code seen most often and the innermost frame of all, with
        how many of the samples had them, and how many were in Qt (in the walk's event loop with no
        Python frame inside it), and the app's outermost frames (the handlers the turns were in: a
        slot, an event filter, a paint); then the collections and the late samples that overlap it."""
        return "; ".join([self._window_place(t0, t1)] + self._elsewhere(t0, t1))

    def _elsewhere(self, t0: float, t1: float) -> list[str]:
        notes = self.gc_log.between(t0, t1)
        for a, b, places in list(self.starved):
            if a < t1 and b > t0:
                others = [p for p in places if not p.startswith(("MainThread", "stack sampler"))][:3]
                notes.append(f"no sample for {1000 * (b - a):.0f} ms, then {', '.join(others) or 'no other thread'}")
        return notes

    def _window_place(self, t0: float, t1: float) -> str:
        mine, inner, outer, n = Counter(), Counter(), Counter(), 0
        for t, frames in list(self._samples):
            if not t0 <= t <= t1:
                continue
            n += 1
            # the frames inside the walk's own (its action, its event loop): the walk's callers are not
            # where the window works, and a sample in the walk's event loop alone was in Qt
            walk = next((k for k, f in enumerate(frames) if f[0] in _WALK_FILES), len(frames))
            work = frames[:walk]
            if not work:
                continue
            inner[_frame_text(work[0])] += 1
            app = next((f for f in work if "/explorer/" in f[0]), None)
            if app is not None:
                mine[_frame_text(app)] += 1
                # the app's outermost frame: the handler of the turn (a slot, an event, a paint)
                outer[_frame_text(next(f for f in reversed(work) if "/explorer/" in f[0]))] += 1
        if n == 0:
            return "no samples"
        seen = sum(inner.values())
        if not seen:
            return f"Qt ({n} samples, none in Python)"
        parts = [f"{text} ({k} of {n})" for text, k in dict(mine.most_common(1) + inner.most_common(1)).items()]
        handlers = ", ".join(f"{text} {k}" for text, k in outer.most_common(3))
        return (" · ".join(parts) + (f"; Qt in {n - seen}" if n > seen else "")
                + (f"; in handlers {handlers}" if handlers else ""))


class Landings:
    """Which background results reached the window's thread, and when: what a stall was spent on when
    the action itself was cheap (a model installed, a job's result or partial result drawn).

    :meth:`watch` connects the runners under an object (once each: a dynamic property marks them),
    and is called before each action, as jobs' runners are made on the way; :meth:`model_installed`
    is connected to the state's ``model_changed``. :meth:`between` names what landed in a span of
    ``time.perf_counter()``. The slots hold only this object's record, not the window."""

    #: how many landings are remembered (the span asked for is always the last action's)
    KEPT = 500

    def __init__(self) -> None:
        self._seen: deque[tuple[float, str]] = deque(maxlen=self.KEPT)

    def watch(self, root) -> None:
        from explorer.workers import JobRunner

        for runner in root.findChildren(JobRunner):
            if runner.property("monkey_watched"):
                continue
            runner.setProperty("monkey_watched", True)
            for signal, what in ((runner.succeeded, "result"), (runner.produced, "partial"),
                                 (runner.failed, "failure")):
                signal.connect(lambda *_args, r=runner, w=what: self._landed(f"{r.last_job_name} {w}"))

    def model_installed(self, *_args) -> None:
        self._landed("model installed")

    def _landed(self, what: str) -> None:
        self._seen.append((time.perf_counter(), what))

    def _counts(self, start: float, end: float) -> Counter:
        return Counter(what for t, what in self._seen if start <= t <= end)

    def kinds(self, start: float, end: float) -> set[str]:
        """The kinds of landing from ``start`` to ``end`` ("model installed", "load_model result", ...)."""
        return set(self._counts(start, end))

    def between(self, start: float, end: float) -> str:
        """What landed from ``start`` to ``end``, with how many times: "load_model result, model installed"."""
        return ", ".join(what if n == 1 else f"{what} x{n}" for what, n in self._counts(start, end).items())


#: collections younger than the oldest generation noted when at least this long (seconds)
GC_NOTED_S = 0.02
#: a sample this late (seconds) says another thread held the GIL
STARVED_S = 0.05


#: the walk's own files, by path
_WALK_FILES = {__file__, str(Path(__file__).with_name("monkey.py"))}


#: how many frames of a thread a sample reads at most
STACK_LIMIT = 60


def _unrolled_walk(limit: int):
    """A function giving ``(file, line, function)`` of a frame and of up to ``limit - 1`` of its callers,
    innermost first, with no call and no backward jump from the first frame to the last.

    The interpreter hands the GIL to another thread only at those (and in a collection's callbacks),
    so the thread whose frames they are stays where it is while they are read. Read in a loop (a
    backward jump a frame), that thread ran between two frames, and its frames' links changed under
    the reader: a frame's f_back once gave an int (Python 3.11), and a walk with the sampler on ended
    in a segmentation fault in ``PyObject_GetAttr`` in a thread other than the window's, as following
    such a link would."""
    body = ["def walk(f):", "    if f is None:", "        return ()"]
    for k in range(limit):
        body += ["    c = f.f_code", f"    r{k} = (c.co_filename, f.f_lineno, c.co_name)"]
        read = ", ".join(f"r{j}" for j in range(k + 1))
        if k < limit - 1:
            body += ["    f = f.f_back", "    if f is None:", f"        return ({read},)"]
        else:
            body += [f"    return ({read},)"]
    space: dict = {}
    exec(compile("\n".join(body), "<frames read in one go>", "exec"), space)  # our own text, made above
    return space["walk"]


#: (file, line, function) of a frame and its callers, innermost first (see :func:`_unrolled_walk`)
_stack_of = _unrolled_walk(STACK_LIMIT)


def _frame_text(frame: tuple[str, int, str]) -> str:
    path, line, name = frame
    return f"{Path(path).name}:{line} {name}"


def thread_places() -> list[str]:
    """Where each other thread of the process is: its name and its innermost frame outside
    Python's own library (``"Dummy-3 at job.py:127 manifold_job"``), for saying which thread
    did not stop when it should have."""
    stdlib = os.path.dirname(os.__file__)
    names = {t.ident: t.name for t in threading.enumerate()}
    places = []
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue
        stack = _stack_of(frame)  # read in one go, then looked through
        if not stack:
            continue
        path, line, name = next((f for f in stack if not f[0].startswith(stdlib)), stack[0])
        places.append(f"{names.get(ident, ident)} at {os.path.basename(path)}:{line} {name}")
    return sorted(places)
