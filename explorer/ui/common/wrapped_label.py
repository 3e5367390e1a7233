"""A word-wrapped label that asks its layout for all of its lines.

A box layout takes a word-wrapped QLabel's minimum height from one line.
A page of wrapped sentences above plots then asked its scroll area for less
than it needed: the scroll area did not scroll, and the plots below were
squeezed under their minimum (the Positions page at 1024 x 700: the parts
plot 11 px short, its key laid over the axis). :class:`WrappedLabel`'s
minimum height is its height at its current width, asked again whenever
its width or its text changes.

:class:`WrapLabel` (which WrappedLabel is) remembers its heights per width until its
text, font, style or margins change. Layouts ask a wrapped label's height for the same few
widths again and again in one pass, and a QLabel lays its words out anew for each answer:
the Cost tab's tiles were laid out about 900 times per resize of the window (a quarter of
the window's time in it); from memory, a fifth of that.

:meth:`hold` clears it (or shows a short message) while it keeps its height:
a label cleared when a job restarts and filled when its result comes made
everything under it move twice (the Positions page: every plot resized, its
axes drawn anew and repainted, at each text change).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel

__all__ = ["WrapLabel", "WrappedLabel"]


#: heights remembered per label: a window dragged wide and narrow keeps the last ones
_HEIGHTS_KEPT = 32


class WrapLabel(QLabel):
    """A QLabel (word wrap on) that answers its height for a width it was asked before from memory."""

    def __init__(self, text: str = "", parent=None, wrap: bool = True):
        self._heights: dict[int, int] = {}  # QLabel's own height per width, for what is shown now
        super().__init__(text, parent)
        QLabel.setWordWrap(self, wrap)  # nothing remembered yet

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt's name; what a layout asks)
        height = self._heights.get(width)
        if height is None:
            height = self._heights[width] = super().heightForWidth(width)
            if len(self._heights) > _HEIGHTS_KEPT:
                del self._heights[next(iter(self._heights))]
        return height

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        self._heights.clear()  # a font, a style or the contents' margins changed: the words wrap anew
        super().changeEvent(event)

    # what changes the wrap without an event to changeEvent
    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._heights.clear()
        super().setText(text)

    def setNum(self, number) -> None:  # noqa: N802 (Qt's name)
        self._heights.clear()
        super().setNum(number)

    def clear(self) -> None:
        self._heights.clear()
        super().clear()

    def setTextFormat(self, text_format) -> None:  # noqa: N802 (Qt's name)
        self._heights.clear()
        super().setTextFormat(text_format)

    def setWordWrap(self, on: bool) -> None:  # noqa: N802 (Qt's name)
        self._heights.clear()
        super().setWordWrap(on)

    def setMargin(self, margin: int) -> None:  # noqa: N802 (Qt's name)
        self._heights.clear()
        super().setMargin(margin)

    def setIndent(self, indent: int) -> None:  # noqa: N802 (Qt's name)
        self._heights.clear()
        super().setIndent(indent)


class WrappedLabel(WrapLabel):
    """A QLabel with word wrap whose minimum height holds every line at its width."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self._held = 0  # the height kept by hold() until the next setText

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._held = 0
        super().setText(text)

    def hold(self, text: str = "") -> None:
        """Show ``text`` (nothing by default) in the height the label has now, until the
        next :meth:`setText`: the words on their way take the room the last ones had."""
        self._held = max(self._held, self._laid_out_height())
        super().setText(text)
        self.updateGeometry()

    def _laid_out_height(self) -> int:
        """The height the layout last gave the label; also in a tab not on screen, where the
        next show lays the page out again (a view hidden during a model switch holds too).
        0 for a label hidden itself or never laid out (its height is Qt's default)."""
        if self.isHidden() or not self.testAttribute(Qt.WA_Resized):
            return 0
        return self.height()

    @property
    def held(self) -> bool:
        """Whether the label keeps a height from :meth:`hold` (until the next setText)."""
        return self._held > 0

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt's name; what a box layout asks)
        return max(super().heightForWidth(width), self._held)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        hint = super().minimumSizeHint()
        if self._held:
            hint.setHeight(max(hint.height(), self._held))
        if not self.text() or self.width() <= 0:
            return hint
        return QSize(hint.width(), max(hint.height(), self.heightForWidth(self.width())))

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width() and self.text():
            self.updateGeometry()  # the lines wrap anew: the layout asks the minimum again
