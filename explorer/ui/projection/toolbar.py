"""The projection's toolbar: one row when the view is wide enough, two when
it is not (the search box and Export move to a second row), so that the tab
fits a 1024 px window without a horizontal scroll bar."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
from PySide6.QtWidgets import QHBoxLayout, QLayout, QVBoxLayout, QWidget

from explorer.ui.style import SPACING

__all__ = ["TwoRowBar"]


class TwoRowBar(QWidget):
    """Widgets in one row; those added with ``wraps=True`` go to a second row
    while the bar is narrower than the one-row layout needs.

    Its minimum width is the two-row layout's, so a narrow window can give it
    less than one row needs; it then rearranges on its next resize.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(SPACING)
        lay.setSizeConstraint(QLayout.SetNoConstraint)
        self._rows = (QHBoxLayout(), QHBoxLayout())
        for row in self._rows:
            row.setSpacing(SPACING)
            lay.addLayout(row)
        self._fixed: list[QWidget] = []
        self._wrapping: list[tuple[QWidget, int]] = []
        self._two_rows = False

    @property
    def two_rows(self) -> bool:
        return self._two_rows

    def add(self, widget: QWidget, stretch: int = 0, wraps: bool = False) -> None:
        if wraps:
            self._wrapping.append((widget, stretch))
        else:
            self._fixed.append(widget)
        self._rows[1 if wraps and self._two_rows else 0].addWidget(widget, stretch)

    def insert_after(self, anchor: QWidget, widget: QWidget) -> None:
        """Put ``widget`` right after ``anchor`` (a widget of the first row)."""
        row = self._rows[0]
        row.insertWidget(row.indexOf(anchor) + 1, widget)
        self._fixed.insert(self._fixed.index(anchor) + 1, widget)

    def _row_width(self, widgets, hint: str) -> int:
        """The width of ``widgets`` side by side, each by its own ``hint`` method ("sizeHint"): called as
        QWidget.sizeHint(w), the base class's, a button or a check box had no width, so one row seemed to
        fit at 1280 px where it did not, and squeezed the fit set's box."""
        shown = [w for w in widgets if not w.isHidden()]
        return sum(getattr(w, hint)().width() for w in shown) + SPACING * max(0, len(shown) - 1)

    def one_row_width(self) -> int:
        """The width one row of every widget wants."""
        return self._row_width(self._fixed + [w for w, _s in self._wrapping], "sizeHint")

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        width = max(self._row_width(self._fixed, "minimumSizeHint"),
                    self._row_width([w for w, _s in self._wrapping], "minimumSizeHint"))
        return QSize(width, super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._arrange(event.size().width() < self.one_row_width())

    def event(self, event) -> bool:
        # what one row needs changed (the fit's sample size shown with "Sample + chosen"): at 1280 px the one
        # row squeezed the fit set's box to "Sample + chose" until the next resize
        if event.type() == QEvent.LayoutRequest:
            self._arrange(self.width() < self.one_row_width())
        return super().event(event)

    def _arrange(self, two_rows: bool) -> None:
        if two_rows == self._two_rows:
            return
        self._two_rows = two_rows
        target = self._rows[1 if two_rows else 0]
        for widget, stretch in self._wrapping:
            self._rows[0 if two_rows else 1].removeWidget(widget)
            target.addWidget(widget, stretch)
        self.updateGeometry()
