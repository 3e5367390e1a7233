"""The matrix view's numbers: the overview of the whole table, a band of rows, one
row's facts, axis labels and cell formats. No Qt here.
"""
