"""Widgets and helpers shared by several views: job bindings, plot titles, integer
axes, exports, tooltips, rasterisers, the status line, the token search box, and
tables whose rows Qt holds and paints, made as they come into view (rows_in_view).
"""
