"""A real Explorer (state, window, workers) for each UI test."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from explorer.app import Explorer, make_app


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)


@pytest.fixture
def explorer(qtbot, settings):
    make_app()
    ex = Explorer(settings=settings)
    qtbot.addWidget(ex.window)
    ex.window.resize(1280, 800)
    ex.window.show()
    yield ex
    ex.shutdown()
