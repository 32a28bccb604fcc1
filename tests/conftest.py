import math

import pytest
import torch


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

