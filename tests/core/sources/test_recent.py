"""The recent models' file: newest first, at most MAX_RECENT, and never seen half written."""

from __future__ import annotations

import threading

from explorer.core.sources import recent


def test_a_spec_goes_first_once_and_the_list_keeps_its_length(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_CONFIG_DIR", str(tmp_path))
    for k in range(recent.MAX_RECENT + 3):
        recent.add(f"random:{k + 1}x2")
    recent.add("random:5x2")
    got = recent.load()
    assert got[0] == "random:5x2" and got.count("random:5x2") == 1 and len(got) == recent.MAX_RECENT
    assert recent.with_first(got, "random:9x9") == ["random:9x9"] + got[:-1]
    assert list(tmp_path.iterdir()) == [tmp_path / "recent.json"]  # no temporary file left behind


def test_a_reader_never_sees_the_file_half_written(tmp_path, monkeypatch):
    """The window writes from a thread while the picker's listing (or another window) reads:
    a file truncated and then written gave a reader an empty list now and then."""
    monkeypatch.setenv("EXPLORER_CONFIG_DIR", str(tmp_path))
    recent.add("random:1x2")
    done = threading.Event()

    def write():
        for k in range(400):
            recent.add(f"random:{k % 7 + 1}x2")
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    empty = 0
    while not done.is_set():
        empty += recent.load() == []
    writer.join()
    assert empty == 0
