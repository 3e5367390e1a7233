"""One layer writes every value over its cell: each text in its own colour, centred on
its point, in the view's pixels whatever the zoom, and never widening the plot's range."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFontMetricsF, QImage

from explorer.ui.common.cell_texts import FIT_MARGIN_PX, FIT_POINT_SIZES, CellTextLayer

RED, BLUE = QColor(220, 0, 0), QColor(0, 0, 220)


def _plot(qtbot, **layer_args):
    w = pg.PlotWidget(background="w")
    w.resize(320, 160)
    w.hideAxis("left")
    w.hideAxis("bottom")
    qtbot.addWidget(w)
    layer = CellTextLayer(**layer_args)
    w.addItem(layer, ignoreBounds=True)
    w.show()
    qtbot.waitExposed(w)
    return w, layer


def _inked(img: QImage, colour: QColor, x0: int, x1: int) -> int:
    """Pixels between columns x0 and x1 drawn near ``colour`` (text, antialiased or not)."""
    n = 0
    for y in range(img.height()):
        for x in range(x0, x1):
            c = img.pixelColor(x, y)
            if abs(c.red() - colour.red()) + abs(c.green() - colour.green()) + abs(c.blue() - colour.blue()) < 120:
                n += 1
    return n


def _shot(qtbot, w) -> QImage:
    w.repaint()
    return w.viewport().grab().toImage()


def test_each_text_is_drawn_in_its_colour_over_its_point_at_every_zoom(qtbot):
    w, layer = _plot(qtbot)
    w.setRange(xRange=(0, 2), yRange=(0, 1), padding=0)
    layer.set_cells([(0.5, 0.5, "+1.00", RED), (1.5, 0.5, "-0.50", BLUE)])
    assert layer.texts() == ["+1.00", "-0.50"] and layer.shown_texts() == layer.texts()
    img = _shot(qtbot, w)
    half = img.width() // 2
    red_left, blue_right = _inked(img, RED, 0, half), _inked(img, BLUE, half, img.width())
    assert red_left > 20 and blue_right > 20  # each text over its own cell
    assert _inked(img, RED, half, img.width()) == 0 and _inked(img, BLUE, 0, half) == 0
    # zoomed out four times: the texts keep their size in pixels, now in the left quarter
    w.setRange(xRange=(0, 8), yRange=(0, 4), padding=0)
    img = _shot(qtbot, w)
    quarter = img.width() // 4
    assert 0.7 < _inked(img, RED, 0, quarter) / red_left < 1.4
    assert 0.7 < _inked(img, BLUE, 0, quarter) / blue_right < 1.4
    layer.clear()
    img = _shot(qtbot, w)
    assert layer.texts() == [] and _inked(img, RED, 0, img.width()) == 0


def test_the_layer_never_widens_the_plots_range(qtbot):
    w, layer = _plot(qtbot)
    layer.set_cells([(1000.0, -1000.0, "far", RED)])
    w.plot([0, 1], [0, 1])
    w.autoRange(padding=0)
    (x0, x1), (y0, y1) = w.getViewBox().viewRange()
    assert x1 < 10 and y0 > -10


def test_a_fitted_layer_writes_in_the_largest_size_that_fits_a_cell_or_not_at_all(qtbot):
    w, layer = _plot(qtbot, fit=FIT_POINT_SIZES)
    texts = ["+0.25", "-0.03"]
    layer.set_cells([(0.5, 0.5, texts[0], RED), (1.5, 0.5, texts[1], BLUE)])

    def widest(size: int) -> float:
        font = layer.font()
        font.setPointSize(size)
        return max(QFontMetricsF(font).horizontalAdvance(t) for t in texts)

    seen = []
    for columns in (2, 8, 12, 16, 40):  # the same two cells, narrower and narrower on screen
        w.setRange(xRange=(0, columns), yRange=(0, 1), padding=0)
        img = _shot(qtbot, w)
        width, height = layer.cell_px()
        assert abs(width - img.width() / columns) < 1.5 and height > 100
        size = layer.point_size()
        fits = [s for s in FIT_POINT_SIZES if widest(s) + FIT_MARGIN_PX <= width]
        assert size == (fits[0] if fits else 0)
        ink = _inked(img, RED, 0, img.width()) + _inked(img, BLUE, 0, img.width())
        if size:
            assert layer.shown_texts() == texts and ink > 10
        else:  # too narrow even for the smallest size: nothing painted over the neighbours
            assert layer.shown_texts() == [] and ink == 0
        seen.append(size)
    assert seen[0] == FIT_POINT_SIZES[0] and seen[-1] == 0 and seen == sorted(seen, reverse=True)
