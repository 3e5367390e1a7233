"""The projection's 2D plot and its 3D view, one page at a time, with the
"3D" toggle that chooses between them.

The 3D page shows the first three coordinates of the state's projection
(PC1-PC3 of the PCA; a t-SNE or UMAP layout made in three dimensions when
the toggle is on, asked for by the view's FitRequest), coloured like the 2D
plot, with the text's tokens, the added tokens and the selection
highlighted and labelled. It is made only when the user first asks for 3D
and OpenGL works (:func:`gl_status`); otherwise, and when the first frame
fails to draw, the 2D plot stays and a line above it says why.

Its OpenGL code (PyOpenGL, pyqtgraph.opengl: 0.3 s of imports) comes with the
app's warm-up. Asked for before then, or before the first drawing was rehearsed off the window's
thread (:mod:`.opengl.rehearsal`), the 2D plot stays under "Preparing 3D…" while the owner does both
in workers (``gl_needed``, then :meth:`PlotPages.gl_imported`): imported in the click, it stalled the window
324-337 ms. With nobody connected to ``gl_needed``, the click imports it.
"""

from __future__ import annotations

import sys

import numpy as np
from PySide6.QtCore import SIGNAL, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QCheckBox, QStackedLayout, QVBoxLayout, QWidget

from explorer.state.app_state import AppState
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.projection.hover import hover_text
from explorer.ui.projection.opengl.rehearsal import rehearsal_signals, rehearsal_wanted, rehearsing
from explorer.ui.projection.opengl.support import gl_probed, gl_status
from explorer.ui.projection.scene3d import Cloud3D, cloud_3d, why_not_3d
from explorer.ui.style import ACCENT, EXTRA, SPACING, TEXT_TOKENS

__all__ = ["PlotPages", "GL_MODULE"]

#: the module of the 3D view (imported by the warm-up, or when 3D is first asked for)
GL_MODULE = "explorer.ui.projection.opengl.scene"


class PlotPages(QWidget):
    """The 2D ``plot`` or the 3D view, chosen by ``toggle``; ``notice`` says why 3D is not shown.

    Signals
    -------
    dims_changed(int)
        The user turned 3D on (3) or off (2).
    point_clicked(int)
        A point of the 3D view was clicked (its token id).
    hovered(str)
        The readout of the point under the pointer in 3D.
    shown_3d(bool)
        The 3D view came to the front (True) or went (False): the 2D-only controls do not apply there.
    gl_needed()
        3D was asked for before its OpenGL code (:data:`GL_MODULE`) was imported: the owner imports it
        off the window's thread, then calls :meth:`gl_imported`.
    """

    dims_changed = Signal(int)
    shown_3d = Signal(bool)
    point_clicked = Signal(int)
    hovered = Signal(str)
    gl_needed = Signal()

    def __init__(self, state: AppState, plot: QWidget, parent=None):
        super().__init__(parent)
        self._state = state
        self.plot = plot
        self.gl = None  # the GLProjection, made on first use
        self._gl_error = ""
        self._gl_asked = ""  # "": never; "asked": gl_needed emitted, awaited; "answered": gl_imported came
        self._result = None
        self._cloud: Cloud3D | None = None
        self._cloud_args: tuple | None = None  # what the cloud is made of, until 3D is wanted
        self._marks: tuple[list[int], list[str]] = ([], [])
        self._selection: tuple[int, list[int]] = (-1, [])
        self.toggle = QCheckBox("3D")  # a tick reads as on or off in both themes
        self.toggle.setToolTip("Show the first three components (PCA) or a 3D layout (t-SNE, UMAP) in a view "
                               "you can rotate: drag to turn, wheel to zoom, Ctrl+drag to pan")
        self.toggle.toggled.connect(self._on_toggled)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(SPACING // 2)
        self.notice = WrapLabel()
        self.notice.hide()
        lay.addWidget(self.notice)
        pages = QWidget()
        lay.addWidget(pages, 1)
        self._pages = QStackedLayout(pages)
        self._pages.addWidget(plot)
        rehearsal_signals().ended.connect(self._on_rehearsed)

    # -- public ----------------------------------------------------------------------------
    @property
    def wanted(self) -> bool:
        """The user asked for 3D."""
        return self.toggle.isChecked()

    @property
    def showing_3d(self) -> bool:
        return self.gl is not None and self._pages.currentWidget() is self.gl

    def set_3d(self, on: bool) -> None:
        """As if the user pressed the toggle."""
        self.toggle.setChecked(on)

    @property
    def cloud(self) -> Cloud3D | None:
        """What the 3D view draws (or would draw): None when the result has no third dimension."""
        if self._cloud_args is not None:
            self._cloud, self._cloud_args = cloud_3d(*self._cloud_args), None
        return self._cloud

    def mark_positions(self) -> np.ndarray:
        """(m, 3) positions of the highlighted tokens, in the order given to :meth:`set_marks`."""
        return self._xyz(self._marks[0])

    # -- data from the view ------------------------------------------------------------------
    def set_cloud(self, result, group: np.ndarray, colours: list[QColor], size: float) -> None:
        """The drawn projection and the 2D view's colours (groups into ``colours``)."""
        # the camera keeps its place when only the colours change; it follows a layout converging
        reframe = self._result is None or result is None or result.ids is not self._result.ids \
            or not getattr(result, "done", True)
        self._result = result
        # made when 3D is wanted: a filter change redraws the 2D cloud with each click, and the 3D
        # cloud (every point, its colours) took a millisecond of that frame for a page not shown
        self._cloud = None
        self._cloud_args = None if result is None or why_not_3d(result) else (result, group, colours, size)
        self._refresh(reframe=reframe)

    def set_marks(self, ids: list[int], colours: list[str]) -> None:
        """The highlighted tokens and their colours (the analogy's target, id -1, is left out)."""
        keep = [k for k, i in enumerate(ids) if i >= 0]
        self._marks = ([int(ids[k]) for k in keep], [colours[k] for k in keep])
        if self.showing_3d:
            self._draw_overlays()

    def set_selection(self, token_id: int, neighbor_ids: list[int]) -> None:
        self._selection = (int(token_id), list(neighbor_ids))
        if self.showing_3d:
            self._draw_overlays()

    def gl_imported(self, _result=None) -> None:
        """The import asked for by ``gl_needed`` ended (imported, or failed: :func:`gl_status` then
        says why): 3D comes, if still wanted."""
        self._gl_asked = "answered"  # imported, or failed: not asked again (gl_status says why)
        self._refresh(reframe=True)

    def _on_rehearsed(self) -> None:
        """The first drawing's rehearsal ended (:mod:`.opengl.rehearsal`): 3D comes, if it waited for it."""
        if self.wanted and self.gl is None:
            self._refresh(reframe=True)

    def clear(self) -> None:
        """A new model: nothing of the old one stays."""
        self._result, self._cloud, self._cloud_args = None, None, None
        self._marks, self._selection = ([], []), (-1, [])
        if self.gl is not None:
            self.gl.set_cloud(None)
            self._clear_overlays()
        self._refresh()

    # -- choosing the page ---------------------------------------------------------------------
    def _on_toggled(self, on: bool) -> None:
        self.dims_changed.emit(3 if on else 2)
        self._refresh(reframe=True)

    def _why_not(self) -> str:
        if not self.wanted:
            return ""
        status = gl_status()
        if not status.ok:
            return status.reason
        if self._gl_error:
            return self._gl_error
        return why_not_3d(self._result)

    def _gl_awaited(self) -> bool:
        """3D is wanted and waits: its first drawing is being rehearsed, or its code is not imported yet or
        its first drawing not rehearsed, and the owner does both (asked once)."""
        if not self.wanted or self.gl is not None:
            return False
        if rehearsing():
            return True
        imported = hasattr(sys.modules.get(GL_MODULE), "GLProjection")
        if (imported and not rehearsal_wanted()) or self._gl_asked == "answered" \
                or not self.receivers(SIGNAL("gl_needed()")):
            return False
        if not self._gl_asked:
            self._gl_asked = "asked"
            self.gl_needed.emit()
        return True

    def _refresh(self, reframe: bool = False) -> None:
        if self._gl_awaited():
            self.notice.setText("Preparing 3D (loading its OpenGL code)… Showing 2D meanwhile.")
            self.notice.show()
            self._show_page(self.plot)
            return
        probed = gl_probed()
        reason = self._why_not()
        self.notice.setText(f"{reason}. Showing 2D." if reason else "")
        self.notice.setVisible(bool(reason))
        if not self.wanted or reason or self.cloud is None:
            self._show_page(self.plot)
            return
        if self.gl is None:
            if not probed:  # the probe's context (35 ms: the OpenGL driver loads) and the view's in two passes
                QTimer.singleShot(0, self, lambda: self._refresh(reframe=True))
                return
            self._make_gl()
            if self.gl is None:
                return
        self.gl.set_cloud(self._cloud)
        self._draw_overlays()
        if reframe:
            self.gl.frame()
        self._show_page(self.gl)

    def _show_page(self, page: QWidget) -> None:
        if self._pages.currentWidget() is not page:
            self._pages.setCurrentWidget(page)
            self.shown_3d.emit(page is self.gl)

    def _make_gl(self) -> None:
        try:
            from explorer.ui.projection.opengl.scene import GLProjection

            self.gl = GLProjection()
        except Exception as exc:  # PyOpenGL or pyqtgraph.opengl failing late
            from explorer.core.errors import user_message

            self._on_gl_failed(f"3D could not start ({user_message(exc)})")
            return
        self.gl.failed.connect(self._on_gl_failed, Qt.QueuedConnection)  # not while it paints
        self.gl.point_clicked.connect(self.point_clicked)
        self.gl.point_hovered.connect(self._on_gl_hovered)
        self._pages.addWidget(self.gl)

    def _on_gl_failed(self, message: str) -> None:
        self._gl_error = message
        self._refresh()

    # -- overlays ------------------------------------------------------------------------------
    def _current(self) -> bool:
        """The cloud is of the state's table. Not so for a moment in a model switch: computations
        are reset (and their views redraw) before the view hears of the new model and clears, and
        the old marks' ids (46,285) were projected from the new table's rows (1,237)."""
        table = self._state.table
        return table is not None and self._result is not None and self._result.spec == table.spec

    def _xyz(self, ids) -> np.ndarray:
        if self.cloud is None or not self._current() or not len(ids):
            return np.zeros((0, 3), np.float32)
        return self._result.coords_of(self._state.table, ids)[:, :3]

    def _draw_overlays(self) -> None:
        if not self._current():  # the old model's marks: nothing until the new model's cloud
            self._clear_overlays()
            return
        ids, colours = self._marks
        self.gl.set_marks(np.asarray(ids, np.int64), self._xyz(ids), colours)
        sel, lines = self._selection
        self.gl.set_selection(self._xyz([sel] + lines) if sel >= 0 else np.zeros((0, 3)))
        table = self._state.table
        wanted = ([(sel, ACCENT)] if sel >= 0 else []) + \
            [(i, c) for i, c in zip(ids, colours) if c in (TEXT_TOKENS, EXTRA) and i != sel]
        labels = []
        if wanted and table is not None:
            xyz = self._xyz([w[0] for w in wanted])
            labels = [(p, table.shown_piece(i).short(), c) for (i, c), p in zip(wanted, xyz)]
        self.gl.set_labels(labels)

    def _clear_overlays(self) -> None:
        self.gl.set_marks(np.zeros(0), np.zeros((0, 3)), [])
        self.gl.set_selection(np.zeros((0, 3)))
        self.gl.set_labels([])

    def _on_gl_hovered(self, token_id: int) -> None:
        table = self._state.table
        if token_id >= 0 and table is not None and self._result is not None:
            self.hovered.emit(hover_text(table, self._state.classes, self._result, token_id, (0, 1, 2),
                                         self._xyz([token_id])[0]))
