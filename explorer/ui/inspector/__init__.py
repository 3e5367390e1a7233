"""The row inspector: the selected row's values, offsets and neighbours."""
