"""Things a demanding user expects of a desktop app: tooltips, shortcuts, drag and drop."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QMenuBar,
    QMessageBox,
    QSlider,
    QTabBar,
)

from tests.support.ui_helpers import LOAD_TIMEOUT, load


def test_every_control_has_a_tooltip(qtbot, explorer):
    load(qtbot, explorer, "default")
    missing = []
    for cls in (QAbstractButton, QComboBox, QLineEdit, QAbstractSpinBox, QSlider):
        for w in explorer.window.findChildren(cls):
            parent = w.parent()
            # Qt's own parts: a line edit's clear button, a tab bar's scroll arrows,
            # the editor inside a spin box or combo box
            if isinstance(parent, (QLineEdit, QTabBar, QComboBox, QAbstractSpinBox, QAbstractItemView, QMenuBar)):
                continue
            if w.objectName().startswith("qt_"):  # e.g. a tool bar's overflow button
                continue
            if not w.toolTip():
                missing.append(f"{type(w).__name__} {getattr(w, 'text', lambda: '')()!r} in {type(parent).__name__}")
    assert missing == [], "\n".join(missing)


def test_help_lists_the_shortcuts_that_exist(qtbot, explorer):
    """Issue 25, item 9: F1 listed Ctrl+1 … 6 for 8 tabs and Ctrl+7/8 did nothing;
    the keys and the list now come from the one list of tabs."""
    w = explorer.window
    w.show_shortcuts()
    box = next(b for b in QApplication.topLevelWidgets() if isinstance(b, QMessageBox) and b.isVisible())
    rows = w.shortcut_rows()
    for key, _ in rows:
        assert key.replace("<", "&lt;") in box.text()
    box.close()
    keys = {a.shortcut().toString(): a for a in w.findChildren(type(w.open_action))}
    for needed in ("Ctrl+O", "Ctrl+Shift+O", "Ctrl+L", "Alt+Left", "Alt+Right", "Ctrl+Shift+C", "F1", "Esc"):
        assert needed in keys, needed
    assert w.tabs.count() == 8
    for i in range(w.tabs.count()):
        key = f"Ctrl+{i + 1}"
        name = w.tabs.tabText(i)
        assert (key, f"Show the {name} view") in rows and key in w.tabs.tabToolTip(i)
        w.tabs.setCurrentIndex((i + 1) % w.tabs.count())
        keys[key].trigger()
        assert w.tabs.currentIndex() == i, key


def test_dropping_a_folder_opens_it(qtbot, explorer, tmp_path):
    from explorer.core.sources import resources_dir

    load(qtbot, explorer, "toy:robot")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(resources_dir() / "default"))])
    event = QDropEvent(QPoint(10, 10).toPointF(), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    with qtbot.waitSignal(explorer.load_finished, timeout=LOAD_TIMEOUT) as blocker:
        explorer.window.dropEvent(event)
    assert blocker.args == [True]
    assert explorer.state.table.vocab_size > 200 and explorer.state.table.classes


def test_menu_actions_do_what_they_say(qtbot, explorer):
    load(qtbot, explorer, "toy:robot")
    explorer.window.open_action.trigger()  # Ctrl+O
    assert explorer.picker is not None and explorer.picker.isVisible()
    explorer.picker.reject()
    with qtbot.waitSignal(explorer.load_finished, timeout=LOAD_TIMEOUT) as blocker:
        explorer.open_spec("random:400000x512")
        qtbot.wait(30)
        explorer.window.cancel_action.trigger()  # Esc
    assert blocker.args == [False]
    assert explorer.state.table.spec == "toy:robot"


def test_opening_straight_onto_each_tab_is_clean(qtbot, explorer):
    # the app shows a tab before any model is loaded (--view NAME)
    for name in explorer.window.view_names():
        explorer.window.show_view(name)
    load(qtbot, explorer, "default")
    assert explorer.state.selected_id >= 0


def test_loading_shows_progress_and_cancel(qtbot, explorer):
    load(qtbot, explorer, "toy:robot")
    explorer.open_spec("random:400000x512")
    qtbot.waitUntil(lambda: bool(explorer.window.progress_label.text()), timeout=5000)
    win = explorer.window
    assert win.progress.isVisibleTo(win) and win.cancel_button.isVisibleTo(win)
    assert win.progress_label.text()
    with qtbot.waitSignal(explorer.load_finished, timeout=LOAD_TIMEOUT):
        win.cancel_button.click()
    assert not win.progress.isVisibleTo(win)


def test_matrix_cell_values_read_on_their_own_colour(qtbot, explorer):
    """The values written on a small table's band take the text colour that
    reads on each cell's colour (no fixed dark text, which vanished on the
    dark theme's cells), checked by contrast against the colour map."""
    import numpy as np
    import pyqtgraph as pg

    from explorer.ui.style import DIVERGING, contrast_ratio, text_color_on

    load(qtbot, explorer, "toy:five-rows")
    explorer.state.set_selected_token(2)
    view = explorer.window.matrix_view
    qtbot.waitUntil(lambda: view._cell_texts is not None and len(view._cell_texts.cells()) > 0, timeout=10_000)
    table = explorer.state.table.matrix()
    lim = explorer.state.overview.limit
    cmap = pg.colormap.get(DIVERGING)
    cells = view._cell_texts.cells()
    assert len(cells) == table.size
    for x, y, text, colour in cells:
        r, c = int(y), int(x)
        value = table[r, c]
        assert text == f"{value:+.2f}"
        cell = cmap.map(np.array([(np.clip(value, -lim, lim) + lim) / (2 * lim)]), mode="qcolor")[0]
        assert colour.name() == text_color_on(cell).name()
        assert contrast_ratio(cell, colour) >= 3.0


def test_band_row_labels_thin_out_when_rows_are_short_and_keep_the_selected_one(qtbot, explorer):
    """At a short window the band's 33 row labels overlapped; now every k-th
    row is labelled (k from the row height and the font), always including
    the selected row, and every label fits its slot."""
    from PySide6.QtGui import QFont, QFontMetrics

    load(qtbot, explorer, "minilm")
    view = explorer.window.matrix_view
    axis = view.band_plot.getAxis("left")
    line = QFontMetrics(axis.style.get("tickFont") or QFont()).height()

    def labels():
        major, _minor = axis._tickLevels
        return {round(pos - 0.5): text for pos, text in major}

    for height, token in ((1400, 2054), (560, 7592)):
        explorer.window.resize(1280, height)
        explorer.state.set_selected_token(token)
        qtbot.waitUntil(lambda token=token: view._band is not None and view._band.start <= token < view._band.stop)
        qtbot.wait(50)
        band = view._band
        pitch = view.band_plot.getViewBox().height() / (band.stop - band.start)
        shown = labels()
        assert token in shown and shown[token].endswith(f"{token:,}")
        step = min(b - a for a, b in zip(sorted(shown), sorted(shown)[1:]))
        assert step * pitch >= line  # no two labels closer than a line of text
        if pitch >= line + 1:
            assert len(shown) == band.stop - band.start  # tall rows: every row labelled
        else:
            assert 1 < step and len(shown) < band.stop - band.start


def test_pieces_no_font_can_draw_show_their_code_point_not_a_box(qtbot, explorer):
    """MiniLM's Devanagari vowel sign drew as an empty box: the app checks the
    installed fonts, and a character none of them has shows as U+XXXX."""
    import unicodedata

    from explorer.core.tokens import pieces
    from explorer.ui.style import can_draw

    assert pieces.glyph_check() is can_draw
    load(qtbot, explorer, "minilm")
    table = explorer.state.table
    assert can_draw("a") and can_draw("◌")
    for token_id in (1343, 1818):  # 'ो' (a combining mark), '宀'
        ch = table.piece(token_id)
        shown = table.shown_piece(token_id).text
        mark = unicodedata.category(ch).startswith("M")
        assert shown == ((("◌" + ch) if mark else ch) if can_draw(ch) else f"<U+{ord(ch):04X}>")
        assert all(can_draw(c) for c in shown if not c.isascii())


def test_glyph_check_answers_the_same_from_a_worker_thread_and_after_it(qtbot, explorer):
    """Qt keeps font engines per thread: fonts first opened by a worker died
    with it, and every later check said 'no glyph'. The check's fonts are
    opened on the GUI thread, so workers and the GUI agree, before and after."""
    import threading

    from PySide6.QtGui import QFont, QFontDatabase, QRawFont

    from explorer.ui.style import can_draw

    check = can_draw.__wrapped__  # uncached
    chars = ["é", "щ", "◌", "宀", "\u094b", "\U0001f44b", "ß", "→"]
    fonts = [QRawFont.fromFont(QFont(f)) for f in QFontDatabase.families()]
    expected = [any(f.supportsCharacter(ord(c)) for f in fonts) for c in chars]
    from_worker = []
    t = threading.Thread(target=lambda: from_worker.extend(check(c) for c in chars))
    t.start()
    t.join()
    assert from_worker == expected
    assert [check(c) for c in chars] == expected


def test_overview_pixels_are_the_colour_map_of_the_values(qtbot, explorer):
    """The overview is drawn from colour indices: each pixel is the colour
    map's colour of its value (clipped at the limit), NaN transparent."""
    import numpy as np
    import pyqtgraph as pg

    from explorer.ui.style import DIVERGING

    load(qtbot, explorer, "random:3000x40:5")
    view = explorer.window.matrix_view
    ov = explorer.state.overview
    img = view.overview_img
    img.render()
    qimage = img.qimage
    assert (qimage.width(), qimage.height()) == (ov.image.shape[1], ov.image.shape[0])
    cmap = pg.colormap.get(DIVERGING)
    rng = np.random.default_rng(0)
    for r, c in zip(rng.integers(0, ov.image.shape[0], 40), rng.integers(0, ov.image.shape[1], 40)):
        frac = (np.clip(ov.image[r, c], -ov.limit, ov.limit) + ov.limit) / (2 * ov.limit)
        want = cmap.map(np.array([frac]), mode="qcolor")[0]
        got = qimage.pixelColor(int(c), int(r))
        # one colour-map step (1/254 of the range) apart at most
        assert max(abs(got.red() - want.red()), abs(got.green() - want.green()),
                   abs(got.blue() - want.blue())) <= 6, (r, c, got.name(), want.name())
