"""The Similarity view: learned vectors against scalar ids and one-hot
vectors, and the random-vector check; one widget per page."""

from explorer.ui.similarity.view import SimilarityView

__all__ = ["SimilarityView"]
