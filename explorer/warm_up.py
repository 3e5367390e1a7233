"""What the app imports in the background, and when: the modules, and the job
that imports them (:func:`warm_up_job`, which explorer.workers runs).

The warm-up, once the first model is in: the views' code first (a tab opened in
the first second needs it), then torch, then what may fail (OpenGL). At the
first idle moment after it (:class:`explorer.ui.common.prebuild.IdleBuilder`):
torch._dynamo and what the t-SNE and UMAP layouts import.
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Iterator, Sequence

from explorer.core.runtime import WINDOW_TURNS, collector_paused, limit_torch_threads

__all__ = ["VIEW_MODULES", "TORCH_MODULES", "OPTIONAL_MODULES", "WARM_UP_MODULES", "IDLE_MODULES", "warm_up_job",
           "idle_imports_job"]

#: the views' code, imported first by the warm-up (each tab's view is built when its tab is first shown)
VIEW_MODULES = ("explorer.ui.lookup", "explorer.ui.projection", "explorer.ui.similarity", "explorer.ui.training",
                "explorer.ui.cost", "explorer.ui.health", "explorer.ui.positions")
#: torch (1-2 s)
TORCH_MODULES = ("torch",)
#: imported by the warm-up where they can be ("module:function": and that function called): the 3D view's
#: OpenGL (0.45 s the first time 3D is asked for), then its driver (37-63 ms of the first 3D toggle)
OPTIONAL_MODULES = ("explorer.ui.projection.opengl.scene", "explorer.ui.projection.opengl.driver:load_gl_driver")
WARM_UP_MODULES = VIEW_MODULES + TORCH_MODULES  # in order: a tab opened in the first second needs its code
#: torch._dynamo (and sympy), which torch's optimisers import when the first one is made: 1.3-1.5 s of
#: Python holding the GIL. In the warm-up it doubled the warm-up's length and made most of the window's
#: early stalls: 6-7 of the first 150 actions of a walk in a real window stalled over 100 ms, 1-2 with it
#: left out (three alternated walks). Imported at the first idle moment instead; a training started
#: before then imports it in its own worker (the window's longest gap after Start: 54-63 ms, 26-36 with
#: it imported already).
#: Also what the layouts need (t-SNE's openTSNE, which imports scikit-learn and SciPy: 0.7-0.9 s of module
#: code; UMAP's curve fit and the layouts' quality score): else imported in the worker of the first layout,
#: in the middle of the user's clicks.
#: (The PCA and the clusters of every layout import neither: they are numpy and torch.)
IDLE_MODULES = ("torch._dynamo", "openTSNE", "scipy.optimize", "scipy.spatial")


def warm_up_job(modules: Sequence[str] = (), optional: Sequence[str] = (),
                freeze: bool = False) -> Iterator[tuple[float, str]]:
    """Import ``modules`` off the GUI thread once the window is up, in the order given, then the
    ``optional`` ones, whose failure only means a feature will say so when asked for (3D's OpenGL); an
    optional ``"module:function"`` is imported, then its function called with no arguments.
    The app gives the views' code first (15-85 ms each), then torch (1-2 s): behind torch, the
    views' code came 3.4 s after the window, and a tab opened meanwhile imported it on the GUI
    thread while torch's import took the GIL at every switch. Torch in, it leaves a core free.
    Torch's import steps aside for the window's turns (:func:`_import_stepping_aside`): in ten
    walks of the first 60 actions in a real window (five seeds, twice, alternated with the code
    before), no action stalled over 100 ms (longest 49-89 ms), against six stalls of 101-130 ms
    in four of the ten walks without. The price: with nobody clicking, the warm-up ends 0.45 s later
    (2.3-2.5 s after start instead of 1.9-2.0: a profiled import runs its Python slower).

    The garbage collector is off meanwhile: a full collection in the middle of these imports
    walks every object the process has, holding the GIL for 100-650 ms, and the window waited
    for each. With ``freeze``, what exists then is parked (``gc.freeze``) before the collector is
    on again: the first collection after them walked it all, 190 ms holding the GIL."""
    steps = len(modules) + len(optional) + 1
    with collector_paused():
        try:
            for k, name in enumerate(modules):
                yield k / steps, _preparing(name)
                if name in TORCH_MODULES:
                    _import_stepping_aside(name)
                else:
                    importlib.import_module(name)
                limit_torch_threads(import_torch=False)
            for k, name in enumerate(optional, start=len(modules)):
                yield k / steps, _preparing(name)
                module, _, call = name.partition(":")
                try:
                    imported = importlib.import_module(module)
                    if call:
                        getattr(imported, call)()
                except Exception:  # noqa: BLE001 (the feature says what is missing when it is used)
                    pass
        finally:
            if freeze:
                gc.freeze()
    return True


def _import_stepping_aside(name: str) -> None:
    """Import ``name`` (torch: 1-2 s of module code) under a gate of this worker's
    (:meth:`~explorer.core.runtime.WindowTurns.gate`, which explorer.core.import_gate puts on as the import
    begins): it stops at its next call while a turn of the window is under way, at most
    ``GIVE_WAY_MAX_S`` a turn. The views' code is imported without one, as fast as it can: a tab shown
    in the first second imports it on the window's thread otherwise, and waits for the warm-up's import
    of the same module (237 ms once, in a short walk with every module of the warm-up under the gate)."""
    WINDOW_TURNS.gate()
    try:
        importlib.import_module(name)
    finally:
        WINDOW_TURNS.no_gate()
        sys.setprofile(None)


def _preparing(module: str) -> str:
    return "Preparing torch…" if module.split(".")[0] == "torch" else "Preparing the views…"


# its steps are imports, holding the GIL in C whatever the window does: held back, they moved into the
# window's first interactions (the longest stall of a model opened from the command line: 67-102 -> 96-132 ms)
warm_up_job.gives_way = False


def idle_imports_job(modules: Sequence[str] = IDLE_MODULES, freeze: bool = False) -> Iterator[tuple[float, str]]:
    """:func:`warm_up_job` for the imports of the first idle moment (:data:`IDLE_MODULES`), stepping
    aside for every turn of the window: nothing waits for them, and a user back from the pause clicks
    while they run (1.3-1.5 s of module code, which shared the GIL with each turn of the window)."""
    return (yield from warm_up_job(modules, freeze=freeze))


idle_imports_job.always_gated = True  # each step's Python waits at its next call while a turn is under way
