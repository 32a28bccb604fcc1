"""How the notebooks run under pytest is in tests/notebook_runs.py, loaded here as a plugin (docs/testing.md explains
it). This file sits at the root so that pytest loads it for notebooks/ as well as tests/."""

pytest_plugins = ["tests.notebook_runs"]
