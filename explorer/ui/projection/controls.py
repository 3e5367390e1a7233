"""The projection's controls, one small class per group: the method, the fit set, the
axes and the export menu (the token search is ui/token_search.py). Each emits what the user asked
for; none reads or computes anything."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QSpinBox,
    QToolButton,
    QWidget,
)
from superqt.utils import signals_blocked

from explorer.core.projection.job import DEFAULT_SAMPLE, N_COMPONENTS
from explorer.core.projection.settings import FitSet, Method
from explorer.ui.style import SPACING

__all__ = ["METHODS", "FIT_MODES", "MethodControls", "FitControls", "AxesControls", "ColourControls", "ExportButton"]

METHODS = [
    (Method.PCA.value, "PCA",
     "Exact principal components: a linear map; distances along an axis mean something, "
     "and the share of variance shown is exact"),
    (Method.TSNE.value, "t-SNE",
     "t-SNE (openTSNE, cosine): keeps each token's nearest rows together; the map moves while it "
     "converges. Distances between far clusters and cluster sizes mean little"),
    (Method.UMAP.value, "UMAP",
     "UMAP (umap-learn, cosine): keeps neighbourhoods, often more of the global layout than t-SNE; "
     "compiled on first use, so the first run takes longer"),
    (Method.AXES.value, "Custom axes",
     "Directions you name (man → woman, or one token): each token's row projected on them"),
]

FIT_MODES = [
    (FitSet.ALL.value, "Whole vocabulary", "Fit on every trained row of the table (t-SNE and UMAP take minutes past "
                                "tens of thousands of rows)"),
    (FitSet.SAMPLE.value, "Sample + chosen",
     "Fit on a seeded random sample of rows plus the chosen tokens: the text's tokens, their neighbours and "
     "added tokens"),
    (FitSet.CHOSEN.value, "Chosen tokens", "Fit on the text's tokens, their neighbours and added tokens only"),
]


def _row(parent: QWidget) -> QHBoxLayout:
    lay = QHBoxLayout(parent)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(SPACING // 2)
    return lay


class MethodControls(QWidget):
    """How the rows are mapped to the plane.

    Signals
    -------
    method_changed(str)
        The user chose ``pca``, ``tsne`` or ``umap``.
    """

    method_changed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = _row(self)
        self.combo = QComboBox()
        for key, text, tip in METHODS:
            self.combo.addItem(text, key)
            self.combo.setItemData(self.combo.count() - 1, tip, Qt.ToolTipRole)
        self.combo.setToolTip("How the rows are mapped to the plane: exact PCA, or the neighbourhood-keeping "
                              "t-SNE and UMAP (on a sample, in the background)")
        self.combo.currentIndexChanged.connect(self._on_combo_changed)
        lay.addWidget(self.combo)

    def _on_combo_changed(self, _i: int) -> None:
        self.method_changed.emit(self.method)

    @property
    def method(self) -> Method:
        """The method chosen (the combo's items carry the enum's values; their texts are ours)."""
        return Method(self.combo.currentData())

    def show_method(self, method: str) -> None:
        """Show ``method`` without emitting (it came from the state)."""
        with signals_blocked(self.combo):
            self.combo.setCurrentIndex(max(0, self.combo.findData(Method(method).value)))

    def choose(self, method: str) -> None:
        """As if the user chose ``method``: emits ``method_changed``."""
        self.show_method(method)
        self.method_changed.emit(self.method)


class FitControls(QWidget):
    """Which rows the projection is fitted on.

    Signals
    -------
    fit_changed(str, int)
        The user chose a fit set: mode and sample size.
    """

    fit_changed = Signal(str, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = _row(self)
        lay.addWidget(QLabel("Fit on"))
        self.combo = QComboBox()
        for key, text, tip in FIT_MODES:
            self.combo.addItem(text, key)
            self.combo.setItemData(self.combo.count() - 1, tip, Qt.ToolTipRole)
        self.combo.setToolTip("Which rows the projection is fitted on; the others are placed by the same map "
                              "(PCA: the same components; t-SNE, UMAP: among their nearest laid-out rows)")
        self.combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.combo.setMinimumContentsLength(15)  # the longest name whole at 1024 px; the list shows them all
        self.combo.currentIndexChanged.connect(self._on_combo_changed)
        lay.addWidget(self.combo)
        self.sample = QSpinBox()
        self.sample.setRange(100, 500_000)
        self.sample.setSingleStep(5_000)
        self.sample.setValue(DEFAULT_SAMPLE)
        self.sample.setGroupSeparatorShown(True)
        self.sample.setSuffix(" rows")
        self.sample.setKeyboardTracking(False)
        self.sample.setToolTip("Size of the random sample of rows the projection is fitted on (seeded, so "
                               "repeatable); t-SNE and UMAP start from 3,000")
        self.sample.valueChanged.connect(self._on_sample_changed)
        lay.addWidget(self.sample)
        self._sync_sample_visibility()

    @property
    def mode(self) -> FitSet:
        return FitSet(self.combo.currentData())

    @property
    def sample_size(self) -> int:
        return int(self.sample.value())

    def show_params(self, mode: str, sample_size: int) -> None:
        """Show these parameters without emitting (they came from the state)."""
        with signals_blocked(self.combo), signals_blocked(self.sample):
            self.combo.setCurrentIndex(max(0, self.combo.findData(FitSet(mode).value)))
            self.sample.setValue(int(sample_size))
        self._sync_sample_visibility()

    def choose(self, mode: str, sample_size: int | None = None) -> None:
        """As if the user chose ``mode`` (and a sample size): emits ``fit_changed``."""
        self.show_params(mode, self.sample_size if sample_size is None else sample_size)
        self.fit_changed.emit(self.mode, self.sample_size)

    def _sync_sample_visibility(self) -> None:
        self.sample.setVisible(self.mode == "sample")

    def _on_combo_changed(self, _i: int) -> None:
        self._sync_sample_visibility()
        self.fit_changed.emit(self.mode, self.sample_size)

    def _on_sample_changed(self, _v: int) -> None:
        if self.mode == "sample":
            self.fit_changed.emit(self.mode, self.sample_size)


class AxesControls(QWidget):
    """The two principal components on the axes; never the same one twice
    (choosing the other axis's component swaps the two).

    Signals
    -------
    axes_changed(int, int)
        The components on the horizontal and vertical axes, 0-based.
    """

    axes_changed = Signal(int, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = _row(self)
        lay.addWidget(QLabel("Axes"))
        self.x_combo = QComboBox()
        self.y_combo = QComboBox()
        self._axes = (0, 1)
        for combo, which in ((self.x_combo, "horizontal"), (self.y_combo, "vertical")):
            combo.setToolTip(f"Principal component on the {which} axis (PC1 explains the most variance); "
                             "choosing the other axis's component swaps the two")
            combo.currentIndexChanged.connect(self._on_combo_changed)
        lay.addWidget(self.x_combo)
        lay.addWidget(QLabel("×"))
        lay.addWidget(self.y_combo)
        self.set_components(N_COMPONENTS)

    def axes(self) -> tuple[int, int]:
        return self._axes

    def set_components(self, n: int) -> None:
        """Offer PC1 … PCn (at least two; a table of d = 1 still shows PC1 × PC2 = 0)."""
        n = max(2, int(n))
        x, y = self._axes
        if x >= n or y >= n:
            x, y = 0, 1
        with signals_blocked(self.x_combo), signals_blocked(self.y_combo):
            for combo in (self.x_combo, self.y_combo):
                combo.clear()
                for k in range(n):
                    combo.addItem(f"PC{k + 1}", k)
            self.x_combo.setCurrentIndex(x)
            self.y_combo.setCurrentIndex(y)
        self._axes = (x, y)

    def set_axes(self, x: int, y: int) -> None:
        """Show components ``x`` and ``y``; emits ``axes_changed``. Raises ValueError when equal."""
        if int(x) == int(y):
            raise ValueError("the two axes need two different components")
        with signals_blocked(self.x_combo), signals_blocked(self.y_combo):
            self.x_combo.setCurrentIndex(int(x))
            self.y_combo.setCurrentIndex(int(y))
        self._axes = (int(x), int(y))
        self.axes_changed.emit(*self._axes)

    def _on_combo_changed(self, _i: int) -> None:
        x, y = int(self.x_combo.currentData()), int(self.y_combo.currentData())
        if x == y:  # the user picked the other axis's component: the axes swap
            old_x, old_y = self._axes
            if self.sender() is self.x_combo:
                y = old_x
            else:
                x = old_y
        self.set_axes(x, y)


class ColourControls(QWidget):
    """What colours the points: classes, token kind, length, row norm or nothing.

    Signals
    -------
    colour_changed(str)
        The key the user chose (see :data:`.colouring.COLOUR_BY`).
    """

    colour_changed = Signal(str)

    def __init__(self, parent=None):
        from explorer.ui.projection.colouring import COLOUR_BY

        super().__init__(parent)
        lay = _row(self)
        lay.addWidget(QLabel("Colour by"))
        self.combo = QComboBox()
        for key, text in COLOUR_BY:
            self.combo.addItem(text, key)
        self.combo.setToolTip("Colour the points by the bundled model's classes, the token's kind (word start, "
                              "continuation, number, punctuation, whitespace, special, byte), its length in "
                              "characters or its row's norm (six bins of equal counts)")
        self.combo.currentIndexChanged.connect(self._on_combo_changed)
        lay.addWidget(self.combo, 1)

    @property
    def colour_by(self) -> str:
        return self.combo.currentData()

    def choose(self, key: str) -> None:
        """As if the user chose ``key``: emits ``colour_changed`` when it changed."""
        self.combo.setCurrentIndex(max(0, self.combo.findData(key)))

    def show_default(self, key: str) -> None:
        """Show ``key`` without emitting (a new table's default)."""
        with signals_blocked(self.combo):
            self.combo.setCurrentIndex(max(0, self.combo.findData(key)))

    def set_user_columns(self, items: list[tuple[str, str]]) -> None:
        """The columns of the user's metadata file, (key, text) each, after the built-in colourings
        (in place of those of a file loaded before; without a signal)."""
        with signals_blocked(self.combo):
            current = self.colour_by
            for k in range(self.combo.count() - 1, -1, -1):
                if str(self.combo.itemData(k)).startswith("user:"):
                    self.combo.removeItem(k)
            for key, text in items:
                self.combo.addItem(text, key)
            self.combo.setCurrentIndex(max(0, self.combo.findData(current)))
        if self.colour_by != current:
            self.colour_changed.emit(self.colour_by)

    def _on_combo_changed(self, _i: int) -> None:
        self.colour_changed.emit(self.colour_by)


class ExportButton(QToolButton):
    """A menu of exports; each asks for a file name.

    Signals
    -------
    export_chosen(str, str)
        What to save (``png``, ``svg``, ``coords``, ``neighbors``, ``projector`` (a folder)
        or ``atlas``) and where.
    """

    export_chosen = Signal(str, str)
    #: kind -> (file filter, suggested name); a filter of None asks for a folder
    FILES = {"png": ("PNG image (*.png)", "projection.png"), "svg": ("SVG image (*.svg)", "projection.svg"),
             "coords": ("CSV (*.csv)", "projection.csv"), "neighbors": ("CSV (*.csv)", "neighbours.csv"),
             "projector": (None, "projector"), "atlas": ("Parquet (*.parquet)", "projection.parquet")}

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setText("Export")
        self.setToolTip("Save the plot (PNG/SVG), the coordinates or the neighbour lists (CSV), or the layout "
                        "for TensorBoard's Embedding Projector or Embedding Atlas")
        self.setPopupMode(QToolButton.InstantPopup)
        menu = QMenu(self)
        for kind, text in (("png", "Plot as PNG…"), ("svg", "Plot as SVG…"),
                           ("coords", "Projected coordinates as CSV…"), ("neighbors", "Neighbour lists as CSV…"),
                           (None, None), ("projector", "For TensorBoard's Embedding Projector (folder)…"),
                           ("atlas", "For Embedding Atlas (parquet)…")):
            if kind is None:
                menu.addSeparator()
                continue
            action = menu.addAction(text)
            action.setData(kind)
        menu.triggered.connect(self._on_menu_triggered)
        self.setMenu(menu)

    def _on_menu_triggered(self, action) -> None:
        kind = action.data()
        filters, name = self.FILES[kind]
        if filters is None:
            path = QFileDialog.getExistingDirectory(self, "Export into a folder")
        else:
            path, _ = QFileDialog.getSaveFileName(self, "Export", name, filters)
        if path:
            self.export_chosen.emit(kind, path)
