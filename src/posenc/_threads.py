"""A block of code that runs torch on one thread."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

__all__ = ["one_thread"]


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with torch on one thread, then restore the previous thread count (also after an error).

    One thread fixes the order of every reduction, so a seeded training run gives the same
    numbers on any machine, and leaves the other cores to the notebook's front end.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
