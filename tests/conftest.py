import math
import os
import warnings

import pytest
import torch
from hypothesis import settings
from hypothesis.errors import HypothesisSideeffectWarning
from hypothesis.internal.conjecture import providers

# The same examples on every run: `make check` and `make test` draw a fixed set (derandomize), so two runs on one
# commit test the same cases and a submission's CI cannot pass on a draw the next clone fails. The wider random hunt,
# with new examples each time, is `make fuzz` (POSENC_HYPOTHESIS_PROFILE=fuzz, a seed it prints).
settings.register_profile("fixed", derandomize=True, database=None)
settings.register_profile("fuzz", derandomize=False, database=None, print_blob=True)
settings.load_profile(os.environ.get("POSENC_HYPOTHESIS_PROFILE", "fixed"))
if settings.default.derandomize:
    # Hypothesis also draws literals it finds in the project's modules loaded so far (its "local constants"), and
    # which are loaded depends on what ran before on the same xdist worker: the same test then drew other examples
    # on another run. Fixed examples need a fixed pool: the constants of what is loaded now, before any test.
    with warnings.catch_warnings():  # it reads Hypothesis's cache of constants, which it warns about at start-up
        warnings.simplefilter("ignore", HypothesisSideeffectWarning)
        _constants = providers._get_local_constants()
    providers._get_local_constants = lambda: _constants


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

