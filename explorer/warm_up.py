"""What the app imports in the background, and when (the modules; the job is
:func:`explorer.workers.warm_up_job`).

The warm-up, once the first model is in: the views' code first (a tab opened in
the first second needs it), then torch, then what may fail (OpenGL). At the
first idle moment after it (:class:`explorer.ui.common.prebuild.IdleBuilder`):
torch._dynamo and scikit-learn's PCA and k-means.
"""

from __future__ import annotations

__all__ = ["VIEW_MODULES", "TORCH_MODULES", "OPTIONAL_MODULES", "WARM_UP_MODULES", "IDLE_MODULES"]

#: the views' code, imported first by the warm-up (each tab's view is built when its tab is first shown)
VIEW_MODULES = ("explorer.ui.lookup", "explorer.ui.projection", "explorer.ui.similarity", "explorer.ui.training",
                "explorer.ui.cost", "explorer.ui.health", "explorer.ui.positions")
#: torch (1-2 s)
TORCH_MODULES = ("torch",)
#: imported by the warm-up where they can be: the 3D view's OpenGL (0.45 s the first time 3D is asked for)
OPTIONAL_MODULES = ("explorer.ui.projection.gl_plot",)
WARM_UP_MODULES = VIEW_MODULES + TORCH_MODULES  # in order: a tab opened in the first second needs its code
#: torch._dynamo (and sympy), which torch's optimisers import when the first one is made: 1.3-1.5 s of
#: Python holding the GIL. In the warm-up it doubled the warm-up's length and made most of the window's
#: early stalls: 6-7 of the first 150 actions of a walk in a real window stalled over 100 ms, 1-2 with it
#: left out (three alternated walks). Imported at the first idle moment instead; a training started
#: before then imports it in its own worker (the window's longest gap after Start: 54-63 ms, 26-36 with
#: it imported already).
#: Also scikit-learn's PCA and k-means (with SciPy: 0.8 s), which the layouts, the clusters and the
#: training's charts import when first used: a walk of 2,000 actions imported them in its workers,
#: holding the GIL, in the middle of the user's clicks.
IDLE_MODULES = ("torch._dynamo", "sklearn.decomposition", "sklearn.cluster")
