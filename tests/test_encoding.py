"""Values of the positional encoding: the paper's formula, the source material's numbers."""

import pytest
import torch

from conftest import paper_formula
from posenc import encoding
from posenc.encoding import PositionalEncoding, sinusoidal_encoding, stepwise_encoding

# The source material's table for max_sequence_length = 10, d_model = 6, to 4 decimals.
SEED_TABLE = torch.tensor([
    [0.0000, 1.0000, 0.0000, 1.0000, 0.0000, 1.0000],
    [0.8415, 0.5403, 0.0464, 0.9989, 0.0022, 1.0000],
    [0.9093, -0.4161, 0.0927, 0.9957, 0.0043, 1.0000],
    [0.1411, -0.9900, 0.1388, 0.9903, 0.0065, 1.0000],
    [-0.7568, -0.6536, 0.1846, 0.9828, 0.0086, 1.0000],
    [-0.9589, 0.2837, 0.2300, 0.9732, 0.0108, 0.9999],
    [-0.2794, 0.9602, 0.2749, 0.9615, 0.0129, 0.9999],
    [0.6570, 0.7539, 0.3192, 0.9477, 0.0151, 0.9999],
    [0.9894, -0.1455, 0.3629, 0.9318, 0.0172, 0.9999],
    [0.4121, -0.9111, 0.4057, 0.9140, 0.0194, 0.9998],
])

# The builder's promise for float32: within 2e-7 of the exact value, at every position.
FLOAT32_ATOL = 2e-7

SIZES = [(1, 1), (1, 2), (2, 1), (10, 6), (10, 7), (3, 5), (50, 1), (64, 128), (100, 33),
         (257, 64), (300, 301), (1000, 65), (4099, 17), (2000, 96)]


def test_denominators_match_the_source_material():
    expected = torch.tensor([1.0000, 21.5443, 464.1590])
    assert torch.equal(encoding.even_indices(d_model=6), torch.tensor([0.0, 2.0, 4.0]))
    assert torch.equal(encoding.odd_indices(d_model=6), torch.tensor([1.0, 3.0, 5.0]))
    torch.testing.assert_close(encoding.even_denominator(d_model=6), expected, atol=5e-5, rtol=0)
    torch.testing.assert_close(encoding.odd_denominator(d_model=6), expected, atol=5e-5, rtol=0)


@pytest.mark.parametrize("d_model", [1, 2, 3, 6, 7, 64, 511, 512])
def test_even_and_odd_denominators_are_the_same_numbers(d_model):
    even = encoding.even_denominator(d_model=d_model)
    odd = encoding.odd_denominator(d_model=d_model)
    assert torch.equal(even[: odd.numel()], odd)


@pytest.mark.parametrize("build", [stepwise_encoding, sinusoidal_encoding])
def test_seed_table_to_four_decimals(build):
    table = build(max_sequence_length=10, d_model=6)
    assert table.dtype == torch.float32
    assert torch.equal(table.round(decimals=4) + 0.0, SEED_TABLE)


def test_even_and_odd_parts_have_the_taught_shapes():
    even_PE = encoding.even_pe(max_sequence_length=10, d_model=6)
    odd_PE = encoding.odd_pe(max_sequence_length=10, d_model=6)
    assert even_PE.shape == odd_PE.shape == (10, 3)
    assert torch.stack([even_PE, odd_PE], dim=2).shape == (10, 3, 2)
    assert torch.equal(encoding.interleave(even_PE, odd_PE), stepwise_encoding(max_sequence_length=10, d_model=6))


def test_the_odd_width_fix_taught_in_04_gives_the_stepwise_table():
    """04 pairs the last sine with zeros, stacks, flattens and cuts the zeros off: the stepwise table at d_model = 7."""
    sines = encoding.even_pe(max_sequence_length=10, d_model=7)
    cosines = encoding.odd_pe(max_sequence_length=10, d_model=7)
    padded = torch.cat([cosines, torch.zeros(10, 1)], dim=1)
    fixed = torch.flatten(torch.stack([sines, padded], dim=2), start_dim=1, end_dim=2)[:, :7]
    assert torch.equal(fixed, stepwise_encoding(max_sequence_length=10, d_model=7))
    assert torch.equal(encoding.interleave(sines, cosines), fixed)


@pytest.mark.parametrize("length,d_model", SIZES)
def test_builder_matches_the_paper_formula(length, d_model):
    table = sinusoidal_encoding(max_sequence_length=length, d_model=d_model)
    assert table.shape == (length, d_model)
    assert table.dtype == torch.float32
    # Rounding the two small float32 tables and the product: a few times 2^-25 ~ 3e-8.
    torch.testing.assert_close(table.double(), paper_formula(length, d_model), atol=FLOAT32_ATOL, rtol=0)


@pytest.mark.parametrize("length,d_model", SIZES)
def test_stepwise_matches_the_paper_formula_within_float32_angle_rounding(length, d_model):
    table = stepwise_encoding(max_sequence_length=length, d_model=d_model)
    assert table.shape == (length, d_model)
    # The float32 angle pos / denominator is rounded by about pos * 2^-24.
    tolerance = 2e-6 + length * 2.0**-23
    torch.testing.assert_close(table.double(), paper_formula(length, d_model), atol=tolerance, rtol=0)


def test_builder_float64_is_exact_to_float64():
    table = sinusoidal_encoding(max_sequence_length=3000, d_model=40, dtype=torch.float64)
    assert table.dtype == torch.float64
    torch.testing.assert_close(table, paper_formula(3000, 40), atol=1e-12, rtol=0)


@pytest.mark.parametrize("d_model", [24, 25])
def test_builder_stays_precise_at_large_positions(d_model):
    length = 200_003
    table = sinusoidal_encoding(max_sequence_length=length, d_model=d_model)
    rows = torch.tensor([0, 1, 99_999, 150_000, 199_998, 200_002])
    pos = rows.double()[:, None]
    column = torch.arange(d_model, dtype=torch.float64)
    angle = pos / 10000.0 ** (2 * (column // 2) / d_model)
    expected = torch.where(column % 2 == 0, torch.sin(angle), torch.cos(angle))
    assert (table[rows].double() - expected).abs().max().item() < FLOAT32_ATOL


@pytest.mark.parametrize("length,d_model", [(131072, 64), (70001, 33), (4096, 1024), (65536, 2)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_large_tables_stay_within_minus_one_to_one(length, d_model, dtype):
    # Rounding the rotation's factors can push products a hair past 1 (1.0000001).
    table = sinusoidal_encoding(max_sequence_length=length, d_model=d_model, dtype=dtype)
    assert table.abs().max().item() <= 1.0


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_builder_honours_dtype(dtype):
    table = sinusoidal_encoding(max_sequence_length=300, d_model=300, dtype=dtype)
    assert table.dtype == dtype
    torch.testing.assert_close(table.double(), paper_formula(300, 300), atol=max(torch.finfo(dtype).eps, 1e-12), rtol=0)


def test_base_changes_the_wavelengths():
    table = sinusoidal_encoding(max_sequence_length=20, d_model=8, base=10.0)
    torch.testing.assert_close(table.double(), paper_formula(20, 8, base=10.0), atol=FLOAT32_ATOL, rtol=0)
    lengths = encoding.wavelengths(d_model=8, base=10.0)
    assert lengths.shape == (8,)
    torch.testing.assert_close(lengths[::2], 2 * torch.pi * 10.0 ** (torch.arange(0, 8, 2, dtype=torch.float64) / 8))


def test_odd_d_model_has_exactly_d_model_columns_and_the_last_is_a_sine():
    table = sinusoidal_encoding(max_sequence_length=10, d_model=7)
    assert table.shape == (10, 7)
    last_sine = torch.sin(torch.arange(10.0, dtype=torch.float64) / 10000 ** (6 / 7))
    torch.testing.assert_close(table[:, 6].double(), last_sine, atol=FLOAT32_ATOL, rtol=0)
    # The plain stack + flatten of the source material gives d_model + 1 columns here.
    even_PE = encoding.even_pe(max_sequence_length=10, d_model=7)
    odd_PE = torch.cos(encoding.positions(max_sequence_length=10) / encoding.even_denominator(d_model=7))
    naive = torch.flatten(torch.stack([even_PE, odd_PE], dim=2), 1, 2)
    assert naive.shape == (10, 8)
    assert encoding.interleave(even_PE, encoding.odd_pe(max_sequence_length=10, d_model=7)).shape == (10, 7)


def test_to_concatenated_puts_sines_first():
    table = sinusoidal_encoding(max_sequence_length=5, d_model=7)
    concatenated = encoding.to_concatenated(table)
    assert torch.equal(concatenated[:, :4], table[:, 0::2])
    assert torch.equal(concatenated[:, 4:], table[:, 1::2])


class TestModule:
    def test_adds_the_same_table_to_2d_and_3d_inputs(self):
        pe = PositionalEncoding(d_model=6, max_sequence_length=10)
        x = torch.randn(10, 6, generator=torch.Generator().manual_seed(1))
        table = sinusoidal_encoding(max_sequence_length=10, d_model=6)
        assert torch.equal(pe(x), x + table)
        batch = torch.stack([x, 2 * x, -x])
        out = pe(batch)
        assert out.shape == (3, 10, 6)
        for b in range(3):
            assert torch.equal(out[b], batch[b] + table)

    def test_accepts_a_sequence_as_long_as_the_table(self):
        # The source material's `assert x < max` wrongly refuses this.
        pe = PositionalEncoding(d_model=4, max_sequence_length=5)
        assert pe(torch.zeros(5, 4)).shape == (5, 4)

    def test_offset_selects_later_positions(self):
        pe = PositionalEncoding(d_model=8, max_sequence_length=20)
        out = pe(torch.zeros(1, 3, 8), offset=7)
        assert torch.equal(out[0], pe.table[7:10])
        assert torch.equal(pe(torch.zeros(1, 8), offset=19)[0], pe.table[19])

    def test_table_is_a_non_persistent_buffer(self):
        pe = PositionalEncoding(d_model=6, max_sequence_length=10)
        assert "table" in dict(pe.named_buffers())
        assert pe.state_dict() == {}
        assert list(pe.parameters()) == []

    def test_moves_with_to_dtype_and_device(self):
        pe = PositionalEncoding(d_model=6, max_sequence_length=10).to(torch.float64)
        assert pe.table.dtype == torch.float64
        out = pe(torch.zeros(10, 6, dtype=torch.float64))
        assert out.dtype == torch.float64
        # The float32 table, cast: float32-close, not float64-exact.
        torch.testing.assert_close(out, paper_formula(10, 6), atol=FLOAT32_ATOL, rtol=0)
        pe = pe.to("cpu")
        assert pe.table.device.type == "cpu"
        half = PositionalEncoding(d_model=6, max_sequence_length=10)(torch.zeros(10, 6, dtype=torch.float16))
        assert half.dtype == torch.float16

    def test_keyword_only_sizes(self):
        with pytest.raises(TypeError):
            PositionalEncoding(6, 10)  # the argument order the sources disagree on
        with pytest.raises(TypeError):
            sinusoidal_encoding(10, 6)

    def test_repr_names_the_sizes(self):
        assert "d_model=6, max_sequence_length=10" in repr(PositionalEncoding(d_model=6, max_sequence_length=10))

    def test_does_not_print(self, capsys):
        PositionalEncoding(d_model=6, max_sequence_length=10)(torch.zeros(10, 6))
        assert capsys.readouterr().out == ""


def test_the_barcode_columns_stay_within_the_bounds_04_states():
    # 04: from column 64 of a 64 x 128 table, every sine stays at most 0.59 and every cosine at least 0.80.
    table = stepwise_encoding(max_sequence_length=64, d_model=128)
    assert table[:, 64::2].max() <= 0.59 and table[:, 65::2].min() >= 0.80
