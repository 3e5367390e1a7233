"""Which of the projection's points to show: all of them, the tokens of one
metadata group, all groups but the hidden ones, the search hits, or an
isolated set (the selection, its neighbours and the hits). Vectorised masks
over the drawn ids. No Qt here."""

from __future__ import annotations

from dataclasses import dataclass, replace

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
    hidden : tuple of int
        Groups of the colouring not shown (the legend's entries clicked off), ascending.
    """

    group: int = -1
    hits_only: bool = False
    isolated: tuple[int, ...] | None = None
    hidden: tuple[int, ...] = ()

    @property
    def shows_all(self) -> bool:
        return self.group < 0 and not self.hits_only and self.isolated is None and not self.hidden

    def toggled(self, group: int, n_groups: int) -> PointFilter:
        """This filter with ``group`` hidden, or shown again (a legend entry clicked). When
        one group alone was shown, the others stay hidden and ``group`` is toggled among them."""
        hidden = set(self.hidden) if self.group < 0 else set(range(n_groups)) - {self.group}
        hidden ^= {int(group)}
        return replace(self, group=-1, hidden=tuple(sorted(hidden)))

    def alone(self, group: int) -> PointFilter:
        """Only ``group`` shown (a legend entry shift-clicked); every group again when it was already alone."""
        if self.group == group:
            return replace(self, group=-1, hidden=())
        return replace(self, group=int(group), hidden=())


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
    if flt.hidden:
        codes = groups.codes if groups is not None and len(groups.codes) == len(ids) else np.full(len(ids), -1)
        mask &= ~np.isin(codes, np.asarray(flt.hidden, np.int64))
    if flt.hits_only:
        mask &= np.isin(ids, hits) if hits is not None else False
    if flt.isolated is not None:
        mask &= np.isin(ids, np.asarray(flt.isolated, np.int64))
    return mask
