"""Positions in a real pipeline, checked against Hugging Face `tokenizers` and `transformers` (as requirements.lock pins them).

- subwords: a byte-level BPE trained offline on the suite's frozen text, deterministic across processes, its
  pieces fed to the package's own padding, ids and one-hot rows; GPT-2's byte-to-character table for the space.
- position ids from an attention mask: `position_ids` equals what transformers' generation computes.
- a tiny randomly initialised Llama (RoPE) and GPT-2 (a learned position table), configs built here, nothing
  downloaded: on a left-padded batch with position ids each row gets the logits of that row alone. With naive
  positions GPT-2's padded row moves; Llama's does not (RoPE sees only m - n, and the pads are masked).
- Llama's rotate-half RoPE equals posenc's interleaved RoPE once the columns are reordered by
  `schemes.half_split_permutation`.
"""

from __future__ import annotations

import hashlib

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM
from transformers.convert_slow_tokenizer import bytes_to_unicode  # (GPT-2's table, as in openai/gpt-2)
from transformers.models.llama import modeling_llama

from posenc import schemes, subwords, tokens
from posenc.positions import position_ids

# The walkthrough's original corpus, fixed here: these tests hold facts of the checkers and the pipeline, which must
# not move when a teacher changes the running example (src/posenc/example.py).
CORPUS = ("My name is John", "My name is Grant", "What is your name?", "John is my friend")

BPE = subwords.train_bpe()
VOCAB = 64


# Subword tokens -------------------------------------------------------------------------------------------------


def test_a_rare_word_becomes_several_pieces_and_a_frequent_one_stays_whole():
    assert subwords.subword_tokens("My name is Grant", BPE) == ["My", "Ġname", "Ġis", "Ġ", "G", "r", "ant"]
    assert subwords.subword_tokens("The positional encoding", BPE) == ["The", "Ġpositional", "Ġencoding"]
    assert len(subwords.subword_tokens("unbelievably", BPE)) > 3
    # GPT-2's table gives the space byte the character Ġ: the pieces are GPT-2's kind.
    assert bytes_to_unicode()[ord(" ")] == "Ġ"
    for sentence in CORPUS:
        assert BPE.decode(BPE.encode(sentence).ids) == sentence  # nothing lost: bytes cover every text
        assert len(subwords.subword_tokens(sentence, BPE)) >= len(tokens.tokenize(sentence))


def test_the_pieces_go_through_the_same_padding_ids_and_one_hot_rows():
    vocabulary = subwords.subword_vocabulary(BPE)
    assert vocabulary.vocab_size == BPE.get_vocab_size() == subwords.DEFAULT_VOCAB_SIZE
    assert (vocabulary.pad_id, vocabulary.unk_id) == (0, 1)
    sentence = "My name is John"
    pieces = subwords.subword_tokens(sentence, BPE)
    ids = vocabulary.ids(tokens.pad(pieces, max_sequence_length=10))
    assert ids[: len(pieces)] == BPE.encode(sentence).ids and ids[len(pieces):] == [0] * (10 - len(pieces))
    assert subwords.subword_ids(sentence, BPE, max_sequence_length=10).tolist() == ids
    rows = tokens.one_hot(ids, vocab_size=vocabulary.vocab_size)
    assert rows.shape == (10, subwords.DEFAULT_VOCAB_SIZE) and rows.argmax(dim=1).tolist() == ids
    # The tokenizer's own left padding and attention mask agree with the package's.
    BPE.enable_padding(direction="left", pad_id=0, pad_token=tokens.PAD_TOKEN)
    try:
        encoded = BPE.encode_batch(["What is your name?", sentence, "Hi"])
    finally:
        BPE.no_padding()
    mask = torch.tensor([row.attention_mask for row in encoded])
    ids = torch.tensor([row.ids for row in encoded])
    assert torch.equal(mask.bool(), ids != 0)
    assert position_ids(mask)[1].tolist()[-len(pieces):] == list(range(len(pieces)))


# The vocabulary in id order, hashed: recorded from two fresh processes (tokenizers' Rust hash maps are seeded anew in
# each), so a match here is the same tokenizer as in any other process.
VOCABULARY_SHA256 = "382221c16084912c820c43e9a3c9c9728ff02d890b02b18b4e06dd0040e02b3e"


def test_training_is_deterministic_and_refuses_a_too_small_vocabulary():
    again = subwords.train_bpe()
    assert again.to_str() == BPE.to_str()
    vocabulary = subwords.subword_vocabulary(BPE).tokens
    assert hashlib.sha256("\n".join(vocabulary).encode()).hexdigest() == VOCABULARY_SHA256
    with pytest.raises(ValueError, match="vocab_size"):
        subwords.train_bpe(vocab_size=100)
    with pytest.raises(TypeError, match="tokenizer"):
        subwords.subword_tokens("My name", "not a tokenizer")


# Position ids from the attention mask, and tiny transformers models ----------------------------------------------


def left_padded_batch():
    """Row 0: 3 pads then the 6 tokens of `alone`; row 1: 9 tokens. Pads are id 0."""
    generator = torch.Generator().manual_seed(1)
    alone = torch.randint(1, VOCAB, (1, 6), generator=generator)
    other = torch.randint(1, VOCAB, (1, 9), generator=generator)
    ids = torch.cat([torch.cat([torch.zeros(1, 3, dtype=torch.long), alone], dim=1), other])
    return alone, other, ids, torch.tensor([[0, 0, 0, 1, 1, 1, 1, 1, 1], [1] * 9])


def llama():
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=64, pad_token_id=0)
    torch.manual_seed(0)
    return LlamaForCausalLM(config).eval()


def gpt2():
    config = GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=4, pad_token_id=0,
                        bos_token_id=1, eos_token_id=1)
    torch.manual_seed(0)
    return GPT2LMHeadModel(config).eval()


def test_position_ids_equal_what_transformers_generation_computes():
    _, _, ids, mask = left_padded_batch()
    model = llama()
    for attention_mask in (mask, mask.bool(), torch.ones_like(mask), torch.tensor([[0, 1, 1], [0, 0, 1]])):
        # transformers 5.23, generation/utils.py: GenerationMixin._prepare_position_ids_for_generation.
        theirs = model._prepare_position_ids_for_generation(ids[:, : attention_mask.shape[1]],
                                                              {"attention_mask": attention_mask})
        assert torch.equal(position_ids(attention_mask), theirs)


@pytest.mark.parametrize("make,naive_moves", [(llama, False), (gpt2, True)], ids=["llama-rope", "gpt2-learned"])
def test_a_left_padded_row_gets_the_logits_of_the_row_alone_with_position_ids(make, naive_moves):
    model = make()
    alone, other, ids, mask = left_padded_batch()
    with torch.no_grad():
        row_alone = model(alone).logits[0]
        counted = model(ids, attention_mask=mask, position_ids=position_ids(mask)).logits
        naive = model(ids, attention_mask=mask).logits
        assert float((counted[0, 3:] - row_alone).abs().max()) < 1e-5
        assert float((counted[1] - model(other).logits[0]).abs().max()) < 1e-5
        moved = float((naive[0, 3:] - row_alone).abs().max())
    assert (moved > 0.05) if naive_moves else (moved < 1e-5), moved


def test_transformers_decoding_with_its_cache_equals_its_full_pass():
    model = llama()
    ids = torch.randint(1, VOCAB, (1, 8), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        full = model(ids).logits
        output = model(ids[:, :5], use_cache=True)
        steps = [output.logits]
        for t in range(5, 8):
            output = model(ids[:, t:t + 1], past_key_values=output.past_key_values, use_cache=True)
            steps.append(output.logits)
    assert float((torch.cat(steps, dim=1) - full).abs().max()) < 1e-5


def test_llamas_rotate_half_rope_is_posencs_interleaved_rope_with_the_columns_reordered():
    head_dim, length = 8, 7
    model = llama()
    rotary = modeling_llama.LlamaRotaryEmbedding(model.config)
    generator = torch.Generator().manual_seed(3)
    q, k = torch.randn(2, 1, 4, length, head_dim, generator=generator)  # (batch 1, heads 4, seq, head_dim)
    position_ids = torch.arange(length)[None] + 5
    cos, sin = rotary(q, position_ids)
    assert cos.shape[-1] == head_dim == model.config.hidden_size // model.config.num_attention_heads
    theirs_q, theirs_k = modeling_llama.apply_rotary_pos_emb(q, k, cos, sin)
    # x in interleaved order is x_half[..., inverse]; posenc rotates it, and P takes the result back to half-split.
    P = schemes.half_split_permutation(d=head_dim)
    inverse = torch.argsort(P)
    ours_q = schemes.apply_rotary(q[..., inverse], offset=5)[..., P]
    ours_k = schemes.apply_rotary(k[..., inverse], offset=5)[..., P]
    assert float((ours_q - theirs_q).abs().max()) < 1e-5 and float((ours_k - theirs_k).abs().max()) < 1e-5
    # The scores do not see the column order at all.
    ours_scores = schemes.apply_rotary(q[..., inverse], offset=5) @ schemes.apply_rotary(k[..., inverse], offset=5).mT
    assert float((ours_scores - theirs_q @ theirs_k.mT).abs().max()) < 1e-4
