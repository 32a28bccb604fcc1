"""The explorers' front ends: each is one ES module, the shared explorer_common.js followed by the explorer's own file."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def module(name: str) -> str:
    """The ES module of the explorer whose own front end is the file `name` beside this one."""
    return (HERE / "explorer_common.js").read_text(encoding="utf-8") + "\n" + (HERE / name).read_text(encoding="utf-8")
