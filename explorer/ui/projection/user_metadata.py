"""The user's own metadata on the projection: Metadata… (in the toolbar, beside Export)
reads a CSV or TSV keyed by id or piece (:mod:`explorer.core.interop.metadata_file`);
each of its columns is then a colouring (its groups fill the legend and the
Show filter) and a search (``column=value`` in the search box)."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QPushButton

from explorer.core.errors import user_message
from explorer.core.interop.metadata_file import MetadataFileError, read_metadata_file

__all__ = ["UserMetadataLoader"]


class UserMetadataLoader(QObject):
    """The Metadata… button at the end of ``toolbar`` (a TwoRowBar); the file's columns go to
    ``side.colour`` and ``points`` (PointSelection), its outcome to ``side.info``."""

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

    def load(self, path: str) -> bool:
        """Read ``path`` for the open table; its first column colours the points. False (and the
        reason in the readouts) when the file cannot be used."""
        table = self._state.table
        if table is None:
            return False
        try:
            meta = read_metadata_file(path, table)
        except MetadataFileError as exc:
            self._info.show_hover(f"Metadata not loaded: {user_message(exc)}")
            return False
        self._points.user = meta
        self._colour.set_user_columns([(f"user:{c.name}", f"{c.name} (your file)") for c in meta.columns])
        self._colour.choose(f"user:{meta.columns[0].name}")
        self._points.changed.emit()
        self._info.show_hover(f"Loaded {meta.describe()}. Search a column with column=value.")
        return True

    def _on_button_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.button, "Load metadata", "",
                                              "Metadata (*.csv *.tsv *.txt);;All files (*)")
        if path:
            self.load(path)

    def _on_state_model_changed(self, _table) -> None:
        self._points.user = None  # keyed to the old model's ids and pieces
        self._colour.set_user_columns([])
