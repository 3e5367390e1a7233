"""Export a pyqtgraph item or scene as PNG or SVG (chosen by the file's extension)."""

from __future__ import annotations


def export_graphics(item, path: str, min_width: int = 1200) -> None:
    """Save ``item`` (a GraphicsLayout, PlotItem or a whole scene) to ``path``.

    PNG through pyqtgraph's ImageExporter at least ``min_width`` pixels wide.
    SVG through pyqtgraph's SVGExporter, or Qt's SVG generator where that
    exporter cannot parse what this Qt writes (closed paths, "Z"; scatters).
    """
    import pyqtgraph.exporters as ex

    path = str(path)
    if path.lower().endswith(".svg"):
        try:
            ex.SVGExporter(item).export(path)
            return
        except (ValueError, TypeError):
            pass
        _render_svg(item, path)
        return
    exporter = ex.ImageExporter(item)
    rect = item.sceneRect() if hasattr(item, "sceneRect") else item.sceneBoundingRect()
    exporter.parameters()["width"] = max(min_width, int(rect.width() * 2))
    exporter.export(path)


def _render_svg(item, path: str) -> None:
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    scene = item if hasattr(item, "sceneRect") else item.scene()
    rect = item.sceneRect() if hasattr(item, "sceneRect") else item.sceneBoundingRect()
    gen = QSvgGenerator()
    gen.setFileName(path)
    gen.setSize(rect.size().toSize())
    gen.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
    painter = QPainter(gen)
    try:
        scene.render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
    finally:
        painter.end()
