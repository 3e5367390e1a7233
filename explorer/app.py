"""Composition root: builds the QApplication, AppState, the main window and
the workers, and wires them. The only module that knows everyone."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import json  # noqa: E402
from concurrent.futures import ThreadPoolExecutor, wait  # noqa: E402

from PySide6.QtCore import QByteArray, QObject, QSettings, QTimer, Signal  # noqa: E402
from PySide6.QtWidgets import QApplication, QFileDialog  # noqa: E402

from explorer.core.errors import user_message  # noqa: E402
from explorer.core.runtime import park_after_full_collections  # noqa: E402
from explorer.core.sources import recent  # noqa: E402
from explorer.core.sources.catalog import list_sources_job  # noqa: E402
from explorer.core.sources.loading import LoadedModel, load_model, prepare_table  # noqa: E402
from explorer.core.sources.memory import held_in_memory  # noqa: E402
from explorer.core.tokens.text import tokenizer_family  # noqa: E402
from explorer.state.app_state import AppState  # noqa: E402
from explorer.ui.application import APP, ORG, make_app, save_setting  # noqa: E402
from explorer.ui.bookmarks import BookmarkController  # noqa: E402
from explorer.ui.common.prebuild import IdleBuilder  # noqa: E402
from explorer.ui.main_window import MainWindow  # noqa: E402
from explorer.ui.model_picker import ModelPicker  # noqa: E402
from explorer.ui.style import apply_theme  # noqa: E402
from explorer.ui.tour import TourController  # noqa: E402
from explorer.ui.tour.hint import FirstRunHint  # noqa: E402
from explorer.warm_up import IDLE_MODULES, OPTIONAL_MODULES, WARM_UP_MODULES, idle_imports_job  # noqa: E402
from explorer.workers import JobRunner, await_all_workers, settle_collector_between_jobs, warm_up_job  # noqa: E402

__all__ = ["Explorer", "make_app", "CLOSE_WAIT_MS", "HINT_DELAY_MS", "ORG", "APP"]
#: how long closing the window waits for background jobs to reach a yield
CLOSE_WAIT_MS = 500
#: the first-run hint comes this long after the first model is in (not in the turn that draws it)
HINT_DELAY_MS = 400


class Explorer(QObject):
    """Owns the state, the window and the background jobs, and wires them.

    Signals
    -------
    load_finished(bool)
        A model load ended (True: installed; False: failed or cancelled).
    warmed_up()
        torch is imported (after the first model): the app's long-lived objects exist.
    """

    load_finished = Signal(bool)
    warmed_up = Signal()

    def __init__(self, settings: QSettings | None = None, parent=None):
        super().__init__(parent)
        self.settings = settings or QSettings(QSettings.IniFormat, QSettings.UserScope, ORG, "explorer")
        theme = str(self.settings.value("theme", "system"))
        apply_theme(QApplication.instance(), theme)  # before any plot takes its colours from the palette
        self.state = AppState(self)
        self.window = MainWindow(self.state)
        self.window.set_theme_choice(theme)
        self.loader = JobRunner(self, urgent=True)  # a model opens at once, whatever jobs are running
        self.listing = JobRunner(self)
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="settings-writer")
        self.picker: ModelPicker | None = None
        self._last_error = ""
        self._closed = False
        self._warmed = False
        self._pending_token: int | None = None
        self._load_text = ""  # the text when the running load started
        self._held = None  # the last table shown from Python code (explorer.show): its spec opens it again
        # the last text typed for each kind of tokenizer (ids, a toy's words, real text)
        self._texts: dict[str, str] = self._saved_texts()
        self.recording = None  # a RecordingFollower with --watch LOGDIR (see watch())
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
        self.tour = TourController(self)  # the guided tour: Help → Tour, --tour N
        w.tour_requested.connect(self.tour.start)
        self.hint = FirstRunHint(w, len(self.tour.steps))  # once, after the first model is in
        self.first_run_hint = True  # off for screenshots
        self.freeze_when_warm = False  # park from the collector what exists once warm, and at idle moments
        # the tabs' views built while the user is idle, once warmed up (off for screenshots)
        self.build_when_idle = True
        self.idle_builder = IdleBuilder(self._pages.values(), ready=lambda: not self.busy(), parent=self, window=w)
        for signal in (self.state.model_changed, self.state.text_changed, self.state.selected_token_changed,
                       self.state.extra_tokens_changed, w.tabs.currentChanged):
            signal.connect(self.idle_builder.touch)
        self.hint.tour_requested.connect(self.tour.start)
        self.tour.step_ready.connect(self.hint.hide)
        self.tour.step_ready.connect(self._prefer_next_tour_view)
        w.theme_chosen.connect(self._on_window_theme_chosen)
        self.bookmarks = BookmarkController(self)  # Bookmarks: save, restore, export, import

        self.loader.progressed.connect(self._on_loader_progressed)
        self.loader.succeeded.connect(self._on_loader_succeeded)
        self.loader.failed.connect(self._on_loader_failed)
        self.loader.cancelled.connect(self._on_loader_cancelled)
        self.listing.succeeded.connect(self._on_listing_succeeded)
        self._refresh_recent()

    def _runner(self) -> JobRunner:
        """A job runner for one view, stopped with the others on close."""
        return JobRunner(self)

    def _build_views(self) -> None:
        """The tabs beside the matrix. Each view is built when its tab is first
        shown; it then synchronizes from the state like any hidden view."""
        w = self.window
        self._pages = {
            "lookup": w.add_view("Lookup", "Row i of E two ways: one-hot vector × E versus a pointer offset, "
                                 "animated, then measured", self._build_lookup),
            "projection": w.add_view("Projection", "PCA of the embedding table: where tokens sit, neighbours, "
                                     "analogies", self._build_projection),
            "similarity": w.add_view("Similarity", "How alike the text's tokens are: learned vectors vs ids vs "
                                     "one-hot; random vectors", self._build_similarity),
            "training": w.add_view("Training", "Train a small next-token model and watch its embedding table "
                                   "learn: gradient sparsity, rows moved by momentum and weight decay, drift of "
                                   "rare rows, classes clustering", self._build_training),
            "cost": w.add_view("Cost", "What the table costs (parameters, bytes, tying, Adam), famous models "
                               "compared, why vectors, context-free lookup", self._build_cost),
            "health": w.add_view("Health", "Which rows did training leave behind? Row norms, a Magikarp-style "
                                 "score, duplicates and the tokenizer's round trip over the whole vocabulary",
                                 self._build_health),
            "positions": w.add_view("Positions", "Where order comes in: position tables, token types, rotary "
                                    "positions and the model's real input vectors", self._build_positions),
        }

    def view(self, name: str):
        """The view of tab ``name`` (built now if its tab was never shown)."""
        return self._pages[name].view()

    def view_built(self, name: str) -> bool:
        """Whether the view of tab ``name`` exists yet (asking builds nothing)."""
        return self._pages[name].built

    def _prefer_next_tour_view(self, number: int) -> None:
        """While step ``number`` is read, the next step's view is the one built at the next idle
        moment: a first build (120-290 ms) no longer comes with the click on Next."""
        page = self._pages.get(self.tour.steps[number].view) if number < len(self.tour.steps) else None
        if page is not None:  # (the matrix is always built)
            self.idle_builder.prefer(page)

    @property
    def lookup_view(self):
        return self.view("lookup")

    @property
    def projection_view(self):
        return self.view("projection")

    @property
    def similarity_view(self):
        return self.view("similarity")

    @property
    def training_view(self):
        return self.view("training")

    @property
    def cost_view(self):
        return self.view("cost")

    @property
    def health_view(self):
        return self.view("health")

    def _build_lookup(self):
        from explorer.ui.lookup import LookupView

        view = yield from LookupView.built_in_steps(self.state)  # over turns, when a tab is opened
        view.training_requested.connect(lambda: self.window.show_view("training", now=False))
        return view

    def _build_projection(self):
        from explorer.ui.projection import ProjectionView
        from explorer.ui.projection.opengl.rehearsal import rehearse_first_draw

        view = yield from ProjectionView.built_in_steps(self.state)  # over turns, when a tab is opened
        view.token_selected.connect(self.state.set_selected_token)
        view.token_added.connect(self.state.add_extra_token)
        gl, rehearsal = self._runner(), self._runner()  # 3D first asked for: its OpenGL code imported, its
        view.plot_pages.gl_needed.connect(lambda: gl.start(warm_up_job, (), OPTIONAL_MODULES))  # first drawing
        gl.succeeded.connect(lambda _imported: rehearse_first_draw(rehearsal))  # rehearsed, before 3D is tried again
        gl.succeeded.connect(view.plot_pages.gl_imported)
        gl.failed.connect(view.plot_pages.gl_imported)
        return view

    def _build_similarity(self):
        from explorer.ui.similarity import SimilarityView

        view = yield from SimilarityView.built_in_steps(self.state)  # over turns, when a tab is opened
        view.token_selected.connect(self.state.set_selected_token)
        view.token_added.connect(self.state.add_extra_token)
        return view

    def watch(self, logdir: str) -> None:
        """Follow the run recorded in ``logdir`` in the Training tab (call before the tab is first shown)."""
        from explorer.state.recording import RecordingFollower

        self.recording = RecordingFollower(logdir, self)
        self.recording.start()

    def _recorded_piece(self, token_id: int) -> str:
        table = self.state.table
        if table is None or self.recording is None or self.recording.header is None \
                or table.vocab_size != self.recording.header.vocab_size:
            raise KeyError(token_id)  # the open table is not the recorded one: ids alone
        return table.piece(token_id)

    def _build_training(self):
        if self.recording is not None:
            from explorer.ui.training.recorded import RecordedRunView

            view = RecordedRunView(self.recording, piece=self._recorded_piece)
            view.snapshot_open_requested.connect(self.open_spec)
            self.state.model_changed.connect(view.names_changed)
            return view
        from explorer.ui.training import TrainingView

        view = yield from TrainingView.built_in_steps(self.state)  # over turns, when a tab is opened
        view.model_saved.connect(self.open_spec)
        return view

    def _build_cost(self):
        from explorer.ui.cost import CostView

        view = yield from CostView.built_in_steps(self.state)  # over turns, when a tab is opened
        view.token_selected.connect(self.state.set_selected_token)
        return view

    def _build_health(self):
        from explorer.ui.health import HealthView

        view = yield from HealthView.built_in_steps(self.state)  # over turns, when a tab is opened
        view.token_selected.connect(self.state.set_selected_token)
        return view

    def _build_positions(self):
        from explorer.ui.positions import PositionsView

        view = yield from PositionsView.built_in_steps(self.state)  # over turns, when a tab is opened
        view.position_selected.connect(self.state.select_position)
        return view

    def busy(self) -> bool:
        """Whether any background job is still running (for --screenshot)."""
        return bool(self.running_jobs())

    def running_jobs(self) -> list[str]:
        """The names of the background jobs still running (``warm_up_job``), sorted."""
        return sorted(r.job_name for r in self.findChildren(JobRunner) if r.running)

    # -- models ------------------------------------------------------------------------
    @property
    def loading(self) -> bool:
        return self.loader.running

    @property
    def last_error(self) -> str:
        return self._last_error

    @property
    def closed(self) -> bool:
        """Whether the window was closed (the explorer has shut down)."""
        return self._closed

    def open_spec(self, spec: str, keep_text: bool = False, text: str | None = None) -> None:
        """Load ``spec`` in the background; the current model stays until it succeeds.

        The new model gets ``text`` ("" for its own example), else with ``keep_text`` the text
        on screen (unless it cannot read it), else the text last typed for its kind of tokenizer.
        The spec of the last table shown from Python opens that table again.
        """
        spec = (spec or "").strip()
        if not spec or self._closed:
            return
        keep, text = keep_text or text is not None, self.state.text if text is None else text
        if self._held is not None and spec == self._held.spec:
            self.open_table(self._held, text if keep else None)
            return
        self._start_load(load_model, spec, spec, text, keep)

    def open_table(self, table, text: str | None = None) -> None:
        """Load a table already open (one made from Python objects by ``explorer.show``) the way
        :meth:`open_spec` loads a spec: in the background, the current model staying until it succeeds.
        ``text`` becomes the text; None gives the text last typed for the table's kind of tokenizer."""
        if self._closed:
            return
        if held_in_memory(table):
            self._held = table  # only the last one: an older tensor is not kept alive
        keep = text is not None
        self._start_load(prepare_table, table, table.name, text if keep else self.state.text, keep)

    def _start_load(self, job, source, label: str, text: str, keep_text: bool) -> None:
        self._last_error = ""
        self.window.set_progress(0.0, f"Opening {label}…")
        self._remember_text()
        self._load_text = self.state.text
        self.loader.start(job, source, text, {} if keep_text else dict(self._texts))

    def cancel_load(self) -> None:
        if self.loader.running:
            self.loader.cancel()

    def _on_loader_progressed(self, fraction: float, message: str) -> None:
        self.window.set_progress(fraction, message)

    def _on_loader_succeeded(self, loaded: LoadedModel) -> None:
        self.window.set_progress(None)
        table = loaded.table
        # a text typed while the model loaded stays; otherwise the one for this kind of tokenizer
        self.state.set_model(loaded, adopt_text=self.state.text == self._load_text)
        if self._pending_token is not None:
            self.state.select_position(self._pending_token)
            self._pending_token = None
        if not held_in_memory(table):  # a tensor of this process cannot be opened in the next one
            if table.kind not in ("toy",) and table.spec != "default":
                self._remember_recent(table.spec)
            where = self.settings.fileName(), self.settings.format()  # read here: the object is the window's
            self._writer.submit(save_setting, *where, "model", table.spec)  # the disk waits, not the window
        if not self._warmed:
            # at once: torch's import holds the GIL for ~0.2 s at a stretch, and delaying it 1.5 s
            # (to spare the first paints) made a tab opened meanwhile wait up to 2 s for it (bench --gui)
            self._warmed = True
            self._warm_up()
        if held_in_memory(table) and table.notes:  # what show() did with the object, in words
            self.window.statusBar().showMessage(f"Opened in {loaded.seconds:.2f} s. " + " ".join(table.notes), 20000)
        else:
            self.window.statusBar().showMessage(f"Opened in {loaded.seconds:.2f} s", 4000)
        if self.first_run_hint and not self.settings.value("hinted", False, type=bool) and not self.tour.active:
            self.settings.setValue("hinted", True)
            self.settings.sync()
            # a moment after the model is drawn: in the same turn, its first show lengthened the window's
            # longest stall of the opening (the model's installation and first paint)
            QTimer.singleShot(HINT_DELAY_MS, self._pop_up_hint)
        self.load_finished.emit(True)

    def _pop_up_hint(self) -> None:
        if not self._closed and not self.tour.active:
            self.hint.pop_up()

    def _on_window_theme_chosen(self, choice: str) -> None:
        """View → Theme: saved, and the palette changes now (the window recolours the plots)."""
        self.settings.setValue("theme", choice)
        theme = apply_theme(QApplication.instance(), choice)
        note = "" if theme == choice or choice == "system" else " (EXPLORER_THEME overrides it)"
        self.window.statusBar().showMessage(f"Theme: {choice}{note}", 8000)

    def _warm_up(self) -> None:
        if self._closed:
            return
        warm = self._runner()
        warm.succeeded.connect(self._on_warm_up_succeeded)
        warm.start(warm_up_job, WARM_UP_MODULES, OPTIONAL_MODULES, freeze=self.freeze_when_warm)

    def _on_warm_up_succeeded(self, _result) -> None:
        park_after_full_collections(self.freeze_when_warm and not self._closed)  # as the warm-up parked, on
        if self.build_when_idle and not self._closed:
            self.idle_builder.start(chores=[settle_collector_between_jobs] if self.freeze_when_warm else [],
                                    first=[self._import_when_idle])
        self.warmed_up.emit()

    def _import_when_idle(self) -> None:
        """The imports left for the first idle moment (IDLE_MODULES), in a worker."""
        self._runner().start(idle_imports_job, IDLE_MODULES, freeze=self.freeze_when_warm)

    def _on_loader_failed(self, exc: BaseException) -> None:
        self.window.set_progress(None)
        message = user_message(exc)
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
            self.picker.finished.connect(lambda _result: self.listing.cancel(emit=False))
        self.picker.set_current(self.state.table.spec if self.state.table is not None else None)
        self.listing.start(list_sources_job, list(self._recent))
        self.picker.open()

    def _on_listing_succeeded(self, sources) -> None:
        if self.picker is not None:
            self.picker.set_sources(sources)

    def _on_window_open_folder_requested(self) -> None:
        path = QFileDialog.getExistingDirectory(self.window, "Open a model folder")
        if path:
            self.open_spec(path)

    def _refresh_recent(self) -> None:
        self._recent = recent.load()
        self.window.set_recent(self._recent, self.open_spec)

    def _remember_recent(self, spec: str) -> None:
        """Put ``spec`` first in the Recent menu now, and in the file from a thread of its own: the
        window's thread never waits for the disk (a write there once stalled it 0.55 s)."""
        self._recent = recent.with_first(self._recent, spec)
        self.window.set_recent(self._recent, self.open_spec)
        self._writer.submit(recent.add, spec)  # one thread: the writes keep their order

    # -- selection -----------------------------------------------------------------------
    def _on_inspector_neighbor_clicked(self, token_id: int) -> None:
        self.state.add_extra_token(token_id)
        self.state.set_selected_token(token_id)

    # -- texts per kind of tokenizer -----------------------------------------------------
    def _remember_text(self) -> None:
        table = self.state.table
        if table is not None and self.state.text and self.state.tokenized.readable:
            self._texts[tokenizer_family(table.tokenizer, table.spec)] = self.state.text

    def _saved_texts(self) -> dict[str, str]:
        try:
            data = json.loads(str(self.settings.value("texts", "{}")))
        except ValueError:
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): v for k, v in data.items() if isinstance(v, str)}

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
        wait([self._writer.submit(int)], timeout=5)  # the writes under way first: the window's state has the last word
        self.settings.setValue("geometry", self.window.saveGeometry())
        self.settings.setValue("windowState", self.window.saveState())
        self.settings.setValue("splitter", self.window.splitter.saveState())
        self.settings.setValue("text", self.state.text)
        self._remember_text()
        self.settings.setValue("texts", json.dumps(self._texts))
        self.settings.setValue("view", self.window.tabs.tabText(self.window.tabs.currentIndex()).lower())
        if self.state.table is not None and not held_in_memory(self.state.table):
            self.settings.setValue("model", self.state.table.spec)
        self.settings.sync()

    def _on_window_closing(self) -> None:
        # the window goes at once; a job stuck in a library call is left to run(), which ends the process
        self.shutdown(wait_ms=CLOSE_WAIT_MS)

    def shutdown(self, wait_ms: int = 15000) -> bool:
        """Save settings, ask every job to stop and wait up to ``wait_ms`` for
        the threads. Returns whether they all stopped."""
        if not self._closed:
            self._closed = True
            park_after_full_collections(False)
            self.idle_builder.stop()
            self.save_settings()
            if self.recording is not None:
                self.recording.stop()
            for runner in self.findChildren(JobRunner):  # the state's computations included
                runner.cancel(emit=False)
        return await_all_workers(wait_ms)

    def start(self, model: str | None = None, text: str | None = None, token: int | None = None) -> None:
        """Open the initial model and text (from the command line or the last session)."""
        spec = model or self.settings.value("model", "default") or "default"
        saved_text = self.settings.value("text", "")
        self.state.set_text(text if text is not None else (saved_text if model is None else ""))
        self._pending_token = token
        self.open_spec(str(spec), keep_text=text is not None)
