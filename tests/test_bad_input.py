"""Every bad argument gets a TypeError or ValueError naming the argument, the value and what is allowed."""

import pytest
import torch

from posenc import attention, embedding, encoding, tokens
from posenc.builder import sinusoidal_encoding
from posenc.encoding import PositionalEncoding

VOCAB = tokens.build_vocabulary(["my name is john"])
PE = PositionalEncoding(d_model=6, max_sequence_length=10)
WEIGHTS = attention.projection_weights(d_model=6)

CASES = [
    # (call, exception, words the message must contain)
    (lambda: sinusoidal_encoding(max_sequence_length=10.0, d_model=6), TypeError, ["max_sequence_length", "10.0", "int"]),
    (lambda: sinusoidal_encoding(max_sequence_length="10", d_model=6), TypeError, ["max_sequence_length", "'10'"]),
    (lambda: sinusoidal_encoding(max_sequence_length=True, d_model=6), TypeError, ["max_sequence_length", "True"]),
    (lambda: sinusoidal_encoding(max_sequence_length=10, d_model=False), TypeError, ["d_model", "False"]),
    (lambda: sinusoidal_encoding(max_sequence_length=0, d_model=6), ValueError, ["max_sequence_length", "0", ">= 1"]),
    (lambda: sinusoidal_encoding(max_sequence_length=10, d_model=-2), ValueError, ["d_model", "-2", ">= 1"]),
    (lambda: sinusoidal_encoding(max_sequence_length=10, d_model=6, base=1.0), ValueError, ["base", "1.0", "> 1"]),
    (lambda: sinusoidal_encoding(max_sequence_length=10, d_model=6, base=0.5), ValueError, ["base", "0.5", "> 1"]),
    (lambda: sinusoidal_encoding(max_sequence_length=10, d_model=6, base=-10000), ValueError, ["base", "-10000"]),
    (lambda: sinusoidal_encoding(max_sequence_length=10, d_model=6, base=float("inf")), ValueError, ["base", "inf"]),
    (lambda: sinusoidal_encoding(max_sequence_length=10, d_model=6, base=float("nan")), ValueError, ["base", "nan"]),
    (lambda: sinusoidal_encoding(max_sequence_length=10, d_model=6, base="10000"), TypeError, ["base", "'10000'"]),
    (lambda: sinusoidal_encoding(max_sequence_length=10, d_model=6, dtype=torch.int64), ValueError,
     ["dtype", "torch.int64", "floating"]),
    (lambda: sinusoidal_encoding(max_sequence_length=10, d_model=6, dtype="float32"), TypeError, ["dtype", "'float32'"]),
    (lambda: sinusoidal_encoding(max_sequence_length=10**9, d_model=10**6), ValueError, ["4000000000000000 bytes", "memory"]),
    (lambda: PositionalEncoding(d_model=6, max_sequence_length=10**12), ValueError, ["bytes", "max_sequence_length"]),
    (lambda: PositionalEncoding(d_model=0, max_sequence_length=10), ValueError, ["d_model", "0"]),
    (lambda: PE(torch.zeros(10, 5)), ValueError, ["d_model=6", "(10, 5)"]),
    (lambda: PE(torch.zeros(2, 11, 6)), ValueError, ["max_sequence_length=10", "11 positions"]),
    (lambda: PE(torch.zeros(4, 6), offset=7), ValueError, ["offset=7", "max_sequence_length=10"]),
    (lambda: PE(torch.zeros(4, 6), offset=-1), ValueError, ["offset", "-1"]),
    (lambda: PE(torch.zeros(6)), ValueError, ["x", "2-D or 3-D", "(6,)"]),
    (lambda: PE(torch.zeros(10, 6, dtype=torch.long)), TypeError, ["x", "torch.int64"]),
    (lambda: PE([[0.0] * 6] * 10), TypeError, ["x", "Tensor", "list"]),
    (lambda: encoding.interleave(torch.zeros(10, 3), torch.zeros(10, 1)), ValueError, ["odd_PE", "(10, 1)", "(10, 3)"]),
    (lambda: encoding.even_denominator(d_model=6.5), TypeError, ["d_model", "6.5"]),
    (lambda: encoding.positions(max_sequence_length=-1), ValueError, ["max_sequence_length", "-1"]),
    (lambda: tokens.tokenize(42), TypeError, ["sentence", "int"]),
    (lambda: tokens.pad(["a"] * 12, max_sequence_length=10), ValueError, ["12 tokens", "max_sequence_length=10"]),
    (lambda: tokens.pad("my name", max_sequence_length=10), TypeError, ["tokens", "tokenize"]),
    (lambda: tokens.pad(["a"], max_sequence_length=0), ValueError, ["max_sequence_length", "0"]),
    (lambda: tokens.one_hot([0, 7], vocab_size=6), ValueError, ["ids", "vocab_size=6", "7"]),
    (lambda: tokens.one_hot([0, -1], vocab_size=6), ValueError, ["id", "-1"]),
    (lambda: tokens.one_hot(torch.tensor([0.0, 1.0]), vocab_size=6), TypeError, ["ids", "float32"]),
    (lambda: tokens.one_hot([0, 1], vocab_size=0), ValueError, ["vocab_size", "0"]),
    (lambda: tokens.sentence_to_ids("a b c d e f g h i j k", VOCAB, max_sequence_length=10), ValueError,
     ["11 tokens", "max_sequence_length=10"]),
    (lambda: tokens.sentence_to_ids("my name", ["my", "name"], max_sequence_length=10), TypeError, ["vocabulary", "list"]),
    (lambda: tokens.Vocabulary(("a", "b")), ValueError, ["special tokens", "<PAD>"]),
    (lambda: tokens.Vocabulary(("<PAD>", "<UNK>", "a", "a")), ValueError, ["unique", "'a'"]),
    (lambda: tokens.build_vocabulary("my name is john"), TypeError, ["sentences", "str"]),
    (lambda: VOCAB.decode([99]), ValueError, ["ids", "vocab_size=6", "99"]),
    (lambda: embedding.embedding_matrix(vocab_size=6, d_model=0), ValueError, ["d_model", "0"]),
    (lambda: embedding.embedding_matrix(vocab_size=6.0, d_model=4), TypeError, ["vocab_size", "6.0"]),
    (lambda: embedding.project(torch.zeros(10, 5), torch.zeros(6, 4)), ValueError, ["5 columns", "6 rows", "vocab_size"]),
    (lambda: embedding.project(torch.zeros(10, 6, dtype=torch.long), torch.zeros(6, 4)), TypeError,
     ["one_hot_rows", "torch.int64"]),
    (lambda: embedding.embedding_lookup(torch.tensor([0, 6]), torch.zeros(6, 4)), ValueError, ["ids", "vocab_size=6"]),
    (lambda: embedding.embedding_lookup(torch.tensor([0.0]), torch.zeros(6, 4)), TypeError, ["ids", "float32"]),
    (lambda: attention.projection_weights(d_model=6, d_k=0), ValueError, ["d_k", "0"]),
    (lambda: attention.project_qkv(torch.zeros(10, 5), WEIGHTS), ValueError, ["d_model=6", "(10, 5)"]),
    (lambda: attention.project_qkv(torch.zeros(10, 6), (1, 2, 3)), TypeError, ["weights", "tuple"]),
    (lambda: attention.scaled_dot_product_scores(torch.zeros(4, 3), torch.zeros(4, 2)), ValueError, ["d_k", "(4, 3)", "(4, 2)"]),
    (lambda: attention.attention_weights(torch.zeros(3, 3), key_mask=torch.tensor([1, 0, 1])), TypeError, ["key_mask", "bool"]),
    (lambda: attention.attention_weights(torch.zeros(3, 3), key_mask=torch.zeros(3, dtype=torch.bool)), ValueError,
     ["key_mask", "at least one"]),
    (lambda: attention.attention_weights(torch.zeros(3, 3), key_mask=torch.ones(4, dtype=torch.bool)), ValueError,
     ["key_mask", "3 entries", "(4,)"]),
]


@pytest.mark.parametrize("call,exception,words", CASES, ids=[f"case{i:02d}" for i in range(len(CASES))])
def test_bad_input_is_refused_with_a_clear_message(call, exception, words):
    with pytest.raises(exception) as raised:
        call()
    message = str(raised.value)
    for word in words:
        assert word in message, f"{word!r} missing from {message!r}"


@pytest.mark.parametrize("length,offset,beyond", [(12, 0, "positions 10 to 11,"), (11, 0, "position 10,"),
                                                  (3, 9, "positions 10 to 11,"), (2, 12, "positions 12 to 13,")])
def test_a_too_long_input_names_only_the_positions_beyond_the_table(length, offset, beyond):
    with pytest.raises(ValueError) as raised:
        PE(torch.zeros(length, 6), offset=offset)
    assert f"x reaches {beyond} beyond the table's rows 0 to 9" in str(raised.value)


def test_a_learned_table_names_only_the_positions_it_has_no_row_for():
    from posenc.schemes import LearnedPositionalEmbedding

    with pytest.raises(ValueError) as raised:
        LearnedPositionalEmbedding(max_sequence_length=10, d_model=6)(torch.zeros(12, 6))
    assert "positions 10 to 11" in str(raised.value) and "positions 0 to 11" not in str(raised.value)


def test_huge_table_is_refused_before_allocating(monkeypatch):
    # If the check came after torch.empty, this would try to allocate 4 PB.
    monkeypatch.setattr(torch, "empty", lambda *a, **k: pytest.fail("allocated before checking"))
    with pytest.raises(ValueError, match="bytes"):
        sinusoidal_encoding(max_sequence_length=10**9, d_model=10**6)


def test_checks_survive_python_dash_O():
    import subprocess
    import sys

    code = (
        "from posenc import PositionalEncoding\nimport torch\n"
        "try:\n    PositionalEncoding(d_model=6, max_sequence_length=10)(torch.zeros(11, 6))\n"
        "except ValueError as e:\n    print('refused')\n"
    )
    result = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "refused"


def test_no_assert_statements_in_the_package():
    import ast
    import pathlib

    import posenc

    for path in pathlib.Path(posenc.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text())
        asserts = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assert)]
        assert not asserts, f"{path.name} uses assert at lines {asserts}"


def test_a_wrong_call_gets_pythons_own_message():
    with pytest.raises(TypeError, match=r"PositionalEncoding.__init__\(\) takes 1 positional argument but 3 were given"):
        PositionalEncoding(6, 10)
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'd_model'"):
        sinusoidal_encoding(max_sequence_length=10)


def test_a_value_is_checked_once_where_the_learner_passes_it(monkeypatch):
    from posenc import _checks

    tables = []
    monkeypatch.setattr(_checks, "check_table_fits", lambda shape, *args, **kwargs: tables.append(shape))
    encoding.stepwise_encoding(max_sequence_length=10, d_model=6)
    assert tables == [(2, 10, 6)]  # its own table; even_pe and odd_pe, called by it, do not check theirs again
    encoding.even_pe(max_sequence_length=10, d_model=6)
    assert tables == [(2, 10, 6), (10, 6)]  # called by the learner, even_pe checks
