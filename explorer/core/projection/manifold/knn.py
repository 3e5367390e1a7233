"""The rows' nearest neighbours by cosine: one graph for UMAP and t-SNE.

Both layouts start from the same thing, each row's nearest rows. umap-learn
would find them with NN-descent (approximate, and compiled on first use),
openTSNE with Annoy trees or a ball tree; computed twice, approximately,
and slower than the exact answer on a small machine: the exact graph is a
blocked product of the unit rows with themselves (about 0.7 TFLOP for the
30,522 × 384 rows of MiniLM) and a top-k per block, which torch runs on
every core in seconds. So the graph is computed once, exactly, and handed
to both (UMAP's ``precomputed_knn``, openTSNE's ``PrecomputedNeighbors``).

The graph is kept in memory for the session, keyed by the rows' content, so
a second layout of the same rows (another method, seed or dimension) does
not search again.

From :data:`BF16_FROM` rows, on a CPU that multiplies bfloat16 natively
(AVX512-BF16 or AMX), the products are taken in bfloat16, and every row's
neighbours are chosen from them with a margin for their rounding and ordered
by float32 products (:mod:`~explorer.core.projection.manifold.neighbour_choice`):
3.4 s instead of 8.7 s for MiniLM's 30,522 rows here, with all but 7 of its
2.78 million exact neighbours found (``bench --layouts`` measures the
recall). The graph says it is not exact: a neighbour whose bfloat16 product
fell more than the margin below the others' would be missed.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["GRAPH_NEIGHBORS", "BF16_FROM", "NeighbourGraph", "knn_graph_job", "native_bf16", "rows_digest",
           "cached_graph", "forget_graphs"]

#: neighbours kept for every row: t-SNE's perplexity of 30 needs 90 (3 × perplexity), UMAP takes the first 15
GRAPH_NEIGHBORS = 90
#: rows from which the products are taken in bfloat16 where the CPU does that natively
BF16_FROM = 10_000
#: bytes of one block of similarities (rows of the block × all rows × the element's size)
_BLOCK_BYTES = 32 << 20
#: graphs kept for the session (about 12 bytes × 90 per row each)
_KEEP = 3
_graphs: OrderedDict[str, NeighbourGraph] = OrderedDict()
_lock = threading.Lock()  # layouts run in workers


@dataclass(frozen=True, eq=False)
class NeighbourGraph:
    """Every row's ``k`` nearest rows by cosine, the row itself first.

    Attributes
    ----------
    indices : ndarray (n, k) int64
        Column 0 is the row itself; then its neighbours, nearest first.
    distances : ndarray (n, k) float32
        Cosine distances (1 − cosine similarity, at least 0) to them.
    exact : bool
        True: every row's true nearest rows (ties in any order).
    """

    indices: np.ndarray
    distances: np.ndarray
    exact: bool = True

    @property
    def k(self) -> int:
        return int(self.indices.shape[1])

    def __len__(self) -> int:
        return int(self.indices.shape[0])

    def for_umap(self, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
        """(indices, distances) with the row itself first, ``n_neighbors`` columns."""
        return self.indices[:, :n_neighbors], self.distances[:, :n_neighbors]

    def for_tsne(self, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
        """(indices, distances) without the row itself, ``n_neighbors`` columns (openTSNE's convention)."""
        return (np.ascontiguousarray(self.indices[:, 1:n_neighbors + 1]),
                np.ascontiguousarray(self.distances[:, 1:n_neighbors + 1], dtype=np.float64))


def rows_digest(rows: np.ndarray) -> str:
    """A hash of the rows' values and shape: equal for equal rows, different when any value differs."""
    rows = np.ascontiguousarray(rows)
    h = hashlib.blake2b(digest_size=20)
    h.update(f"{rows.shape}|{rows.dtype.str}|".encode())
    h.update(memoryview(rows).cast("B"))
    return h.hexdigest()


def knn_graph_job(unit_rows: np.ndarray, k: int = GRAPH_NEIGHBORS, digest: str | None = None,
                  bf16: bool | None = None) -> Iterator:
    """The cosine k-nearest-neighbour graph of ``unit_rows`` (n, d) float32
    (rows of length 1, or 0 for rows that were zero): exact, or chosen by
    bfloat16 products with ``bf16`` (None: from :data:`BF16_FROM` rows on a CPU
    that multiplies bfloat16 natively).

    Yields ``(fraction, message)`` after each block; returns a :class:`NeighbourGraph`
    with ``min(k + 1, n)`` columns (the row itself and ``k`` neighbours). With
    ``digest`` (see :func:`rows_digest`) a graph of the same rows found earlier
    in the session is returned at once, and a new one is kept.
    """
    if digest is not None:
        graph = cached_graph(digest, k)
        if graph is not None:
            return graph
    import torch

    n = len(unit_rows)
    cols = min(k + 1, n)
    bf16 = (n >= BF16_FROM and native_bf16()) if bf16 is None else bool(bf16)
    rows = np.ascontiguousarray(unit_rows, dtype=np.float32)
    x = torch.from_numpy(rows)
    xs = x.bfloat16() if bf16 else x
    if bf16:
        from explorer.core.projection.manifold.neighbour_choice import choose_neighbours
    # blocks of a few hundred rows (a multiple of 64, which the matrix kernels tile evenly), written into one
    # buffer, keep the products in cache and out of the allocator
    block = max(1, min(n, _BLOCK_BYTES // max(1, xs.element_size() * n)))
    block = block // 64 * 64 if block >= 64 else block
    others = xs.T.contiguous()
    products = torch.empty((block, n), dtype=xs.dtype)
    indices = np.empty((n, cols), np.int64)
    sims = np.empty((n, cols), np.float32)
    how = "cosine, bfloat16 products" if bf16 else "cosine, exact"
    for start in range(0, n, block):
        stop = min(n, start + block)
        # not held across the yield: torch's grad mode belongs to the thread, and a job closed from
        # another thread (a cancelled one, from the window's) left its worker in inference mode for good
        with torch.inference_mode():
            s = products[:stop - start]
            torch.matmul(xs[start:stop], others, out=s)
            # the row itself first, even where another row is identical to it
            s[torch.arange(stop - start), torch.arange(start, stop)] = 3.0
            if bf16:  # chosen from the bfloat16 products, ordered by float32 ones
                indices[start:stop], sims[start:stop] = choose_neighbours(s.view(torch.int16).numpy(), rows,
                                                                          start, cols)
            else:
                v, i = torch.topk(s, cols, dim=1)
                indices[start:stop] = i.numpy()
                sims[start:stop] = v.numpy()
        yield stop / n, f"Finding each of the {n:,} rows' nearest neighbours ({how})…"
    sims[:, 0] = (np.linalg.norm(unit_rows, axis=1) > 0).astype(np.float32)  # a unit row's cosine with itself
    graph = NeighbourGraph(indices, np.clip(1.0 - sims, 0.0, 2.0).astype(np.float32), exact=not bf16)
    if digest is not None:
        _keep(digest, graph)
    return graph


def native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX), as torch sees it."""
    import torch

    probes = (getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"))
    try:
        return any(bool(probe()) for probe in probes if probe is not None)
    except Exception:  # noqa: BLE001 - a private probe of torch that may change: then float32
        return False


def cached_graph(digest: str, k: int = GRAPH_NEIGHBORS) -> NeighbourGraph | None:
    """The session's graph of the rows with this digest, if it has at least ``k`` neighbours (or all rows)."""
    with _lock:
        graph = _graphs.get(digest)
        if graph is None or (graph.k < k + 1 and graph.k < len(graph)):
            return None
        _graphs.move_to_end(digest)
        return graph


def forget_graphs() -> None:
    """Drop the session's graphs (the benchmark's cold runs)."""
    with _lock:
        _graphs.clear()


def _keep(digest: str, graph: NeighbourGraph) -> None:
    with _lock:
        _graphs[digest] = graph
        _graphs.move_to_end(digest)
        while len(_graphs) > _KEEP:
            _graphs.popitem(last=False)
