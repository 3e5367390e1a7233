"""Laying the vocabulary out: the PCA job, t-SNE and UMAP (manifold/), custom
axes, density, clusters, point filters, label placement and CSV exports. No Qt
here.
"""
