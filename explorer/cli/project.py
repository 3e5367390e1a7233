"""``python -m explorer project``: a projection of a table's rows, headless.

    python -m explorer project --model SPEC --method pca|tsne|umap [--sample N] [--seed S] [--dims 2|3]
        [--recompute] [--json] [--export-projector DIR] [--export-atlas FILE.parquet]

PCA fits the whole vocabulary by default (a seeded sample of ``--sample``
rows past 60,000 rows, or when asked); t-SNE and UMAP lay out a seeded
sample (3,000 rows by default). ``--json`` prints ``model``, ``method``,
``seed``, ``ids``, ``coords`` and ``seconds``, plus ``explained`` (the
share of variance of each component) for PCA and ``trustworthiness``
(cosine, 5 neighbours) for t-SNE and UMAP, and ``cached``: true when the
layout came from the layout cache (a t-SNE or UMAP of the same rows, by
value, with the same settings, computed before; ``--recompute`` bypasses
it). ``--export-projector DIR`` writes
the layout for TensorBoard's Embedding Projector (``tensorboard --logdir DIR``)
with the rows' vectors; ``--export-atlas FILE.parquet`` a file Embedding Atlas
opens (``embedding-atlas FILE.parquet --x x --y y --text piece``); both carry
each token's id, piece, kind, length and norm. explorer/cli/parser.py registers it.
"""

from __future__ import annotations

import argparse
import json
import time

__all__ = ["add_project_parser", "cmd_project", "MIN_SAMPLE"]

METHODS = ("pca", "tsne", "umap")
NAMES = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP"}
#: fewer rows make no neighbourhoods (and no plane) to show
MIN_SAMPLE = 5


def _sample_size(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sample must be a whole number, not {text!r}") from None
    if n < MIN_SAMPLE:
        raise argparse.ArgumentTypeError(f"--sample must be at least {MIN_SAMPLE} rows")
    return n


def _dims(text: str) -> int:
    if text not in ("2", "3"):
        raise argparse.ArgumentTypeError(f"--dims must be 2 or 3, not {text!r}")
    return int(text)


def _method(text: str) -> str:
    if text not in METHODS:
        raise argparse.ArgumentTypeError(f"unknown method {text!r}; use pca, tsne or umap")
    return text


def add_project_parser(sub) -> None:
    """Register the ``project`` subcommand on the subparsers of explorer/cli/parser.py."""
    p = sub.add_parser("project", help="project the table's rows to 2 or 3 dimensions (PCA, t-SNE, UMAP)")
    p.add_argument("--model", default="default")
    p.add_argument("--method", type=_method, default="pca", help="pca (exact, default), tsne or umap")
    p.add_argument("--sample", type=_sample_size, default=None, metavar="N",
                   help="rows drawn at random (seeded); default: the whole vocabulary for PCA up to 60,000 rows, "
                        "3,000 for t-SNE and UMAP")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dims", type=_dims, default=2, help="2 or 3")
    p.add_argument("--recompute", action="store_true",
                   help="t-SNE and UMAP: compute the layout even when the layout cache holds it")
    p.add_argument("--json", action="store_true")
    p.add_argument("--export-projector", metavar="DIR", default=None,
                   help="write the layout, the rows and their metadata for TensorBoard's Embedding Projector")
    p.add_argument("--export-atlas", metavar="FILE.parquet", default=None,
                   help="write the layout and the tokens' metadata as parquet for Embedding Atlas")


def project_data(spec: str, method: str, sample: int | None, seed: int, dims: int, exports=None,
                 recompute: bool = False) -> dict:
    """What ``project --json`` prints; ``exports`` (``{"projector": DIR, "atlas": FILE}``,
    either may be None) are written from the same layout, and their paths added."""
    from explorer.core.jobs import run_to_end
    from explorer.core.sources import open_table

    table = open_table(spec)
    t0 = time.perf_counter()
    if method == "pca":
        from explorer.core.projection.job import DEFAULT_SAMPLE, projection_job

        steps = projection_job(table, "auto" if sample is None else "sample", sample or DEFAULT_SAMPLE,
                               n_components=dims, seed=seed, max_points=None)  # every fitted row is written
    else:
        from explorer.core.projection.manifold import DEFAULT_LAYOUT_SAMPLE, LayoutCache, manifold_job

        steps = manifold_job(table, method, "sample", sample or DEFAULT_LAYOUT_SAMPLE, n_components=dims, seed=seed,
                             cache=LayoutCache.default(), recompute=recompute)
    res = run_to_end(steps)
    data = {"model": spec, "method": method, "seed": seed, "seconds": round(time.perf_counter() - t0, 3),
            **res.as_json(dims)}
    if exports and any(exports.values()):
        data["exports"] = _export(table, res, dims, exports)
    return data


def _export(table, res, dims: int, exports: dict) -> dict:
    """Write the asked exports of ``res``; returns what was written (paths as str)."""
    from explorer.core.errors import ExplorerError
    from explorer.core.interop.atlas import write_atlas
    from explorer.core.interop.projector import write_projector
    from explorer.core.interop.rows import layout_rows
    from explorer.core.jobs import run_to_end
    from explorer.core.tokens.meta import iter_token_metadata

    rows = layout_rows(res, table, meta=run_to_end(iter_token_metadata(table)))
    axes = tuple(range(dims))
    done = {}
    for kind, path in exports.items():
        if not path:
            continue
        try:
            if kind == "projector":
                write_projector(path, rows, axes, table.rows(rows.ids), f"{NAMES[res.method]} of {table.spec}")
            else:
                write_atlas(path, rows, axes)
        except OSError as exc:
            raise ExplorerError(f"Could not write {path}: {exc.strerror or exc}. "
                                f"Choose a {'folder' if kind == 'projector' else 'file'} you can write to.") from exc
        done[kind] = str(path)
    return done


def cmd_project(args) -> int:
    from explorer.core.interop.atlas import atlas_command

    exports = {"projector": args.export_projector, "atlas": args.export_atlas}
    data = project_data(args.model, args.method, args.sample, args.seed, args.dims, exports, args.recompute)
    if args.json:
        print(json.dumps(data, allow_nan=False))
        return 0
    name = NAMES[args.method]
    print(f"{name} of {data['model']} to {args.dims} dimensions: {len(data['ids']):,} tokens, "
          f"fitted on the {data['fit']}, {data['seconds']:.2f} s")
    if args.method == "pca":
        print("explained variance: " + ", ".join(f"PC{k + 1} {v:.1%}" for k, v in enumerate(data["explained"])))
    else:
        print(f"trustworthiness (cosine, 5 neighbours, {data['trustworthiness_rows']:,} rows): "
              f"{data['trustworthiness']:.3f}" + (" · from the layout cache (--recompute to compute it again)"
                                                  if data["cached"] else ""))
        if data.get("cache_note"):
            print(data["cache_note"])
    print("first rows: " + "; ".join(f"id {i}: (" + ", ".join(f"{v:+.3f}" for v in c) + ")"
                                     for i, c in zip(data["ids"][:3], data["coords"][:3])))
    for kind, path in data.get("exports", {}).items():
        opener = f"tensorboard --logdir {path}" if kind == "projector" else atlas_command(path)
        print(f"wrote {path}; open it with: {opener}")
    return 0
