"""The app's looks (quiet captions, empty states, error lines, titles) without a style sheet
on the application, and the few widgets' own style sheets across a change of theme."""

from __future__ import annotations

from collections import Counter

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QVBoxLayout, QWidget

from explorer.ui.application import make_app
from explorer.ui.style import ERROR, LOOKS, apply_theme, dark_palette, style_as


def _shown(qtbot, *widgets: QWidget) -> QWidget:
    page = QWidget()
    lay = QVBoxLayout(page)
    for w in widgets:
        lay.addWidget(w)
    qtbot.addWidget(page)
    page.resize(360, 60 * len(widgets))
    page.show()
    qtbot.waitExposed(page)
    return page


def _ink(widget: QWidget) -> tuple[int, int, int]:
    """The colour most of the widget's drawn pixels (on its window) have, past the window's
    background: its text's (each label here starts with a block of solid glyphs)."""
    image = widget.window().grab(widget.geometry()).toImage()
    background = QApplication.palette().color(QPalette.Window)
    drawn = Counter()
    for y in range(image.height()):
        for x in range(image.width()):
            c = image.pixelColor(x, y)
            rgb, under = (c.red(), c.green(), c.blue()), (background.red(), background.green(), background.blue())
            if sum(abs(a - b) for a, b in zip(rgb, under)) > 40:
                drawn[rgb] += 1
    assert drawn, "nothing drawn"
    return drawn.most_common(1)[0][0]


def _near(rgb: tuple[int, int, int], colour: QColor, tol: int = 12) -> bool:
    """``rgb`` is ``colour`` as drawn on the window's background (a translucent colour blended)."""
    under = QApplication.palette().color(QPalette.Window)
    a = colour.alphaF()
    seen = [round(a * c + (1 - a) * u) for c, u in ((colour.red(), under.red()), (colour.green(), under.green()),
                                                     (colour.blue(), under.blue()))]
    return all(abs(x - y) <= tol for x, y in zip(rgb, seen))


def test_the_application_has_no_style_sheet_and_widgets_keep_qts_own_style(qtbot):
    """With a style sheet on the application, Qt draws and polishes every widget through its
    style sheet style (views took a third longer to build)."""
    app = make_app()
    button = QPushButton("plain")
    _shown(qtbot, button)
    assert app.styleSheet() == ""
    assert button.style().metaObject().className() != "QStyleSheetStyle"


def test_a_quiet_caption_is_drawn_in_the_placeholder_colour_of_each_theme(qtbot):
    app = make_app()
    caption = style_as(QLabel("█████ quiet"), "ChipId")
    plain = QLabel("█████ plain")
    _shown(qtbot, caption, plain)
    assert caption.objectName() == "ChipId" and caption.font().pointSize() == 9
    try:
        for theme in ("light", "dark"):
            apply_theme(app, theme)
            qtbot.wait(10)
            pal = app.palette()
            assert _near(_ink(caption), pal.color(QPalette.PlaceholderText)), theme
            assert _near(_ink(plain), pal.color(QPalette.WindowText)), theme
            assert pal.color(QPalette.PlaceholderText) != pal.color(QPalette.WindowText)
    finally:
        apply_theme(app, "light")


def test_an_error_line_is_drawn_in_the_error_colour(qtbot):
    make_app()
    line = style_as(QLabel("█████ wrong"), "ErrorLine")
    _shown(qtbot, line)
    assert _near(_ink(line), QColor(ERROR))


def test_titles_values_and_empty_states_get_their_fonts_and_margins():
    make_app()
    title, section, value, empty = (style_as(QLabel("x"), look) for look in
                                    ("InspectorTitle", "SectionTitle", "FactValue", "EmptyState"))
    plain = QLabel("x")
    assert title.font().pointSize() == 18 and title.font().weight() > plain.font().weight()
    assert section.font().weight() > plain.font().weight()
    assert value.fontInfo().fixedPitch() and not plain.fontInfo().fixedPitch()
    assert empty.contentsMargins().left() == 16 and empty.font().pointSize() == 11
    with pytest.raises(ValueError, match="no look"):
        style_as(QLabel(), "Chip")
    assert {"ChipId", "EmptyState", "ErrorLine", "TileValue", "Verdict"} <= set(LOOKS)


def test_a_widgets_own_style_sheet_follows_a_change_of_theme(qtbot):
    """A few widgets keep a style sheet of their own (the tour's card, the cost tiles), in the
    palette's colours: the dark theme reaches them too."""
    app = make_app()
    tile = QWidget()
    tile.setObjectName("Tile")
    tile.setStyleSheet("#Tile { background: palette(base); }")
    tile.setMinimumSize(40, 40)
    _shown(qtbot, tile)
    try:
        apply_theme(app, "dark")
        qtbot.wait(10)
        centre = tile.grab().toImage().pixelColor(20, 20)
        assert _near((centre.red(), centre.green(), centre.blue()), dark_palette().color(QPalette.Base), tol=2)
    finally:
        apply_theme(app, "light")
    centre = tile.grab().toImage().pixelColor(20, 20)
    assert _near((centre.red(), centre.green(), centre.blue()), QApplication.palette().color(QPalette.Base), tol=2)
