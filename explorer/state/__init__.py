"""AppState, the single source of truth, and the requests it answers (on demand,
projection, training). QtCore only.
"""
