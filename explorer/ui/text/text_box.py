"""The one-line text box of the token strip: a paste is cut before Qt sees it.

QLineEdit.paste hands the whole clipboard to Qt, which walks every character
of it before applying the maximum length: a 1 MB book stalls the window for
about 200 ms only to keep the first 50,000 characters. This box cuts the
clipboard (and dropped text) to the room left first.

A long cut text is not inserted through ``QLineEdit.insert`` either: it
records one undo step per character and pays for every character outside
Unicode's first plane, so 50,000 characters with emoji in them took 110-190 ms
there against 6-25 ms for ``setText``. The box writes the new text whole
(:data:`WHOLE_FROM` characters or more) and keeps that paste's own undo step:
Ctrl+Z gives back the text from before it, Ctrl+Shift+Z (or Ctrl+Y) the paste again.
Lengths are counted as Qt counts them, in UTF-16 units, and a cut never
splits a character in two.
"""
from __future__ import annotations

from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QLineEdit

__all__ = ["TextBox", "WHOLE_FROM", "qt_length"]

#: a cut text this long (UTF-16 units) or longer goes in with setText, not insert
WHOLE_FROM = 2_000


def _units(text: str) -> bytes:
    """``text`` as Qt holds it: UTF-16 (two bytes a unit), lone surrogates kept."""
    return text.encode("utf-16-le", "surrogatepass")


def qt_length(text: str) -> int:
    """The length of ``text`` as Qt counts it (and ``maxLength`` limits it): a character
    outside Unicode's first plane (an emoji) counts twice."""
    return len(_units(text)) // 2


def _text(units: bytes) -> str:
    return units.decode("utf-16-le", "surrogatepass")


def _cut(units: bytes, room: int) -> bytes:
    """The first ``room`` units of ``units``, without half of a surrogate pair at the end."""
    units = units[: 2 * room]
    if units and 0xD8 <= units[-1] <= 0xDB:  # a high surrogate whose low half was cut off
        units = units[:-2]
    return units


class TextBox(QLineEdit):
    """A QLineEdit whose paste and drop are cut to ``maxLength()`` up front."""

    #: the last whole paste: (text before, its cursor, text after, its cursor)
    _paste_step: tuple[str, int, str, int] | None = None
    _undone: bool = False  # that paste was undone: Redo puts it back

    def room(self) -> int:
        """How many UTF-16 units (Qt's characters) a paste may add: the limit minus what stays."""
        kept = qt_length(self.text()) - self.selectionLength()
        return max(0, self.maxLength() - kept)

    def insert_cut(self, text: str) -> None:
        """Insert ``text`` at the cursor (replacing the selection), cut to :meth:`room`."""
        if self.isReadOnly():
            return
        cut = _cut(_units(text), self.room())
        if len(cut) // 2 >= WHOLE_FROM:
            self._insert_whole(cut)
        elif cut or self.hasSelectedText():
            self.insert(_text(cut))

    def _insert_whole(self, cut: bytes) -> None:
        """What ``insert`` would do with ``cut``, written with one ``setText``; its own undo step."""
        before, cursor = self.text(), self.cursorPosition()
        start = self.selectionStart() if self.hasSelectedText() else cursor
        units = _units(before)
        after = _text(units[: 2 * start] + cut + units[2 * (start + self.selectionLength()):])
        self._write(after, start + len(cut) // 2)
        self._paste_step, self._undone = (before, cursor, after, self.cursorPosition()), False

    def _write(self, text: str, cursor: int) -> None:
        self.setText(text)
        self.setCursorPosition(cursor)
        self.textEdited.emit(text)  # a user's edit, as insert would say (setText does not)

    def _whole_step_ready(self, redo: bool) -> bool:
        """Whether the last whole paste can be undone (or redone): the text is still what it left."""
        step = self._paste_step
        return step is not None and self._undone == redo and self.text() == (step[0] if redo else step[2])

    def _whole_step(self, redo: bool) -> bool:
        """Undo (or redo) the last whole paste if :meth:`_whole_step_ready`; True if done."""
        if not self._whole_step_ready(redo):
            return False
        before, cursor, after, cursor_after = self._paste_step
        self._write(*((after, cursor_after) if redo else (before, cursor)))
        self._undone = not redo
        return True

    def undo(self) -> None:  # noqa: D401 - Qt's slot name
        if not self._whole_step(redo=False):
            super().undo()

    def redo(self) -> None:  # noqa: D401 - Qt's slot name
        if not self._whole_step(redo=True):
            super().redo()

    def paste(self) -> None:  # noqa: D401 - Qt's slot name
        """Paste the clipboard's text, cut to the room left."""
        self.insert_cut(QGuiApplication.clipboard().text())

    def keyPressEvent(self, event) -> None:
        ours = [(QKeySequence.Paste, self.paste)]
        if not self.isReadOnly():  # Qt takes no undo or redo from the keys of a read-only box
            ours += [(QKeySequence.Undo, self.undo), (QKeySequence.Redo, self.redo)]
        for keys, act in ours:
            if event.matches(keys):
                act()
                event.accept()
                return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event) -> None:
        menu = self.createStandardContextMenu()
        ours = {"edit-paste": self.paste, "edit-undo": self.undo, "edit-redo": self.redo}
        for action in menu.actions():
            if action.objectName() in ours:
                action.triggered.disconnect()
                action.triggered.connect(ours[action.objectName()])
        for action in menu.actions():  # Qt's own history ended at a whole paste: ours goes on
            if action.objectName() in ("edit-undo", "edit-redo") and \
                    self._whole_step_ready(redo=action.objectName() == "edit-redo"):
                action.setEnabled(True)
        menu.exec(event.globalPos())
        menu.deleteLater()

    def dropEvent(self, event) -> None:
        mime = event.mimeData()
        if mime.hasText() and qt_length(mime.text()) > self.room():
            self.setFocus()
            self.insert_cut(mime.text())
            event.acceptProposedAction()
            return
        super().dropEvent(event)
