"""The main window: layout, menus and status bar. No logic lives here."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.core.sources.output import tying_word
from explorer.core.units import format_bytes
from explorer.state.app_state import AppState
from explorer.ui.common.lazy_page import LazyPage
from explorer.ui.common.paint_once import PaintOnce
from explorer.ui.common.progress import ProgressBar
from explorer.ui.common.recolour import recolour_plots
from explorer.ui.common.status_line import TableStatus
from explorer.ui.inspector.view import RowInspector
from explorer.ui.matrix.view import MatrixView
from explorer.ui.style import THEMES, plot_colors
from explorer.ui.text.token_strip import TokenStrip

SHORTCUTS = [
    ("Ctrl+O", "Open a model (the model picker)"),
    ("Ctrl+Shift+O", "Open a model folder"),
    ("Ctrl+L", "Edit the text"),
    ("← / →", "Previous / next token (when the tokens have focus)"),
    ("Alt+← / Alt+→", "Previous / next token (anywhere)"),
    ("Ctrl+Shift+C", "Copy the selected row as CSV"),
    ("Esc", "Cancel loading"),
    ("F1", "This list"),
    ("Ctrl+Q", "Quit"),
]

#: the first window's size on a big screen; smaller screens get most of their available area
FIRST_SIZE = (1440, 900)
#: share of the available area the first window takes on a smaller screen
_SCREEN_SHARE = 0.92


def first_window_size(available_width: int, available_height: int, frame: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """The first window's content size on a screen whose available area (without
    panels and docks) is given: FIRST_SIZE, or less so that the whole window,
    its ``frame`` (title bar and borders) and status bar included, stays on screen."""
    w = min(FIRST_SIZE[0], int(available_width * _SCREEN_SHARE) - frame[0])
    h = min(FIRST_SIZE[1], int(available_height * _SCREEN_SHARE) - frame[1])
    return max(640, w), max(480, h)


#: tabs reachable by Ctrl+1 … Ctrl+9, in tab order
TAB_KEYS = 9
#: where the view shortcuts go in the list F1 shows (after the token keys)
_TAB_ROWS_AT = 5

ABOUT = (
    "<h3>Token Embedding Explorer</h3>"
    "<p>See and understand token embedding matrices: each token id selects one row of E (V × d). "
    "A lookup is a row gather: a pointer jump to base + i × d × sizeof(dtype), no arithmetic.</p>"
    "<p>PySide6, pyqtgraph, torch, transformers, scikit-learn, numpy.</p>"
)


class MainWindow(QMainWindow):
    """Workspace: model and text at the top, tokens under them, the views as
    tabs with the row inspector beside them.

    Signals
    -------
    open_requested()            the user wants the model picker
    open_folder_requested()
    path_dropped(str)           a file or folder was dropped on the window
    cancel_requested()          cancel the running load
    closing()                   the window is about to close
    """

    open_requested = Signal()
    open_folder_requested = Signal()
    path_dropped = Signal(str)
    cancel_requested = Signal()
    closing = Signal()
    tour_requested = Signal()
    theme_chosen = Signal(str)

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self._state = state
        self._plot_colors = plot_colors()  # what the plots were drawn in (a new palette recolours them)
        self.setWindowTitle("Token Embedding Explorer")
        self.setAcceptDrops(True)

        self._build_toolbar()
        self.token_strip = TokenStrip(state)
        self.matrix_view = MatrixView(state)
        self.inspector = RowInspector(state)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.matrix_view, "Matrix")

        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.tabs)
        # below its comfortable height (1024 x 700) the inspector scrolls rather than squash its tables
        side = QScrollArea()
        side.setWidgetResizable(True)
        side.setFrameShape(QFrame.NoFrame)
        side.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        side.setWidget(self.inspector)
        side.setMinimumWidth(self.inspector.minimumWidth() + side.verticalScrollBar().sizeHint().width())
        split.addWidget(side)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([900, 380])
        self.splitter = split
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.token_strip)
        cl.addWidget(split, 1)
        self.setCentralWidget(central)

        self._build_status_bar()
        self._build_menus()
        self._tab_shown(0, "The embedding matrix E as a heatmap")
        self._paint_once = PaintOnce(self)  # each plot painted once when the window paints
        state.model_changed.connect(self._on_state_model_changed)

    def _build_toolbar(self) -> None:
        """Open model… and the loaded model's name."""
        tb = QToolBar("Model")
        tb.setObjectName("ModelToolbar")
        tb.setMovable(False)
        self.model_button = QToolButton()
        self.model_button.setText("Open model…")
        self.model_button.setToolButtonStyle(Qt.ToolButtonTextOnly)
        self.model_button.setToolTip("Choose a model: bundled, toy, installed, cache, random, a folder or a file "
                                     "(Ctrl+O)")
        self.model_button.clicked.connect(self.open_requested)
        tb.addWidget(self.model_button)
        self.model_label = QLabel()
        self.model_label.setContentsMargins(8, 0, 8, 0)
        tb.addWidget(self.model_label)
        self.addToolBar(Qt.TopToolBarArea, tb)

    def _build_status_bar(self) -> None:
        """The table's line, and the loading progress with its Cancel."""
        sb = self.statusBar()
        self.status_model = TableStatus(sb)
        self.status_model.setToolTip("The loaded table: rows × columns, stored dtype, parameters, memory, tying")
        self.progress = ProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop loading (Esc); the current model stays")
        self.cancel_button.hide()
        self.cancel_button.clicked.connect(self.cancel_requested)
        # a temporary status message would hide normal status-bar widgets: the
        # loading message is a label of its own beside the bar and the button
        self.progress_label = QLabel()
        self.progress_label.hide()
        sb.addWidget(self.progress_label)
        sb.addWidget(self.progress)
        sb.addWidget(self.cancel_button)

    def add_view(self, title: str, tooltip: str, build: Callable[[], QWidget]) -> LazyPage:
        """A tab whose view ``build()`` makes the first time the tab is shown
        (or :meth:`LazyPage.view` is asked for): start-up builds only what is on screen."""
        page = LazyPage(build)
        self._tab_shown(self.tabs.addTab(page, title), tooltip)
        return page

    def _tab_shown(self, i: int, tooltip: str) -> None:
        """Tab ``i``'s tooltip, and its Ctrl+<i+1> in the View menu: the one list of tabs
        gives both the keys and the list F1 shows (:meth:`shortcut_rows`)."""
        if i >= TAB_KEYS:
            self.tabs.setTabToolTip(i, tooltip)
            return
        key = f"Ctrl+{i + 1}"
        self.tabs.setTabToolTip(i, f"{tooltip} ({key})")
        act = QAction(f"&{i + 1} {self.tabs.tabText(i)}", self, shortcut=QKeySequence(key))
        act.triggered.connect(lambda _=False, k=i: self.tabs.setCurrentIndex(k))
        self.views_menu.addAction(act)

    def shortcut_rows(self) -> list[tuple[str, str]]:
        """(keys, what they do) for F1: the fixed keys and one Ctrl+N per tab."""
        tabs = [(f"Ctrl+{i + 1}", f"Show the {self.tabs.tabText(i)} view")
                for i in range(min(self.tabs.count(), TAB_KEYS))]
        return SHORTCUTS[:_TAB_ROWS_AT] + tabs + SHORTCUTS[_TAB_ROWS_AT:]

    def _tab_index(self, name: str) -> int:
        """The index of the tab titled ``name`` (any case), or -1."""
        names = self.view_names()
        return names.index(name.strip().lower()) if name.strip().lower() in names else -1

    def build_view_step(self, name: str) -> bool:
        """One step of the build of view ``name`` (a turn's worth); True once it is made, or when
        it has nothing to build: :meth:`show_view` then puts it on screen without building it."""
        tab = self.tabs.widget(self._tab_index(name))
        return tab.build_step() if isinstance(tab, LazyPage) else True

    def show_view(self, name: str, now: bool = True) -> bool:
        """Bring view ``name`` to the front; ``"cost:famous"`` also brings the
        view's page whose title starts with "famous" to the front.

        A view never built is built at once (``--view``, a lesson's link, a test: on screen
        at once); with ``now`` False and no page asked for, over turns, as a click on its tab
        does (a button's link to another view: built whole in the click's turn, the Training
        view stalled a real window 300-360 ms)."""
        view, _, page = name.partition(":")
        i = self._tab_index(view)
        if i < 0:
            return False
        tab = self.tabs.widget(i)
        if isinstance(tab, LazyPage) and (now or page):
            tab.view()
        self.tabs.setCurrentIndex(i)
        return self._show_page(tab, page.strip().lower()) if page else True

    @staticmethod
    def _show_page(tab: QWidget, page: str) -> bool:
        widget = tab.view() if isinstance(tab, LazyPage) else tab
        for pages in widget.findChildren(QTabWidget):
            for j in range(pages.count()):
                if pages.tabText(j).lower().startswith(page):
                    pages.setCurrentIndex(j)
                    return True
        for name in getattr(widget, "PAGE_NAMES", ()):  # or a page of a stack ("lookup:backward")
            if name.startswith(page):
                widget.show_page(name)
                return True
        # or a choice the view offers in a combo box ("matrix:w_out": the output matrix)
        for combo in widget.findChildren(QComboBox):
            for j in range(combo.count()):
                item = combo.model().item(j) if hasattr(combo.model(), "item") else None
                if combo.itemText(j).lower().startswith(page) and (item is None or item.isEnabled()):
                    combo.setCurrentIndex(j)
                    return True
        return False

    def page_names(self, view: str) -> list[str]:
        """The pages ``show_view("VIEW:PAGE")`` brings to the front in view ``view``: its tabs'
        titles and its stack's pages, in lower case (a choice of its lists counts too, once
        the model offers it: "matrix:w_out")."""
        i = self._tab_index(view)
        if i < 0:
            return []
        tab = self.tabs.widget(i)
        widget = tab.view() if isinstance(tab, LazyPage) else tab
        names = [pages.tabText(j).lower() for pages in widget.findChildren(QTabWidget) for j in range(pages.count())]
        return names + list(getattr(widget, "PAGE_NAMES", ()))

    def view_names(self) -> list[str]:
        return [self.tabs.tabText(i).lower() for i in range(self.tabs.count())]

    def _build_menus(self) -> None:
        mb = self.menuBar()
        file_menu = mb.addMenu("&File")
        # a QAction's triggered passes a bool: relay through slots, not signal-to-signal kwargs
        self.open_action = QAction("&Open model…", self, shortcut=QKeySequence("Ctrl+O"))
        self.open_action.triggered.connect(self._on_open_action_triggered)
        self.open_folder_action = QAction("Open &folder…", self, shortcut=QKeySequence("Ctrl+Shift+O"))
        self.open_folder_action.triggered.connect(self._on_open_folder_action_triggered)
        self.recent_menu = file_menu.addMenu("Open &recent")
        file_menu.insertAction(self.recent_menu.menuAction(), self.open_action)
        file_menu.insertAction(self.recent_menu.menuAction(), self.open_folder_action)
        file_menu.addSeparator()
        self.copy_action = QAction("&Copy row as CSV", self, shortcut=QKeySequence("Ctrl+Shift+C"),
                                   triggered=self.inspector.copy_row_csv)
        file_menu.addAction(self.copy_action)
        file_menu.addSeparator()
        file_menu.addAction(QAction("&Quit", self, shortcut=QKeySequence.Quit, triggered=self.close))

        self.view_menu = mb.addMenu("&View")
        focus = QAction("Edit the &text", self, shortcut=QKeySequence("Ctrl+L"), triggered=self._focus_text)
        prev_t = QAction("&Previous token", self, shortcut=QKeySequence("Alt+Left"),
                         triggered=lambda: self._state.step_selection(-1))
        next_t = QAction("&Next token", self, shortcut=QKeySequence("Alt+Right"),
                         triggered=lambda: self._state.step_selection(+1))
        cancel = QAction("Cancel loading", self, shortcut=QKeySequence("Esc"))
        cancel.triggered.connect(self._on_cancel_action_triggered)
        self.cancel_action = cancel
        for a in (focus, prev_t, next_t, cancel):
            self.view_menu.addAction(a)
        self.view_menu.addSeparator()
        self.views_menu = self.view_menu.addMenu("&Show view")
        self.theme_menu = self.view_menu.addMenu("T&heme")
        self.theme_actions = {}
        group = QActionGroup(self)
        for name in THEMES:
            act = QAction(name.capitalize(), self, checkable=True)
            act.setToolTip({"system": "Follow the system's light or dark scheme"}.get(name, f"Always {name}"))
            act.triggered.connect(lambda _=False, n=name: self.theme_chosen.emit(n))
            group.addAction(act)
            self.theme_menu.addAction(act)
            self.theme_actions[name] = act
        self.theme_actions["system"].setChecked(True)

        help_menu = mb.addMenu("&Help")
        self.tour_action = QAction("&Tour", self, toolTip="A guided tour of the lessons, step by step, on real tables")
        self.tour_action.triggered.connect(self.tour_requested)
        help_menu.addAction(self.tour_action)
        help_menu.addAction(QAction("&Keyboard shortcuts", self, shortcut=QKeySequence("F1"),
                                    triggered=self.show_shortcuts))
        help_menu.addAction(QAction("&About", self, triggered=self.show_about))

    def _on_open_action_triggered(self) -> None:
        self.open_requested.emit()

    def _on_open_folder_action_triggered(self) -> None:
        self.open_folder_requested.emit()

    def _on_cancel_action_triggered(self) -> None:
        self.cancel_requested.emit()

    def set_recent(self, specs: list[str], on_chosen) -> None:
        self.recent_menu.clear()
        for spec in specs:
            act = self.recent_menu.addAction(spec)
            act.triggered.connect(lambda _=False, s=spec: on_chosen(s))
        self.recent_menu.setEnabled(bool(specs))

    def _focus_text(self) -> None:
        self.token_strip.edit.setFocus()
        self.token_strip.edit.selectAll()

    def show_shortcuts(self) -> None:
        rows = "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in self.shortcut_rows())
        box = QMessageBox(QMessageBox.Information, "Keyboard shortcuts", f"<table>{rows}</table>", parent=self)
        box.open()

    def fit_to_screen(self) -> None:
        """Size the first window to the screen it opens on (:func:`first_window_size`), centred."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            self.resize(*FIRST_SIZE)
            return
        area = screen.availableGeometry()
        frame = self.frameGeometry().size() - self.geometry().size() if self.isVisible() else None
        extra = (frame.width(), frame.height()) if frame is not None else (16, 40)  # a typical title bar
        self.resize(*first_window_size(area.width(), area.height(), extra))
        geo = self.frameGeometry()
        geo.moveCenter(area.center())
        self.move(geo.topLeft())

    def set_theme_choice(self, name: str) -> None:
        """Tick ``name`` (system, light, dark) in View → Theme."""
        if name in self.theme_actions:
            self.theme_actions[name].setChecked(True)

    def show_about(self) -> None:
        box = QMessageBox(QMessageBox.Information, "About", ABOUT, parent=self)
        box.open()

    def show_error(self, title: str, message: str) -> QMessageBox:
        """A non-blocking error box (the window keeps working)."""
        self.statusBar().showMessage(message, 15000)
        box = QMessageBox(QMessageBox.Warning, title, message, parent=self)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()
        return box

    def set_progress(self, fraction: float | None, message: str = "") -> None:
        """Show (fraction in 0..1) or hide (None) the loading progress (in the empty matrix, too,
        while there is no model yet: the status bar is easy to miss)."""
        self.matrix_view.show_loading(None if fraction is None else f"{message} {fraction:.0%}")
        if fraction is None:
            self.progress.hide()
            self.cancel_button.hide()
            self.progress_label.hide()
            self.progress_label.setMinimumWidth(0)
            return
        self.statusBar().clearMessage()
        self.progress_label.setText(message)
        # the label only widens while a load goes on: each shorter message moved the bar, the
        # button and the table's line (elided again and repainted), 6-9 times a load
        need = self.progress_label.sizeHint().width()
        if need > self.progress_label.minimumWidth():
            self.progress_label.setMinimumWidth(need)
        self.progress_label.show()
        self.progress.show()
        self.cancel_button.show()
        self.progress.setValue(int(fraction * 1000))

    def _on_state_model_changed(self, table) -> None:
        self.model_button.setText(table.name)
        self.model_label.setText(f"{table.vocab_size:,} × {table.dim:,} · {table.dtype}")
        params = f"{table.params:,} embedding parameters"
        if table.model_params:
            params += f" ({table.params / table.model_params:.1%} of the model's {table.model_params:,} in total)"
        parts = [
            f"V × d = {table.vocab_size:,} × {table.dim:,}",
            table.dtype,
            params,
            format_bytes(table.stored_bytes),
            tying_word(table.tied, table.kind),
        ]
        self.status_model.setText("  ·  ".join(parts))
        self.setWindowTitle(f"{table.name} — Token Embedding Explorer")

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().height() != event.oldSize().height():
            self.token_strip.window_resized()

    # drag and drop of a folder or file
    def dragEnterEvent(self, event):
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event):
        urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            self.path_dropped.emit(urls[0].toLocalFile())
            event.acceptProposedAction()

    def changeEvent(self, event):
        """A new palette (View → Theme, the system's scheme): the plots drawn take it now."""
        if event.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange):
            colors = plot_colors()
            if colors != self._plot_colors:
                recolour_plots(self._plot_colors, colors)
                self._plot_colors = colors
        super().changeEvent(event)

    def closeEvent(self, event):
        self.closing.emit()
        super().closeEvent(event)
