"""Figures for notebook 16 (stretching the context)."""

__all__: list[str] = []
