"""Checkers for notebook 15 (positions in a real pipeline)."""

__all__: list[str] = []
