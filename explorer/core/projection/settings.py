"""What a projection is asked for, typed: the method, the rows it is fitted
on, and the rest of its settings as one frozen value. No Qt here.

The enums are ``str`` enums, so a method read from a saved setting or typed
on the command line (``"tsne"``) converts with ``Method("tsne")`` and a
member still compares equal to its text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

__all__ = ["Method", "FitSet", "ProjectionSettings", "ProjectionKey"]


class Method(str, Enum):
    """How the vocabulary is laid out."""

    PCA = "pca"
    TSNE = "tsne"
    UMAP = "umap"
    AXES = "axes"  # the rows projected onto named directions (a → b)

    @property
    def is_layout(self) -> bool:
        """t-SNE or UMAP: a layout of a sample, optimised (and seeded), not a map of every row."""
        return self in (Method.TSNE, Method.UMAP)


class FitSet(str, Enum):
    """Which rows the projection is fitted on."""

    ALL = "all"  # the whole vocabulary (up to a size)
    SAMPLE = "sample"  # a seeded sample plus the tokens of interest
    CHOSEN = "chosen"  # the tokens of interest alone


@dataclass(frozen=True)
class ProjectionSettings:
    """Attributes
    ----------
    fit : FitSet
    sample_size : int
    method : Method
    axes : tuple of str
        The directions' texts for :attr:`Method.AXES` ("man → woman").
    dims : int
        Dimensions of a t-SNE or UMAP layout (a PCA always has its ten components).
    """

    fit: FitSet
    sample_size: int
    method: Method = Method.PCA
    axes: tuple[str, ...] = ()
    dims: int = 2

    def __post_init__(self):
        object.__setattr__(self, "fit", FitSet(self.fit))
        object.__setattr__(self, "method", Method(self.method))
        object.__setattr__(self, "sample_size", int(self.sample_size))
        object.__setattr__(self, "axes", tuple(self.axes))
        # a PCA has PC3 anyway: asking for 3D refits nothing
        object.__setattr__(self, "dims", int(self.dims) if self.method.is_layout else 2)


@dataclass(frozen=True)
class ProjectionKey:
    """Everything a projection result depends on: a result made for another
    key (another table, settings or tokens of interest) is stale."""

    table: int  # id() of the table
    settings: ProjectionSettings
    interest: tuple[int, ...] = field(default=())
    run: int = 0  # the user asked to compute it again (bypassing the layout cache)
