"""What the plot's axes and title say, for any projection: principal
components with their share of variance, custom axes by name, or a t-SNE /
UMAP layout with its progress and trustworthiness (whose axes have no unit
or meaning of their own)."""

from __future__ import annotations

from explorer.core.projection.job import variance_shown

__all__ = ["axis_texts", "set_axis_texts"]


def axis_texts(result, axes: tuple[int, int], stopped: bool = False, shown: int | None = None) -> tuple[str, str, str]:
    """(bottom label, left label, title) for ``result`` drawn on components ``axes``;
    ``shown``: the points a filter shows (None: all of them)."""
    n = len(result.ids)
    count = f"{n:,} tokens" if shown is None else f"{shown:,} of {n:,} tokens"
    if not result.linear:
        name = result.name
        if result.done:
            trust = result.trustworthiness
            state = f"trustworthiness {trust:.3f}" if trust is not None else "done"
        elif stopped:
            state = f"stopped at {result.progress}"
        else:
            state = result.progress if result.n_iter else "running"
        return (f"{name} 1 (no unit: only neighbourhoods count)", f"{name} 2",
                f"{count} · {name} layout · {state}")
    x, y = axes
    ev = result.explained
    share = [float(ev[k]) if k < len(ev) else 0.0 for k in (x, y)]
    return (f"{result.axis_name(x)}  ({share[0]:.1%} of variance)",
            f"{result.axis_name(y)}  ({share[1]:.1%} of variance)",
            f"{count} · {variance_shown(ev, x, y):.1%} of the variance" + (" shown" if shown is None else ""))


def set_axis_texts(plot_item, new: tuple[str, str, str], color) -> None:
    """Set the (bottom label, left label, title) of ``plot_item`` that differ from what it shows.

    Only what changed: pyqtgraph lays out and draws an axis again on each
    ``setLabel``, even to the same text, and a filter changes only the title's count.
    """
    if new[0] != plot_item.getAxis("bottom").labelText:
        plot_item.setLabel("bottom", new[0])
    if new[1] != plot_item.getAxis("left").labelText:
        plot_item.setLabel("left", new[1])
    if new[2] != plot_item.titleLabel.text:
        plot_item.setTitle(new[2], color=color, size="10pt")
