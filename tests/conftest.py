import functools
import http.server
import importlib
import math
import os
import pkgutil
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from hypothesis import settings

import benchmarks
import lab_browser
import posenc
import tools
from tools import build_site

# The same examples on every run: `make check` and `make test` draw a fixed set (derandomize), so two runs on one
# commit test the same cases and a submission's CI cannot pass on a draw the next clone fails. The wider random hunt,
# with new examples each time, is `make fuzz` (POSENC_HYPOTHESIS_PROFILE=fuzz, a seed it prints).
settings.register_profile("fixed", derandomize=True, database=None)
settings.register_profile("fuzz", derandomize=False, database=None, print_blob=True)
settings.load_profile(os.environ.get("POSENC_HYPOTHESIS_PROFILE", "fixed"))

# One torch thread in the test processes. `make test` runs one xdist worker more than there are cores, beside kernels
# and browsers: a worker's second thread finds no free core and waits, spinning. On 2 cores, test_models.py and
# test_generation.py took half the CPU-seconds on one thread (11.6 s against 23.2 s), at no cost in wall time. Only
# these processes: a kernel or a subprocess a test starts keeps torch's own default (nbval's run "under this
# machine's CPU" included).
torch.set_num_threads(1)

# Hypothesis also draws numbers and strings written in the project's own modules (not the tests), from those loaded
# when it draws. Which modules a test has loaded depends on what ran before it on the same xdist worker. So every
# module of the package, tools/ and benchmarks/ is loaded here, before any test: the pool is the same on every run.
# (docs/testing.md says how this was checked.)
for package in (posenc, tools, benchmarks):
    for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        importlib.import_module(module.name)


@pytest.fixture(autouse=True)
def fresh_progress():
    """Each test starts with no verdict recorded: a prediction checker keeps its first answer per exercise
    (posenc.exercises.feedback), so a test run after another on the same worker would otherwise read that one's."""
    posenc.exercises.reset_progress()


def paper_formula(max_sequence_length: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The table from the paper's formula, one entry at a time, in float64 with Python's math.

    Deliberately shares no code with posenc: a double loop over (pos, column).
    """
    table = [[0.0] * d_model for _ in range(max_sequence_length)]
    for pos in range(max_sequence_length):
        for column in range(d_model):
            i = column // 2  # PE(pos, 2i) and PE(pos, 2i + 1) share i
            angle = pos / base ** (2 * i / d_model)
            table[pos][column] = math.sin(angle) if column % 2 == 0 else math.cos(angle)
    return torch.tensor(table, dtype=torch.float64)


@pytest.fixture
def reference():
    return paper_formula



# The built site, shared -------------------------------------------------------------------------------------------------

class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@dataclass
class Built:
    browser: object
    base: str  # the teacher's site
    out: Path
    students: str  # the students' site
    students_out: Path
    server: str  # both sites are served from here


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """The teacher's site with the slides and the students' site, built in this process, served on 127.0.0.1 side by
    side (site/, site-students/), and one Chromium. For the tests of tests/test_site.py and the browser tests of
    tests/test_page_explorers.py, which are one xdist group ("site"): one build and one browser serve them all."""
    root = tmp_path_factory.mktemp("sites")
    out, students_out = root / "site", root / "site-students"
    build_site.build_slides(out)
    build_site.build_site(out)
    build_site.build_site(students_out, students=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    (Path(__file__).resolve().parent.parent / "test-artifacts" / "site").mkdir(parents=True, exist_ok=True)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with lab_browser.chromium(root) as browser:
            yield Built(browser, f"{url}/site", out, f"{url}/site-students", students_out, url)
    finally:
        server.shutdown()
