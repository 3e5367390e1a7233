"""Every view's plots export as PNG and SVG through the shared exporter."""

from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from tests.support.ui_helpers import load


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_every_view_exports(qtbot, explorer, tmp_path, suffix):
    load(qtbot, explorer, "default")
    qtbot.waitUntil(lambda: not explorer.busy(), timeout=60000)
    written = []
    for name, export in [
        ("projection", explorer.projection_view.export_plot),
        ("similarity", explorer.similarity_view.export_plot),
        ("cost", explorer.cost_view.export_chart),
        ("training", explorer.training_view.export_image),
    ]:
        path = tmp_path / f"{name}{suffix}"
        export(str(path))
        assert path.is_file() and path.stat().st_size > 1000, name
        written.append(path)
    for path in written:
        if suffix == ".png":
            img = QImage(str(path))
            assert img.width() >= 600 and img.height() > 100, path.name
        else:
            text = Path(path).read_text(errors="replace")
            assert "<svg" in text and ("<path" in text or "<rect" in text or "<image" in text), path.name
