"""The custom axes the user types: a direction for each axis, a token pair
``man → woman`` (also ``->``) or a single token. Shown only while the
method is "Custom axes"; it emits the texts, the core parses them."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QWidget

from explorer.ui.style import SPACING

__all__ = ["AxesEntry"]


class AxesEntry(QWidget):
    """Two line edits, horizontal and vertical.

    Signals
    -------
    axes_changed()
        The user finished editing a direction (Enter or leaving the box).
    """

    axes_changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(SPACING // 2)
        tip = ("A direction: two tokens joined by → or -> (from the first token's row to the second's, e.g. "
               "man → woman), or one token (its row's direction). Each token's coordinate is its row's dot "
               "product with the direction scaled to length 1")
        self.x_edit, self.y_edit = QLineEdit("man → woman"), QLineEdit("king")
        for label, edit in (("Horizontal", self.x_edit), ("Vertical", self.y_edit)):
            edit.setToolTip(tip)
            edit.setPlaceholderText("token or a → b")
            edit.editingFinished.connect(self._on_edit_finished)
            lay.addWidget(QLabel(label))
            lay.addWidget(edit, 1)
        self._last = self.texts()
        self.hide()

    def texts(self) -> tuple[str, str]:
        return (self.x_edit.text().strip(), self.y_edit.text().strip())

    def set_texts(self, x: str, y: str) -> None:
        """As if the user typed both directions: emits ``axes_changed``."""
        self.x_edit.setText(x)
        self.y_edit.setText(y)
        self._on_edit_finished()

    def _on_edit_finished(self) -> None:
        if self.texts() != self._last:
            self._last = self.texts()
            self.axes_changed.emit()
