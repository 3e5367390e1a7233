"""Widgets and helpers shared by several views: job bindings, plot titles, integer
axes, exports, tooltips, rasterisers, the status line, the token search box.
"""
