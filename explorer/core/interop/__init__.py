"""Layouts handed to other tools: the rows of a layout with their metadata
(:mod:`.rows`), the TensorBoard Embedding Projector's folder (:mod:`.projector`)
and the parquet file Embedding Atlas opens (:mod:`.atlas`). No Qt here."""
