"""Composition root: builds the QApplication, AppState, the main window and
the workers, and wires them. The only module that knows everyone."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from PySide6.QtCore import QByteArray, QObject, QSettings, QTimer, Signal, qInstallMessageHandler  # noqa: E402
from PySide6.QtWidgets import QApplication, QFileDialog  # noqa: E402

from .core import recent  # noqa: E402
from .state import AppState  # noqa: E402
from .ui.main_window import MainWindow  # noqa: E402
from .ui.model_picker import ModelPicker  # noqa: E402
from .ui.style import STYLESHEET, apply_theme, configure_pyqtgraph  # noqa: E402
from .workers import (  # noqa: E402
    JobRunner,
    LoadedModel,
    await_all_workers,
    load_model_job,
    neighbors_job,
    warm_up_job,
)

ORG, APP = "embedding-explorer", "Token Embedding Explorer"


def _list_sources_job(recent_specs):
    from .core.sources import list_sources

    yield 0.0, "Looking for models…"
    return list_sources(recent_specs)


class Explorer(QObject):
    """Owns the state, the window and the background jobs, and wires them.

    Signals
    -------
    load_finished(bool)
        A model load ended (True: installed; False: failed or cancelled).
    """

    load_finished = Signal(bool)

    def __init__(self, settings: QSettings | None = None, parent=None):
        super().__init__(parent)
        self.settings = settings or QSettings(QSettings.IniFormat, QSettings.UserScope, ORG, "explorer")
        self.state = AppState(self)
        self.window = MainWindow(self.state)
        self.loader = JobRunner(self)
        self.neighbor_jobs = JobRunner(self)
        self.listing = JobRunner(self)
        self.picker: ModelPicker | None = None
        self._last_error = ""
        self._closed = False
        self._warmed = False
        self._pending_token: int | None = None
        self._runners = [self.loader, self.neighbor_jobs, self.listing]
        self._build_views()

        w = self.window
        w.token_strip.text_edited.connect(self.state.set_text)
        w.token_strip.token_clicked.connect(self.state.select_position)
        w.token_strip.step_requested.connect(self.state.step_selection)
        w.matrix_view.row_clicked.connect(self.state.set_selected_token)
        w.inspector.neighbor_clicked.connect(self._on_inspector_neighbor_clicked)
        w.open_requested.connect(self.show_picker)
        w.open_folder_requested.connect(self._on_window_open_folder_requested)
        w.path_dropped.connect(self.open_spec)
        w.cancel_requested.connect(self.cancel_load)
        w.closing.connect(self._on_window_closing)

        self.loader.progressed.connect(self._on_loader_progressed)
        self.loader.succeeded.connect(self._on_loader_succeeded)
        self.loader.failed.connect(self._on_loader_failed)
        self.loader.cancelled.connect(self._on_loader_cancelled)
        self.neighbor_jobs.succeeded.connect(self.window.inspector.set_neighbors)
        self.listing.succeeded.connect(self._on_listing_succeeded)
        self.state.selected_token_changed.connect(self._on_state_selected_token_changed)
        self._refresh_recent()

    def _runner(self) -> JobRunner:
        """A job runner for one view, stopped with the others on close."""
        runner = JobRunner(self)
        self._runners.append(runner)
        return runner

    def _build_views(self) -> None:
        """The tabs beside the matrix; each view gets the state and its own runner."""
        from .ui.cost_view import CostView
        from .ui.projection_view import ProjectionView
        from .ui.similarity_view import SimilarityView

        from .ui.lookup_view import LookupView

        w = self.window
        self.lookup_view = LookupView(self.state, runner=self._runner())
        w.add_view(self.lookup_view, "Lookup",
                   "Row i of E two ways: one-hot vector × E versus a pointer offset, animated, then measured")
        self.projection_view = ProjectionView(self.state, runner=self._runner())
        w.add_view(self.projection_view, "Projection",
                   "PCA of the embedding table: where tokens sit, neighbours, analogies")
        self.similarity_view = SimilarityView(self.state, runner=self._runner())
        w.add_view(self.similarity_view, "Similarity",
                   "How alike the text's tokens are: learned vectors vs ids vs one-hot; random vectors")
        for view in (self.projection_view, self.similarity_view):
            view.token_selected.connect(self.state.set_selected_token)
            view.token_added.connect(self.state.add_extra_token)
        from .ui.training_view import TrainingView

        self.training_view = TrainingView(self.state, runner=self._runner())
        w.add_view(self.training_view, "Training",
                   "Train a small next-token model and watch its embedding table learn: gradient sparsity, "
                   "rows moved by momentum and weight decay, drift of rare rows, classes clustering")
        self.training_view.model_saved.connect(self.open_spec)
        self.cost_view = CostView(self.state, runner=self._runner())
        w.add_view(self.cost_view, "Cost", "What the table costs (parameters, bytes, tying, Adam), "
                   "famous models compared, why vectors, context-free lookup")
        self.cost_view.token_selected.connect(self.state.set_selected_token)
        # heavy views work only while their tab is shown
        self._lazy_views = [self.lookup_view, self.projection_view, self.cost_view]
        w.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self._on_tabs_current_changed(w.tabs.currentIndex())

    def _on_tabs_current_changed(self, index: int) -> None:
        current = self.window.tabs.widget(index)
        for view in self._lazy_views:
            view.set_active(current is not None and (current is view or current.isAncestorOf(view)))

    def busy(self) -> bool:
        """Whether any background job is still running (for --screenshot)."""
        return any(r.running for r in self._runners)

    # -- models ------------------------------------------------------------------------
    @property
    def loading(self) -> bool:
        return self.loader.running

    @property
    def last_error(self) -> str:
        return self._last_error

    def open_spec(self, spec: str) -> None:
        """Load ``spec`` in the background; the current model stays until it succeeds."""
        spec = (spec or "").strip()
        if not spec or self._closed:
            return
        self._last_error = ""
        self.window.set_progress(0.0, f"Opening {spec}…")
        self.loader.start(load_model_job, spec)

    def cancel_load(self) -> None:
        if self.loader.running:
            self.loader.cancel()

    def _on_loader_progressed(self, fraction: float, message: str) -> None:
        self.window.set_progress(fraction, message)

    def _on_loader_succeeded(self, loaded: LoadedModel) -> None:
        self.window.set_progress(None)
        table = loaded.table
        self.state.set_table(table)
        self.window.matrix_view.set_overview(loaded.overview)
        if not self.state.text and table.example_text:
            self.state.set_text(table.example_text)
        if self._pending_token is not None:
            self.state.select_position(self._pending_token)
            self._pending_token = None
        if table.kind not in ("toy",) and table.spec != "default":
            recent.add(table.spec)
        self.settings.setValue("model", table.spec)
        self._refresh_recent()
        if not self._warmed:
            self._warmed = True
            self._runner().start(warm_up_job)
        self.window.statusBar().showMessage(f"Opened in {loaded.seconds:.2f} s", 4000)
        self.load_finished.emit(True)

    def _on_loader_failed(self, message: str) -> None:
        self.window.set_progress(None)
        self._last_error = message
        if self.state.table is None:
            message += "\n\nChoose another model."
        self.window.show_error("Could not open the model", message)
        if self.state.table is None and self.picker is None:
            QTimer.singleShot(0, self.show_picker)
        self.load_finished.emit(False)

    def _on_loader_cancelled(self) -> None:
        self.window.set_progress(None)
        self.window.statusBar().showMessage("Loading cancelled; the current model stays.", 5000)
        self.load_finished.emit(False)

    def show_picker(self) -> None:
        if self.picker is None:
            self.picker = ModelPicker(self.window)
            self.picker.spec_chosen.connect(self.open_spec)
            self.picker.finished.connect(self._on_picker_finished)
        self.listing.start(_list_sources_job, recent.load())
        self.picker.open()

    def _on_picker_finished(self, _result: int) -> None:
        self.listing.cancel(emit=False)

    def _on_listing_succeeded(self, sources) -> None:
        if self.picker is not None:
            self.picker.set_sources(sources)

    def _on_window_open_folder_requested(self) -> None:
        path = QFileDialog.getExistingDirectory(self.window, "Open a model folder")
        if path:
            self.open_spec(path)

    def _refresh_recent(self) -> None:
        self.window.set_recent(recent.load(), self.open_spec)

    # -- selection -----------------------------------------------------------------------
    def _on_inspector_neighbor_clicked(self, token_id: int) -> None:
        self.state.add_extra_token(token_id)
        self.state.set_selected_token(token_id)

    def _on_state_selected_token_changed(self, token_id: int) -> None:
        table = self.state.table
        if table is None or token_id < 0 or table.fits_in_memory:
            self.neighbor_jobs.cancel(emit=False)  # an older search is for another table or token
            return
        # big tables: neighbours stream over the file in a worker
        self.neighbor_jobs.start(neighbors_job, table, table.row(token_id), 10, [token_id])

    # -- settings ------------------------------------------------------------------------
    def restore_settings(self) -> None:
        geo = self.settings.value("geometry")
        if isinstance(geo, QByteArray) and not geo.isEmpty():
            self.window.restoreGeometry(geo)
        st = self.settings.value("windowState")
        if isinstance(st, QByteArray) and not st.isEmpty():
            self.window.restoreState(st)
        sp = self.settings.value("splitter")
        if isinstance(sp, QByteArray) and not sp.isEmpty():
            self.window.splitter.restoreState(sp)
        view = self.settings.value("view", "")
        if isinstance(view, str) and view:
            self.window.show_view(view)

    def save_settings(self) -> None:
        self.settings.setValue("geometry", self.window.saveGeometry())
        self.settings.setValue("windowState", self.window.saveState())
        self.settings.setValue("splitter", self.window.splitter.saveState())
        self.settings.setValue("text", self.state.text)
        self.settings.setValue("view", self.window.tabs.tabText(self.window.tabs.currentIndex()).lower())
        if self.state.table is not None:
            self.settings.setValue("model", self.state.table.spec)
        self.settings.sync()

    def _on_window_closing(self) -> None:
        self.shutdown()

    def shutdown(self) -> None:
        """Save settings, stop every job and wait for the threads (on close)."""
        if self._closed:
            return
        self._closed = True
        self.save_settings()
        self.training_view.shutdown()  # a paused job never reaches a yield: stop it first
        for runner in self._runners:
            runner.cancel(emit=False)
        await_all_workers(15000)

    def start(self, model: str | None = None, text: str | None = None, token: int | None = None) -> None:
        """Open the initial model and text (from the command line or the last session)."""
        spec = model or self.settings.value("model", "default") or "default"
        saved_text = self.settings.value("text", "")
        self.state.set_text(text if text is not None else (saved_text if model is None else ""))
        self._pending_token = token
        self.open_spec(str(spec))


_QT_NOISE = ("This plugin does not support propagateSizeHints",)


def _on_qt_message(mode, context, message) -> None:
    """Pass Qt's messages on to stderr, minus known platform-plugin noise."""
    if not message.startswith(_QT_NOISE):
        sys.stderr.write(message + "\n")


def make_app(argv=None) -> QApplication:
    if QApplication.instance() is None and "pytest" not in sys.modules:
        qInstallMessageHandler(_on_qt_message)
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setOrganizationName(ORG)
    app.setApplicationName(APP)
    app.setStyle("Fusion")
    apply_theme(app)
    app.setStyleSheet(STYLESHEET)
    configure_pyqtgraph()
    return app


def run(model=None, text=None, token=None, view=None, screenshot=None, size=None, train_steps=0) -> int:
    """Launch the GUI. With ``screenshot`` save the window once loaded and exit."""
    app = make_app()
    ex = Explorer()
    win = ex.window
    if view is not None and view not in win.view_names():
        print(f"error: the {view} view is not available (available: {', '.join(win.view_names())})",
              file=sys.stderr)
        return 2
    if size:
        win.resize(*size)
    else:
        win.resize(1440, 900)
        ex.restore_settings()
    win.show_view(view or ("matrix" if size else win.tabs.tabText(win.tabs.currentIndex()).lower()))
    if size:
        win.resize(*size)
    result = {"code": 0}

    if screenshot:
        def _on_loaded(ok: bool) -> None:
            if not ok:
                print(f"error: {ex.last_error or 'loading was cancelled'}", file=sys.stderr)
                result["code"] = 2
                app.quit()
                return
            if train_steps and view == "training":
                ex.training_view.run_steps_then(train_steps, lambda: QTimer.singleShot(300, _wait_idle))
            else:
                QTimer.singleShot(300, _wait_idle)

        waited = {"ms": 0}

        def _wait_idle() -> None:
            # views compute in workers (PCA, first-layer runs): shoot when all are done
            if ex.busy() and waited["ms"] < 60000:
                waited["ms"] += 200
                QTimer.singleShot(200, _wait_idle)
                return
            QTimer.singleShot(300, _shoot)

        def _shoot() -> None:
            app.processEvents()
            pix = win.grab()
            if not pix.save(screenshot):
                print(f"error: cannot write {screenshot}", file=sys.stderr)
                result["code"] = 2
            ex.shutdown()
            app.quit()

        ex.load_finished.connect(_on_loaded)
    win.show()
    QTimer.singleShot(0, lambda: ex.start(model=model, text=text, token=token))
    code = app.exec()
    ex.shutdown()
    return result["code"] or code
