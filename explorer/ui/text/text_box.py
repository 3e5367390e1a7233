"""The one-line text box of the token strip: a paste is cut before Qt sees it.

QLineEdit.paste hands the whole clipboard to Qt, which walks every character
of it before applying the maximum length: a 1 MB book stalls the window for
about 200 ms only to keep the first 50,000 characters. This box cuts the
clipboard (and dropped text) to the room left first, then inserts it through
the same ``insert`` path, so a pasted book costs what 50,000 characters cost.
"""
from __future__ import annotations

from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QLineEdit


class TextBox(QLineEdit):
    """A QLineEdit whose paste and drop are cut to ``maxLength()`` up front."""

    def room(self) -> int:
        """How many characters a paste may add: the limit minus what stays."""
        kept = len(self.text()) - len(self.selectedText())
        return max(0, self.maxLength() - kept)

    def insert_cut(self, text: str) -> None:
        """Insert ``text`` at the cursor (replacing the selection), cut to :meth:`room`."""
        if self.isReadOnly():
            return
        text = text[: self.room()]
        if text or self.hasSelectedText():
            self.insert(text)

    def paste(self) -> None:  # noqa: D401 - Qt's slot name
        """Paste the clipboard's text, cut to the room left."""
        self.insert_cut(QGuiApplication.clipboard().text())

    def keyPressEvent(self, event) -> None:
        if event.matches(QKeySequence.Paste):
            self.paste()
            event.accept()
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event) -> None:
        menu = self.createStandardContextMenu()
        for action in menu.actions():
            if action.objectName() == "edit-paste":
                action.triggered.disconnect()
                action.triggered.connect(self.paste)
        menu.exec(event.globalPos())
        menu.deleteLater()

    def dropEvent(self, event) -> None:
        mime = event.mimeData()
        if mime.hasText() and len(mime.text()) > self.room():
            self.setFocus()
            self.insert_cut(mime.text())
            event.acceptProposedAction()
            return
        super().dropEvent(event)
