"""Per-step training metrics accumulated into arrays for live charts.

:class:`TrainingHistory` takes the :class:`~explorer.core.training.StepMetrics`
of a run one by one (O(1) amortised per step, bounded memory for the raster)
and hands out the arrays the training view draws: loss, rows with gradient
and rows changed as fractions of V, a raster of recent steps x rows sorted by
token frequency, updates per row and drift from the initial table per row.
:class:`AlignedPCA` re-projects the table on a basis refitted only now and
then, with component signs kept aligned between fits so clusters do not
flip. No Qt here.
"""

from __future__ import annotations

import io

import numpy as np

from .geometry import pca_project

__all__ = ["TrainingHistory", "AlignedPCA", "class_silhouette", "binned", "moving_average",
           "RASTER_NONE", "RASTER_CHANGED", "RASTER_GRAD"]

#: raster cell values: the row neither had gradient nor changed / changed
#: without gradient (momentum, weight decay) / had gradient
RASTER_NONE, RASTER_CHANGED, RASTER_GRAD = 0, 1, 2

_SERIES = ("step", "loss", "batch_distinct_ids", "grad_rows", "input_grad_rows", "changed_rows")


class TrainingHistory:
    """Everything the live charts need, accumulated step by step.

    Parameters
    ----------
    counts : ndarray (V,) int
        Occurrences of each token id in the corpus (orders the raster rows
        and is the x axis of the per-row charts).
    init_table : ndarray (V, d) float
        The table before the first step (drift is measured from it).
    labels : ndarray (V,) int, optional
        Class of each row (-1: none), for the PCA colours and the silhouette.
    raster_steps : int
        The raster keeps only the last this many steps (memory V x raster_steps bytes).
    """

    def __init__(self, counts: np.ndarray, init_table: np.ndarray, labels: np.ndarray | None = None,
                 raster_steps: int = 400):
        counts = np.asarray(counts, dtype=np.int64).reshape(-1)
        init = np.asarray(init_table, dtype=np.float32)
        if init.ndim != 2 or init.shape[0] != counts.shape[0]:
            raise ValueError(f"init_table must have one row per count: {init.shape} vs {counts.shape}")
        self.vocab_size = int(counts.shape[0])
        self.counts = counts
        self.labels = (np.full(self.vocab_size, -1, np.int64) if labels is None
                       else np.asarray(labels, np.int64).reshape(-1))
        #: row ids from the most to the least frequent (stable: ties keep id order)
        self.order = np.argsort(-counts, kind="stable")
        #: position of each id in ``order``
        self.rank = np.empty(self.vocab_size, np.int64)
        self.rank[self.order] = np.arange(self.vocab_size)
        self.init = init.copy()
        self.latest = init.copy()
        self.latest_step = 0
        self.raster_steps = max(1, int(raster_steps))
        self._raster = np.zeros((self.raster_steps, self.vocab_size), np.uint8)
        self._raster_step = np.zeros(self.raster_steps, np.int64)
        self._raster_n = 0  # steps written so far (the slot is n % raster_steps)
        self.grad_count = np.zeros(self.vocab_size, np.int64)
        self.change_count = np.zeros(self.vocab_size, np.int64)
        self._cap = 1024
        self._data = {k: np.zeros(self._cap, np.float64) for k in _SERIES}
        self.n = 0

    # -- in ---------------------------------------------------------------------------------
    def add(self, m) -> None:
        """Record one StepMetrics (its arrays are read, not kept)."""
        self.extend([m])

    def extend(self, metrics) -> None:
        """Record a batch of StepMetrics in step order (vectorised over the batch)."""
        metrics = list(metrics)
        k = len(metrics)
        if k == 0:
            return
        if self.n + k > self._cap:
            while self.n + k > self._cap:
                self._cap *= 2
            for name, a in self._data.items():
                b = np.zeros(self._cap, np.float64)
                b[: self.n] = a[: self.n]
                self._data[name] = b
        for name in _SERIES:
            self._data[name][self.n: self.n + k] = [getattr(m, name) for m in metrics]
        self.n += k
        v = self.vocab_size
        grads = [self._ids(m.grad_ids) for m in metrics]
        changes = [self._ids(m.changed_ids) for m in metrics]
        # ids are unique within a step, so counting them over the batch counts steps
        self.grad_count += np.bincount(np.concatenate(grads), minlength=v)[:v]
        self.change_count += np.bincount(np.concatenate(changes), minlength=v)[:v]
        start = max(0, k - self.raster_steps)  # older steps of a long batch would be overwritten anyway
        self._raster_n += start
        for m, grad, changed in zip(metrics[start:], grads[start:], changes[start:]):
            slot = self._raster_n % self.raster_steps
            row = self._raster[slot]
            row[:] = RASTER_NONE
            row[self.rank[changed]] = RASTER_CHANGED
            row[self.rank[grad]] = RASTER_GRAD
            self._raster_step[slot] = m.step
            self._raster_n += 1
        for m in reversed(metrics):
            if m.snapshot is not None and m.snapshot.shape == self.init.shape:
                self.latest = np.array(m.snapshot, dtype=np.float32, copy=True)
                self.latest_step = m.step
                break

    def _ids(self, ids) -> np.ndarray:
        a = np.asarray(ids if ids is not None else (), np.int64).reshape(-1)
        return a[(a >= 0) & (a < self.vocab_size)]

    # -- out --------------------------------------------------------------------------------
    @property
    def last_step(self) -> int:
        return int(self._data["step"][self.n - 1]) if self.n else 0

    def series(self, name: str) -> np.ndarray:
        """The full per-step series ``name`` (one of step, loss, batch_distinct_ids,
        grad_rows, input_grad_rows, changed_rows), shape (n,) float64, a view."""
        return self._data[name][: self.n]

    def fraction(self, name: str) -> np.ndarray:
        """A row-count series as a percentage of V: 100 * rows / V, shape (n,)."""
        return 100.0 * self.series(name) / self.vocab_size

    def raster(self) -> tuple[np.ndarray, np.ndarray]:
        """The recent steps x rows raster.

        Returns
        -------
        image : ndarray (V, n) uint8
            Row r is the r-th most frequent token (``order[r]``); column j the
            j-th of the last n <= raster_steps steps, oldest first. Values are
            RASTER_NONE, RASTER_CHANGED or RASTER_GRAD.
        steps : ndarray (n,) int64
            The step number of each column.
        """
        n = min(self._raster_n, self.raster_steps)
        if n < self.raster_steps:
            idx = np.arange(n)
        else:
            start = self._raster_n % self.raster_steps
            idx = (np.arange(n) + start) % self.raster_steps
        return np.ascontiguousarray(self._raster[idx].T), self._raster_step[idx].copy()

    def drift(self) -> np.ndarray:
        """Euclidean distance of each row from its initial value, shape (V,) float64
        (as of the latest snapshot, ``latest_step``); non-finite rows give inf."""
        diff = self.latest.astype(np.float64) - self.init
        out = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        out[~np.isfinite(out)] = np.inf
        return out

    def to_csv(self) -> str:
        """The per-step time series as CSV text (one line per step)."""
        buf = io.StringIO()
        buf.write("step,loss,vocab_size,batch_distinct_ids,grad_rows,input_grad_rows,changed_rows,"
                  "grad_rows_pct,changed_rows_pct\n")
        d = {k: self.series(k) for k in _SERIES}
        gp, cp = self.fraction("grad_rows"), self.fraction("changed_rows")
        for i in range(self.n):
            buf.write(f"{int(d['step'][i])},{d['loss'][i]:.6g},{self.vocab_size},{int(d['batch_distinct_ids'][i])},"
                      f"{int(d['grad_rows'][i])},{int(d['input_grad_rows'][i])},{int(d['changed_rows'][i])},"
                      f"{gp[i]:.4f},{cp[i]:.4f}\n")
        return buf.getvalue()

    def rows_csv(self, names: list[str] | None = None) -> str:
        """Per-row CSV: id, name, corpus count, steps with gradient, steps changed, drift."""
        drift = self.drift()
        buf = io.StringIO()
        buf.write("id,name,corpus_count,steps_with_gradient,steps_changed,drift_from_init\n")
        for i in range(self.vocab_size):
            name = names[i] if names is not None and i < len(names) else ""
            name = '"' + name.replace('"', '""') + '"' if ("," in name or '"' in name) else name
            buf.write(f"{i},{name},{self.counts[i]},{self.grad_count[i]},{self.change_count[i]},{drift[i]:.6g}\n")
        return buf.getvalue()


def binned(x: np.ndarray, max_points: int) -> tuple[np.ndarray, int]:
    """Means of consecutive bins so that at most ``max_points`` remain.

    Returns (values, bin size); the last bin may be shorter. Bin size 1
    returns ``x`` itself.
    """
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    if n <= max_points or max_points < 1:
        return x, 1
    size = int(np.ceil(n / max_points))
    k = n // size * size
    head = x[:k].reshape(-1, size).mean(axis=1)
    if k < n:
        head = np.append(head, x[k:].mean())
    return head, size


def moving_average(x: np.ndarray, window: int) -> np.ndarray:
    """Trailing mean over up to ``window`` values, shape (n,) (shorter at the start)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x.copy()
    window = max(1, int(window))
    c = np.concatenate([[0.0], np.cumsum(x)])
    idx = np.arange(1, x.size + 1)
    lo = np.maximum(0, idx - window)
    return (c[idx] - c[lo]) / (idx - lo)


class AlignedPCA:
    """A 2-D PCA basis refitted now and then, its signs aligned between fits.

    A component's sign is arbitrary; refitting a slowly changing table can
    flip it and mirror the whole picture. After each fit, a component whose
    dot product with the previous fit's is negative is negated.
    """

    def __init__(self, n_components: int = 2):
        self.n_components = n_components
        self.components: np.ndarray | None = None  # (k, d) float32
        self.mean: np.ndarray | None = None  # (d,) float32
        self.explained: np.ndarray | None = None
        self.fitted_step = -1

    def fit(self, table: np.ndarray, step: int = 0) -> "AlignedPCA":
        """Fit the basis on ``table`` (V, d); non-finite values count as 0."""
        proj = pca_project(table, n_components=self.n_components)
        comps = proj.components.astype(np.float32)
        if self.components is not None and self.components.shape == comps.shape:
            signs = np.sign(np.einsum("kd,kd->k", comps, self.components))
            signs[signs == 0] = 1
            comps *= signs[:, None]
        self.components, self.mean, self.explained = comps, proj.mean, proj.explained
        self.fitted_step = step
        return self

    def transform(self, table: np.ndarray) -> np.ndarray:
        """Coordinates of the rows of ``table`` (V, d) on the basis, (V, k) float32."""
        if self.components is None:
            raise ValueError("fit the basis first")
        x = np.asarray(table, np.float32)
        x = np.where(np.isfinite(x), x, 0.0)
        return ((x - self.mean) @ self.components.T).astype(np.float32)


def class_silhouette(table: np.ndarray, labels: np.ndarray, max_rows: int = 2000, seed: int = 0) -> float | None:
    """Mean silhouette (cosine distance) of the rows with a class (label >= 0).

    The same number as ``sklearn.metrics.silhouette_score(x, y, metric="cosine")``,
    in numpy (no sklearn import on the GUI thread). Above ``max_rows``
    labelled rows a seeded sample is used. None when undefined (fewer than
    two classes, a class-less table, zero or non-finite rows).
    """
    labels = np.asarray(labels).reshape(-1)
    keep = np.nonzero(labels >= 0)[0]
    if keep.size > max_rows:
        keep = np.sort(np.random.default_rng(seed).choice(keep, max_rows, replace=False))
    x = np.asarray(table, np.float64)[keep]
    y = labels[keep]
    classes, y = np.unique(y, return_inverse=True)
    if len(classes) < 2 or len(y) <= len(classes) or not np.isfinite(x).all():
        return None
    norms = np.linalg.norm(x, axis=1)
    if (norms == 0).any():
        return None
    u = x / norms[:, None]
    dist = np.clip(1.0 - u @ u.T, 0.0, None)
    np.fill_diagonal(dist, 0.0)
    onehot = np.zeros((len(y), len(classes)))
    onehot[np.arange(len(y)), y] = 1.0
    sums = dist @ onehot  # (n, k): summed distance to each class
    sizes = onehot.sum(axis=0)
    own = sizes[y] - 1
    a = np.where(own > 0, sums[np.arange(len(y)), y] / np.maximum(own, 1), 0.0)
    mean_other = sums / sizes[None, :]
    mean_other[np.arange(len(y)), y] = np.inf
    b = mean_other.min(axis=1)
    s = np.where(own > 0, (b - a) / np.maximum(np.maximum(a, b), 1e-300), 0.0)
    return float(s.mean())
