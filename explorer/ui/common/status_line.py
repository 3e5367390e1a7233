"""The status bar's permanent description of the loaded table, which makes
room for a temporary message instead of being painted over by it."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from explorer.ui.common.elided_label import ElidedLabel
from explorer.ui.style import NO_MAXIMUM

__all__ = ["TableStatus"]

#: room for a temporary message beyond its text: Qt leaves 6 px on
#: the left and 12 on the right of its message rectangle, and a gap before the description
_MESSAGE_MARGINS = 48
#: the description never shrinks below this
_MIN_WIDTH = 120


class TableStatus(ElidedLabel):
    """``V × d · dtype · parameters · bytes · tying``, elided when space is short.

    QStatusBar paints a temporary message (``showMessage``) in the space left
    of its permanent widgets: a description as wide as the bar leaves it none,
    and the message ends up clipped against the description. While a message
    is shown this label narrows (eliding its text, the whole of which stays in
    the tooltip) so that the message fits.
    """

    min_width = _MIN_WIDTH

    def __init__(self, bar: QStatusBar):
        self._bar = bar
        self._help = ""
        super().__init__()
        bar.addPermanentWidget(self)
        bar.messageChanged.connect(self._fit)
        bar.installEventFilter(self)

    def setToolTip(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._help = text
        self._update_tooltip(False)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self._fit(self._bar.currentMessage())

    def _update_tooltip(self, elided: bool) -> None:
        """The whole description and what it means, elided or not."""
        text = self.text()
        QLabel.setToolTip(self, f"{text}\n\n{self._help}" if text and self._help else text or self._help)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if obj is self._bar and event.type() == QEvent.Resize:
            self._fit(self._bar.currentMessage())
        return False

    def _fit(self, message: str) -> None:
        """Leave the message its width (or the bar's width less the minimum)."""
        if not message:
            self.setMaximumWidth(NO_MAXIMUM)
            return
        # the loading label, bar and button (normally hidden while a message shows)
        others = sum(w.width() for w in self._bar.findChildren(QWidget)
                     if w is not self and w.parent() is self._bar and w.isVisible()
                     and w.objectName() != "qt_statusbar_sizegrip")
        need = self.fontMetrics().horizontalAdvance(message) + _MESSAGE_MARGINS
        self.setMaximumWidth(max(_MIN_WIDTH, self._bar.width() - need - others))
