"""Tokens: tokenization with spans and words, what a piece stands for, search over
pieces, what a typed word names (one resolver for every caller) and its row,
why a token names no row, per-token metadata and groups. No Qt here.
"""
