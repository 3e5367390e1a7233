"""The Health view (issue 13): which rows did training leave behind?

==================  ==========================================================
``view``            :class:`HealthView`: the status row, the panels, the state
``summary``         the verdict, the lesson and the counts, in words
``vocab_plot``      every row as a point: id against norm or score
``score_histogram`` the score over all rows and the reference rows
``candidates``      the ranked table of under-trained candidates
==================  ==========================================================
"""

from explorer.ui.health.view import HealthView

__all__ = ["HealthView"]
