"""The user's own metadata on the projection: Metadata… (in the toolbar, beside Export)
reads a CSV or TSV keyed by id or piece (:mod:`explorer.core.interop.metadata_file`);
each of its columns is then a colouring (its groups fill the legend and the
Show filter) and a search (``column=value`` in the search box). The file is
read in a worker (the state's ``user_metadata`` computation): matching the
pieces of a big vocabulary took up to a second on the GUI thread."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QPushButton

from explorer.core.errors import user_message

__all__ = ["UserMetadataLoader"]


class UserMetadataLoader(QObject):
    """The Metadata… button at the end of ``toolbar`` (a TwoRowBar); the file's columns go to
    ``side.colour`` and ``points`` (PointSelection), its outcome to ``side.info``.

    Signals
    -------
    loaded(bool)
        A file asked for by :meth:`load` was read and applied (True) or could not be used (False).
    """

    loaded = Signal(bool)

    def __init__(self, state, side, points, toolbar, parent=None):
        super().__init__(parent)
        self._state, self._colour, self._info, self._points = state, side.colour, side.info, points
        self.button = QPushButton("Metadata…")
        self.button.setToolTip("Load your own metadata: a CSV or TSV whose first row names an id or piece column "
                               "and yours (the Embedding Projector's metadata file is one). Each column can then "
                               "colour and filter the points; search it with column=value.")
        self.button.clicked.connect(self._on_button_clicked)
        toolbar.add(self.button, wraps=True)
        state.model_changed.connect(self._on_state_model_changed)
        job = state.jobs.user_metadata
        job.finished.connect(self._on_read)
        job.failed.connect(self._on_failed)

    def load(self, path: str) -> bool:
        """Read ``path`` for the open table in a worker; its first column then colours the
        points (:attr:`loaded` says how it went). False when no table is open."""
        if not self._state.request_user_metadata(path):
            return False
        self._info.show_hover(f"Reading {Path(path).name}…")
        return True

    def _on_failed(self, exc: BaseException) -> None:
        self._info.show_hover(f"Metadata not loaded: {user_message(exc)}")
        self.loaded.emit(False)

    def _on_read(self, meta) -> None:
        if meta is None:
            return
        self._points.user = meta
        self._colour.set_user_columns([(f"user:{c.name}", f"{c.name} (your file)") for c in meta.columns])
        self._colour.choose(f"user:{meta.columns[0].name}")
        self._points.changed.emit()
        self._info.show_hover(f"Loaded {meta.describe()}. Search a column with column=value.")
        self.loaded.emit(True)

    def _on_button_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.button, "Load metadata", "",
                                              "Metadata (*.csv *.tsv *.txt);;All files (*)")
        if path:
            self.load(path)

    def _on_state_model_changed(self, _table) -> None:
        self._points.user = None  # keyed to the old model's ids and pieces
        self._colour.set_user_columns([])
