"""The QApplication as make_app makes it, seen from a process of its own."""

import os
import subprocess
import sys

import pytest

FILL_THEN_COUNT_POOL_THREADS = """
import os
{before}
from explorer.ui.application import make_app
from PySide6.QtGui import QColor, QImage, QPainter
app = make_app()
image = QImage(1200, 900, QImage.Format.Format_ARGB32_Premultiplied)
painter = QPainter(image)
painter.fillRect(0, 0, 1200, 900, QColor(10, 20, 30, 128))  # a blended fill of 900 rows
painter.end()
names = [open(f"/proc/self/task/{{t}}/comm").read().strip() for t in os.listdir("/proc/self/task")]
print(image.pixelColor(600, 450).alpha(), sum(n == "Thread (pooled)" for n in names))
"""
#: a QApplication made, and a big fill painted, before make_app: Qt's own default
QT_FIRST = """
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication
first = QApplication([])
early = QImage(1200, 900, QImage.Format.Format_ARGB32_Premultiplied)
painter = QPainter(early)
painter.fillRect(0, 0, 1200, 900, QColor(1, 2, 3, 128))
painter.end()
"""


def _alpha_and_pool_threads(before: str) -> tuple[int, int]:
    env = {k: v for k, v in os.environ.items() if k != "QT_NO_GUI_THREADPOOL"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    done = subprocess.run([sys.executable, "-c", FILL_THEN_COUNT_POOL_THREADS.format(before=before)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    alpha, pooled = done.stdout.split()[-2:]
    return int(alpha), int(pooled)


@pytest.mark.skipif(not sys.platform.startswith("linux") or (os.cpu_count() or 1) < 2,
                    reason="threads are counted in /proc; Qt uses no pool on one core")
def test_qt_fills_stay_on_the_thread_that_paints():
    """A big fill after make_app starts none of Qt's pool threads, so the window's thread never
    waits for threads of Qt's own to get a core. The same fill with Qt's default (the
    application made and painted in before make_app) does start them: the count can fail."""
    assert _alpha_and_pool_threads(before="") == (128, 0)
    alpha, pooled = _alpha_and_pool_threads(before=QT_FIRST)
    assert alpha == 128 and pooled > 0
