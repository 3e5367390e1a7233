"""How faithful a layout is: scikit-learn's trustworthiness.

Trustworthiness (Venna & Kaski) penalises points that are close in the
layout but not among each other's nearest rows in the table; 1 means every
layout neighbour is a true neighbour. It is measured with the table's own
metric, cosine, and :data:`TRUST_NEIGHBORS` neighbours. scikit-learn builds
an n × n distance matrix, so layouts above :data:`TRUST_MAX_ROWS` points are
scored on a seeded subsample of that size (and the report says so).
"""

from __future__ import annotations

import numpy as np

__all__ = ["TRUST_NEIGHBORS", "TRUST_MAX_ROWS", "layout_trustworthiness"]

TRUST_NEIGHBORS = 5
TRUST_MAX_ROWS = 5000


def layout_trustworthiness(rows: np.ndarray, coords: np.ndarray, seed: int = 0,
                           max_rows: int = TRUST_MAX_ROWS, n_neighbors: int = TRUST_NEIGHBORS) -> tuple[float, int]:
    """Trustworthiness of ``coords`` (n, k) as a layout of ``rows`` (n, d),
    cosine distance, ``n_neighbors`` neighbours (5). Returns (score 0..1, rows scored)."""
    from sklearn.manifold import trustworthiness

    n = len(rows)
    k = min(n_neighbors, (n - 1) // 2)  # sklearn needs n_neighbors < n / 2
    if k < 1:
        return float("nan"), n
    if n > max_rows:
        pick = np.sort(np.random.default_rng(seed).choice(n, max_rows, replace=False))
        rows, coords, n = rows[pick], coords[pick], max_rows
    score = trustworthiness(np.asarray(rows, np.float64), np.asarray(coords, np.float64),
                            n_neighbors=k, metric="cosine")
    return float(score), n
