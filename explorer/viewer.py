"""``explorer.show``: the window from Python code (a script, IPython, Jupyter).

The object becomes an :class:`~explorer.core.sources.EmbeddingTable` in the
calling thread (:func:`~explorer.core.sources.memory.open_object`: cheap, and
an object that cannot be shown raises there, in the caller's code); the
window then loads it the way it loads a spec (``Explorer.open_table``), in
the background. One window per process: a second ``show`` loads into the
same window while it is open.

Blocking follows napari's rule: when IPython runs Qt's events between
prompts (``%gui qt``, seen in the shell's ``active_eventloop``) or a Qt event
loop is already running (``show`` called from a Qt slot), ``show`` returns
at once; otherwise (a script) it runs the window until it is closed.
"""

from __future__ import annotations

import sys
import warnings

from PySide6.QtCore import QEventLoop

from explorer.app import Explorer, make_app
from explorer.core.sources.memory import open_object

__all__ = ["show", "ShowNote", "current", "qt_events_running"]

_current: Explorer | None = None
#: Qt platforms without window stacking (raising a window there only logs a warning)
_NO_STACKING = ("offscreen", "minimal")


class ShowNote(UserWarning):
    """What ``show`` did with an object or noticed in it (a GPU tensor copied
    to the CPU, NaN values, a tokenizer larger than the table)."""


def current() -> Explorer | None:
    """The explorer whose window ``show`` last opened, while that window is open."""
    return _current if _current is not None and not _current.closed else None


def _on_window_closing() -> None:
    """The window closed: let the explorer go with it (a tensor shown is not kept alive)."""
    global _current
    _current = None


def qt_events_running(app) -> bool:
    """Whether Qt's events are already being processed without us: IPython's
    ``%gui qt`` (its input hook runs the loop between prompts, so the loop
    level alone would say no), or an event loop running now."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is not None and str(getattr(shell, "active_eventloop", "") or "").startswith("qt"):
        return True
    return app.thread().loopLevel() > 0


def show(obj, tokenizer=None, text: str | None = None, *, block: bool | None = None) -> Explorer:
    """Open ``obj`` in the explorer's window.

    Parameters
    ----------
    obj : torch.Tensor (V, d), numpy.ndarray (V, d), torch.nn.Embedding, a
        transformers model, or a model spec string ('default', a folder ...)
        float32, float16, bfloat16 or float64; a float32 tensor contiguous on
        the CPU is shown in place, without a copy.
    tokenizer : optional
        A transformers or tokenizers tokenizer, a tokenizer.json path, a
        model spec whose tokenizer to use, or a list of pieces (one per row).
        None: type token ids (a model loaded from a local folder or the
        Hugging Face cache brings its own).
    text : str, optional
        The text to tokenize; None keeps the last text of its kind or the example.
    block : bool, optional
        Run the window until it is closed. None decides: no when IPython's
        ``%gui qt`` or another Qt event loop is running, yes otherwise.

    Returns
    -------
    Explorer
        The window's explorer (``.window`` the window, ``.state`` what it shows).

    Raises
    ------
    SourceError
        For an object that cannot be shown at all (1-D, empty, not floating
        point, on the meta device, an unknown spec ...): the message says why.
    """
    global _current
    table = open_object(obj, tokenizer)
    for note in table.notes:
        warnings.warn(note, ShowNote, stacklevel=2)
    app = make_app()
    ex = current()
    if ex is None:
        ex = _current = Explorer()
        ex.window.closing.connect(_on_window_closing)
        ex.window.resize(1440, 900)
        ex.restore_settings()
    ex.open_table(table, text)
    ex.window.show()
    if app.platformName() not in _NO_STACKING:
        ex.window.raise_()  # a second show brings the window to the front
        ex.window.activateWindow()
    if block is None:
        block = not qt_events_running(app)
    if block:
        loop = QEventLoop()
        ex.window.closing.connect(loop.quit)
        loop.exec()
        ex.shutdown()
    return ex
