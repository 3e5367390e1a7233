"""Which of the projection's points to show: all of them, the tokens of one
metadata group, the search hits, or an isolated set (the selection, its
neighbours and the hits). Vectorised masks over the drawn ids. No Qt here."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.tokens.groups import TokenGroups

__all__ = ["PointFilter", "SHOW_ALL", "visible_mask"]


@dataclass(frozen=True)
class PointFilter:
    """What the user chose to show.

    Attributes
    ----------
    group : int
        Show only the tokens of this group of the colouring (-1: any group).
    hits_only : bool
        Show only the search hits.
    isolated : tuple of int or None
        Show only these token ids (the isolated selection); None: no isolation.
    """

    group: int = -1
    hits_only: bool = False
    isolated: tuple[int, ...] | None = None

    @property
    def shows_all(self) -> bool:
        return self.group < 0 and not self.hits_only and self.isolated is None


SHOW_ALL = PointFilter()


def visible_mask(ids, flt: PointFilter, groups: TokenGroups | None = None,
                 hits: np.ndarray | None = None) -> np.ndarray:
    """(n,) bool: which of the tokens ``ids`` (n,) to draw under ``flt``.

    ``groups`` are the colouring's groups of the same ids (a group filter
    needs them: without, or with fewer groups, it shows nothing); ``hits``
    is the ascending array of the search's hit ids (None: no search).
    """
    ids = np.asarray(ids, np.int64)
    mask = np.ones(len(ids), bool)
    if flt.group >= 0:
        mask &= groups.codes == flt.group if groups is not None and len(groups.codes) == len(ids) else False
    if flt.hits_only:
        mask &= np.isin(ids, hits) if hits is not None else False
    if flt.isolated is not None:
        mask &= np.isin(ids, np.asarray(flt.isolated, np.int64))
    return mask
