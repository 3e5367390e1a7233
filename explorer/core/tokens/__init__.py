"""Tokens: tokenization with spans and words, what a piece stands for, search over
pieces, a typed word's row, why a token names no row, per-token metadata and
groups. No Qt here.
"""
