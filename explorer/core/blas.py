"""How many threads numpy's BLAS (OpenBLAS in numpy's wheels) runs, process-wide. No Qt here.

OpenBLAS makes its pool of threads when numpy is imported, in the thread that imports it: the
window's. A worker lowers its own priority (:func:`explorer.core.runtime.lower_this_thread`), but a
product it asks for runs in part on that pool, at the window's priority: a worker multiplying two
800 x 800 matrices at niceness 10 ran four ticks of CPU itself and thirteen on the pool's thread at
niceness 0. On two cores the pool's thread then competes with the window's on equal terms.
"""

from __future__ import annotations

import os

__all__ = ["limit_blas_threads", "one_blas_thread", "blas_threads"]

_CONTROLLER = None  # threadpoolctl's ThreadpoolController, made at the first use


def _controller():
    """threadpoolctl's controller, made once: making one walks every library the process has
    loaded (3-14 ms holding the GIL in the window's process, with Qt and torch loaded). numpy's BLAS
    is loaded with numpy, before it."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def blas_threads() -> list[int]:
    """The number of threads of each BLAS library numpy has loaded (as threadpoolctl reports them)."""
    return [lib.num_threads for lib in _controller().select(user_api="blas").lib_controllers]


def limit_blas_threads() -> int:
    """Leave a core free (for the window) in numpy's BLAS too, as :func:`~explorer.core.runtime.limit_torch_threads`
    does in torch's: at most one thread fewer than the machine has cores (one on two cores, where a
    worker's product then runs on the worker's own, lowered, thread). A limit the user set lower
    (``OPENBLAS_NUM_THREADS``) stays. Returns the limit now in force (0: no BLAS found). Safe to call again.

    Measured with a thread standing for the window (20 ms of CPU, then 5 ms asleep, over and over)
    beside a worker at niceness 10 multiplying 600 x 600 matrices: each 25 ms round took a median
    27.3 ms and at worst 33-40 ms with numpy's two threads, 25.2 and 25.6-26.7 ms with one.
    """
    n = os.cpu_count() or 1
    blas = _controller().select(user_api="blas")
    if not blas.lib_controllers:
        return 0
    most = max(1, n - 1)
    if max(lib.num_threads for lib in blas.lib_controllers) > most:
        blas.limit(limits=most)  # not used as a context: the limit stays
    return max(lib.num_threads for lib in blas.lib_controllers)


def one_blas_thread():
    """A context in which the BLAS libraries use one thread (and after which they use what they used
    before): for a decomposition a busy second core would slow a hundredfold (an SVD of 512 x 384
    threaded on a busy 2-core machine took 7 s against 0.1 s on one thread)."""
    return _controller().limit(limits=1, user_api="blas")
