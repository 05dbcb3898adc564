"""Baselines: one YAML file per model family (this package marker lets the embedded example ship with hubdiff)."""
