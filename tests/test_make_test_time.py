"""benchmarks/make_test_time.py: how it reads pytest's durations into the parts of the suite."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import make_test_time  # noqa: E402

NB16, OLD16 = "notebooks/16_stretching_context.ipynb", "build/learners-edition/notebooks/16_stretching_context.ipynb"
OLD03 = "build/learners-edition/notebooks/03_pe_formula.ipynb"
DURATIONS = [
    ("17.79s call    ", f"{OLD16}::Cell 24@{OLD16}"),
    ("12.67s call    ", f"{NB16}::Cell 24@{NB16}"),
    ("2.50s setup   ", f"{OLD03}::Cell 0@{OLD03}"),
    ("4.51s call    ", "tests/test_site.py::test_every_page_loads_offline_and_passes_axe[13_position_schemes]@site"),
    ("0.30s teardown", "tests/test_site.py::test_the_readme_badge_points_at_the_one_repository"),
    ("9.08s setup   ", "tests/test_browser.py::TestPositionSchemes::test_run_all_shows_no_error@jupyterlab"),
    ("1.31s call    ", "tests/test_contract.py::test_a_checker_answers[a@b]"),
    ("0.69s call    ", "tests/test_contract.py::test_a_checker_answers[c]"),
    ("7.94s call    ", "tests/test_environment.py::test_make_lab_and_make_teach_serve_on_localhost[lab]"),
]
LOG = "\n".join(["=" * 29 + " slowest durations " + "=" * 30, *(f"{a} {b}" for a, b in DURATIONS),
                 "=" * 17 + " 3014 passed, 1 skipped in 242.66s (0:04:02) " + "=" * 18])
QUICK = {"tests/test_site.py::test_the_readme_badge_points_at_the_one_repository",
         "tests/test_contract.py::test_a_checker_answers[a@b]", "tests/test_contract.py::test_a_checker_answers[c]"}


def test_node_ids_lose_only_the_xdist_group():
    assert make_test_time.node_id("tests/test_site.py::test_x[a]@site") == "tests/test_site.py::test_x[a]"
    assert make_test_time.node_id("notebooks/a.ipynb::Cell 3@notebooks/a.ipynb") == "notebooks/a.ipynb::Cell 3"
    assert make_test_time.node_id("tests/test_c.py::test_y[a@b]") == "tests/test_c.py::test_y[a@b]"


def test_each_test_lands_in_its_part_and_every_second_is_counted():
    parts = make_test_time.parts(LOG, QUICK)
    assert parts == {
        "nbval, oldest_cpu, notebooks 14 and 16": 17.8,
        "nbval, this machine's setting, notebooks 14 and 16": 12.7,
        "JupyterLab in Chromium": 9.1,
        "other slow tests (servers, kernels, fresh environments)": 7.9,
        "site and slides in Chromium, with axe": 4.5,
        "nbval, oldest_cpu, the other notebooks": 2.5,
        "unit, property and contract tests (make check's)": 2.3,
    }
    assert list(parts.values()) == sorted(parts.values(), reverse=True)


def test_the_summary_line_gives_the_tests_and_pytests_seconds():
    match = [make_test_time.SUMMARY.search(line) for line in LOG.splitlines() if make_test_time.SUMMARY.search(line)][-1]
    assert match.group(1) == "3014 passed, 1 skipped" and match.group(2) == "242.66"
