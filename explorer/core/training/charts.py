"""Per-step training metrics accumulated into arrays for live charts.

:class:`TrainingHistory` takes the :class:`~explorer.core.training.model.StepMetrics`
of a run batch by batch (O(1) amortised per step, bounded memory for the
raster) and the latest :class:`~explorer.core.training.frames.TableFrame`,
and hands out the arrays the training view draws: loss, rows with gradient
and rows changed as fractions of V, a raster of recent steps x rows sorted
by token frequency, updates per row and drift from the initial table per
row. No Qt here.
"""

from __future__ import annotations

import io

import numpy as np

from explorer.core.training.frames import TableFrame

__all__ = ["TrainingHistory", "binned", "moving_average", "RASTER_NONE", "RASTER_CHANGED", "RASTER_GRAD"]

#: raster cell values: the row neither had gradient nor changed / changed
#: without gradient (momentum, weight decay) / had gradient
RASTER_NONE, RASTER_CHANGED, RASTER_GRAD = 0, 1, 2

_SERIES = ("step", "loss", "batch_distinct_ids", "grad_rows", "input_grad_rows", "changed_rows", "decay_only_rows")


class TrainingHistory:
    """Everything the live charts need, accumulated step by step.

    Parameters
    ----------
    counts : ndarray (V,) int
        Occurrences of each token id in the corpus (orders the raster rows
        and is the x axis of the per-row charts).
    raster_steps : int
        The raster keeps only the last this many steps (memory V x raster_steps bytes).

    Attributes
    ----------
    frame : TableFrame or None
        The latest picture of the table itself (PCA, drift, silhouette).
    version : int
        Grows with every change: a chart redraws only when it moved.
    """

    def __init__(self, counts: np.ndarray, raster_steps: int = 400):
        counts = np.asarray(counts, dtype=np.int64).reshape(-1)
        self.vocab_size = int(counts.shape[0])
        self.counts = counts
        #: row ids from the most to the least frequent (stable: ties keep id order)
        self.order = np.argsort(-counts, kind="stable")
        #: position of each id in ``order``
        self.rank = np.empty(self.vocab_size, np.int64)
        self.rank[self.order] = np.arange(self.vocab_size)
        self.raster_steps = max(1, int(raster_steps))
        self._raster = np.zeros((self.raster_steps, self.vocab_size), np.uint8)
        self._raster_step = np.zeros(self.raster_steps, np.int64)
        self._raster_n = 0  # steps written so far (the slot is n % raster_steps)
        self.grad_count = np.zeros(self.vocab_size, np.int64)
        self.change_count = np.zeros(self.vocab_size, np.int64)
        self._cap = 1024
        self._data = {k: np.zeros(self._cap, np.float64) for k in _SERIES}
        self.n = 0
        self.frame: TableFrame | None = None
        self.version = 0

    # -- in ---------------------------------------------------------------------------------
    def add(self, m) -> None:
        """Record one StepMetrics (its arrays are read, not kept)."""
        self.extend([m])

    def extend(self, metrics) -> None:
        """Record a batch of StepMetrics in step order (vectorised over the batch:
        this runs on the GUI thread while the worker trains)."""
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
        values = np.array([(m.step, m.loss, m.batch_distinct_ids, m.grad_rows, m.input_grad_rows, m.changed_rows,
                            m.decay_only_rows) for m in metrics], np.float64)  # the columns of _SERIES
        for j, name in enumerate(_SERIES):
            self._data[name][self.n: self.n + k] = values[:, j]
        self.n += k
        grad_step, grad_ids = self._flat_ids([m.grad_ids for m in metrics])
        changed_step, changed_ids = self._flat_ids([m.changed_ids for m in metrics])
        # ids are unique within a step, so counting them over the batch counts steps
        v = self.vocab_size
        self.grad_count += np.bincount(grad_ids, minlength=v)[:v]
        self.change_count += np.bincount(changed_ids, minlength=v)[:v]
        # the raster: only the batch's last raster_steps steps (older ones would be overwritten)
        start = max(0, k - self.raster_steps)
        slots = (self._raster_n + np.arange(k)) % self.raster_steps
        self._raster[slots[start:]] = RASTER_NONE
        keep = changed_step >= start
        self._raster[slots[changed_step[keep]], self.rank[changed_ids[keep]]] = RASTER_CHANGED
        keep = grad_step >= start
        self._raster[slots[grad_step[keep]], self.rank[grad_ids[keep]]] = RASTER_GRAD
        self._raster_step[slots[start:]] = values[start:, 0].astype(np.int64)
        self._raster_n += k
        self.version += 1

    def _flat_ids(self, arrays) -> tuple[np.ndarray, np.ndarray]:
        """(index of the step in the batch, id) of every id of ``arrays``, ids outside the table dropped."""
        arrays = [a if a is not None else np.zeros(0, np.int64) for a in arrays]
        ids = np.concatenate(arrays).astype(np.int64, copy=False).reshape(-1)
        step = np.repeat(np.arange(len(arrays)), [a.size for a in arrays])
        ok = (ids >= 0) & (ids < self.vocab_size)
        return (step, ids) if ok.all() else (step[ok], ids[ok])

    def set_frame(self, frame: TableFrame) -> None:
        """Keep ``frame`` as the latest picture of the table (one row per id)."""
        if frame.drift.shape[0] != self.vocab_size:
            raise ValueError(f"a frame of {frame.drift.shape[0]} rows for a history of {self.vocab_size}")
        self.frame = frame
        self.version += 1

    # -- out --------------------------------------------------------------------------------
    @property
    def last_step(self) -> int:
        return int(self._data["step"][self.n - 1]) if self.n else 0

    @property
    def frame_step(self) -> int:
        """The step of the latest frame (-1: none yet)."""
        return self.frame.step if self.frame is not None else -1

    def series(self, name: str) -> np.ndarray:
        """The full per-step series ``name`` (one of step, loss, batch_distinct_ids,
        grad_rows, input_grad_rows, changed_rows, decay_only_rows), shape (n,) float64, a view."""
        return self._data[name][: self.n]

    def fraction(self, name: str) -> np.ndarray:
        """A row-count series as a percentage of V: 100 * rows / V, shape (n,)."""
        return 100.0 * self.series(name) / self.vocab_size

    def raster(self, max_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The recent steps x rows raster.

        Parameters
        ----------
        max_rows : int, optional
            Above this many rows, each image row stands for a group of
            ``ceil(V / max_rows)`` consecutive rows (by frequency) and shows
            the strongest event among them (gradient > changed > none): a
            chart a few hundred pixels high cannot show more.

        Returns
        -------
        image : ndarray (R, n) uint8
            Row r is the r-th most frequent token (``order[r]``), or the r-th
            group of them; column j the j-th of the last n <= raster_steps
            steps, oldest first. Values are RASTER_NONE, RASTER_CHANGED or
            RASTER_GRAD.
        steps : ndarray (n,) int64
            The step number of each column.
        """
        n = min(self._raster_n, self.raster_steps)
        if n < self.raster_steps:
            idx = np.arange(n)
        else:
            start = self._raster_n % self.raster_steps
            idx = (np.arange(n) + start) % self.raster_steps
        cells = self._raster[idx]  # (n, V)
        v = self.vocab_size
        if max_rows is not None and 0 < max_rows < v:
            group = -(-v // max_rows)
            padded = np.zeros((n, -(-v // group) * group), np.uint8)
            padded[:, :v] = cells
            cells = padded.reshape(n, -1, group).max(axis=2)
        return np.ascontiguousarray(cells.T), self._raster_step[idx].copy()

    def drift(self) -> np.ndarray:
        """Euclidean distance of each row from its initial value as of the latest
        frame, shape (V,) float64 (zeros before the first frame; inf for rows
        that are no longer finite)."""
        return self.frame.drift if self.frame is not None else np.zeros(self.vocab_size)

    def to_csv(self) -> str:
        """The per-step time series as CSV text (one line per step)."""
        buf = io.StringIO()
        buf.write("step,loss,vocab_size,batch_distinct_ids,grad_rows,input_grad_rows,changed_rows,"
                  "grad_rows_pct,changed_rows_pct,decay_only_rows\n")
        d = {k: self.series(k) for k in _SERIES}
        gp, cp = self.fraction("grad_rows"), self.fraction("changed_rows")
        for i in range(self.n):
            buf.write(f"{int(d['step'][i])},{d['loss'][i]:.6g},{self.vocab_size},{int(d['batch_distinct_ids'][i])},"
                      f"{int(d['grad_rows'][i])},{int(d['input_grad_rows'][i])},{int(d['changed_rows'][i])},"
                      f"{gp[i]:.4f},{cp[i]:.4f},{int(d['decay_only_rows'][i])}\n")
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
