"""The Positions view, one widget per panel:

==================  ==========================================================
``view``            :class:`PositionsView`: binds the state's computations
``summary``         the headline: what this model does with order
``text_page``       the input layer for the typed text (``input_table`` +
                    two ``image_panel`` heatmaps)
``table_page``      the position table, its cosines and its PCA path
``rotary_panel``    rotary angles against position
==================  ==========================================================
"""

from .view import PositionsView

__all__ = ["PositionsView"]
