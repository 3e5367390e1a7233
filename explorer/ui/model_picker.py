"""The model picker: every table this machine can open, with its shape."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

from explorer.core.sources import SourceInfo
from explorer.core.sources.output import tying_word
from explorer.core.units import format_size
from explorer.ui.common.table_fit import fit_to_contents
from explorer.ui.style import SPACING

GROUPS = {
    "bundled": "Bundled (no download)",
    "toy": "Worked toy tables",
    "package": "Installed pretrained models",
    "cache": "Hugging Face cache",
    "recent": "Recent",
    "random": "Random",
}

COLUMNS = ["Model", "V (rows)", "d", "dtype", "Embedding parameters", "On disk", "Tied"]
#: column of the embedding's parameter count
PARAMS_COLUMN = COLUMNS.index("Embedding parameters")
HEADER_TIPS = [
    "Double-click a model to open it",
    "V: rows of the embedding table (vocabulary size)",
    "d: columns of the embedding table (model width)",
    "How the embedding table is stored",
    "V × d: the numbers in the embedding table alone, not the whole model "
    "(the Cost card gives the model's total and the table's share of it)",
    "Size of the whole checkpoint file(s) on disk",
    "Whether the output projection reuses the embedding table",
]


class ModelPicker(QDialog):
    """Choose a model.

    Signals
    -------
    spec_chosen(str)
        The spec of the model to open.
    """

    spec_chosen = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Open a model")
        self.resize(880, 520)
        lay = QVBoxLayout(self)
        lay.setSpacing(SPACING)
        self.status = QLabel("Looking for models on this machine…")
        lay.addWidget(self.status)

        self.tree = QTreeWidget()
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(COLUMNS)
        for c, tip in enumerate(HEADER_TIPS):
            self.tree.headerItem().setToolTip(c, tip)
        self.tree.setUniformRowHeights(True)
        self.tree.header().setStretchLastSection(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.Stretch)
        self.tree.itemDoubleClicked.connect(self._on_tree_item_double_clicked)
        self.tree.setToolTip("Double-click a model to open it (the one in bold is open)")
        lay.addWidget(self.tree, 1)

        rnd = QGroupBox("Random table, N(0, 0.02²) like GPT-2's initialisation")
        rl = QHBoxLayout(rnd)
        self.v_spin = QSpinBox()
        self.v_spin.setRange(1, 10_000_000)
        self.v_spin.setValue(50257)
        self.v_spin.setGroupSeparatorShown(True)
        self.v_spin.setToolTip("V: rows (vocabulary size)")
        self.d_spin = QSpinBox()
        self.d_spin.setRange(1, 65536)
        self.d_spin.setValue(768)
        self.d_spin.setToolTip("d: columns (model width)")
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(0, 2**31 - 1)
        self.seed_spin.setToolTip("Seed: the same seed gives the same table")
        self.random_btn = QPushButton("Open random table")
        self.random_btn.clicked.connect(self._on_random_clicked)
        for text, w in (("V", self.v_spin), ("d", self.d_spin), ("seed", self.seed_spin)):
            rl.addWidget(QLabel(text))
            rl.addWidget(w)
        rl.addStretch(1)
        rl.addWidget(self.random_btn)
        lay.addWidget(rnd)

        buttons = QDialogButtonBox()
        self.folder_btn = buttons.addButton("Open folder…", QDialogButtonBox.ActionRole)
        self.file_btn = buttons.addButton("Open file…", QDialogButtonBox.ActionRole)
        self.open_btn = buttons.addButton("Open", QDialogButtonBox.AcceptRole)
        buttons.addButton(QDialogButtonBox.Cancel)
        self.folder_btn.setToolTip("A Hugging Face model folder (config.json, *.safetensors, tokenizer)")
        self.file_btn.setToolTip("A .safetensors or .gguf file")
        self.folder_btn.clicked.connect(self._on_folder_clicked)
        self.file_btn.clicked.connect(self._on_file_clicked)
        buttons.accepted.connect(self._on_open_clicked)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self._items: dict[str, QTreeWidgetItem] = {}
        self._current: str | None = None  # the model open in the window

    def set_current(self, spec: str | None) -> None:
        """The model open in the window: highlighted, and choosing it again only closes the picker."""
        self._current = spec
        self._highlight()

    def _highlight(self) -> None:
        for spec, it in self._items.items():
            f = it.font(0)
            f.setBold(spec == self._current)
            it.setFont(0, f)
            it.setText(0, it.data(0, Qt.UserRole + 1) + ("  (open)" if spec == self._current else ""))
        item = self._items.get(self._current or "") or self._items.get("default")
        if item is not None:
            self.tree.setCurrentItem(item)
            self.tree.scrollToItem(item)

    def set_sources(self, sources: list[SourceInfo]) -> None:
        """Fill the list (the app finds the sources off the GUI thread)."""
        self.tree.clear()
        self._items = {}
        groups: dict[str, QTreeWidgetItem] = {}
        for info in sources:
            if info.origin == "random":
                continue
            g = groups.get(info.origin)
            if g is None:
                g = QTreeWidgetItem([GROUPS.get(info.origin, info.origin)])
                g.setFlags(Qt.ItemIsEnabled)
                f = g.font(0)
                f.setBold(True)
                g.setFont(0, f)
                self.tree.addTopLevelItem(g)
                groups[info.origin] = g
            it = QTreeWidgetItem(g, self._cells(info))
            it.setData(0, Qt.UserRole, info.spec)
            it.setData(0, Qt.UserRole + 1, it.text(0))  # the name, without the "(open)" mark
            it.setToolTip(0, f"{info.spec}" + (f"\n{info.path}" if info.path else "")
                          + (f"\n{info.error}" if info.error else ""))
            for c in range(1, len(COLUMNS)):
                it.setTextAlignment(c, Qt.AlignRight | Qt.AlignVCenter)
            if info.vocab_size and info.dim:
                it.setToolTip(PARAMS_COLUMN, f"Embedding table only: V × d = {info.vocab_size:,} × {info.dim:,}")
            if info.error:
                it.setDisabled(True)
            self._items[info.spec] = it
        self.tree.expandAll()
        fit_to_contents(self.tree, range(1, len(COLUMNS)))  # the first column stretches
        self.status.setText(f"{len(self._items)} models found. Double-click one, open a folder or file, "
                            "or drop one on the main window.")
        self._highlight()

    @staticmethod
    def _cells(info: SourceInfo) -> list[str]:
        if info.error:
            return [info.name, "", "", "", "", "", "cannot open"]
        params = info.vocab_size * info.dim if info.vocab_size and info.dim else None
        return [
            info.name,
            f"{info.vocab_size:,}" if info.vocab_size else "?",
            f"{info.dim:,}" if info.dim else "?",
            info.dtype or "?",
            f"{params:,}" if params else "?",
            format_size(info.disk_bytes) if info.disk_bytes else "–",
            tying_word(info.tied, info.origin),
        ]

    def specs(self) -> list[str]:
        return list(self._items)

    def choose(self, spec: str) -> None:
        """Open ``spec``; the model already open is not loaded again (its selection stays)."""
        if spec != self._current:
            self.spec_chosen.emit(spec)
        self.accept()

    def _on_tree_item_double_clicked(self, item: QTreeWidgetItem, _col: int) -> None:
        spec = item.data(0, Qt.UserRole)
        if spec:
            self.choose(spec)

    def _on_open_clicked(self) -> None:
        item = self.tree.currentItem()
        spec = item.data(0, Qt.UserRole) if item else None
        if spec:
            self.choose(spec)

    def _on_random_clicked(self) -> None:
        seed = self.seed_spin.value()
        spec = f"random:{self.v_spin.value()}x{self.d_spin.value()}" + (f":{seed}" if seed else "")
        self.choose(spec)

    def _on_folder_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a model folder")
        if path:
            self.choose(path)

    def _on_file_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a model file", "",
                                              "Model weights (*.safetensors *.gguf);;All files (*)")
        if path:
            self.choose(path)
