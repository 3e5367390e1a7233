"""Geometry of the rows: normalised rows, cosine and dot, nearest neighbours in
bounded memory, streamed whole-table scans, analogies. No Qt here.
"""
