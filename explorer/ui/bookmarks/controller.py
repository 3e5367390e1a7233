"""Save the view under a name, come back to it, hand it on as a JSON file.

The controller drives the app through the same small interface as the tour
(``state``, ``window``, ``view(name)``, ``open_spec``, ``settings`` and the
``load_finished(bool)`` signal) and keeps the bookmarks in the settings.
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMenu

from explorer.core.bookmarks import Bookmark, BookmarkError, dumps, loads, read_file, write_file
from explorer.ui.common.binding import OneATurn

__all__ = ["BookmarkController"]

#: views whose page a bookmark keeps (each has show_page and current_page)
_PAGED_VIEWS = ("lookup", "cost", "similarity")


class BookmarkController(QObject):
    """The Bookmarks menu: save, restore, export and import."""

    def __init__(self, app, parent=None):
        super().__init__(parent)
        self._app = app
        self._state, self._window = app.state, app.window
        self._pending: Bookmark | None = None
        self._arrival = OneATurn(self)  # a view never shown: built a step a turn, then brought up
        try:
            self.bookmarks: list[Bookmark] = loads(str(app.settings.value("bookmarks", "") or "")) \
                if app.settings.value("bookmarks") else []
        except BookmarkError:  # a damaged entry in the settings: start afresh rather than fail
            self.bookmarks = []
        bar = self._window.menuBar()
        self.menu = QMenu("&Bookmarks", bar)
        last = bar.actions()[-1] if bar.actions() else None  # Help stays the last menu
        bar.insertMenu(last, self.menu) if last is not None else bar.addMenu(self.menu)
        self.menu.setToolTipsVisible(True)
        app.load_finished.connect(self._on_app_load_finished)
        self._fill_menu()

    # -- intents -------------------------------------------------------------------------------
    def capture(self, name: str) -> Bookmark | None:
        """Save the view on screen as ``name`` (a bookmark of that name is replaced)."""
        table, w = self._state.table, self._window
        if table is None or not name.strip():
            return None
        tab = w.tabs.tabText(w.tabs.currentIndex()).lower()
        view = f"{tab}:{self._app.view(tab).current_page()}" if tab in _PAGED_VIEWS else tab
        mark = Bookmark(name.strip(), table.spec, self._state.text, self._state.selected_position, view)
        self.bookmarks = [b for b in self.bookmarks if b.name != mark.name] + [mark]
        self._save()
        return mark

    def restore(self, mark: Bookmark) -> None:
        """Bring ``mark``'s model, text, token and view back (the model loads first if it is another)."""
        table = self._state.table
        self._state.set_text(mark.text)
        self._show(mark)
        if table is None or table.spec != mark.model:
            self._pending = mark
            self._app.open_spec(mark.model, keep_text=True)
        elif mark.position >= 0:
            self._state.select_position(mark.position)

    def export_to(self, path: str) -> None:
        write_file(path, self.bookmarks)

    def import_from(self, path: str) -> int:
        """Add the bookmarks of a file (same names replaced); returns how many. BookmarkError if unreadable."""
        marks = read_file(path)
        names = {m.name for m in marks}
        self.bookmarks = [b for b in self.bookmarks if b.name not in names] + marks
        self._save()
        return len(marks)

    # -- the menu ------------------------------------------------------------------------------
    def _fill_menu(self) -> None:
        m = self.menu
        m.clear()
        m.addAction("Save this &view…", self._on_save_triggered).setToolTip(
            "Keep the model, text, selected token, tab and page under a name")
        m.addAction("&Export…", self._on_export_triggered).setToolTip(
            "Write the bookmarks to a small JSON file to hand on")
        m.addAction("&Import…", self._on_import_triggered).setToolTip("Add the bookmarks of a JSON file")
        if self.bookmarks:
            m.addSeparator()
        for mark in self.bookmarks:
            act = m.addAction(mark.name)
            act.setToolTip(f"{mark.model} · {mark.view} · “{mark.text[:60]}”")
            act.triggered.connect(lambda _=False, b=mark: self.restore(b))

    def _save(self) -> None:
        self._app.settings.setValue("bookmarks", dumps(self.bookmarks))
        self._fill_menu()

    def _on_save_triggered(self) -> None:
        table = self._state.table
        default = f"{table.name} · {self._state.text[:30]}" if table is not None else ""
        name, ok = QInputDialog.getText(self._window, "Save this view", "Name:", text=default)
        if ok:
            self.capture(name)

    def _on_export_triggered(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self._window, "Export bookmarks", "bookmarks.json", "JSON (*.json)")
        if path:
            try:
                self.export_to(path)
            except BookmarkError as exc:
                self._window.show_error("Could not export the bookmarks", str(exc))

    def _on_import_triggered(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self._window, "Import bookmarks", "", "JSON (*.json);;All files (*)")
        if path:
            try:
                n = self.import_from(path)
            except BookmarkError as exc:
                self._window.show_error("Could not import the bookmarks", str(exc))
                return
            self._window.statusBar().showMessage(f"{n} bookmark(s) imported: see the Bookmarks menu", 6000)

    # -- after a load ----------------------------------------------------------------------------
    def _show(self, mark: Bookmark) -> None:
        """Bring ``mark``'s view and page up. A view never shown is built first, a step a turn,
        as the tour does: built whole in the turn of the click, the Lookup stalled a real
        window 146-189 ms."""
        tab, _, page = mark.view.partition(":")
        if not self._window.build_view_step(tab):
            self._arrival.run([lambda: self._show(mark)], now=False)
            return
        if self._window.show_view(tab) and page and tab in _PAGED_VIEWS:
            self._app.view(tab).show_page(page)

    def _on_app_load_finished(self, ok: bool) -> None:
        mark, self._pending = self._pending, None
        if mark is None or not ok:
            return
        table = self._state.table
        if table is not None and table.spec == mark.model and mark.position >= 0:
            self._state.select_position(mark.position)
