"""The dependency rule of DESIGN.md, checked in a clean interpreter."""

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "explorer"


def test_core_imports_no_qt_at_runtime():
    # Import every core module and the work a headless command does; no Qt
    # module may end up loaded.
    code = (
        "import sys, pkgutil, importlib, explorer.core as c\n"
        "for m in pkgutil.iter_modules(c.__path__):\n"
        "    importlib.import_module('explorer.core.' + m.name)\n"
        "from explorer.core.sources import open_table\n"
        "t = open_table('default'); t.rows([1, 2])\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'superqt', 'qtpy', 'shiboken6')]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=PKG.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def _imports(path: Path) -> set[str]:
    """Modules a file imports at run time (imports for type checkers only are left out)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            node.body = []
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            names.add("." * node.level + mod)
    return names


def test_core_imports_nothing_else_of_explorer():
    for f in (PKG / "core").glob("*.py"):
        for name in _imports(f):
            assert not name.startswith(("explorer.ui", "explorer.state.app_state", "explorer.app", "explorer.workers")), (f, name)
            assert not name.startswith(".."), (f, name)


def test_ui_does_not_import_app_or_workers():
    for f in (PKG / "ui").rglob("*.py"):  # the views' packages too
        for name in _imports(f):
            assert not name.lstrip(".").startswith(("app", "workers", "training_runner")), (f, name)
            assert not name.startswith(("explorer.app", "explorer.workers", "explorer.state.training_runner")), (f, name)


def test_state_and_workers_use_only_qtcore():
    for mod in ("state.py", "workers.py", "training_runner.py"):
        p = PKG / mod
        if not p.exists():
            continue
        for name in _imports(p):
            assert not name.startswith(("PySide6.QtWidgets", "PySide6.QtGui", "pyqtgraph", ".ui")), (mod, name)
