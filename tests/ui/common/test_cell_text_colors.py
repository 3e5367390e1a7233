"""The text written over a cell reads on the colour pyqtgraph really paints there: the end
colours for values past the levels and for ±inf, the plot's background for NaN (drawn
transparent), in the light and the dark palette. The Matrix band, the heatmaps and the
Lookup's numbers took NaN for the middle colour and the Lookup took ±inf for it too: dark
"+nan" on a dark background, dark "+inf" on dark red."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtWidgets import QApplication

from explorer.ui.style import DIVERGING, cell_text_colors, dark_palette, plot_colors, text_color_on

VALUES = [np.nan, np.inf, -np.inf, 0.0, 0.9, -0.9, 5.0, -5.0, 0.3]


@pytest.mark.parametrize("dark", [False, True])
def test_each_text_colour_is_the_one_that_reads_on_the_painted_cell(qtbot, dark):
    app = QApplication.instance()
    before = app.palette()
    if dark:
        app.setPalette(dark_palette())
    try:
        w = pg.PlotWidget(background=plot_colors()[0])
        w.hideAxis("left")
        w.hideAxis("bottom")
        w.resize(len(VALUES) * 40, 60)
        qtbot.addWidget(w)
        cmap = pg.colormap.get(DIVERGING)
        image = pg.ImageItem()
        image.setColorMap(cmap)
        row = np.array([VALUES], np.float32)  # one row of cells, whichever axis order the app set
        data = row if pg.getConfigOption("imageAxisOrder") == "row-major" else row.T
        image.setImage(data, levels=(-1, 1), autoLevels=False)
        image.setRect(QRectF(0, 0, len(VALUES), 1))
        w.addItem(image)
        w.setRange(xRange=(0, len(VALUES)), yRange=(0, 1), padding=0)
        w.show()
        qtbot.waitExposed(w)
        w.repaint()
        shot = w.viewport().grab().toImage()
        vb = w.getViewBox()
        colors = cell_text_colors(VALUES, (-1, 1), cmap)
        assert len(colors) == len(VALUES)
        for k, value in enumerate(VALUES):
            at = w.mapFromScene(vb.mapViewToScene(QPointF(k + 0.5, 0.5)))
            painted = shot.pixelColor(at.x(), at.y())
            assert colors[k] == text_color_on(painted), (value, painted.name(), colors[k].name())
        # NaN shows the background; ±inf the end colours: different text in at least one palette
        assert colors[0] == text_color_on(plot_colors()[0])
        assert colors[1] == colors[6] and colors[2] == colors[7]
    finally:
        app.setPalette(before)
