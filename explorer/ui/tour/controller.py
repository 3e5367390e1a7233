"""The guided tour's controller: each step opens its model, text, token and view.

It drives the app through the small interface the composition root hands
it (``state``, ``window``, ``view(name)``, ``view_built(name)``,
``open_spec(spec, keep_text, text)``, ``loading`` and the ``load_finished(bool)`` signal), rings the step's
widget, asks the state for the step's words (computed from what the step
opened: :func:`explorer.core.tour.steps.claim_job`) and, on leaving, gives the
user back their model, text, token, view and training settings.
"""

from __future__ import annotations

from dataclasses import asdict

from PySide6.QtCore import QObject, Signal

from explorer.core.errors import user_message
from explorer.core.tour.steps import STEPS, TourStep, analogy_words, why_words
from explorer.ui.common.binding import OneATurn
from explorer.ui.tour.highlight import Highlight
from explorer.ui.tour.panel import TourPanel
from explorer.ui.tour.targets import resolve_target

__all__ = ["TourController"]

#: TrainConfig fields the training view's controls hold
_TRAINING_FIELDS = ("steps", "dim", "batch_size", "lr", "optimizer", "weight_decay", "tied", "sparse", "seed")
#: views whose page a step may change (each has show_page and current_page)
_PAGED_VIEWS = ("lookup", "cost", "similarity")
#: views whose page or words Close gives back
_SAVED_VIEWS = (*_PAGED_VIEWS, "projection")


class TourController(QObject):
    """Walks the user through :data:`~explorer.core.tour.steps.STEPS`.

    Signals
    -------
    step_ready(int)
        Step ``n`` (from 1) is on screen with its words.
    finished()
        The user left the tour; their own model and text are coming back.
    restored()
        Everything Close gives back is back in the window (their model may still be loading).
    """

    step_ready = Signal(int)
    finished = Signal()
    restored = Signal()

    def __init__(self, app, parent=None):
        super().__init__(parent)
        self._app = app
        self._state = app.state
        self._window = app.window
        self.panel = TourPanel(self._window)
        self.highlight = Highlight(self._window)
        self.steps: tuple[TourStep, ...] = STEPS
        self.index = -1
        self.claim = None
        self._pending_spec: str | None = None
        self._saved: dict | None = None
        self._trained = False
        self._waiting_to_start: int | None = None
        self._restore_position: int | None = None
        self._restore_text: str | None = None  # the user's text, set if their model fails to come back
        self._remembered: set[str] = set()  # views whose page and words _saved holds
        self._arrival = OneATurn(self)  # a step's view, token, then ring and words: a turn each
        self._leaving = OneATurn(self)  # Close: the user's view and text, pages and words, the rest
        self.panel.back_clicked.connect(self.back)
        self.panel.next_clicked.connect(self.next)
        self.panel.close_clicked.connect(self.close)
        app.load_finished.connect(self._on_app_load_finished)
        self.restored.connect(self._on_restored)
        self._state.jobs.tour_claim.finished.connect(self._on_claim_finished)
        self._state.jobs.tour_claim.failed.connect(self._on_claim_failed)

    @property
    def active(self) -> bool:
        return self.index >= 0

    @property
    def step(self) -> TourStep | None:
        return self.steps[self.index] if self.active else None

    # -- intents ------------------------------------------------------------------------
    def start(self, number: int = 1) -> None:
        """Open the tour at step ``number`` (from 1); once the app's first model is in, if it is loading."""
        number = min(max(1, int(number)), len(self.steps))
        if self._state.table is None or (not self.active and (self._app.loading or self._leaving.pending)):
            # the user's own model first (it is what the tour returns to), and all of a Close's giving
            # back (all of it in this turn is Close's work in one turn again: 116-271 ms in a real
            # window, _restore_user): the tour starts at ``load_finished`` or ``restored``, whichever
            # is last, and saves the user's things, not half the tour's
            self._waiting_to_start = number
            return
        if not self.active:
            self._save_user()
        self.go(number - 1)

    def go(self, index: int) -> None:
        """Show step ``index`` (from 0)."""
        self.index = index
        step = self.steps[index]
        self._arrival.cancel()
        self.claim = None
        self._state.forget_tour_claim()
        self.panel.show_step(index + 1, len(self.steps), step.title, "…")
        table = self._state.table
        if step.spec is not None and (table is None or table.spec != step.spec):
            self._pending_spec = step.spec
            self.panel.set_text(f"Opening {step.spec}…")
            # the step's text goes with the load ("": the model's own example): set now, it was
            # tokenized and drawn for the model on its way out (11-23 ms, and its paint)
            self._app.open_spec(step.spec, text=step.text or "")
            return
        self._pending_spec = None
        if step.spec is not None:
            self._state.set_text(step.text if step.text is not None else (table.example_text or self._state.text))
        self._arrive()

    def next(self) -> None:
        if not self.active:
            return
        if self.index + 1 < len(self.steps):
            self.go(self.index + 1)
        else:
            self.close()

    def back(self) -> None:
        if self.active and self.index > 0:
            self.go(self.index - 1)

    def close(self) -> None:
        """Leave the tour: the user's model, text, token, view and training settings come back."""
        if not self.active:
            self._waiting_to_start = None
            return
        self.index = -1
        self._pending_spec = None
        self._arrival.cancel()
        self._state.forget_tour_claim()
        self.panel.hide()
        self.highlight.set_target(None)
        self._restore_user()
        self.finished.emit()

    # -- the user's own things ----------------------------------------------------------------
    def _save_user(self) -> None:
        """Everything a step may change: model, text, token, tab, each view's page, the words
        of Why vectors and of the analogy; the training run and settings when a step trains.

        A view not built yet is not built for this (four views at once stalled the window for
        seconds): its page and words are remembered when a step first reaches it, before the
        step changes them (:meth:`_view`)."""
        table, window = self._state.table, self._window
        view = window.tabs.tabText(window.tabs.currentIndex()).lower()
        self._saved = {"spec": table.spec if table is not None else None, "text": self._state.text,
                       "position": self._state.selected_position, "view": view, "training": None, "run": None,
                       "pages": {}, "why": None, "analogy": None, "solved": False}
        self._remembered: set[str] = set()
        for name in _SAVED_VIEWS:
            if self._app.view_built(name):
                self._remember(name, self._app.view(name))
        self._trained = False

    def _remember(self, name: str, view) -> None:
        """What the user left in view ``name`` (its page, its words), once per tour."""
        saved = self._saved
        if saved is None or name in self._remembered:
            return
        self._remembered.add(name)
        if name in _PAGED_VIEWS:
            saved["pages"][name] = view.current_page()
        if name == "cost":
            saved["why"] = view.why_page.words()
        elif name == "projection":
            saved["analogy"] = view.analogy_panel.words()
            saved["solved"] = bool(view.analogy_panel.answers())

    def _restore_user(self) -> None:
        """Give back what :meth:`_save_user` kept, over three turns of the event loop: the user's
        tab and text, then the pages and words of the views the tour reached, then the training
        run, the analogy's answers, the token (or their model, loading). In one turn Close stalled
        a real window 116-271 ms."""
        saved, self._saved = self._saved, None
        if saved is None:
            return
        trained, self._trained = self._trained, False
        table = self._state.table
        reload = saved["spec"] is not None and (table is None or table.spec != saved["spec"])
        self._leaving.run([lambda: self._restore_view(saved, reload), lambda: self._restore_pages(saved),
                           lambda: self._restore_rest(saved, reload, trained), self.restored.emit])

    def _restore_view(self, saved: dict, reload: bool) -> None:
        if not reload:  # else the text comes back with the user's model
            self._state.set_text(saved["text"])
        self._window.show_view(saved["view"], now=False)  # the user's view, built over turns if it never was

    def _restore_pages(self, saved: dict) -> None:
        for name, page in saved["pages"].items():  # only the views the tour reached
            self._app.view(name).show_page(page)
        if saved["why"] is not None:
            self._app.view("cost").why_page.set_words(saved["why"])
        if saved["analogy"] is not None:
            analogy = self._app.view("projection").analogy_panel
            analogy.set_words(*saved["analogy"])
            analogy.clear_answers()  # the tour's answers, not the user's

    def _restore_rest(self, saved: dict, reload: bool, trained: bool) -> None:
        if trained:
            training = self._app.view("training")
            if saved["training"] is not None:
                training.set_config(**saved["training"])
            training.bring_run_back(saved["run"])
        if saved["solved"] and saved["analogy"] is not None and not reload:
            self._app.view("projection").analogy_panel.solve()  # the user's own words, on their own model
        if reload:
            self._restore_position, self._restore_text = saved["position"], saved["text"]
            self._app.open_spec(saved["spec"], text=saved["text"])
        elif saved["position"] >= 0:
            self._state.select_position(saved["position"])

    def _on_restored(self) -> None:
        """Close has given everything back: a tour started meanwhile starts now."""
        if self._waiting_to_start is not None and not self.active:
            number, self._waiting_to_start = self._waiting_to_start, None
            self.start(number)

    # -- arriving at a step -----------------------------------------------------------------
    def _on_app_load_finished(self, ok: bool) -> None:
        """A model load ended: the tour's, the user's first one, or the user's own coming back
        (their token first, then a tour started meanwhile, which saves it)."""
        position = self._restore_position
        if not self.active and position is not None:
            self._restore_position, text, self._restore_text = None, self._restore_text, None
            if ok and position >= 0:
                self._state.select_position(position)
            elif not ok and text is not None:
                self._state.set_text(text)  # the tour's model stays, the user's text comes back
        if self._waiting_to_start is not None and not self._app.loading:
            number, self._waiting_to_start = self._waiting_to_start, None
            if self._state.table is not None:
                self.start(number)
            return
        if not self.active or self._pending_spec is None or self._app.loading:
            return
        table = self._state.table
        if ok and table is not None and table.spec == self._pending_spec:
            self._pending_spec = None
            self._arrive(now=False)  # after the model's first paint, in a turn of its own
        elif not ok:
            # the step is on screen with its last words: say so, as a claim that failed does
            # (--screenshot waits for step_ready and would otherwise wait forever)
            self.panel.set_text(f"{self._pending_spec} could not be opened here; press Next to go on.")
            self._pending_spec = None
            self.step_ready.emit(self.index + 1)

    def _view(self, name: str):
        """View ``name`` (built now if it was not), remembered for Close before a step changes it."""
        view = self._app.view(name)
        if name in _SAVED_VIEWS:
            self._remember(name, view)
        return view

    def _arrive(self, now: bool = True) -> None:
        """The step's model is in: its view and page, then its token, then its ring and words,
        each painted in a turn of its own (from ``now``, else from the next turn). In one
        turn, with the model's installation before them, a step stalled a real window
        100-380 ms; Next, Back or Close drops what is still to come. A view not yet built is
        built first, a step a turn (made in the view's turn, 290-850 ms in a monkey walk)."""
        step = self.step
        if step is None:  # left meanwhile
            return
        if not self._window.build_view_step(step.view):  # a view never shown: built a step a turn first
            self._arrival.run([lambda: self._arrive(now=False)], now=False)
            return
        self._arrival.run([lambda: self._arrive_at_view(step), lambda: self._arrive_at_token(step),
                           lambda: self._arrive_at_words(step)], now=now)

    def _arrive_at_view(self, step: TourStep) -> None:
        self._window.show_view(step.view)
        if step.page is not None:
            self._view(step.view).show_page(step.page)

    def _arrive_at_token(self, step: TourStep) -> None:
        if step.token is not None and self._state.tokenized.tokens:
            self._state.select_position(step.token)

    def _arrive_at_words(self, step: TourStep) -> None:
        view = self._view(step.view) if step.view != "matrix" else None
        self.highlight.set_target(resolve_target(step.target, self._window, self._view))
        self._prepare_view(step, view)
        if step.training is not None:
            self._train(step, view)
        else:
            self._state.request_tour_claim(step)

    def _prepare_view(self, step: TourStep, view) -> None:
        """What a step fills in on its page: the words to compare, the analogy to solve."""
        table = self._state.table
        if step.key == "why":
            words = why_words(table)
            if words:
                view.why_page.set_words(words)
        elif step.key == "projection":
            words = analogy_words(table)
            panel = view.analogy_panel
            if words is not None:
                panel.set_words(*words[:3])
                panel.solve()

    def _train(self, step: TourStep, view) -> None:
        """A short run with the step's settings; its words come from the run's history."""
        if not self._trained and self._saved is not None:
            cfg = view.config()
            self._saved["training"] = {k: getattr(cfg, k) for k in _TRAINING_FIELDS}
            self._saved["run"] = view.set_run_aside()  # the user's run, its charts and model, kept for Close
        else:
            view.reset()
        self._trained = True
        settings = {k: v for k, v in asdict(step.training).items() if k in _TRAINING_FIELDS}
        view.set_config(**settings)
        self.panel.set_text(f"Training {step.training.steps:,} steps…")
        key = step.key

        def trained() -> None:
            if self.step is not None and self.step.key == key:
                self._state.request_tour_claim(step, view.session.history)

        view.run_steps_then(step.training.steps, trained)

    def _on_claim_finished(self, claim) -> None:
        if not self.active or claim is None:
            return
        self.claim = claim
        self.panel.set_text(claim.text)
        self.step_ready.emit(self.index + 1)

    def _on_claim_failed(self, exc: BaseException) -> None:
        if self.active:
            self.panel.set_text(f"This step cannot be computed here: {user_message(exc)}")
            self.step_ready.emit(self.index + 1)
