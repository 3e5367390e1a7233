"""Points rasterised in numpy for big clouds (explorer.ui.common.raster):
the same picture Qt draws from pixmap fragments, faster; the Health view's
vocabulary plot draws its dots with the same rasteriser."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QGraphicsScene

from explorer.ui.common.raster import DotRaster, footprint, rasterize
from explorer.ui.projection import point_cloud
from explorer.ui.projection.point_cloud import PointCloud


def _alpha(img, y, x):
    return int(img[y, x, 3])


def test_a_dot_covers_its_footprint_with_its_colour():
    rgba = np.array([[1.0, 0.0, 0.0, 0.5]])
    img = rasterize(np.array([5.5]), np.array([4.5]), np.zeros(1, np.int64), rgba, 12, 10, 3)
    assert img.shape == (10, 12, 4)
    covered = np.argwhere(img[..., 3] > 0)
    assert {tuple(p) for p in covered} == {(4 + dy, 5 + dx) for dy, dx in footprint(3)}
    # premultiplied B, G, R, A: half-opaque red
    assert tuple(img[4, 5]) == (0, 0, 128, 128)


def test_overlapping_dots_add_up_like_translucent_paint():
    rgba = np.array([[0.0, 0.0, 1.0, 0.3]])
    img = rasterize(np.array([3.2, 3.7, 3.9]), np.array([3.5, 3.1, 3.6]), np.zeros(3, np.int64), rgba, 8, 8, 1)
    assert _alpha(img, 3, 3) == round(255 * (1 - 0.7 ** 3))


def test_points_off_the_image_leave_no_trace():
    rgba = np.array([[0.0, 1.0, 0.0, 1.0]])
    x = np.array([-1.5, -40.0, 20.0, 1e9, -np.inf])
    y = np.array([2.0, 2.0, 2.0, 2.0, 2.0])
    img = rasterize(x, y, np.zeros(5, np.int64), rgba, 8, 6, 1)
    assert not img.any()


def test_later_groups_are_painted_over_earlier_ones():
    rgba = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]])
    img = rasterize(np.array([2.5, 2.5]), np.array([2.5, 2.5]), np.array([0, 1]), rgba, 5, 5, 1)
    assert tuple(img[2, 2]) == (255, 0, 0, 255)  # blue (B first)


def _draw(cloud: PointCloud, w: int, h: int) -> np.ndarray:
    scene = QGraphicsScene()
    scene.addItem(cloud)
    img = QImage(w, h, QImage.Format_ARGB32_Premultiplied)
    img.fill(0)
    p = QPainter(img)
    scene.render(p, QRectF(0, 0, w, h), QRectF(0, 0, w, h))
    p.end()
    scene.removeItem(cloud)
    arr = np.frombuffer(img.constBits(), np.uint8).reshape(h, img.bytesPerLine() // 4, 4)[:, :w]
    return arr.astype(np.float64)


@pytest.mark.parametrize("size", [3, 5])
def test_the_raster_frame_looks_like_qts(qapp, monkeypatch, size):
    rng = np.random.default_rng(0)
    n = 3000
    xy = np.c_[rng.normal(60, 15, n), rng.normal(50, 12, n)]
    group = (rng.random(n) < 0.2).astype(np.int64)
    colors = [QColor(80, 80, 80, 60), QColor(0, 160, 110, 200)]
    cloud = PointCloud()
    cloud.set_points(xy, group, colors, size)
    monkeypatch.setattr(point_cloud, "RASTER_MIN", 10 ** 9)
    by_qt = _draw(cloud, 120, 100)
    monkeypatch.setattr(point_cloud, "RASTER_MIN", 0)
    by_numpy = _draw(cloud, 120, 100)
    assert by_qt[..., 3].sum() > 0
    # the same amount of paint, in the same places (points snap to pixels; edges are antialiased in Qt)
    assert by_numpy[..., 3].sum() == pytest.approx(by_qt[..., 3].sum(), rel=0.25)

    def blur(a):
        return a.reshape(10, 10, 12, 10).mean(axis=(1, 3))  # 10 x 10 pixel blocks

    assert np.abs(blur(by_numpy[..., 3]) - blur(by_qt[..., 3])).max() < 40  # of 255: a square dot is a bit fuller
    assert np.abs(blur(by_numpy[..., 1]) - blur(by_qt[..., 1])).max() < 30


@pytest.mark.parametrize("first", ["qt", "numpy"])
def test_points_set_again_in_the_same_colours_are_drawn_by_qt_as_they_now_are(qapp, monkeypatch, first):
    """Qt's fragments are filled when Qt next draws: new points in the same colours (no new
    atlas), set after a frame drawn by Qt or in numpy, are drawn in their own places and colours."""
    rng = np.random.default_rng(3)
    xy = np.c_[rng.normal(40, 10, 800), rng.normal(40, 10, 800)]
    colors = [QColor(80, 80, 80, 255), QColor(0, 160, 110, 255)]
    cloud = PointCloud()
    cloud.set_points(xy, np.zeros(800, np.int64), colors, 3)
    monkeypatch.setattr(point_cloud, "RASTER_MIN", 10 ** 9 if first == "qt" else 0)
    _draw(cloud, 120, 100)
    moved, group = xy + (40, 20), (rng.random(800) < 0.5).astype(np.int64)
    cloud.set_points(moved, group, colors, 3)
    monkeypatch.setattr(point_cloud, "RASTER_MIN", 10 ** 9)
    fresh = PointCloud()
    fresh.set_points(moved, group, colors, 3)
    by_qt = _draw(cloud, 120, 100)
    assert by_qt[..., 3].sum() > 0
    np.testing.assert_array_equal(by_qt, _draw(fresh, 120, 100))


def test_a_translucent_cloud_never_paints_darker_than_its_opacity(qapp):
    """Over a density map the cloud is translucent as a whole: thousands of dots piled
    on one place still let the map through (Qt would apply the opacity dot by dot)."""
    rng = np.random.default_rng(2)
    xy = np.c_[rng.normal(60, 3, 5000), rng.normal(50, 3, 5000)]
    cloud = PointCloud()
    cloud.set_points(xy, np.zeros(5000, np.int64), [QColor(0, 0, 0, 60)], 3)
    assert _draw(cloud, 120, 100)[..., 3].max() > 250  # opaque: the pile is black
    cloud.setOpacity(0.3)
    drawn = _draw(cloud, 120, 100)[..., 3]
    assert 0.25 * 255 < drawn.max() <= 0.3 * 255 + 1


def test_dot_raster_follows_the_view_and_puts_later_groups_on_top(qtbot):
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.resize(300, 200)
    widget.show()
    qtbot.waitExposed(widget)
    vb = widget.getPlotItem().vb
    dots = DotRaster(size=3)
    vb.addItem(dots, ignoreBounds=True)
    dots.attach(vb)
    vb.setRange(xRange=(0, 10), yRange=(0, 10), padding=0)
    dots.set_groups([([5.0, 1.0, np.nan], [5.0, 1.0, 2.0], "#ff0000"), ([5.0], [5.0], "#0000ff")])
    assert dots.point_count() == 3 and dots.bounds() == (1.0, 5.0, 1.0, 5.0)
    img = dots.image  # row-major RGBA, row 0 at the bottom of the range
    w, h = int(vb.width()), int(vb.height())
    assert img.shape == (h, w, 4)
    blue = (int(5 * h / 10), int(5 * w / 10))
    red = (int(1 * h / 10), int(1 * w / 10))
    assert tuple(img[blue]) == (0, 0, 255, 255) and tuple(img[red]) == (255, 0, 0, 255)
    assert np.count_nonzero(img[..., 3]) == 2 * 9  # two 3 x 3 dots; the NaN point is left out
    drawn = []
    real = dots.redraw
    dots.redraw = lambda: (drawn.append(dots.getViewBox().viewRange()), real())[1]
    for k in range(1, 6):  # zoomed in, in five steps before a paint: drawn once, for the last range
        vb.setRange(xRange=(4 - 0.1 * k, 6 + 0.1 * k), yRange=(4 - 0.1 * k, 6 + 0.1 * k), padding=0)
    vb.setRange(xRange=(4, 6), yRange=(4, 6), padding=0)
    assert drawn == []
    widget.grab()  # a paint
    assert len(drawn) == 1 and np.allclose(drawn[0], [[4, 6], [4, 6]])
    assert np.count_nonzero(dots.image[..., 3]) == 9 and tuple(dots.image[h // 2, w // 2]) == (0, 0, 255, 255)
    widget.grab()  # nothing changed: not drawn again
    assert len(drawn) == 1
    del dots.redraw
    dots.clear_points()
    assert dots.point_count() == 0 and not dots.image.any()


def test_the_same_frame_is_not_rasterised_twice(qapp, monkeypatch):
    """A repaint with the same points, colours and view (a label moved over the cloud, a resize
    settling in several passes) draws the kept frame; new points, colours or a moved view make a new one."""
    made = []
    real = point_cloud.rasterize

    def counted(*args, **kwargs):
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(point_cloud, "rasterize", counted)
    monkeypatch.setattr(point_cloud, "RASTER_MIN", 0)
    rng = np.random.default_rng(3)
    xy = np.c_[rng.normal(60, 15, 2000), rng.normal(50, 12, 2000)]
    cloud = PointCloud()
    cloud.set_points(xy, np.zeros(2000, np.int64), [QColor(0, 120, 200, 200)], 3)
    first = _draw(cloud, 120, 100)
    again = _draw(cloud, 120, 100)
    assert len(made) == 1 and np.array_equal(first, again)  # the kept frame, the same picture
    cloud.set_points(xy + 5, np.zeros(2000, np.int64), [QColor(0, 120, 200, 200)], 3)
    moved = _draw(cloud, 120, 100)
    assert len(made) == 2 and not np.array_equal(first, moved)
    cloud.set_points(xy + 5, np.zeros(2000, np.int64), [QColor(200, 0, 0, 200)], 3)
    _draw(cloud, 120, 100)
    assert len(made) == 3
    _draw(cloud, 110, 100)  # another device size
    assert len(made) == 4
