"""How pytest collects and spreads this suite (the test code itself is in tests/).

- Every notebook is checked by strict nbval (options in pyproject.toml) under this machine's CPU setting
  and once more under each setting of tests/cpu_settings.py. `--this-cpu-only` skips the other settings
  for a quicker loop while writing a notebook; `make test` runs them all.
- With pytest-xdist (`make test` runs `pytest -n auto`; pyproject.toml asks for `--dist loadgroup`), tests
  marked `xdist_group(name)` run on one worker, in order: the cells of one notebook run (one kernel),
  and the tests that share a server or a browser. Everything else is spread test by test.
- Work that takes longest is handed out first, so that no worker is left with a long job at the end:
  the slow tests (servers, browsers, fresh environments), then the notebook runs, then the rest.
"""

import os
import sys
from pathlib import Path

import pytest
from nbval.plugin import IPyNbFile

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
import cpu_settings  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--this-cpu-only", action="store_true",
                     help="nbval under this machine's own CPU setting only, not under tests/cpu_settings.py's others")


def pytest_collect_file(file_path, parent):
    option = parent.config.option
    if file_path.suffix == ".ipynb" and option.nbval and not option.this_cpu_only:
        return cpu_settings.UnderOtherCPUs.from_parent(parent, path=file_path)
    return None


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        config.pluginmanager.register(GroupsInNodeIds(), "posenc-xdist-groups")


def _priority(item) -> int:
    if item.get_closest_marker("slow"):
        return 0
    if isinstance(item.parent, IPyNbFile):
        return 1
    return 2


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items):
    for item in items:
        if isinstance(item.parent, IPyNbFile):
            # One notebook run is one kernel: its cells must stay together, in order, on one worker.
            notebook = item.parent
            item.add_marker(pytest.mark.xdist_group(" ".join(
                ["nbval", notebook.path.name] + ([notebook.setting] if hasattr(notebook, "setting") else []))))
    # A stable sort: each group keeps its order. (pyproject.toml turns off xdist's own reordering.)
    items.sort(key=_priority)


def _group_names(item) -> list[str]:
    return sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                   for mark in item.iter_markers("xdist_group")})


class GroupsInNodeIds:
    """On an xdist worker: put each test's xdist_group into its node id, where the scheduler reads it.

    pytest-xdist 3.8 appends "@group" to `item._nodeid`, which pytest 9.2 no longer reads (its node ids
    are structured): the groups were silently ignored and a notebook's cells spread over workers
    (pytest-xdist issue #1386, fix proposed in #1388). This writes the same suffix where pytest 9.2 reads
    it; with a pytest or xdist where xdist's own suffix holds, it finds it there and does nothing.
    """

    @pytest.hookimpl(trylast=True)  # after xdist's own attempt
    def pytest_collection_modifyitems(self, config, items):
        from _pytest.nodeid import NodeId

        if not getattr(config.option, "loadgroup", False):  # set by xdist on a worker for --dist loadgroup
            return
        for item in items:
            names = _group_names(item)
            suffix = "@" + "_".join(names)
            if names and not item.nodeid.endswith(suffix):
                item._id = NodeId.parse(item.nodeid + suffix)
