"""The guided tour (Help → Tour, ``--tour N``): a panel that walks through the app's lessons.

The steps and their words are in :mod:`explorer.core.tour.steps`; here the
controller opens each step's model, text, token and view, the panel shows
its words with Back / Next / Close, and the highlight rings the widget
that matters.
"""

from explorer.ui.tour.controller import TourController
from explorer.ui.tour.highlight import Highlight
from explorer.ui.tour.panel import TourPanel

__all__ = ["TourController", "TourPanel", "Highlight"]
