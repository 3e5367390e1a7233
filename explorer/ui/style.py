"""Colours, fonts and the application style shared by every view."""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import QVBoxLayout, QWidget

#: "the selected token", the same in every view
ACCENT = "#00A36C"
#: quieter: the other tokens of the text
TEXT_TOKENS = "#C98A00"
#: tokens the user added (neighbours, searches)
EXTRA = "#8E6CC7"
ERROR = "#D1495B"
#: neighbours of the selected and of the text's tokens (the projection)
NEIGHBORS = "#5D8AA8"
#: the projection's search hits (a ring around each, and their labels)
SEARCH_HITS = "#D81B60"
#: training charts: rows with a gradient / rows that changed / the tied table's
#: whole gradient and rows without a class (Okabe-Ito blue, vermillion, grey)
GRADIENT_ROWS = "#0072B2"
CHANGED_ROWS = "#D55E00"
NEUTRAL = "#999999"
#: training charts: rows moved by weight decay alone (Okabe-Ito reddish purple)
DECAY_ROWS = "#CC79A7"
#: Okabe-Ito, colour-blind safe, for classes
CLASS_COLORS = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000", "#999999",
                 # Paul Tol's muted colours past Okabe-Ito's nine: the bundled language has sixteen classes
                 "#44AA99", "#882255", "#117733", "#AA4499", "#999933", "#CC6677", "#DDCC77"]
#: token kinds (explorer.core.tokens.meta.KINDS order): word start, continuation, number,
#: punctuation, whitespace, special, byte; colour-blind-safe hues kept apart from the highlights
KIND_COLORS = ["#0072B2", "#56B4E9", "#CC79A7", "#D55E00", "#F0E442", "#882255", "#44AA99"]
#: the lookup walk: rows of E not multiplied yet, and rows multiplied by 0 (wasted)
PENDING = "#E1E1E1"
WASTED = "#969696"
#: a third path in timing charts (nn.Linear), beside ACCENT (gather) and ERROR (one-hot)
THIRD_PATH = "#0072B2"
DIVERGING = "CET-D1A"
SEQUENTIAL = "viridis"
#: bars of reference figures (other models) beside the loaded one (ACCENT); Okabe-Ito blue and sky blue
REFERENCE = "#0072B2"
REFERENCE_LIGHT = "#56B4E9"
#: token health: the tokenizer round-trip category of each row (Okabe-Ito; the
#: bulk of "ok" rows in a quiet blue), and the ring around flagged rows (ERROR)
HEALTH_CATEGORY_COLORS = {
    "ok": "#7FA7C9",
    "special": "#E69F00",
    "unreachable": "#D55E00",
    "undecodable": "#CC79A7",
    "no_piece": "#999999",
    "no_row": "#999999",
}
#: text written on colour-mapped cells: the one of these that contrasts more with the cell
DARK_TEXT = "#1a1a1a"
LIGHT_TEXT = "#ffffff"

#: the projection's density map: its densest cells on a light and on a dark background
#: (a blue kept apart from the highlights ACCENT, TEXT_TOKENS, EXTRA and NEIGHBORS)
DENSITY_LIGHT = "#2F6DB5"
DENSITY_DARK = "#7FB2E5"

SPACING = 8
#: Qt's QWIDGETSIZE_MAX (not exported by PySide6): no maximum width or height
NO_MAXIMUM = (1 << 24) - 1


def configure_pyqtgraph() -> None:
    """pyqtgraph's options as the app draws with them, its axes laid out quickly
    (:mod:`explorer.ui.common.quick_axis`) and its scenes known to
    :mod:`explorer.ui.common.paint_once`."""
    from explorer.ui.common import paint_once, quick_axis

    pg.setConfigOptions(imageAxisOrder="row-major", antialias=True)
    quick_axis.install()
    paint_once.install()


def is_dark() -> bool:
    """Whether the window palette in use is dark (the theme chosen, or the system's)."""
    app = QGuiApplication.instance()
    if app is None:
        return False
    return app.palette().color(QPalette.Window).lightness() < 128


def system_is_dark() -> bool:
    """Whether the system asks for a dark scheme."""
    app = QGuiApplication.instance()
    if app is None:
        return False
    try:
        return app.styleHints().colorScheme() == Qt.ColorScheme.Dark
    except AttributeError:  # Qt < 6.5
        return is_dark()


def plot_colors() -> tuple[str, str]:
    """(background, foreground) for plots, following the window palette."""
    app = QGuiApplication.instance()
    if app is None:
        return "#ffffff", "#202020"
    pal = app.palette()
    return pal.color(QPalette.Base).name(), pal.color(QPalette.Text).name()


def axis_pen_color(fg: str | QColor, dark: bool) -> QColor:
    """The colour of an axis line: the text colour, quieter."""
    return QColor(fg).darker(160) if dark else QColor(fg).lighter(160)


def style_plot(plot: pg.PlotItem) -> None:
    """Axis fonts and colours for a plot, from the palette."""
    bg, fg = plot_colors()
    for name in ("left", "bottom", "right", "top"):
        ax = plot.getAxis(name)
        ax.setTextPen(fg)
        ax.enableAutoSIPrefix(False)
        ax.setPen(pg.mkPen(axis_pen_color(fg, is_dark())))


def translucent(color: str | QColor, alpha: int) -> QColor:
    """``color`` with opacity ``alpha`` (0-255), e.g. a shaded band in the accent colour."""
    c = QColor(color)
    c.setAlpha(int(alpha))
    return c


def _relative_luminance(c: QColor) -> float:
    """WCAG relative luminance of an opaque colour (0 black .. 1 white)."""

    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())


def contrast_ratio(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two opaque colours (1 .. 21)."""
    la, lb = sorted((_relative_luminance(QColor(a)), _relative_luminance(QColor(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def text_color_on(background: QColor | str, under: QColor | None = None) -> QColor:
    """The text colour (DARK_TEXT or LIGHT_TEXT) that reads best on ``background``.

    A translucent background is first blended over ``under`` (default: the
    palette's Base), so a lightly tinted cell in the dark theme gets light
    text and the same cell in the light theme dark text.
    """
    bg = QColor(background)
    if bg.alpha() < 255:
        opaque = QColor(bg.red(), bg.green(), bg.blue())
        bg = blend(opaque, under if under is not None else plot_colors()[0], bg.alphaF())
    dark, light = QColor(DARK_TEXT), QColor(LIGHT_TEXT)
    return dark if contrast_ratio(bg, dark) >= contrast_ratio(bg, light) else light


def text_colors_on(rgb) -> list[QColor]:
    """:func:`text_color_on` for many opaque cells at once: ``rgb`` is an
    (n, 3) or (n, 4) array of floats in 0..1 (e.g. ColorMap.map(x, mode="float"))."""
    import numpy as np

    c = np.asarray(rgb, dtype=np.float64)[:, :3]
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    lum = 0.2126 * linear[:, 0] + 0.7152 * linear[:, 1] + 0.0722 * linear[:, 2]
    dark, light = QColor(DARK_TEXT), QColor(LIGHT_TEXT)
    ld, ll = _relative_luminance(dark), _relative_luminance(light)
    use_dark = (lum + 0.05) / (ld + 0.05) >= (ll + 0.05) / (lum + 0.05)
    return [dark if d else light for d in use_dark]


def cell_text_colors(values, levels: tuple[float, float], cmap) -> list[QColor]:
    """The text colour that reads on each cell of an image of ``values`` drawn with ``cmap``
    over ``levels``, as pyqtgraph draws it: values past the levels and ±inf in the end
    colours, NaN not at all (the plot's background shows through). Pass the values the
    image was given (a map drawn with NaN replaced gets the replaced values)."""
    import numpy as np

    v = np.asarray(values, dtype=np.float64).ravel()
    lo, hi = float(levels[0]), float(levels[1])
    nan = np.isnan(v)
    fracs = np.full(v.shape, 0.5) if not hi > lo else (np.clip(np.where(nan, lo, v), lo, hi) - lo) / (hi - lo)
    colors = text_colors_on(cmap.map(fracs, mode="float")) if len(v) else []
    if nan.any():
        background = text_color_on(plot_colors()[0])
        colors = [background if n else c for c, n in zip(colors, nan.tolist())]
    return colors


def mono_font(point_size: int | None = None) -> QFont:
    f = QFontDatabase.systemFont(QFontDatabase.FixedFont)
    if point_size:
        f.setPointSize(point_size)
    return f


def css_rgba(color, alpha: int) -> str:
    """``color`` with opacity ``alpha`` (0..255) for rich text: rgba(r,g,b,a)."""
    c = QColor(color)
    return f"rgba({c.red()},{c.green()},{c.blue()},{int(alpha)})"


def blend(top: str | QColor, bottom: str | QColor, alpha: float) -> QColor:
    """The opaque colour of ``top`` drawn at ``alpha`` (0..1) over ``bottom``.

    Plots draw faint lines in this colour rather than with a translucent pen:
    Qt's raster engine blends a translucent vertical line pixel by pixel,
    about 25 times slower than it draws an opaque one.
    """
    t, b = QColor(top), QColor(bottom)
    mix = [round(alpha * ct + (1 - alpha) * cb) for ct, cb in ((t.red(), b.red()), (t.green(), b.green()),
                                                                 (t.blue(), b.blue()))]
    return QColor(*mix)


def class_color(index: int) -> str:
    """Colour of class ``index``; Okabe-Ito's black becomes near-white on a dark palette."""
    color = CLASS_COLORS[index % len(CLASS_COLORS)]
    dark = QColor(plot_colors()[0]).lightness() < 128  # plots drawn on a dark base
    return "#E8E8E8" if color == "#000000" and dark else color


@dataclass(frozen=True)
class Look:
    """How :func:`style_as` draws a widget: in the palette's placeholder colour (``quiet``) or
    the error colour, at ``points``, semi-bold (``strong``), in the fixed-width font, with
    ``margin`` pixels all round."""

    quiet: bool = False
    error: bool = False
    points: int | None = None
    strong: bool = False
    mono: bool = False
    margin: int = 0


#: the app's looks by name (the object name :func:`style_as` gives with each)
LOOKS = {
    "ChipId": Look(quiet=True, points=9),  # quiet secondary text
    "EmptyState": Look(quiet=True, points=11, margin=16),  # what a view says while it has nothing to show
    "ErrorLine": Look(error=True),
    "InspectorTitle": Look(points=18, strong=True),
    "SectionTitle": Look(strong=True),
    "FactValue": Look(mono=True),
    # the cost view's cards
    "CardTitle": Look(points=16, strong=True),
    "PanelTitle": Look(points=11, strong=True),
    "TileCaption": Look(quiet=True, points=10),
    "TileValue": Look(points=18, strong=True),
    "TileSub": Look(points=10),
    "TileFormula": Look(quiet=True, points=9),
    "Verdict": Look(points=13, strong=True),
}
#: the stressed push button (the next step to take): its own style sheet, set on it alone
CUE_STYLE = f"QPushButton {{ border: 2px solid {ACCENT}; border-radius: 4px; padding: 3px 8px; font-weight: 600; }}"


def style_as(widget: QWidget, name: str) -> QWidget:
    """Give ``widget`` the look ``name`` of :data:`LOOKS`, and that name as its object name.

    Made with the widget's own palette role, palette and font, not a style sheet: a style
    sheet on the application put every widget of the app through Qt's style sheet style,
    and views took a third longer to build (all seven's build steps: 0.74-0.76 s without
    one, 1.02-1.07 s with it, in a real window) and their paints longer too. Colours come
    from the palette's roles, so they follow a change of theme.
    """
    look = LOOKS.get(name)
    if look is None:
        raise ValueError(f"no look {name!r}: one of {', '.join(LOOKS)}")
    widget.setObjectName(name)
    if look.quiet:
        widget.setForegroundRole(QPalette.PlaceholderText)
    if look.error:
        pal = widget.palette()
        for role in (QPalette.WindowText, QPalette.Text):
            pal.setColor(role, QColor(ERROR))
        widget.setPalette(pal)
    if look.margin:
        widget.setContentsMargins(look.margin, look.margin, look.margin, look.margin)
    font = mono_font() if look.mono else widget.font()
    if look.points:
        font.setPointSize(look.points)
    if look.strong:
        font.setWeight(QFont.DemiBold)
    widget.setFont(font)
    return widget


def dark_palette() -> QPalette:
    """A dark Fusion palette (used when the system asks for dark, or EXPLORER_THEME=dark)."""
    pal = QPalette()
    base, window, text = QColor("#1e1f22"), QColor("#2b2d30"), QColor("#e6e6e6")
    pal.setColor(QPalette.Window, window)
    pal.setColor(QPalette.WindowText, text)
    pal.setColor(QPalette.Base, base)
    pal.setColor(QPalette.AlternateBase, window)
    pal.setColor(QPalette.ToolTipBase, window)
    pal.setColor(QPalette.ToolTipText, text)
    pal.setColor(QPalette.Text, text)
    pal.setColor(QPalette.Button, window)
    pal.setColor(QPalette.ButtonText, text)
    pal.setColor(QPalette.Highlight, QColor(ACCENT))
    pal.setColor(QPalette.HighlightedText, QColor("#ffffff"))
    pal.setColor(QPalette.PlaceholderText, QColor("#9a9a9a"))
    pal.setColor(QPalette.Mid, QColor("#55585c"))
    pal.setColor(QPalette.Disabled, QPalette.Text, QColor("#7a7a7a"))
    pal.setColor(QPalette.Disabled, QPalette.ButtonText, QColor("#7a7a7a"))
    return pal


#: the choices of View → Theme
THEMES = ("system", "light", "dark")


def theme_in_use(choice: str = "system") -> str:
    """"light" or "dark": EXPLORER_THEME=light|dark, else ``choice`` (View → Theme), else the system's."""
    import os

    env = os.environ.get("EXPLORER_THEME", "").lower()
    if env in ("light", "dark"):
        return env
    if choice in ("light", "dark"):
        return choice
    return "dark" if system_is_dark() else "light"


def apply_theme(app, choice: str = "system") -> str:
    """Set the palette of :func:`theme_in_use`; returns it ("light" or "dark")."""
    theme = theme_in_use(choice)
    if theme == "dark":
        app.setPalette(dark_palette())
    elif is_dark():  # back from dark: the style's own light palette
        app.setPalette(app.style().standardPalette())
    else:
        return theme
    for widget in app.allWidgets():  # a few widgets' own style sheets: their palette(...) colours
        sheet = widget.styleSheet()  # were resolved when the widget was polished
        if "palette(" in sheet:
            widget.setStyleSheet(sheet)
    return theme


class FitLayout(QVBoxLayout):
    """A view's outer layout that fills the scrolling tab page it sits in.

    Word-wrapped labels give a layout a height-for-width, and a scroll area
    then sizes the view to its preferred height, scrolling although the view
    could shrink to the page. Without it the view gets the page's height
    (or its minimum height, and scrolls only below that).
    """

    def __init__(self, parent=None, wrapped_minimum: bool = False):
        super().__init__(parent)
        self._wrapped_minimum = wrapped_minimum

    def hasHeightForWidth(self) -> bool:
        return False

    def minimumSize(self) -> QSize:
        """With ``wrapped_minimum``: at least the wrapped words' height at the present
        width plus every other item's minimum, so that a short page scrolls rather
        than squeeze the plots under a long text below their minimum (they were cut)."""
        size = super().minimumSize()
        width = self.geometry().width()
        if not self._wrapped_minimum or width <= 0:
            return size
        m = self.contentsMargins()
        inner = width - m.left() - m.right()
        shown = [self.itemAt(i) for i in range(self.count()) if not self.itemAt(i).isEmpty()]
        need = m.top() + m.bottom() + self.spacing() * max(0, len(shown) - 1)
        for item in shown:
            h = item.heightForWidth(inner) if item.hasHeightForWidth() else -1
            need += h if h >= 0 else item.minimumSize().height()
        return QSize(size.width(), max(size.height(), need))


def shrinkable(label: pg.LabelItem) -> None:
    """Let a plot title be narrower than its text: a long title must not widen
    the whole plot grid past the window (it is clipped instead).

    pyqtgraph's LabelItem makes its text width its minimum width on every
    setText; this keeps the height and drops the width.
    """
    original = label.updateMin

    def update_min():
        original()
        label.setMinimumWidth(0)
        label._sizeHint[Qt.SizeHint.MinimumSize] = (0, label._sizeHint[Qt.SizeHint.MinimumSize][1])
        label._sizeHint[Qt.SizeHint.PreferredSize] = (0, label._sizeHint[Qt.SizeHint.PreferredSize][1])

    label.updateMin = update_min
    update_min()


_raw_fonts: list | None = None
_raw_fonts_lock = threading.Lock()


def prepare_glyph_check() -> None:
    """Open every installed font family once, on the GUI thread.

    Qt keeps font engines per thread: fonts opened by a worker (pieces are
    shown from workers too) die with that worker's thread and then answer
    that they have no glyph at all. Opened here, they live as long as the
    application. About 20 ms for 35 families."""
    global _raw_fonts
    from PySide6.QtGui import QRawFont

    with _raw_fonts_lock:
        if _raw_fonts is None:
            _raw_fonts = [QRawFont.fromFont(QFont(f)) for f in QFontDatabase.families()]


@functools.lru_cache(maxsize=4096)
def can_draw(ch: str) -> bool:
    """Whether some installed font has a glyph for ``ch`` (else Qt draws an
    empty box). ASCII is taken as drawable, and everything is before
    :func:`prepare_glyph_check` ran; the answer is cached per character."""
    if ch.isascii():
        return True
    with _raw_fonts_lock:
        if _raw_fonts is None:
            return True
        code = ord(ch)
        return any(f.supportsCharacter(code) for f in _raw_fonts)


def density_lut(dark: bool | None = None, steps: int = 256):
    """RGBA lookup table (steps, 4) uint8 for a density image: transparent where
    empty, rising to the theme's density colour (opaque enough to read, never hiding the points)."""
    import numpy as np

    top = QColor(DENSITY_DARK if (is_dark() if dark is None else dark) else DENSITY_LIGHT)
    t = np.linspace(0.0, 1.0, steps)
    lut = np.empty((steps, 4), np.uint8)
    lut[:, 0], lut[:, 1], lut[:, 2] = top.red(), top.green(), top.blue()
    lut[:, 3] = np.round(215 * t ** 0.75).astype(np.uint8)
    return lut

