"""The projection's 3D toggle (pytest-qt, offscreen): without an OpenGL
context the view says so and stays 2D; the 3D data path (coordinates,
colours, axis titles, picking) is checked without OpenGL; the GL view
itself is tested only where a context can be made."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor, QMatrix4x4, QVector3D

from explorer.core.sources import open_table
from explorer.core.tokens.groups import token_groups
from explorer.ui.projection import ProjectionView
from explorer.ui.projection.colouring import cloud_colours
from explorer.ui.projection.opengl.support import gl_status
from explorer.ui.projection.scene3d import nearest_on_screen, why_not_3d
from explorer.ui.style import class_color
from tests.support.ui_helpers import standalone_view

TIMEOUT = 60_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, ProjectionView)


def load(qtbot, v, state, spec="default", text="the bank of the river"):
    table = open_table(spec)
    state.set_table(table)
    state.set_text(text)
    qtbot.waitUntil(lambda: v.result is not None and v.result.spec == table.spec, timeout=TIMEOUT)
    return table


def test_3d_cloud_is_the_cores_pca_coloured_like_the_legend(qtbot, view):
    v, state, _ = view
    table = load(qtbot, v, state)
    v.plot_pages.set_3d(True)
    res = state.projection.value
    cloud = v.plot_pages.cloud
    assert cloud is not None and res.n_components >= 3
    np.testing.assert_array_equal(cloud.ids, res.ids)
    np.testing.assert_allclose(cloud.pos, res.coords[:, :3], rtol=0, atol=0)
    # PC1-PC3 agree with numpy's PCA of the fitted rows (up to sign)
    rows = table.matrix()[res.ids].astype(np.float64)
    centred = rows - rows.mean(0)
    _u, s, vt = np.linalg.svd(centred, full_matrices=False)
    ref = centred @ vt[:3].T
    sign = np.sign((ref * cloud.pos).sum(0))
    np.testing.assert_allclose(cloud.pos * sign, ref, atol=1e-3)
    share = s[:3] ** 2 / (s ** 2).sum()
    for k in range(3):
        assert cloud.titles[k] == f"PC{k + 1} · {100 * share[k]:.1f}%"
    # each point has its class's colour (the legend's), unclassed ones the faint grey
    assert v.colour.colour_by == "classes"
    of = state.classes.of[res.ids]
    for i in np.flatnonzero(of >= 0)[:50]:
        want = QColor(class_color(int(of[i])))
        np.testing.assert_allclose(cloud.rgba[i, :3], [want.redF(), want.greenF(), want.blueF()], atol=1e-6)
    groups = token_groups("classes", res.ids, vocab_size=state.table.vocab_size, classes=state.classes)
    legend = cloud_colours(groups, QColor(0, 0, 0))[2]
    assert [entry[0] for entry in legend] == [class_color(k) for k in range(len(state.classes.names))]


def test_without_opengl_the_view_says_so_and_stays_2d(qtbot, view):
    if gl_status().ok:
        pytest.skip("this platform has OpenGL: the fallback is not taken")
    v, state, _ = view
    load(qtbot, v, state)
    v.plot_pages.set_3d(True)
    assert v.plot_pages.notice.isVisible()
    assert "OpenGL" in v.plot_pages.notice.text() and "Showing 2D" in v.plot_pages.notice.text()
    assert not v.plot_pages.showing_3d and v.plot.isVisible()
    assert v.plot_pages.gl is None  # no GL widget was even made
    assert v.axes_controls.isEnabled()
    # the 2D view still works: the selection is drawn and clicking still selects
    state.set_selected_token(5)
    qtbot.waitUntil(lambda: v.plot.selection.data.size == 1, timeout=TIMEOUT)
    v.plot_pages.set_3d(False)
    assert not v.plot_pages.notice.isVisible()


def test_model_switch_clears_the_3d_cloud(qtbot, view):
    v, state, _ = view
    load(qtbot, v, state)
    v.plot_pages.set_3d(True)
    assert v.plot_pages.cloud is not None
    state.set_table(open_table("toy:cat-sat"))
    assert v.plot_pages.cloud is None  # at once, before the new model's projection lands


def test_3d_toggle_lays_tsne_out_in_three_dimensions(qtbot, view):
    v, state, _ = view
    load(qtbot, v, state)
    v.set_method("tsne")
    qtbot.waitUntil(lambda: v.result is not None and v.result.method == "tsne" and v.result.done, timeout=TIMEOUT)
    assert v.result.n_components == 2
    assert "3D needs three" in why_not_3d(v.result)
    v.plot_pages.set_3d(True)
    qtbot.waitUntil(lambda: v.result is not None and v.result.n_components == 3 and v.result.done, timeout=TIMEOUT)
    cloud = v.plot_pages.cloud
    np.testing.assert_array_equal(cloud.pos, state.projection.value.coords)
    assert cloud.titles == ("t-SNE 1", "t-SNE 2", "t-SNE 3")
    v.plot_pages.set_3d(False)  # back to a 2D layout
    qtbot.waitUntil(lambda: v.result is not None and v.result.n_components == 2 and v.result.done, timeout=TIMEOUT)


def test_custom_axes_have_no_third_dimension(qtbot, view):
    v, state, _ = view
    load(qtbot, v, state)
    res = v.result
    fake = type(res)(**{**res.__dict__, "axis_names": ("a", "b")})
    assert "Custom axes" in why_not_3d(fake)


def test_nearest_on_screen_picks_the_point_under_the_pointer():
    # identity camera: clip = world; x, y in -1..1 map to the 200 × 100 view
    pos = np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.5, 0.5]])
    mvp = np.eye(4)
    assert nearest_on_screen(pos, mvp, 200, 100, 100, 50) == 0
    assert nearest_on_screen(pos, mvp, 200, 100, 151, 26) in (1, 2)  # (0.5, 0.5) is pixel (150, 25)
    assert nearest_on_screen(pos, mvp, 200, 100, 10, 90) == -1
    behind = np.diag([1.0, 1.0, 1.0, -1.0])  # w < 0: behind the camera, never picked
    assert nearest_on_screen(pos, behind, 200, 100, 100, 50) == -1


def test_nearest_on_screen_follows_a_real_camera_matrix():
    """A perspective camera with translation (every entry of the matrix used): the point
    picked at each point's own pixel is one drawn there, as the full mvp @ (x, y, z, 1) places it."""
    rng = np.random.default_rng(3)
    pos = rng.normal(size=(60, 3))
    pm = QMatrix4x4()
    pm.perspective(50.0, 2.0, 0.1, 100.0)
    view = QMatrix4x4()
    view.lookAt(QVector3D(4.0, 3.0, 6.0), QVector3D(0.2, -0.1, 0.3), QVector3D(0.0, 1.0, 0.0))
    mvp = np.asarray((pm * view).copyDataTo(), np.float64).reshape(4, 4)
    clip = np.c_[pos, np.ones(len(pos))] @ mvp.T  # the reference: the whole product
    px = (clip[:, 0] / clip[:, 3] + 1) * 0.5 * 400
    py = (1 - clip[:, 1] / clip[:, 3]) * 0.5 * 200
    for k in range(len(pos)):
        got = nearest_on_screen(pos, mvp, 400, 200, px[k], py[k])
        assert got >= 0
        assert np.hypot(px[got] - px[k], py[got] - py[k]) < 0.06  # the same pixel (ties: the nearer point)


@pytest.fixture
def gl_view(qtbot):
    """The view on the bundled model, in 3D: only where an OpenGL context can be made
    (checked before the view is made, so a skip leaves nothing behind)."""
    if not gl_status().ok:
        pytest.skip(f"needs an OpenGL context (e.g. xvfb-run with QT_QPA_PLATFORM=xcb): {gl_status().reason}")
    for v, state, _ in standalone_view(qtbot, ProjectionView):
        load(qtbot, v, state)
        v.plot_pages.set_3d(True)
        yield v, state


def test_gl_view_draws_the_cloud(qtbot, gl_view):
    v, _state = gl_view
    assert v.plot_pages.showing_3d and not v.plot_pages.notice.isVisible()
    assert not v.axes_controls.isEnabled()  # the 2D axes do not apply in 3D
    qtbot.waitExposed(v.plot_pages.gl)
    assert v.plot_pages.gl.labels_shown()


def test_3d_leaves_the_rest_of_the_window_to_raster_painting(qtbot, gl_view):
    """No QOpenGLWidget anywhere: the first one in a window turns the whole window over to
    OpenGL composition for good (every view's repaint through a texture upload)."""
    from PySide6.QtOpenGLWidgets import QOpenGLWidget
    from PySide6.QtWidgets import QApplication

    v, _state = gl_view
    assert v.plot_pages.showing_3d
    assert not [w for top in QApplication.topLevelWidgets() for w in top.findChildren(QOpenGLWidget)]


def test_a_screenshot_of_the_window_shows_what_3d_drew(qtbot, gl_view):
    """The scene is a native child window, which QWidget.grab leaves out: the screenshot paints
    the scene's frame into its place."""
    from PySide6.QtCore import QPoint

    from explorer.screenshot import grab_window

    v, _state = gl_view
    g = v.plot_pages.gl
    qtbot.waitExposed(g.scene)
    frame = g.grab_frame()
    assert not frame.isNull()
    top = v.window()
    shot = grab_window(top).toImage()
    corner = g.mapTo(top, QPoint(0, 0))
    dpr = shot.devicePixelRatio()
    for fx, fy in ((0.5, 0.5), (0.1, 0.9), (0.9, 0.1)):
        x, y = int(g.width() * fx), int(g.height() * fy)
        expect = frame.scaled(g.size()).pixelColor(x, y)
        got = shot.pixelColor(int((corner.x() + x) * dpr), int((corner.y() + y) * dpr))
        assert got == expect


def test_a_gl_error_while_drawing_falls_back_to_2d(qtbot, gl_view):
    from pyqtgraph.opengl import GLGraphicsItem

    v, _state = gl_view
    broken = GLGraphicsItem.GLGraphicsItem()

    def paint():
        raise RuntimeError("the driver lost the context")

    broken.paint = paint
    v.plot_pages.gl.addItem(broken)
    v.plot_pages.gl.update()
    qtbot.waitUntil(lambda: v.plot_pages.notice.isVisible(), timeout=TIMEOUT)
    assert "the driver lost the context" in v.plot_pages.notice.text()
    assert not v.plot_pages.showing_3d and v.plot.isVisible()


def test_gl_hover_names_the_point_and_a_click_selects_it(qtbot, gl_view):
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    v, state = gl_view
    g = v.plot_pages.gl
    qtbot.waitExposed(g)
    bank = state.table.tokenizer.id_of("bank")
    pos = state.projection.value.coords_of(state.table, [bank])[0, :3]
    clip = g.mvp() @ np.r_[pos, 1.0]
    x = (clip[0] / clip[3] + 1) * 0.5 * g.width()
    y = (1 - clip[1] / clip[3]) * 0.5 * g.height()
    assert g.token_at(x, y) == bank  # a highlighted token wins over the cloud under it
    qtbot.waitExposed(g.scene)
    QTest.mouseMove(g.scene, QPoint(round(x), round(y)))  # the scene is a window of its own
    qtbot.waitUntil(lambda: "bank" in v.info.hover_label.text(), timeout=5_000)
    assert f"id {bank:,}" in v.info.hover_label.text() and "PC3 =" in v.info.hover_label.text()
    QTest.mouseClick(g.scene, Qt.LeftButton, Qt.NoModifier, QPoint(round(x), round(y)))
    qtbot.waitUntil(lambda: state.selected_id == bank, timeout=5_000)


def test_a_new_scene_takes_up_one_slow_kind_of_item_a_frame(qtbot, monkeypatch):
    """The first drawing of each kind of item in a new context is slow (a shader compiled by a
    software OpenGL, the GL paint engine for texts): the first frames draw one more kind each,
    points first, and the scene is whole a few frames later."""
    if not gl_status().ok:
        pytest.skip(f"needs an OpenGL context (e.g. xvfb-run with QT_QPA_PLATFORM=xcb): {gl_status().reason}")
    from explorer.ui.projection.opengl.scene import FIRST_FRAMES, GLProjection, GLScene

    frames: list[set] = []  # the kinds of item each frame drew
    for kind in FIRST_FRAMES:
        def counted(item, paint=kind.paint, kind=kind):
            frames[-1].add(kind)
            paint(item)

        monkeypatch.setattr(kind, "paint", counted)
    paint_gl = GLScene.paintGL

    def framed(scene):
        frames.append(set())
        paint_gl(scene)

    monkeypatch.setattr(GLScene, "paintGL", framed)
    g = GLProjection()
    qtbot.addWidget(g)
    scene = g.scene
    g.resize(400, 300)
    g.show()
    qtbot.waitUntil(lambda: scene.complete and len(frames) >= len(FIRST_FRAMES), timeout=TIMEOUT)
    assert frames[0] == {FIRST_FRAMES[0]}
    assert frames[1] == set(FIRST_FRAMES[:2])
    assert frames[2] == set(FIRST_FRAMES)
    assert not scene.broken


def test_marks_of_the_old_model_are_not_placed_with_the_new_models_rows(qtbot, view):
    """In a model switch the computations reset (and the view redraws its marks) before the
    view hears of the new model: a walk met the old marks' ids (46,285) projected from the new
    table's rows (1,237), an IndexError. Until the view clears, the old marks have no place."""
    v, state, _ = view
    table = load(qtbot, v, state)
    pages = v.plot_pages
    pages.set_3d(True)
    big = table.vocab_size - 1
    pages.set_marks([big, 3], ["#ff0000", "#00ff00"])
    np.testing.assert_allclose(pages.mark_positions(), state.projection.value.coords_of(table, [big, 3])[:, :3])
    during: list = []  # the marks' places while the computations reset, the new table installed

    def on_reset():
        during.append((state.table.vocab_size, pages.mark_positions()))

    state.jobs.neighbors.reset.connect(on_reset)
    try:
        state.set_table(open_table("random:20x8"))
    finally:
        state.jobs.neighbors.reset.disconnect(on_reset)  # the view goes at the test's end
    assert during and all(n == 20 and xyz.shape == (0, 3) for n, xyz in during)
    assert pages.mark_positions().shape == (0, 3)


def test_3d_asked_for_before_the_warm_up_comes_after_its_opengl_code_is_imported_in_a_worker(
        qtbot, explorer, tmp_path, monkeypatch):
    """Asked for in the first seconds, before the warm-up imported PyOpenGL and pyqtgraph.opengl,
    3D imported them in the click: a stall of 324-337 ms in a real window. The 2D plot stays under
    "Preparing 3D…" while the app's worker imports the code; then 3D comes (or its reason)."""
    import sys
    import threading

    import explorer.app as app_module
    from explorer.ui.projection import three_d
    from tests.support.ui_helpers import load as load_model

    with qtbot.waitSignal(explorer.warmed_up, timeout=TIMEOUT):  # the warm-up's own imports done
        load_model(qtbot, explorer, "default")
    (tmp_path / "gl_probe_module.py").write_text(
        "import threading\nTHREAD = threading.current_thread()\nGLProjection = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "gl_probe_module", raising=False)
    monkeypatch.setattr(three_d, "GL_MODULE", "gl_probe_module")  # stands for the 3D code, not imported yet
    monkeypatch.setattr(app_module, "OPTIONAL_MODULES", ("gl_probe_module",))
    explorer.window.show_view("projection")
    pages = explorer.projection_view.plot_pages
    qtbot.waitUntil(lambda: explorer.projection_view.result is not None, timeout=TIMEOUT)
    pages.set_3d(True)
    assert not pages.showing_3d
    assert pages.notice.isVisible() and pages.notice.text().startswith("Preparing 3D")
    qtbot.waitUntil(lambda: not pages.notice.text().startswith("Preparing 3D"), timeout=TIMEOUT)
    assert sys.modules["gl_probe_module"].THREAD is not threading.main_thread()
    qtbot.waitUntil(lambda: pages.showing_3d or pages.notice.text().endswith("Showing 2D."), timeout=TIMEOUT)
    assert pages.showing_3d == gl_status().ok


def test_a_scene_shown_again_draws_one_frame_and_a_change_draws_another(qtbot, monkeypatch):
    """The window system paints an OpenGL window shown again twice (under X: a tab switch back to
    the 3D view drew two frames, 20-30 ms each in software OpenGL); nothing changed between them,
    so the second is not drawn. A change, or a new size, still draws a frame."""
    if not gl_status().ok:
        pytest.skip(f"needs an OpenGL context (e.g. xvfb-run with QT_QPA_PLATFORM=xcb): {gl_status().reason}")
    from PySide6.QtWidgets import QTabWidget, QWidget

    from explorer.ui.projection.opengl.scene import GLProjection, GLScene

    frames = []
    paint_gl = GLScene.paintGL
    monkeypatch.setattr(GLScene, "paintGL", lambda scene: (frames.append(scene.size()), paint_gl(scene)))
    tabs = QTabWidget()  # as in the window: the view on a page that is left and come back to
    qtbot.addWidget(tabs)
    g = GLProjection()
    tabs.addTab(g, "3D")
    tabs.addTab(QWidget(), "other")
    tabs.resize(400, 300)
    tabs.show()
    scene = g.scene
    qtbot.waitUntil(lambda: scene.complete, timeout=TIMEOUT)

    def settled() -> int:
        """Frames drawn until none comes for a while."""
        seen = -1
        while seen != len(frames):
            seen = len(frames)
            qtbot.wait(300)
        return seen

    for _ in range(3):
        tabs.setCurrentIndex(1)
        before = settled()
        tabs.setCurrentIndex(0)
        qtbot.waitExposed(scene)
        assert settled() - before == 1
    before = settled()
    scene.update()  # something changed (pyqtgraph's items and camera ask so)
    assert settled() - before == 1
    before = settled()
    tabs.resize(500, 360)
    assert settled() > before and frames[-1] == scene.size() and scene.size().width() > 380
    assert not scene.broken


def four_points_in_3d(qtbot, width: int, height: int, titles: tuple[str, str, str]):
    """A shown 3D view of four points, framed and drawn whole; skips where OpenGL cannot run."""
    if not gl_status().ok:
        pytest.skip(f"needs an OpenGL context (e.g. xvfb-run with QT_QPA_PLATFORM=xcb): {gl_status().reason}")
    from explorer.ui.projection.opengl.scene import GLProjection
    from explorer.ui.projection.scene3d import Cloud3D

    g = GLProjection()
    qtbot.addWidget(g)
    g.resize(width, height)
    g.show()
    pos = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, -1, -1]], np.float32)
    g.set_cloud(Cloud3D(np.arange(4), pos, np.full((4, 4), 0.5, np.float32), 4.0, titles))
    g.frame()
    qtbot.waitUntil(lambda: g.scene.complete and not g.scene._stale, timeout=TIMEOUT)
    return g, pos


def test_the_texts_are_drawn_in_one_image_where_the_camera_sees_their_points(qtbot):
    """The axes' titles and the tokens' labels are drawn by the raster engine into one image over
    the frame (each text through the GL paint engine cost about 0.7 ms in software OpenGL: 27 texts
    doubled a frame); each starts where its point is seen."""
    from pyqtgraph.opengl import GLTextItem

    g, pos = four_points_in_3d(qtbot, 500, 400, ("PC1", "PC2", "PC3"))
    g.set_labels([(pos[k], f"w{k}", "#ff00ff") for k in range(3)])
    scene = g.scene
    qtbot.waitUntil(lambda: not scene._stale, timeout=TIMEOUT)
    assert g.labels_shown() == ["w0", "w1", "w2"]
    assert not [item for item in scene.items if isinstance(item, GLTextItem)]
    frame = g.grab_frame()
    ratio = frame.devicePixelRatio()

    def magenta_near(x: float, y: float) -> int:
        xs = range(max(0, int(x * ratio)), min(frame.width(), int((x + 40) * ratio)))
        ys = range(max(0, int((y - 14) * ratio)), min(frame.height(), int((y + 4) * ratio)))
        return sum(1 for i in xs for j in ys
                   if (c := frame.pixelColor(i, j)).red() > 150 and c.blue() > 150 and c.green() < 110)

    points = scene.texts.screen_points()
    assert len(points) == 6  # three titles, three labels
    for at in points[3:]:
        assert magenta_near(at.x(), at.y()) > 5
    assert magenta_near(2, 20) == 0  # a corner with no label


def test_a_text_whose_point_is_in_view_is_moved_in_whole_and_one_out_of_view_stays():
    """An axis's title starts at its axis's end, which the camera keeps in view; in a narrow view the
    title ran past the edge ("PC1 · 14.5%" cut to "PC1 ·")."""
    from PySide6.QtCore import QPointF, QRectF

    from explorer.ui.projection.opengl.texts import kept_in_view

    view = QRectF(0, 0, 400, 300)
    size = QRectF(0, -12, 90, 16)  # about the baseline's start: 12 px above it, 4 below, 90 wide
    for at in (QPointF(380, 150), QPointF(5, 5), QPointF(200, 299), QPointF(0, 0)):
        placed = kept_in_view(at, size, view)
        assert view.contains(size.translated(placed))
        assert abs(placed.x() - at.x()) <= size.width() and abs(placed.y() - at.y()) <= size.height()
    assert kept_in_view(QPointF(380, 150), size, view) == QPointF(310, 150)  # its end at the edge, same line
    assert kept_in_view(QPointF(100, 150), size, view) == QPointF(100, 150)  # wholly in view: not moved
    assert kept_in_view(QPointF(420, 150), size, view) == QPointF(420, 150)  # its point out of view
    assert kept_in_view(QPointF(380, 150), QRectF(0, -12, 500, 16), view) == QPointF(380, 150)  # wider than the view


def test_a_title_at_the_views_edge_is_drawn_whole(qtbot):
    """Drawn, not only placed: the pixels of a long title whose point is seen 12 px from the view's
    right edge lie left of that point, where the text was moved to."""
    g, _ = four_points_in_3d(qtbot, 420, 320, ("", "", ""))
    scene = g.scene
    # a point of the scene seen 12 px from the right edge, half way down
    project = scene.texts._projection()
    grid = [(x, y, z) for x in np.linspace(-4, 4, 81) for y in np.linspace(-4, 4, 81) for z in (0.0,)]
    seen = [(p, project.map(QVector3D(*map(float, p))).toPointF()) for p in grid]
    point, at = min(seen, key=lambda s: abs(s[1].x() - (g.width() - 12)) + abs(s[1].y() - g.height() / 2))
    assert abs(at.x() - (g.width() - 12)) < 6
    g.set_labels([(np.array(point), "a long title", "#ff00ff")])
    qtbot.waitUntil(lambda: not scene._stale, timeout=TIMEOUT)
    frame = g.grab_frame()
    ratio = frame.devicePixelRatio()
    columns = [i for i in range(frame.width()) for j in range(max(0, int((at.y() - 16) * ratio)),
                                                                min(frame.height(), int((at.y() + 6) * ratio)))
               if (c := frame.pixelColor(i, j)).red() > 150 and c.blue() > 150 and c.green() < 110]
    assert columns and min(columns) / ratio < at.x() - 40  # the text starts well left of its point
    assert max(columns) / ratio <= g.width()
