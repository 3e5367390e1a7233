"""Test helpers shared across the suite: small real models built and saved in
Hugging Face and GGUF format, a fake clock, window helpers, fuzzing checks."""
