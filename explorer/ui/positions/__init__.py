"""The Positions view, one widget per panel:

==================  ==========================================================
``view``            :class:`PositionsView`: binds the state's computations
``summary``         the headline: what this model does with order
``text_page``       the input layer for the typed text: ``input_table`` (norms
                    per part), two ``image_panel`` heatmaps (token rows,
                    input vectors) and ``parts_plot`` (the selected token)
``table_page``      the position table, its cosines (``image_panel``) and its
                    PCA path (``path_panel``), or the sinusoidal table
``rotary_panel``    rotary angles against position
``plot_frame``      the themed plot every panel starts from
==================  ==========================================================
"""

from explorer.ui.positions.view import PositionsView

__all__ = ["PositionsView"]
