"""The big libraries a module's first import maps while holding the GIL (torch's, numba's LLVM) are
mapped first through a ctypes call, which lets the GIL go."""

from __future__ import annotations

import pytest

from explorer.core import libraries, runtime

#: maps a module's library while another thread counts (does the mapping let the GIL go?), then imports
#: the module through the finder, with ctypes.CDLL watched: was the library mapped before it was opened there?
_PRELOAD_SCRIPT = """
import ctypes, os, sys
from explorer.core import libraries
module, library = sys.argv[1], sys.argv[2]
path = libraries.library_path(module)  # before the finder, which maps the library when the module is looked for
finder = libraries.map_libraries_without_the_gil()
assert libraries.map_libraries_without_the_gil() is finder and sys.meta_path[0] is finder
mapped_at_cdll = []
cdll = ctypes.CDLL.__init__
def watched(self, name, *args, **kw):
    if name and os.path.basename(str(name)) == library:
        mapped_at_cdll.append(library in open("/proc/self/maps").read())
    cdll(self, name, *args, **kw)
ctypes.CDLL.__init__ = watched
if len(sys.argv) > 3:  # map it here first, another thread counting
    from tests.support.gil import lets_the_gil_go
    mapped, counted = lets_the_gil_go(lambda: libraries.map_library(path))
    print(mapped, counted, library in open("/proc/self/maps").read(), module in sys.modules)
else:
    print(library in open("/proc/self/maps").read())
imported = __import__(module)
print(finder.preloaded, library in open("/proc/self/maps").read(), mapped_at_cdll)
"""


def _preload(module: str, first: bool) -> list[str]:
    import subprocess
    import sys

    library = libraries.LIBRARIES[module][1].split("/")[-1]
    args = [sys.executable, "-c", _PRELOAD_SCRIPT, module, library] + (["first"] if first else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().split("\n")


@pytest.mark.skipif(runtime._glibc() is None or libraries.library_path("torch") is None,
                    reason="torch's library is mapped this way on Linux wheels")
def test_torch_s_library_is_mapped_with_the_gil_let_go_before_torch_is_imported():
    """The first import of torch maps libtorch_cpu while holding the GIL (0.2-0.35 s here,
    the window waiting); mapped through ctypes first, other threads run meanwhile."""
    mapped, imported = _preload("torch", first=True)
    # mapped; another thread ran during the call; the library is in the process; torch is not imported
    assert mapped.split() == ["True", "True", "True", "False"]
    # the finder maps it (already there: dlopen finds it), and the module is imported
    assert imported == "{'torch': True} True []"


@pytest.mark.skipif(runtime._glibc() is None or libraries.library_path("llvmlite.binding") is None,
                    reason="llvmlite's library is mapped this way on Linux wheels")
def test_numba_s_llvm_is_mapped_with_the_gil_let_go_before_llvmlite_opens_it():
    """llvmlite opens its 178 MB library with ctypes.CDLL, whose dlopen holds the GIL (a walk's window
    stood still 107 ms while a UMAP's worker was in it); the finder maps it first, through a ctypes call
    that lets the GIL go, so that llvmlite's own open finds it mapped."""
    mapped, imported = _preload("llvmlite.binding", first=True)
    assert mapped.split() == ["True", "True", "True", "False"]
    assert imported == "{'llvmlite.binding': True} True [True]"
    before, imported = _preload("llvmlite.binding", first=False)
    assert before == "False"  # nothing mapped it before the import
    # the finder mapped it as llvmlite.binding was looked for, before llvmlite's CDLL opened it
    assert imported == "{'llvmlite.binding': True} True [True]"
