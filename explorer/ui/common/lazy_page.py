"""A tab page that builds its view when first shown, over turns of the event loop."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator

import shiboken6
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QWidget

from explorer.pacing import TurnWait
from explorer.ui.style import style_as

__all__ = ["LazyPage", "FIRST_SHOW_STEP_MS"]

#: between the turns of a view's first show (ms): a timer, not a queued call (0), so that input,
#: paints and other timers due meanwhile run between them
FIRST_SHOW_STEP_MS = 1


class LazyPage(QScrollArea):
    """A tab page that builds its view when first shown.

    The scroll area lets the window shrink below a dense view's minimum size
    (scroll bars appear) instead of forcing the whole window wide.

    A tab the user opens (a click, Ctrl+N) is built over four turns of the
    event loop: the tab comes up saying its view is being built, then the view
    is made, then it goes on the page (its first synchronization and layout),
    then it is painted. One turn for all of it stalled the window 150-280 ms in
    a real window (the build alone 60-144 ms). A ``build`` that is a generator
    function is made over as many turns as it yields, one step a turn (the view
    is what it returns). A step or the view's going on the page whose turn comes in
    a pass already long waits for the next (:class:`~explorer.pacing.TurnWait`).
    :meth:`view` still builds at once, and puts the view on the page to be painted
    in the same turn, for whoever needs the view now.

    Between turns nothing a build made may be left without a Qt parent: the
    collector could delete it after the window and the application are gone
    (a half-made Cost view crashed a test's teardown that way). A step may
    yield a widget it has made: the page holds it in a hidden holder until the
    view is done. A build still under way when the page is destroyed is closed
    then, so what its frame holds goes while Qt still runs.
    """

    def __init__(self, build: Callable[[], QWidget | Generator[QWidget | None, None, QWidget]], parent=None):
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self._build = build
        self._steps: Generator[QWidget | None, None, QWidget] | None = None  # a build under way, one step a turn
        self._made: QWidget | None = None  # made in the second turn (or later), on screen in the next
        self._holder: QWidget | None = None  # where what a stepped build made waits, hidden
        self._wait = TurnWait()  # a turn of the first show that comes in a long pass waits for the next

    @property
    def built(self) -> bool:
        return self._build is None and self._steps is None and self._made is None

    def build_step(self) -> bool:
        """One step of the build (all of it when it is not a generator); True once the view is made."""
        if self._build is not None:
            build, self._build = self._build, None
            made = build()
            if not inspect.isgenerator(made):
                self._made = self._owned(made)
                return True
            self._steps = made
            # closed with the page, not by the collector later (the lambda does not keep the page)
            self.destroyed.connect(lambda *_: made.close())
        if self._steps is not None:
            try:
                held = next(self._steps)
            except StopIteration as done:
                self._steps, self._made = None, self._owned(done.value)
                return True
            if isinstance(held, QWidget) and held.parentWidget() is None:
                # Qt owns it from now on, in a hidden holder: not hidden itself, so that it shows with
                # whatever adopts it (the view's splitter; setWidget for the view itself)
                if self._holder is None:
                    self._holder = QWidget(self)
                    self._holder.hide()
                held.setParent(self._holder)
            return False
        return True

    def _owned(self, made: QWidget) -> QWidget:
        """The view made, which waits a turn before it goes on the page: deleted with the page if the
        page goes first, while Qt runs. Left to Python alone, a window closed in that turn left it to
        the collector, and a signal reached it half destroyed ("Slot 'PositionsView::' not found" at
        a test's teardown). Not parented meanwhile: under the app's style sheet every new parent
        polishes the whole view again (10-30 ms for a big one), and setWidget gives it its parent."""
        self.destroyed.connect(lambda *_: _delete_if_orphan(made))  # the lambda does not keep the page
        return made

    def _construct(self) -> None:
        """Make the view (once, every step now), not yet on the page."""
        while not self.build_step():
            pass

    def view(self) -> QWidget:
        """The page's view, built (and put on the page) now if it was not yet."""
        self._construct()
        if self._made is not None:
            made, self._made = self._made, None
            self.setWidget(made)
            if self._holder is not None:  # emptied by the view's adoptions
                self._holder.deleteLater()
                self._holder = None
        return self.widget()

    def showEvent(self, event) -> None:
        if not self.built and self.widget() is None:  # not begun, or begun by the idle builder
            note = QLabel("Building this view…")
            note.setAlignment(Qt.AlignCenter)
            style_as(note, "ChipId")  # the quiet secondary text
            self.setWidget(note)
            QTimer.singleShot(FIRST_SHOW_STEP_MS, self, self._make)
        super().showEvent(event)

    def _make(self) -> None:
        if self.built:
            return  # view() was asked for meanwhile: nothing left to do
        if self._wait.put_off():
            QTimer.singleShot(FIRST_SHOW_STEP_MS, self, self._make)
            return
        if self._made is not None or self.build_step():
            QTimer.singleShot(FIRST_SHOW_STEP_MS, self, self._put_on_page)
        else:
            QTimer.singleShot(FIRST_SHOW_STEP_MS, self, self._make)  # the build's next step, next turn

    def _put_on_page(self) -> None:
        """The view made goes on the page, is drawn from the state and laid out in this turn, and is
        painted in the next. In one turn, its first show was the longest stall of a tab's first
        visit in a real window (84-93 ms for Similarity, Training and Lookup, the view put on the
        page 12-38 ms of it)."""
        made = self._made
        if made is None:
            return  # view() was asked for meanwhile
        if self._wait.put_off():
            QTimer.singleShot(FIRST_SHOW_STEP_MS, self, self._put_on_page)
            return
        made.setUpdatesEnabled(False)
        self.view()
        QTimer.singleShot(FIRST_SHOW_STEP_MS, made, lambda: made.setUpdatesEnabled(True))


def _delete_if_orphan(widget: QWidget) -> None:
    """Delete ``widget`` now if it still exists and nothing in Qt owns it (a view its page never took)."""
    if shiboken6.isValid(widget) and widget.parent() is None:
        shiboken6.delete(widget)
