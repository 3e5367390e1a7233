"""What a walk of the monkey (:mod:`explorer.benchmarks.monkey`) found, and its
text for ``bench --monkey`` (the JSON is :meth:`MonkeyReport.as_json`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["MonkeyReport", "format_monkey"]


@dataclass
class MonkeyReport:
    """What a walk found. ``exceptions`` and ``qt_warnings`` keep the first few messages."""

    actions: int = 0
    exceptions: int = 0
    qt_warnings: int = 0
    #: numpy's and Python's RuntimeWarnings (a NaN or an overflow met while drawing or computing)
    runtime_warnings: int = 0
    max_stall_ms: float = 0.0
    max_stall_action: str = ""
    rss_growth_mb: float = 0.0
    platform: str = ""
    seed: int = 0
    seconds: float = 0.0
    readouts_agree: bool = True
    disagreements: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    stalls_over_100ms: int = 0
    #: the longest gap of each action, at the 50th, 90th and 99th percentile of the walk's actions (ms):
    #: steadier than the few stalls over 100 ms for comparing two walks
    stall_percentiles_ms: dict[str, float] = field(default_factory=dict)
    #: how fast this machine ran Python around the walk: the median CPU time (ms) of a fixed loop of
    #: integer arithmetic (:func:`~explorer.benchmarks.listeners.reference_loop_ms`), on the window's
    #: thread just before and just after it. Compare two walks' stalls only at like figures: on a shared
    #: two-core machine a loop like it took 149-783 ms within two hours, and one seed of the same code
    #: stalled over 100 ms 12 times in one walk and 58 in another.
    machine_ms: list[float] = field(default_factory=list)
    #: jobs' results that reached a long pass of the window's event loop and waited for the next
    #: (:mod:`explorer.pacing`)
    landings_waited: int = 0
    #: every job stopped when the window closed (else the process ends without tearing down); those running then
    jobs_stopped: bool = True
    jobs_at_close: list[str] = field(default_factory=list)
    #: per kind of action: [actions, stalls over 100 ms, longest stall in ms]
    stalls_by_action: dict[str, list] = field(default_factory=dict)
    #: by the number of background jobs running when the action began ("0", "1", "2+"): [actions,
    #: stalls over 100 ms] (each running worker takes the GIL in turn with the window's thread)
    stalls_by_jobs: dict[str, list] = field(default_factory=dict)
    #: by each background job (its function's name) running when the action began: [actions, stalls
    #: over 100 ms] (which workers the window's stalls come with)
    stalls_by_job: dict[str, list] = field(default_factory=dict)
    #: by what background work landed during the action (:class:`~explorer.benchmarks.listeners.Landings`:
    #: "model installed", "positions_job result", ...): [actions, stalls over 100 ms]
    stalls_by_landing: dict[str, list] = field(default_factory=dict)
    #: every stall over 100 ms, in walk order: [ms, "#k what it did", jobs running when it began]
    stalls: list[list] = field(default_factory=list)
    #: the background jobs (their functions' names) running when each of ``stalls`` began
    stall_jobs: list[list[str]] = field(default_factory=list)
    #: with stacks sampled (``--stacks``): where the window's thread was during each of ``stalls``
    stall_places: list[str] = field(default_factory=list)
    #: what background work brought to the window's thread during each of ``stalls`` ("model installed",
    #: "positions_job result", ...; "" for nothing): the stall's cost when the action was cheap
    stall_landings: list[str] = field(default_factory=list)
    #: when each of ``stalls`` began and ended (its longest gap), in seconds after the walk began: to find it
    #: in a profiler's trace of the whole process (py-spy's, say), which samples every thread
    stall_times_s: list[list[float]] = field(default_factory=list)
    #: the window's thread's CPU time in each of ``stalls`` (its longest gap): near the stall, the thread
    #: worked through it (its own work, however slowed); far below, it waited (a lock, the GIL, the cores)
    stall_cpu_ms: list[int] = field(default_factory=list)
    #: the time in each of ``stalls`` the window's thread was ready to run but waited for a core (Linux; 0
    #: elsewhere): what it neither worked nor spent in this it spent asleep (the GIL, a lock, the X server)
    stall_ready_ms: list[int] = field(default_factory=list)
    #: what had to come from disk in each of ``stalls``: [the window thread's page faults that read, the
    #: process's, the kilobytes the window's thread read, the process's] (what the page cache held, not)
    stall_disk: list[list[int]] = field(default_factory=list)
    #: the garbage collections that overlapped each of ``stalls`` (full ones, and any over 20 ms), in any
    #: thread, in words ("full GC 310 ms in Dummy-3"): the GIL is held throughout
    stall_collections: list[list[str]] = field(default_factory=list)
    #: what the window showed when each of ``stalls`` began: its tab, the model and the text's length
    #: ("tab 'Projection' (3D), random:128256x4096, 50,000 chars"): a stall a walk cannot replay (its
    #: actions follow what the window has loaded by then) is looked for again in that scene
    stall_scenes: list[str] = field(default_factory=list)
    #: each RuntimeWarning by where it was raised from (its innermost frames and thread):
    #: [how many, the first action it came in]
    warning_places: dict[str, list] = field(default_factory=dict)

    def as_json(self) -> dict:
        return asdict(self)


def format_monkey(r: MonkeyReport) -> str:
    lines = [f"Monkey ({r.platform}, seed {r.seed}): {r.actions:,} actions in {r.seconds:.0f} s",
             f"  exceptions {r.exceptions}, Qt warnings {r.qt_warnings}, runtime warnings "
             f"{r.runtime_warnings}, readouts agree: "
             f"{'yes' if r.readouts_agree else 'NO'}",
             f"  longest stall {r.max_stall_ms:.0f} ms ({r.max_stall_action}); {r.stalls_over_100ms} over 100 ms",
             "  longest gap of an action: " + ", ".join(f"{k} {v:.0f} ms" for k, v in r.stall_percentiles_ms.items()),
             f"  RSS growth {r.rss_growth_mb:.0f} MB; {r.landings_waited:,} results waited for the next pass"]
    if r.machine_ms:
        lines.append("  this machine's Python: a fixed loop took " + " ms before the walk and ".join(
            f"{ms:.0f}" for ms in r.machine_ms) + " ms after (compare walks only at like figures)")
    worst = sorted(r.stalls_by_action.items(), key=lambda kv: -kv[1][2])
    lines += [f"  {name}: {n:,} actions, {over:,} over 100 ms, longest {ms:.0f} ms" for name, (n, over, ms) in worst]
    lines += [f"  begun with {jobs} background job{'' if jobs == '1' else 's'} running: {n:,} actions, "
              f"{over:,} over 100 ms" for jobs, (n, over) in sorted(r.stalls_by_jobs.items())]
    lines += [f"  begun while {name} ran: {n:,} actions, {over:,} over 100 ms"
              for name, (n, over) in sorted(r.stalls_by_job.items(), key=lambda kv: -kv[1][1])[:8]]
    lines += [f"  while {what} landed: {n:,} actions, {over:,} over 100 ms"
              for what, (n, over) in sorted(r.stalls_by_landing.items(), key=lambda kv: -kv[1][1])[:8]]
    lines += [f"  disagreement: {d}" for d in r.disagreements]
    if not r.jobs_stopped:
        lines.append(f"  a job was still running a minute after the window closed (of {', '.join(r.jobs_at_close)})")
    lines += [f"  {m.splitlines()[-1] if m.strip() else m}" for m in r.messages[:10]]
    lines += [f"  {n} x {place} (first in {first})" for place, (n, first) in r.warning_places.items()]
    lines += [f"  {ms} ms {what}: {place}" for (ms, what, _), place in zip(r.stalls, r.stall_places, strict=False)]
    lines += [f"  {ms} ms {what}: the window's thread worked {cpu} ms of it, waited {ready} ms for a core"
              + (f", begun while {', '.join(jobs)} ran" if jobs else "") for (ms, what, _), cpu, ready, jobs
              in zip(r.stalls, r.stall_cpu_ms, r.stall_ready_ms, r.stall_jobs, strict=False)]
    lines += [f"  {ms} ms {what}: {kb:,} KB read from disk ({faults:,} page faults), {own_kb:,} KB of it by the "
              f"window's thread" for (ms, what, _), (_, faults, own_kb, kb) in zip(r.stalls, r.stall_disk, strict=False)
              if kb or faults]
    lines += [f"  {ms} ms {what}: {'; '.join(notes)}" for (ms, what, _), notes
              in zip(r.stalls, r.stall_collections, strict=False) if notes]
    lines += [f"  {ms} ms {what} while landing: {landed}" for (ms, what, _), landed
              in zip(r.stalls, r.stall_landings, strict=False) if landed]
    lines += [f"  {ms} ms {what} begun in {scene}" for (ms, what, _), scene
              in zip(r.stalls, r.stall_scenes, strict=False)]
    return "\n".join(lines)
