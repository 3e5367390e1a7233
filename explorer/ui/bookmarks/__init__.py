"""Bookmarks in the window: the Bookmarks menu and its controller."""

from explorer.ui.bookmarks.controller import BookmarkController

__all__ = ["BookmarkController"]
