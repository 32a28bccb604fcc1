"""How pytest collects and spreads this suite (the test code itself is in tests/).

- Every notebook is checked by strict nbval (options in pyproject.toml) under this machine's CPU setting
  and once more under the setting of tests/cpu_settings.py (the oldest CPU). `--this-cpu-only` skips the other settings
  for a quicker loop while writing a notebook; `make test` runs them all. Every kernel is forked from a
  warm process that has done a kernel's imports once (tools/warm_kernels.py; POSENC_COLD_KERNELS=1 starts
  each the usual way).
- No notebook is executed twice for the same guarantee: under the oldest CPU setting the kernel runs the
  notebook's learner's edition, which is also the check that the learner's edition runs (tests/cpu_settings.py,
  LearnersEditionUnder); tests/test_notebooks.py's byte-for-byte check executes its notebooks under this
  machine's setting, and a file equal byte for byte to the stored one has every stored output nbval would
  compare, so nbval's own run of those notebooks under this machine's setting is left out.
- With pytest-xdist (`make test` runs `pytest -n` cores + 1; pyproject.toml asks for `--dist loadgroup`), tests
  marked `xdist_group(name)` run on one worker, in order: the cells of one notebook run (one kernel),
  and the tests that share a server or a browser. Everything else is spread test by test.
- The longest work is handed out first (xdist hands out the units in this order), so that no worker is left
  with a long job at the end while the other idles: each unit (a group, or a test on its own) is ordered by
  its seconds in tests/durations.json, written by a run with `--store-durations` (`make test
  PYTEST_EXTRA=--store-durations`: the units that ran are updated, the others kept). A unit the file does not
  know yet (a new notebook, a new test) gets an estimate; a stale file only makes the order less good, never
  a test wrong.
"""

import json
import os
import sys
from pathlib import Path

import nbval.plugin
import pytest
from nbval.plugin import IPyNbFile

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tools")]
import cpu_settings  # noqa: E402

# nbval's runs under this machine's setting start their kernels as the other settings' do: forked warm.
nbval.plugin.RunningKernel = cpu_settings.KernelUnder

DURATIONS = ROOT / "tests" / "durations.json"
# Seconds assumed for a unit tests/durations.json does not know: a notebook cell (with its share of the kernel's
# start), a test marked slow, any other test.
UNKNOWN_CELL, UNKNOWN_SLOW, UNKNOWN_TEST = 1.0, 20.0, 0.3
# The notebooks tests/test_notebooks.py executes for its byte-for-byte check.
BYTE_FOR_BYTE = "tests/test_notebooks.py::test_make_notebooks_reproduces_the_stored_file_byte_for_byte"


def pytest_addoption(parser):
    parser.addoption("--this-cpu-only", action="store_true",
                     help="nbval under this machine's own CPU setting only, not under tests/cpu_settings.py's others "
                          "(nor the learner's edition, which runs under the oldest)")
    parser.addoption("--store-durations", action="store_true",
                     help="write each unit's seconds (a group, or a test on its own) to tests/durations.json")


def pytest_collect_file(file_path, parent):
    option = parent.config.option
    if file_path.suffix == ".ipynb" and option.nbval and not option.this_cpu_only:
        return cpu_settings.UnderOtherCPUs.from_parent(parent, path=file_path)
    return None


def pytest_configure(config):
    config.pluginmanager.register(RunOrder(), "posenc-run-order")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        config.pluginmanager.register(GroupsInNodeIds(), "posenc-xdist-groups")
    elif config.option.store_durations:
        config.pluginmanager.register(DurationRecorder(), "posenc-durations")


def _unit(item) -> str:
    """The name a unit of work goes by: its xdist group, or the test's own node id."""
    names = _group_names(item)
    return "_".join(names) if names else item.nodeid


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items):
    for item in items:
        if isinstance(item.parent, IPyNbFile):
            # One notebook run is one kernel: its cells must stay together, in order, on one worker.
            notebook = item.parent
            item.add_marker(pytest.mark.xdist_group(" ".join(
                ["nbval", notebook.path.name] + ([notebook.setting] if hasattr(notebook, "setting") else []))))


class RunOrder:
    """What is left to run, after every other plugin's selection (-k, -m): deduplicated, longest first."""

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, config, items):
        yield
        _leave_out_what_the_byte_for_byte_check_runs(config, items)
        known = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
        cost: dict[str, float] = {}
        for item in items:
            unit = _unit(item)
            if unit in known:
                cost[unit] = known[unit]
            else:
                guess = (UNKNOWN_CELL if isinstance(item.parent, IPyNbFile)
                         else UNKNOWN_SLOW if item.get_closest_marker("slow") else UNKNOWN_TEST)
                cost[unit] = cost.get(unit, 0.0) + guess
        first_seen = {unit: k for k, unit in reversed(list(enumerate(_unit(item) for item in items)))}
        # A stable sort by unit: the longest first, each unit's tests together and in their order.
        # (pyproject.toml turns off xdist's own reordering.)
        items.sort(key=lambda item: (-cost[_unit(item)], first_seen[_unit(item)]))


def _leave_out_what_the_byte_for_byte_check_runs(config, items):
    """Deselect nbval's run, under this machine's setting, of each notebook the byte-for-byte check executes."""
    checked = {item.callspec.params["name"] for item in items
               if item.nodeid.startswith(BYTE_FOR_BYTE) and hasattr(item, "callspec")}
    if not checked:
        return
    covered = [item for item in items if isinstance(item.parent, IPyNbFile) and not hasattr(item.parent, "setting")
               and item.parent.path.name in checked]
    if covered:
        config.hook.pytest_deselected(items=covered)
        left_out = set(covered)
        items[:] = [item for item in items if item not in left_out]


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


class DurationRecorder:
    """`--store-durations`: each unit's seconds (setup, call and teardown of its tests), merged into the file."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.units: dict[str, str] = {}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        self.units = {item.nodeid: _unit(item) for item in items}

    def pytest_runtest_logreport(self, report):
        # On xdist's controller a grouped test's node id ends in "@group" (GroupsInNodeIds); without xdist, the
        # collected items say.
        nodeid, _, group = report.nodeid.partition("@")
        unit = group or self.units.get(nodeid, nodeid)
        self.seconds[unit] = self.seconds.get(unit, 0.0) + report.duration

    def pytest_sessionfinish(self, session):
        known = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
        # Units of under a second only need to come after the long ones, which their estimate does.
        known.update({unit: round(seconds, 2) for unit, seconds in self.seconds.items() if seconds >= 1})
        known = {unit: seconds for unit, seconds in known.items() if seconds >= 1}
        DURATIONS.write_text(json.dumps(dict(sorted(known.items())), indent=0) + "\n")
