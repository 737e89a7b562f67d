"""Whole pipelines composed from transforms/ (evaluate), and the CLI."""
