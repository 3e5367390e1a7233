"""Where the repository is, for tests that run a command or read a file of it."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
