"""Pure computation: numpy, torch, transformers, scikit-learn. No Qt here."""
