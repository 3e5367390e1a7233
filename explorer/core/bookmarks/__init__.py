"""Bookmarks: a named view of the explorer (model, text, selected token, tab
and page) that can be restored, and exported or imported as a small JSON file
so that a teacher can hand a class the exact view. No Qt here.

The file::

    {"format": "explorer-bookmarks", "version": 1,
     "bookmarks": [{"name": "...", "model": "minilm", "text": "...", "position": 2, "view": "cost:why"}]}
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from explorer.core.errors import ExplorerError

__all__ = ["Bookmark", "BookmarkError", "FORMAT", "dumps", "loads", "read_file", "write_file"]

FORMAT, VERSION = "explorer-bookmarks", 1
#: longest text a bookmark keeps (the text box's own limit is far above a lesson's sentence)
MAX_TEXT = 20_000


class BookmarkError(ExplorerError, ValueError):
    """A bookmark file that cannot be read; the message says what is wrong."""


@dataclass(frozen=True)
class Bookmark:
    """A view to come back to.

    Attributes
    ----------
    name : str
    model : str
        The spec the model was opened with ("minilm", a folder, "random:50257x768").
    text : str
    position : int
        The selected token's position in the text (-1: none).
    view : str
        The tab, with its page when it has pages ("cost:why", "lookup:backward").
    """

    name: str
    model: str
    text: str = ""
    position: int = -1
    view: str = "matrix"

    @classmethod
    def from_json(cls, data) -> Bookmark:
        if not isinstance(data, dict):
            raise BookmarkError("each bookmark must be a JSON object")
        name, model = data.get("name"), data.get("model")
        if not isinstance(name, str) or not name.strip():
            raise BookmarkError("a bookmark has no name")
        if not isinstance(model, str) or not model.strip():
            raise BookmarkError(f"bookmark “{name}” names no model")
        text, position, view = data.get("text", ""), data.get("position", -1), data.get("view", "matrix")
        if not isinstance(text, str) or len(text) > MAX_TEXT:
            raise BookmarkError(f"bookmark “{name}”: its text must be a string of at most {MAX_TEXT:,} characters")
        if not isinstance(position, int) or isinstance(position, bool) or position < -1:
            raise BookmarkError(f"bookmark “{name}”: position must be a whole number from -1")
        if not isinstance(view, str):
            raise BookmarkError(f"bookmark “{name}”: view must be a string such as \"cost:why\"")
        return cls(name.strip(), model.strip(), text, position, view.strip().lower() or "matrix")


def dumps(bookmarks) -> str:
    """The JSON file's text for ``bookmarks`` (a sequence of Bookmark)."""
    return json.dumps({"format": FORMAT, "version": VERSION, "bookmarks": [asdict(b) for b in bookmarks]},
                      ensure_ascii=False, indent=1)


def loads(text: str) -> list[Bookmark]:
    """The bookmarks of a file's text.

    Raises
    ------
    BookmarkError
        Not JSON, not a bookmark file, or a bookmark without a name or model.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BookmarkError(f"the file is not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BookmarkError(f"the file is not an explorer bookmark file (its \"format\" must be \"{FORMAT}\")")
    items = data.get("bookmarks")
    if not isinstance(items, list):
        raise BookmarkError("the file has no list of \"bookmarks\"")
    return [Bookmark.from_json(item) for item in items]


def read_file(path) -> list[Bookmark]:
    """Bookmarks from a file (BookmarkError when it cannot be read or is not one)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BookmarkError(f"cannot read {path}: {exc}") from None
    return loads(text)


def write_file(path, bookmarks) -> None:
    """Write ``bookmarks`` to ``path`` as JSON (BookmarkError when it cannot be written)."""
    try:
        Path(path).write_text(dumps(bookmarks), encoding="utf-8")
    except OSError as exc:
        raise BookmarkError(f"cannot write {path}: {exc}") from None
