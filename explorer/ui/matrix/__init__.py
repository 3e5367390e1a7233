"""The matrix view: the whole table and a band of rows around the selection."""
