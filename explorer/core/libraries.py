"""The big libraries a module's first import maps while holding the GIL (torch's C++ library, numba's LLVM),
mapped first through a ctypes call, which lets the GIL go. No Qt here."""

from __future__ import annotations

import os
import sys

from explorer.core.runtime import _glibc

__all__ = ["LIBRARIES", "library_path", "preload_library", "map_library", "map_libraries_without_the_gil"]


#: the big libraries that a module's first import maps while holding the GIL, mapped first with it let go:
#: the module, the package the library is in, and its place there (Linux wheels). Torch's C++ library
#: (see :func:`preload_library`); numba's LLVM (178 MB), which llvmlite maps with ``ctypes.CDLL`` when a
#: UMAP first imports numba: 11-38 ms on its own, and a walk's window stood still 107 ms for it (its
#: thread waiting for the GIL the whole time, the trace of every thread showing the UMAP's worker in
#: ``CDLL.__init__``)
LIBRARIES = {"torch": ("torch", "lib/libtorch_cpu.so"), "llvmlite.binding": ("llvmlite", "binding/libllvmlite.so")}


def library_path(module: str) -> str | None:
    """Where the library :data:`LIBRARIES` names for ``module`` is, found without importing the module
    (None: not there)."""
    import importlib.util

    package, place = LIBRARIES[module]
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    path = os.path.join(os.path.dirname(spec.origin), *place.split("/"))
    return path if os.path.isfile(path) else None


def preload_library(module: str) -> bool:
    """Map the library of ``module`` (:data:`LIBRARIES`) with the GIL let go.

    ``import torch`` maps libtorch_cpu (hundreds of MB: its relocations and
    static initialisers take 0.2-0.35 s here) from inside the import of its
    extension module, and Python holds the GIL for all of it, so every other
    thread, the window's among them, waits. ``dlopen`` called through ctypes
    lets the GIL go while it runs; the import that follows finds the library
    mapped. Measured with a thread ticking every millisecond beside
    ``import torch``: its longest wait 224-346 ms before, under 60 ms after.

    Returns whether the library was mapped here: False on other systems, once
    the module is imported, or where its files are not laid out as expected
    (the import then maps it, as before).
    """
    if module in sys.modules:
        return False
    path = library_path(module) if _glibc() is not None else None
    return path is not None and map_library(path)


def map_library(path: str) -> bool:
    """``dlopen(path, RTLD_NOW)`` with the GIL let go: True when mapped (kept mapped)."""
    import ctypes

    libc = _glibc()
    try:  # glibc 2.34 and later have dlopen in libc itself, older ones in libdl
        dlopen = libc.dlopen if hasattr(libc, "dlopen") else ctypes.CDLL("libdl.so.2").dlopen
    except (OSError, AttributeError):
        return False
    # a function of a CDLL: ctypes lets the GIL go for the call (Python's own loader keeps it)
    dlopen.argtypes, dlopen.restype = [ctypes.c_char_p, ctypes.c_int], ctypes.c_void_p
    return bool(dlopen(os.fsencode(path), os.RTLD_NOW))


class _PreloadLibraries:
    """A finder that maps a module's library (GIL let go) when the module is first imported, in
    whichever thread and from whichever module, then lets the usual finders find the module."""

    def __init__(self):
        self.preloaded: dict[str, bool] = {}  # module -> mapped here (absent: not asked for yet)

    def find_spec(self, name, path=None, target=None):
        if name in LIBRARIES and name not in self.preloaded:
            self.preloaded[name] = False  # finding the module's folder below asks the finders again
            self.preloaded[name] = preload_library(name)
        return None  # the usual finders find it (the finder stays: removing it mid-search skips the next)


def map_libraries_without_the_gil() -> _PreloadLibraries:
    """Have the first import of each module of :data:`LIBRARIES` map its library with the GIL let go
    (see :func:`preload_library`). One finder per process: the same one each call."""
    for finder in sys.meta_path:
        if isinstance(finder, _PreloadLibraries):
            return finder
    finder = _PreloadLibraries()
    sys.meta_path.insert(0, finder)
    return finder
