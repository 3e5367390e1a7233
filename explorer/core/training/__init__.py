"""The toy next-token model, its synthetic language and corpora, a training run as
a generator, its live charts, frames and lessons, and the bundled model built
from it. No Qt here.
"""
