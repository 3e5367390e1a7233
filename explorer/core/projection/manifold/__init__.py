"""Non-linear layouts of the embedding table: t-SNE (openTSNE, stepped so
the points move live) and UMAP (umap-learn), scored by trustworthiness.
No Qt here."""

from explorer.core.projection.manifold.job import (
                  DEFAULT_LAYOUT_SAMPLE,
                  MANIFOLD_METHODS,
                  MAX_LAYOUT_ROWS,
                  MIN_LAYOUT_ROWS,
                  LayoutError,
                  manifold_job,
                  run_manifold,
)
from explorer.core.projection.manifold.knn import NeighbourGraph, knn_graph_job
from explorer.core.projection.manifold.layout_cache import LayoutCache
from explorer.core.projection.manifold.quality import TRUST_NEIGHBORS, layout_trustworthiness
from explorer.core.projection.manifold.result import METHOD_NAMES, PLACE_NEIGHBORS, ManifoldResult
from explorer.core.projection.manifold.umap_layout import umap_warm_job, warm_up_umap

__all__ = ["DEFAULT_LAYOUT_SAMPLE", "MANIFOLD_METHODS", "MAX_LAYOUT_ROWS", "MIN_LAYOUT_ROWS", "LayoutError",
           "manifold_job", "run_manifold", "TRUST_NEIGHBORS", "layout_trustworthiness", "METHOD_NAMES",
           "PLACE_NEIGHBORS", "ManifoldResult", "umap_warm_job", "warm_up_umap",
           "NeighbourGraph", "knn_graph_job", "LayoutCache"]
