"""The house rules of DESIGN.md, checked from the files and in a clean interpreter.

Dependency rule: ``core`` imports nothing else of ``explorer``; ``state`` and
``workers`` use QtCore only; ``ui`` never imports ``app``, ``workers``, the
training runner or core jobs; no import cycles anywhere. Layout: packages by
concept (no families of modules held together by a name prefix, at most a
dozen loose modules in ``core``), no file over 500 lines, ruff clean.
"""

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.support.paths import REPO

PKG = REPO / "explorer"
MAX_LINES = 500
MAX_LOOSE_CORE_MODULES = 12


def _modname(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_modname(p): p for p in PKG.rglob("*.py")}


def test_core_imports_no_qt_at_runtime():
    # Import every core module and the work a headless command does; no Qt
    # module may end up loaded.
    code = (
        "import sys, pkgutil, importlib, explorer.core as c\n"
        "for m in pkgutil.walk_packages(c.__path__, 'explorer.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "from explorer.core.sources import open_table\n"
        "t = open_table('default'); t.rows([1, 2])\n"
        "bad = [m for m in sys.modules\n"
        "       if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'superqt', 'qtpy', 'shiboken6')]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=PKG.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def _imports(path: Path) -> set[str]:
    """Modules a file imports at run time (imports for type checkers only are left out).

    ``from A import b`` names the module ``A.b`` when there is one, else ``A``."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            node.body = []
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = "." * node.level + (node.module or "")
            subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in MODULES]
            names.update(subs)
            if len(subs) < len(node.names):
                names.add(mod)
    return names


def test_no_relative_imports():
    for path in MODULES.values():
        for imported in _imports(path):
            assert not imported.startswith("."), (path, imported)


def test_core_imports_nothing_else_of_explorer():
    for f in (PKG / "core").rglob("*.py"):
        for name in _imports(f):
            assert not name.startswith(("explorer.ui", "explorer.state", "explorer.app", "explorer.workers",
                                        "explorer.cli", "explorer.launch", "explorer.benchmarks")), (f, name)
            assert not name.startswith(".."), (f, name)


#: public modules at the top of the package for users' own code: facades over core alone
PUBLIC_FACADES = ("explorer.record",)


def test_public_facades_import_only_core_and_load_nothing_at_import():
    """``explorer.record`` (used inside a user's training loop) imports core only, lazily:
    importing it loads no torch, transformers or Qt."""
    for name in PUBLIC_FACADES:
        for imported in _imports(MODULES[name]):
            assert imported.startswith("explorer.core") or imported in ("__future__", "typing"), (name, imported)
    code = ("import sys, explorer.record\n"
            "print(','.join(m for m in ('torch', 'transformers', 'PySide6', 'numpy') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=PKG.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


#: libraries the window's start never imports (workers import them when their feature is first used)
NOT_AT_START = ("torch", "transformers", "numba", "llvmlite", "scipy", "sklearn", "openTSNE", "umap")


def test_the_window_starts_without_the_heavy_libraries():
    """What ``python -m explorer`` imports before its window shows: the state once imported
    numba (0.27 s, with llvmlite and scipy) for UMAP's code, 0.65 s of the start in all."""
    code = ("import sys, explorer.cli, explorer.launch\n"
            f"print(','.join(m for m in {NOT_AT_START!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=PKG.parent,
                         env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_ui_does_not_import_app_or_workers():
    for f in (PKG / "ui").rglob("*.py"):  # the views' packages too
        for name in _imports(f):
            assert not name.lstrip(".").startswith(("app", "workers", "training_runner")), (f, name)
            assert not name.startswith(("explorer.app", "explorer.workers", "explorer.state.training_runner",
                                        "explorer.cli", "explorer.launch", "explorer.benchmarks")), (f, name)


def _job_names(module: str) -> set[str]:
    """The generator jobs a core module defines: functions named ``iter_*`` or ``*_job``."""
    tree = ast.parse(MODULES[module].read_text())
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
            and (n.name.startswith("iter_") or n.name.endswith("_job"))}


def test_ui_never_imports_core_jobs():
    # a view asks the state for work; it never runs (or holds) a job itself
    for f in (PKG / "ui").rglob("*.py"):
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("explorer.core") \
                    and node.module in MODULES:
                jobs = _job_names(node.module)
                taken = {a.name for a in node.names} & (jobs | {"run_to_end"})
                assert not taken, (f, node.module, taken)
            if isinstance(node, ast.ImportFrom) and node.module == "explorer.core":
                assert "jobs" not in {a.name for a in node.names}, f


def test_views_never_drive_the_states_jobs():
    """A view asks the state for an intent (request_health, cancel_measurement, ...);
    it never clears, cancels, requests or publishes one of its computations itself
    (the binding in ui/common/binding.py only says whether its view wants one)."""
    import re

    drive = re.compile(r"(?<![A-Za-z0-9])_?state\.(?:ends\.)?[a-z_]+\.(clear|cancel|request|publish|want)\(")
    assert drive.search("self._state.health.want(self, False)") and drive.search("state.measurement.cancel()")
    for f in (PKG / "ui").rglob("*.py"):
        if f.name == "binding.py":
            continue
        hits = [line.strip() for line in f.read_text().splitlines() if drive.search(line)]
        assert not hits, (f, hits)


def test_views_see_the_states_jobs_only_through_job_views():
    """``state.jobs.<name>`` (a JobView: value, signals, want, the user's Cancel) is how a view
    reaches background work; the state's Computation objects themselves stay the state's."""
    import re

    from explorer.state.app_state import AppState

    state = AppState()  # its computations' names, so the rule cannot drift from the state
    names = "|".join(sorted(vars(state.jobs)))
    state.deleteLater()
    direct = re.compile(r"(?<![A-Za-z0-9_.])(?:self\._state|state|st)\.(?:ends\.)?(" + names + r")\b(?!_)")
    assert direct.search("self._state.health.value") and not direct.search("self._state.jobs.health.value")
    for f in (PKG / "ui").rglob("*.py"):
        hits = [line.strip() for line in f.read_text().splitlines() if direct.search(line)]
        assert not hits, (f, hits)


def test_state_and_workers_use_only_qtcore():
    for p in [*(PKG / "state").rglob("*.py"), PKG / "workers.py", PKG / "pacing.py"]:
        for name in _imports(p):
            assert not name.startswith(("PySide6.QtWidgets", "PySide6.QtGui", "pyqtgraph", "explorer.ui",
                                        "explorer.app")), (p, name)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    # every import counts, late ones inside functions too: a cycle hidden in
    # a function is still a cycle
    graph = {m: {n for n in _imports(p) if n in MODULES and n != m} for m, p in MODULES.items()}
    assert _cycles(graph) == []


def test_core_is_packages_by_concept():
    loose = sorted(p.stem for p in (PKG / "core").glob("*.py") if p.stem != "__init__")
    assert len(loose) <= MAX_LOOSE_CORE_MODULES, loose
    # no family of three or more modules held together by a name prefix
    for folder in [PKG, *(d for d in PKG.rglob("*") if d.is_dir() and (d / "__init__.py").exists())]:
        stems = [p.stem for p in folder.glob("*.py") if p.stem != "__init__" and "_" in p.stem]
        families = {k: n for k, n in Counter(s.split("_")[0] for s in stems).items() if n >= 3}
        assert not families, (folder, families)


def test_no_plain_np_unique():
    """numpy's np.unique without indices builds a hash set holding the GIL:
    seconds on millions of values, a frozen window while a job runs. The
    project's unique_sorted sorts instead (explorer/core/arrays.py)."""
    plain = []
    for p in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "unique" and getattr(node.func.value, "id", "") in ("np", "numpy") \
                    and not any(k.arg and k.arg.startswith("return_") for k in node.keywords):
                plain.append(f"{p.relative_to(REPO)}:{node.lineno}")
    assert plain == []


@pytest.mark.parametrize("top", ["explorer", "tests"])
def test_no_file_over_500_lines(top):
    long = {str(p.relative_to(REPO)): n for p in (REPO / top).rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_no_constructor_over_60_lines():
    """A constructor that long builds several groups of controls: each gets a part of its own."""
    long = {}
    for p in PKG.rglob("*.py"):
        for cls in ast.walk(ast.parse(p.read_text())):
            if isinstance(cls, ast.ClassDef):
                for fn in cls.body:
                    if isinstance(fn, ast.FunctionDef) and fn.name == "__init__" and fn.end_lineno - fn.lineno >= 60:
                        long[f"{p.relative_to(REPO)}:{cls.name}"] = fn.end_lineno - fn.lineno + 1
    assert long == {}


def _ruff() -> list[str] | None:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent))
    if exe:
        return [exe]
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    return None


def test_ruff_is_clean():
    cmd = _ruff()
    if cmd is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    out = subprocess.run([*cmd, "check", "--no-cache", "--output-format", "concise", "."], capture_output=True,
                         text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


_GRAD_MODES = {"no_grad", "inference_mode", "enable_grad", "set_grad_enabled", "_no_grad"}


def test_no_job_yields_inside_a_grad_mode():
    """torch's grad mode belongs to a thread: a job suspended at a yield inside ``torch.no_grad()``
    or ``torch.inference_mode()`` leaves whoever resumes the thread in that mode, and a job closed
    from another thread (a cancelled one, closed from the window's) runs the mode's exit there,
    leaving its worker thread in it for good (a later training there: "element 0 of tensors does
    not require grad")."""
    found = []
    for path in sorted((REPO / "explorer").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.With):
                continue
            calls = [item.context_expr for item in node.items if isinstance(item.context_expr, ast.Call)]
            names = {getattr(c.func, "attr", getattr(c.func, "id", "")) for c in calls}
            if names & _GRAD_MODES and any(isinstance(n, (ast.Yield, ast.YieldFrom)) for b in node.body
                                           for n in ast.walk(b)):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


#: numpy's calls that go to BLAS (OpenBLAS's threads and locks), by the name they are called by
_BLAS_CALLS = {"dot", "matmul", "vdot", "inner", "tensordot", "einsum", "norm"}


def test_the_window_code_calls_no_blas():
    """The window's thread works out its small sums as numpy products and sums
    (``explorer.core.geometry.vectors.vector_norm`` and ``cosine``), never through BLAS:
    twice a walk's click stood still 642 and 823 ms inside ``np.dot`` of one row while a
    job's BLAS ran in a worker. No ``@``, ``np.dot``, ``np.linalg.norm`` and the like in
    ``explorer/ui``; the views hand bigger linear algebra to jobs."""
    found = []
    for path in sorted((REPO / "explorer" / "ui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            blas = (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)) or (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _BLAS_CALLS)
            if blas:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


#: the functions of ``core`` that the window's thread calls on its data: where a model's tokens go in a
#: projection or a layout, the small similarity and cosine matrices the views draw at once
_WINDOW_CALLS_INTO_CORE = {
    "explorer/core/projection/job.py": ["ProjectionResult.transform"],
    "explorer/core/projection/manifold/result.py": ["ManifoldResult._nearest_rows"],
    "explorer/core/geometry/vectors.py": ["similarity_matrix", "vector_norm", "cosine"],
    "explorer/core/cost/why.py": ["cosine_matrix"],
    "explorer/core/geometry/nearest.py": ["_search_unit"],  # a small table's neighbours, searched at once
    "explorer/core/geometry/direct_path.py": ["iter_direct_path"],  # a small table's logits, scored at once
}


def _function(tree: ast.Module, qualname: str) -> ast.FunctionDef:
    node = tree
    for part in qualname.split("."):
        node = next(n for n in node.body if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == part)
    return node


def test_the_core_functions_the_window_calls_multiply_without_blas():
    """The window's thread placed a text's tokens in a UMAP layout by a product with every laid-out row
    (``unit @ rows.T``): 0.5 ms alone, a median 90 ms and up to 2 s while a worker's BLAS product ran on
    numpy's shared pool of BLAS threads (95 ms seen in a real window with a UMAP computing). Those
    functions multiply through ``row_products`` (numpy's own loops), never ``@`` or ``np.dot``."""
    found = []
    for rel, names in _WINDOW_CALLS_INTO_CORE.items():
        tree = ast.parse((REPO / rel).read_text())
        for name in names:
            for node in ast.walk(_function(tree, name)):
                blas = (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)) or (
                    isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _BLAS_CALLS - {"norm", "einsum"})
                if blas:
                    found.append(f"{rel}:{node.lineno} in {name}")
    assert found == []
