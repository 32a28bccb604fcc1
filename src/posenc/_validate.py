"""Argument checks shared by every module.

Each check raises TypeError (wrong kind of value) or ValueError (right kind, wrong
value) with a message that names the argument, shows the value and says what is
allowed. They are plain `if`s, not `assert`s, so `python -O` cannot remove them.

Sizes are checked against this machine's memory before anything is allocated: a
size itself is capped at the length of the longest float64 vector this machine can
hold (`check_size`), and a table of several sizes by its bytes (`check_table_fits`),
so a huge size is a ValueError, never the allocator's error.

Two predicates name the kinds of value most checks start from: `is_real` (a real
number, not a bool) and `is_sequence` (a list or tuple, not a str).

A function that teaches a formula declares its checks in one line, `@checked(d_model=SIZE, base=BASE)`, so that its
body is the formula alone; the rules (SIZE, BASE, ...) are at the end of this module.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import numbers
import os
from collections.abc import Callable, Iterable, Sequence

import torch


def short(value: object) -> str:
    """A value as an error message shows it: tensors by shape and dtype, long reprs cut."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_real(value: object, *, whole: bool = False) -> bool:
    """True for a real number (a whole one with whole=True); False for a bool, which Python counts as an int."""
    return not isinstance(value, bool) and isinstance(value, numbers.Integral if whole else numbers.Real)


def is_sequence(value: object) -> bool:
    """True for a list, a tuple or another sequence of items; False for a str or bytes, a sequence of characters."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def check_size(name: str, value: object, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return `value` as an int if it is a whole number in [minimum, maximum] (bool is refused).

    Without a `maximum`, a size is capped at the longest float64 vector this machine's
    memory holds: a list of `value` indices or numbers then needs no check of its own.
    """
    allowed = f"an int >= {minimum}" if maximum is None else f"an int from {minimum} to {maximum}"
    if not is_real(value, whole=True):
        raise TypeError(f"{name} must be {allowed}, got {short(value)} of type {type(value).__name__}")
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    if maximum is None and value * ENTRY_BYTES > _memory_bytes():
        raise ValueError(f"{name}={value!r} is too large: a list that long, at {ENTRY_BYTES} bytes an entry, needs "
                         f"{value * ENTRY_BYTES} bytes, more than this machine's {_memory_bytes()} bytes of memory")
    return int(value)


def check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {short(value)} of type {type(value).__name__}")
    return value


def check_str(name: str, value: object, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        allowed = "a str or None" if optional else "a str"
        raise TypeError(f"{name} must be {allowed}, got {short(value)} of type {type(value).__name__}")
    return value


def check_device(value: object, name: str = "device") -> torch.device | None:
    """None, or a device this machine has ("cpu", or "cuda:0" where there is a GPU)."""
    if value is None:
        return None
    if not isinstance(value, (str, torch.device)):
        raise TypeError(f"{name} must be None, a str such as 'cpu', or a torch.device, got {short(value)}")
    try:
        device = torch.device(value)
        torch.empty(0, device=device)
    except (RuntimeError, ValueError, AssertionError) as error:  # AssertionError: torch's "not compiled with CUDA"
        raise ValueError(f"{name} must be one this machine has, such as 'cpu'; {value!r} is not ({error})") from None
    return device


def check_base(value: object, name: str = "base") -> float:
    """The base of the geometric progression of wavelengths: a real number > 1."""
    if not is_real(value):
        raise TypeError(f"{name} must be a real number > 1, got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not value > 1.0 or value == float("inf"):
        # base <= 1 makes every wavelength equal (1) or shrink instead of grow.
        raise ValueError(f"{name} must be a finite number > 1, got {value!r}")
    return value




def check_float_dtype(name: str, value: object) -> torch.dtype:
    """`value` if it is a floating-point torch.dtype."""
    if not isinstance(value, torch.dtype):
        raise TypeError(f"{name} must be a torch.dtype such as torch.float32, got {value!r}")
    if not value.is_floating_point:
        raise ValueError(f"{name} must be a floating-point dtype (float16, bfloat16, float32, float64), got {value}")
    return value


def check_tensor(name: str, value: object, *, ndim: tuple[int, ...] | None = None) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.is_meta:
        raise ValueError(f"{name} is a tensor on the 'meta' device, which holds no numbers; pass one on 'cpu'")
    if ndim is not None and value.dim() not in ndim:
        allowed = " or ".join(f"{n}-D" for n in ndim)
        raise ValueError(f"{name} must be {allowed}, got shape {tuple(value.shape)}")
    return value


def check_floating_tensor(name: str, value: object, *, ndim: tuple[int, ...] | None = None) -> torch.Tensor:
    value = check_tensor(name, value, ndim=ndim)
    if not value.is_floating_point():
        raise TypeError(f"{name} must hold floating-point numbers, got dtype {value.dtype}")
    return value


def check_int_tensor(name: str, value: object, *, ndim: tuple[int, ...] | None = None, what: str = "") -> torch.Tensor:
    """An integer tensor (not bool); `what` says what its numbers are."""
    check_tensor(name, value, ndim=ndim)
    if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
        raise TypeError(f"{name} must be an integer tensor{what}, got dtype {value.dtype}")
    return value


def check_finite(name: str, value: torch.Tensor) -> torch.Tensor:
    """For pictures: a NaN or inf has no colour and no place on an axis."""
    if value.numel() and not bool(torch.isfinite(value).all()):
        raise ValueError(f"{name} must hold finite numbers to be drawn, got NaN or inf in {short(value)}")
    return value


def common_dtype(**tensors: torch.Tensor) -> torch.dtype:
    """The dtype two or more floating tensors are computed in: the widest of theirs (torch's promotion)."""
    dtype = None
    for tensor in tensors.values():
        dtype = tensor.dtype if dtype is None else torch.promote_types(dtype, tensor.dtype)
    return dtype


# The widest entry a list of `size` numbers has in this package: float64.
ENTRY_BYTES = 8


@functools.cache
def _memory_bytes() -> int:
    """This machine's memory: the largest table a size check lets through (tests lower it)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not every platform reports it
        return 64 * 2**30


def check_table_fits(shape: tuple[int, ...], dtype: torch.dtype | int, *, name: str = "table",
                     arguments: str = "max_sequence_length or d_model") -> int:
    """Refuse, before allocating, a tensor larger than this machine's memory.

    `dtype` is the tensor's dtype, or the bytes per entry of a non-tensor (a list);
    `arguments` names the sizes the caller can lower.
    """
    if any(n >= 2**62 for n in shape):  # even an empty tensor cannot have a side this long
        raise ValueError(f"a {name} of shape {shape} has a side longer than a tensor can have; use a smaller {arguments}")
    count = 1
    for n in shape:
        count *= n
    each = dtype.itemsize if isinstance(dtype, torch.dtype) else int(dtype)
    size = count * each
    available = _memory_bytes()
    if size > available:
        raise ValueError(
            f"a {name} of shape {shape} at {each} bytes an entry needs {size} bytes ({size / 2**30:.1f} GiB), "
            f"more than this machine's {available} bytes of memory; use a smaller {arguments}"
        )
    return size


def check_rows_to_add(x: object, *, d_model: int, offset: object,
                      max_sequence_length: int | None = None) -> tuple[int, int]:
    """For a module that adds one row per position to x: x checked ((seq, d_model) or (batch, seq, d_model),
    floating point) and `offset` checked; returns (offset, number of positions in x). With `max_sequence_length`,
    the rows of a table built from a formula, x must also stay within them."""
    check_floating_tensor("x", x, ndim=(2, 3))
    if x.shape[-1] != d_model:
        raise ValueError(f"x must have d_model={d_model} features in its last dimension, got shape {tuple(x.shape)}")
    offset, length = check_size("offset", offset, minimum=0), x.shape[-2]
    if max_sequence_length is None:
        return offset, length
    beyond = positions_beyond(offset=offset, length=length, max_sequence_length=max_sequence_length)
    if beyond:
        raise ValueError(
            f"x reaches {beyond}, beyond the table's rows 0 to {max_sequence_length - 1} "
            f"(max_sequence_length={max_sequence_length}; x has {length} positions, offset={offset}); "
            "build the module with a larger max_sequence_length"
        )
    return offset, length


def positions_beyond(*, offset: int, length: int, max_sequence_length: int) -> str:
    """The positions of rows `offset .. offset + length - 1` that a table of max_sequence_length rows does not have,
    in words ("position 10", "positions 10 to 11"); "" when it has them all. For the error message of a module
    that adds one table row per position."""
    first, last = max(offset, max_sequence_length), offset + length - 1
    if first > last:
        return ""
    return f"position {first}" if first == last else f"positions {first} to {last}"


def check_halves(even_PE: object, odd_PE: object) -> None:
    """The sine and cosine halves of a table, to interleave: 2-D floating tensors of L rows, with as many cosine
    columns as sine columns or one fewer (odd d_model)."""
    check_floating_tensor("even_PE", even_PE, ndim=(2,))
    check_floating_tensor("odd_PE", odd_PE, ndim=(2,))
    rows, n_even = even_PE.shape
    if odd_PE.shape[0] != rows or odd_PE.shape[1] not in (n_even, n_even - 1):
        raise ValueError(
            f"odd_PE must have shape ({rows}, {n_even}) or ({rows}, {n_even - 1}) to pair with even_PE of shape "
            f"{tuple(even_PE.shape)}, got {tuple(odd_PE.shape)}"
        )


def check_projection(one_hot_rows: object, W_E: object) -> None:
    """For `one_hot_rows @ W_E`: floating tensors, as many one-hot columns as W_E has rows (vocab_size)."""
    check_floating_tensor("one_hot_rows", one_hot_rows, ndim=(2, 3))
    check_floating_tensor("W_E", W_E, ndim=(2,))
    if one_hot_rows.shape[-1] != W_E.shape[0]:
        raise ValueError(
            f"one_hot_rows has {one_hot_rows.shape[-1]} columns but W_E has {W_E.shape[0]} rows; "
            "both must equal vocab_size"
        )


def check_lookup(ids: object, W_E: object) -> None:
    """For `W_E[ids]`: an integer tensor of ids, each a row of the floating matrix W_E."""
    check_int_tensor("ids", ids, ndim=(1, 2))
    check_floating_tensor("W_E", W_E, ndim=(2,))
    vocab_size = W_E.shape[0]
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError(f"ids must lie in [0, vocab_size={vocab_size}), got values from {int(ids.min())} to {int(ids.max())}")


def check_ids(name: str, ids: object) -> list[int]:
    """A list of ints >= 0 (indices or token ids given to a function, not a learner's answer)."""
    if not is_sequence(ids) or not all(is_real(i, whole=True) and i >= 0 for i in ids):
        raise TypeError(f"{name} must be a list of ints >= 0, got {short(ids)}")
    return [int(i) for i in ids]


def check_matrix_to_draw(name: str, value: object) -> torch.Tensor:
    """A non-empty, finite, floating 2-D tensor to draw, detached and as float32."""
    check_floating_tensor(name, value, ndim=(2,))
    if not value.numel():
        raise ValueError(f"{name} must have at least one row and one column to be drawn, got shape {tuple(value.shape)}")
    return check_finite(name, value.detach().float())


def check_attention_mask(value: object, *, ndim: tuple[int, ...] = (2,)) -> torch.Tensor:
    """An `attention_mask` as tokenizers return it (bool or integer, 1 for a real token, 0 for padding) as a LongTensor."""
    check_tensor("attention_mask", value, ndim=ndim)
    if value.is_floating_point() or value.is_complex():
        raise TypeError(f"attention_mask must be a bool or integer tensor of 0s and 1s, got dtype {value.dtype}")
    mask = value.long()
    if not bool(((mask == 0) | (mask == 1)).all()):
        others = sorted(set(mask[(mask != 0) & (mask != 1)].tolist()))[:5]
        raise ValueError(f"attention_mask must hold only 0 (padding) and 1 (a real token), got also {others}")
    return mask


def check_str_list(name: str, value: object, *, if_str: str = "") -> tuple[str, ...]:
    """A list or tuple of str, as a tuple; `if_str` is the hint for a single str passed instead of a list."""
    if isinstance(value, str) and if_str:
        raise TypeError(f"{name} must be a list of str, got a single str {short(value)}; {if_str}")
    if not is_sequence(value):
        raise TypeError(f"{name} must be a list of str, got {short(value)} of type {type(value).__name__}")
    for k, item in enumerate(value):
        if not isinstance(item, str):
            raise TypeError(f"{name} must be a list of str, but item {k} is {short(item)} of type {type(item).__name__}")
    return tuple(value)


def check_vocabulary(tokens: object, *, special: tuple[str, ...]) -> tuple[str, ...]:
    """A vocabulary's tokens: a list of str, each once, the `special` tokens among them."""
    tokens = check_str_list("tokens", tokens)
    missing = [t for t in special if t not in tokens]
    if missing:
        raise ValueError(f"tokens must contain the special tokens {special}, missing {missing}")
    if len(set(tokens)) != len(tokens):
        repeated = sorted({t for t in tokens if tokens.count(t) > 1})
        raise ValueError(f"tokens must be unique, repeated: {repeated}")
    return tokens


def check_length(tokens: Sequence[str], *, max_sequence_length: int) -> None:
    """A sentence of at most max_sequence_length tokens: a longer one is refused, not cut."""
    if len(tokens) > max_sequence_length:
        raise ValueError(
            f"the sentence has {len(tokens)} tokens, more than max_sequence_length={max_sequence_length}; "
            f"shorten it or raise max_sequence_length to at least {len(tokens)}"
        )


def check_id_list(ids: object, *, vocab_size: int) -> list[int]:
    """ids (a list of ints or a 1-D integer tensor) as a list of ints, each checked to lie in [0, vocab_size)."""
    if isinstance(ids, torch.Tensor):
        ids = check_int_tensor("ids", ids, ndim=(1,)).tolist()
    elif isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise TypeError(f"ids must be a list of ints or a 1-D integer tensor, got {short(ids)}")
    ids = list(ids)
    for i in ids:
        if not is_real(i, whole=True):
            raise TypeError(f"ids must hold ints, got {short(i)} of type {type(i).__name__} among them")
        if not 0 <= i < vocab_size:
            raise ValueError(f"ids must lie in [0, vocab_size={vocab_size}), got {i}")
    return [int(i) for i in ids]


# The checks of the teaching modules' functions that relate several arguments ----------

# Positions are exact in float64 up to 2**53; an angle p * frequency beyond that means nothing.
MAX_POSITION = 2**53
LAYOUTS = ("interleaved", "half_split")


def broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape the given shapes broadcast to, or None if they do not (torch's rule, without its cost)."""
    result: list[int] = []
    for shape in shapes:
        shape = tuple(shape)
        if len(shape) > len(result):
            result = [1] * (len(shape) - len(result)) + result
        for i, n in enumerate(shape, start=len(result) - len(shape)):
            if result[i] == 1:
                result[i] = n
            elif n not in (1, result[i]):
                return None
    return tuple(result)


# Attention ---------------------------------------------------------------------------------------


def check_qkv(x: object, weights: object, projection_type: type) -> None:
    check_floating_tensor("x", x, ndim=(2, 3))
    if not isinstance(weights, projection_type):
        raise TypeError(f"weights must be a posenc.attention.ProjectionWeights, got {type(weights).__name__}")
    for name, matrix in zip(weights._fields, weights, strict=True):
        check_floating_tensor(f"weights.{name}", matrix, ndim=(2,))
        if matrix.shape != weights.W_Q.shape:
            raise ValueError(f"weights' three matrices must have one shape, got W_Q {tuple(weights.W_Q.shape)} "
                             f"and {name} {tuple(matrix.shape)}")
    d_model = weights.W_Q.shape[0]
    if x.shape[-1] != d_model:
        raise ValueError(f"x must have d_model={d_model} features in its last dimension, got shape {tuple(x.shape)}")


def check_query_key(Q: object, K: object) -> None:
    check_floating_tensor("Q", Q, ndim=(2, 3, 4))
    check_floating_tensor("K", K, ndim=(2, 3, 4))
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last dimension d_k, got {tuple(Q.shape)} and {tuple(K.shape)}")
    if Q.dim() > 2 and K.dim() > 2 and Q.shape[:-2] != K.shape[:-2]:
        raise ValueError(f"Q and K must hold the same number of sequences (and heads), got shapes "
                         f"{tuple(Q.shape)} and {tuple(K.shape)}")


def check_masks(shape: torch.Size, key_mask: object, causal: object, mask: object) -> torch.Tensor | None:
    """The keys each query may look at, from the three masks `attention_weights` takes, shaped to broadcast over
    scores of `shape` (None: every key); refused if a row would keep no key."""
    causal = check_flag("causal", causal)
    keep = None if mask is None else _query_key_mask(mask, shape)
    if key_mask is not None:
        check_tensor("key_mask", key_mask, ndim=(1, 2))
        if key_mask.dtype != torch.bool:
            raise TypeError(f"key_mask must be a bool tensor, got dtype {key_mask.dtype}")
        if key_mask.shape[-1] != shape[-1]:
            raise ValueError(f"key_mask must have {shape[-1]} entries per row, got shape {tuple(key_mask.shape)}")
        if key_mask.dim() == 2 and len(shape) > 2 and key_mask.shape[0] != shape[0]:
            raise ValueError(f"scores and key_mask must hold the same number of sequences (batch size), got shapes "
                             f"{tuple(shape)} and {tuple(key_mask.shape)}")
        # (batch, seq) -> (batch, 1, ..., 1, seq): the same keys hidden for every head and every query.
        middle = (1,) * max(len(shape) - key_mask.dim(), 1)
        real = key_mask.reshape(key_mask.shape[:-1] + middle + key_mask.shape[-1:])
        keep = real if keep is None else keep & real
    if causal:
        if shape[-2] != shape[-1]:
            raise ValueError(f"scores must be square (one row and one column per token) for causal=True, "
                             f"got shape {tuple(shape)}")
        if shape[-1]:
            from .attention import causal_mask  # the one causal mask (imported here: attention imports this module)

            visible = causal_mask(sequence_length=shape[-1])
            keep = visible if keep is None else keep & visible
    if keep is not None and not bool(keep.any(dim=-1).all()):
        names = "key_mask" if mask is None else "mask" if key_mask is None else "key_mask and mask together"
        raise ValueError(f"{names} must keep at least one key in every row, or the softmax has nothing to weigh"
                         + (" (with causal=True, the first token must be real)" if causal else ""))
    return keep


def _query_key_mask(mask: object, shape: torch.Size) -> torch.Tensor:
    """mask checked against scores of `shape` and shaped to broadcast over them (a head dimension added where needed)."""
    check_tensor("mask", mask, ndim=(2, 3))
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a bool tensor (True = query r may look at key c), got dtype {mask.dtype}")
    if mask.shape[-2:] != shape[-2:]:
        raise ValueError(f"mask must be (seq, seq) or (batch, seq, seq) with the scores' last two sides "
                         f"{tuple(shape[-2:])}, got shape {tuple(mask.shape)}")
    if mask.dim() == 3:
        if len(shape) == 2 or mask.shape[0] != shape[0]:
            raise ValueError(f"a 3-D mask must hold one (seq, seq) mask per sequence of scores, got mask of shape "
                             f"{tuple(mask.shape)} and scores of shape {tuple(shape)}")
        if len(shape) == 4:
            return mask[:, None]  # the same mask for every head
    return mask


def check_attend(q: object, k: object, v: object, bias: object, keep: object) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_floating_tensor(name, t)
        if t.dim() < 2 or t.dtype != q.dtype:
            raise ValueError(f"{name} must have at least 2 dimensions (..., seq, d) and q's dtype {q.dtype}, "
                             f"got {short(t)}")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(f"q and k must share their last dimension d_k, and k and v their number of keys, got q "
                         f"{tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    batch = broadcast(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if batch is None:
        raise ValueError(f"q, k and v must have batch dimensions that broadcast, got {tuple(q.shape)}, "
                         f"{tuple(k.shape)}, {tuple(v.shape)}")
    scores = batch + (q.shape[-2], k.shape[-2])
    for name, t, kind in (("bias", bias, "floating"), ("keep", keep, "bool")):
        if t is None:
            continue
        check_tensor(name, t)
        if (t.is_floating_point() if kind == "floating" else t.dtype == torch.bool) is False:
            raise TypeError(f"{name} must be a {kind} tensor, got dtype {t.dtype}")
        if broadcast(scores, t.shape) != scores:
            raise ValueError(f"{name} must broadcast to the scores' shape {tuple(scores)}, got shape {tuple(t.shape)}")


def check_document_ids(document_ids: object) -> torch.Tensor:
    check_int_tensor("document_ids", document_ids, ndim=(1, 2), what=" (one document id per token)")
    if document_ids.shape[-1] == 0:
        raise ValueError(f"document_ids must hold at least one position (one document id per token), "
                         f"got shape {tuple(document_ids.shape)}")
    check_table_fits(tuple(document_ids.shape) + document_ids.shape[-1:], torch.bool, name="mask",
                     arguments="document_ids")
    return document_ids


def check_lengths(lengths: object) -> list[int]:
    if not is_sequence(lengths) or not lengths:
        raise TypeError(f"lengths must be a non-empty list of ints >= 1 (one length per document), got {short(lengths)}")
    lengths = [check_size(f"lengths[{n}]", length) for n, length in enumerate(lengths)]
    check_table_fits((sum(lengths),), torch.int64, name="row of document ids", arguments="lengths")
    return lengths


def check_split(x: object, num_heads: object) -> int:
    check_tensor("x", x, ndim=(2, 3))
    num_heads = check_size("num_heads", num_heads)
    d_model = x.shape[-1]
    if d_model == 0 or d_model % num_heads:
        raise ValueError(f"x's last dimension (d_model={d_model}) must be a positive multiple of "
                         f"num_heads={num_heads}, so that every head gets d_model / num_heads columns; "
                         f"got x of shape {tuple(x.shape)}")
    return num_heads


def check_multi_head(x: object, weights: object, weights_type: type, num_heads: object, key_mask: object,
                     mask: object) -> int:
    check_floating_tensor("x", x, ndim=(2, 3))
    if not isinstance(weights, weights_type):
        raise TypeError(f"weights must be a posenc.attention.MultiHeadWeights (see multi_head_weights), "
                        f"got {type(weights).__name__}")
    num_heads = check_size("num_heads", num_heads)
    check_floating_tensor("weights.W_O", weights.W_O, ndim=(2,))
    if key_mask is not None and x.dim() == 2 and isinstance(key_mask, torch.Tensor) and key_mask.dim() != 1:
        raise ValueError(f"key_mask must be 1-D (seq,) for one sequence x of shape {tuple(x.shape)}, "
                         f"got shape {tuple(key_mask.shape)}")
    if mask is not None and x.dim() == 2 and isinstance(mask, torch.Tensor) and mask.dim() != 2:
        raise ValueError(f"mask must be 2-D (seq, seq) for one sequence x of shape {tuple(x.shape)}, "
                         f"got shape {tuple(mask.shape)}")
    return num_heads


def check_output_weights(weights: object, num_heads: int) -> None:
    """After project_qkv has checked W_Q, W_K and W_V: W_O against them, and num_heads against their columns."""
    width = weights.W_V.shape[1]
    if weights.W_O.shape != (width, weights.W_Q.shape[0]):
        raise ValueError(f"weights.W_O must have shape {(width, weights.W_Q.shape[0])} (heads' columns x d_model), "
                         f"got {tuple(weights.W_O.shape)}")
    if width % num_heads:
        raise ValueError(f"num_heads={num_heads} must divide the {width} columns of W_Q, W_K and W_V")


# Position ids ------------------------------------------------------------------------------------


def check_position_variant(attention_mask: object, document_ids: object, length: object,
                           offset: object) -> tuple[str, torch.Tensor | int, int]:
    """Which variant of `position_ids` is asked for (exactly one of the three), its checked input, and the offset."""
    given = [name for name, value in (("attention_mask", attention_mask), ("document_ids", document_ids),
                                      ("length", length)) if value is not None]
    if len(given) != 1:
        raise TypeError(f"position_ids takes exactly one of attention_mask, document_ids or length, got "
                        f"{', '.join(given) or 'none of them'}")
    if attention_mask is not None:
        value = check_attention_mask(attention_mask, ndim=(1, 2))
    elif document_ids is not None:
        value = check_document_ids(document_ids)
    else:
        value = check_size("length", length, minimum=0, maximum=MAX_POSITION)
        if value > 2**24:  # a long row of ids: does it fit in memory?
            check_table_fits((value,), torch.int64, name="row of position ids", arguments="length")
    offset = check_size("offset", offset, minimum=0, maximum=MAX_POSITION)
    return given[0], value, offset


# Schemes -----------------------------------------------------------------------------------------


def check_even_d(d: object, *, square: bool = False) -> int:
    d = check_size("d", d)
    if d % 2:
        raise ValueError(f"d must be even: rotary encoding turns the pairs (0, 1), (2, 3), ..., and d={d} leaves the last "
                         "column without a partner")
    if square:
        check_table_fits((d, d), torch.float64, name="rotation matrix", arguments="d")
    return d


def check_frequencies(frequencies: object, *, pairs: int, name: str) -> torch.Tensor:
    """`frequencies` as float64: a 1-D floating tensor of `pairs` finite angles per position."""
    check_floating_tensor("frequencies", frequencies, ndim=(1,))
    if frequencies.shape[0] != pairs:
        raise ValueError(f"frequencies must hold one angle per pair, {name} = {pairs}, got {short(frequencies)}")
    frequencies = frequencies.detach().to(torch.float64)
    if frequencies.numel() and not bool(torch.isfinite(frequencies).all()):
        raise ValueError(f"frequencies must be finite numbers, got NaN or inf in {short(frequencies)}")
    return frequencies


def check_angles(max_sequence_length: object, d: object, base: object, offset: object,
                 frequencies: object) -> tuple[int, int, float, int, torch.Tensor | None]:
    length = check_size("max_sequence_length", max_sequence_length, minimum=0)
    d = check_even_d(d)
    base = check_base(base)
    offset = check_size("offset", offset, minimum=0, maximum=MAX_POSITION - length)
    # The frequency vector is allocated even when there are no positions.
    check_table_fits((max(length, 1), d // 2), torch.float64, name="table of angles", arguments="max_sequence_length or d")
    if frequencies is not None:
        frequencies = check_frequencies(frequencies, pairs=d // 2, name="d // 2")
    return length, d, base, offset, frequencies


def check_rotary(x: object, base: object, offset: object, layout: object, frequencies: object,
                 rotary_dim: object) -> tuple[int, float, int, torch.Tensor | None]:
    """`apply_rotary`'s arguments: the number of columns it turns, base, offset, and the frequencies as float64
    (or None)."""
    check_floating_tensor("x", x)
    if x.dim() < 2:
        raise ValueError(f"x must have at least 2 dimensions (..., seq, d), got shape {tuple(x.shape)}")
    one_of(LAYOUTS)("layout", layout)
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"x's last dimension d must be even: rotary encoding turns pairs of columns, got shape {tuple(x.shape)}")
    if rotary_dim is not None:
        rotary_dim = check_size("rotary_dim", rotary_dim, minimum=2, maximum=max(d, 2))
        if rotary_dim % 2 or rotary_dim > d:
            raise ValueError(f"rotary_dim must be an even number of columns from 2 to x's last dimension d={d}, "
                             f"got {rotary_dim}")
    turned = d if rotary_dim is None else rotary_dim
    if frequencies is not None:
        name = "x's last dimension d // 2" if rotary_dim is None else "rotary_dim // 2"
        frequencies = check_frequencies(frequencies, pairs=turned // 2, name=name)
    offset = check_size("offset", offset, minimum=0, maximum=MAX_POSITION - x.shape[-2])
    return turned, check_base(base), offset, frequencies


def check_rotate_pairs(x: object, angles: object, layout: object) -> None:
    check_floating_tensor("x", x)
    check_floating_tensor("angles", angles)
    one_of(LAYOUTS)("layout", layout)
    if x.dim() < 1 or x.shape[-1] % 2:
        raise ValueError(f"x's last dimension must be even (pairs of columns), got shape {tuple(x.shape)}")
    pairs = x.shape[:-1] + (x.shape[-1] // 2,)
    if broadcast(pairs, angles.shape) != pairs:
        raise ValueError(f"angles must broadcast to {tuple(pairs)}, one angle per pair of x, got shape "
                         f"{tuple(angles.shape)}")


def check_linear_bias(slopes: object, distance: object) -> None:
    check_floating_tensor("slopes", slopes, ndim=(1,))
    check_tensor("distance", distance)
    if distance.dim() < 2 or distance.dtype == torch.bool or distance.is_complex():
        raise ValueError(f"distance must be a real (..., queries, keys) tensor, got {short(distance)}")
    if broadcast(slopes.shape + (1, 1), distance.shape) is None:
        raise ValueError(f"distance must broadcast with one slope per head, got slopes {tuple(slopes.shape)} and "
                         f"distance {tuple(distance.shape)}")


def check_same_word(word: object, weights: object, weights_type: type, scheme: object, schemes: tuple[str, ...],
                    query_position: object, offsets: object, maximum: int) -> tuple[int, list[int]]:
    check_floating_tensor("word", word, ndim=(1,))
    if not isinstance(weights, weights_type):
        raise TypeError(f"weights must be attention.projection_weights(...)'s ProjectionWeights, got {type(weights).__name__}")
    d_model = word.shape[0]
    if weights.W_Q.shape[0] != d_model or weights.W_K.shape != weights.W_Q.shape:
        raise ValueError(f"weights must map d_model={d_model} features (the word's length), got W_Q of shape "
                         f"{tuple(weights.W_Q.shape)} and W_K of shape {tuple(weights.W_K.shape)}")
    one_of(schemes)("scheme", scheme)
    query_position = check_size("query_position", query_position, minimum=0, maximum=maximum)
    if isinstance(offsets, (str, bytes)) or not isinstance(offsets, Sequence):
        raise TypeError(f"offsets must be a list or range of ints, got {type(offsets).__name__}")
    if len(offsets) == 0:
        raise ValueError("offsets must hold at least one offset, got an empty one")
    # A key sits at query_position + k, which must be a position from 0 on.
    offsets = [check_size(f"offsets[{n}]", k, minimum=-query_position, maximum=maximum - query_position)
               for n, k in enumerate(offsets)]
    length = max(max(offsets) + query_position, query_position) + 1
    check_table_fits((length, d_model), torch.float64, name="table of positions", arguments="query_position or offsets")
    if scheme == "rotary" and weights.W_Q.shape[1] % 2:
        raise ValueError(f"rotary needs an even d_k to turn pairs of columns, got W_Q of shape {tuple(weights.W_Q.shape)}")
    return query_position, offsets


# The tiny models ---------------------------------------------------------------------------------


def check_settings(settings: object, settings_type: type) -> object:
    """`settings`, or the default `settings_type()` for None."""
    if settings is None:
        return settings_type()
    if not isinstance(settings, settings_type):
        raise TypeError(f"settings must be a {settings_type.__module__}.{settings_type.__name__} or None, "
                        f"got {type(settings).__name__}")
    return settings


def check_settings_fields(s: object) -> None:
    """An `models.Settings`' sizes."""
    check_size("vocab_size", s.vocab_size, minimum=2, maximum=1000)
    check_size("shortest", s.shortest, minimum=2, maximum=512)
    check_size("longest", s.longest, minimum=s.shortest, maximum=512)
    check_size("d_model", s.d_model, minimum=2, maximum=512)
    check_size("num_heads", s.num_heads, minimum=1, maximum=64)
    check_size("num_layers", s.num_layers, minimum=1, maximum=12)
    check_size("steps", s.steps, minimum=1, maximum=100_000)
    check_size("batch_size", s.batch_size, minimum=1, maximum=4096)
    check_size("seed", s.seed, minimum=0, maximum=2**63 - 1)
    check_flag("causal", s.causal)
    check_flag("scale_embeddings", s.scale_embeddings)
    if s.d_model % s.num_heads or (s.d_model // s.num_heads) % 2:
        raise ValueError(f"d_model must be num_heads times an even head size (rotary turns pairs of columns), "
                         f"got d_model={s.d_model}, num_heads={s.num_heads}")
    check_learning_rate(s.learning_rate)


def check_learning_rate(rate: object) -> float:
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate < 1:
        raise ValueError(f"learning_rate must be a number in (0, 1), got {rate!r}")
    return rate


def check_attention_layer(scheme: object, d_model: object, num_heads: object, causal: object, head_dim: object,
                          rotary_dim: object, base: object) -> tuple[str, int, int, bool, int, int]:
    """`models.Attention`'s arguments: (scheme, d_model, num_heads, causal, head_dim, rotary_dim) with the defaults
    filled in (head_dim d_model // num_heads, rotary_dim head_dim)."""
    from .models import SCHEMES

    scheme = one_of(SCHEMES)("scheme", scheme)
    d_model = check_size("d_model", d_model, minimum=2, maximum=512)
    num_heads = check_size("num_heads", num_heads, minimum=1, maximum=64)
    causal = check_flag("causal", causal)
    if d_model % num_heads or (d_model // num_heads) % 2:
        raise ValueError(f"d_model must be num_heads times an even head size (rotary turns pairs of columns), "
                         f"got d_model={d_model}, num_heads={num_heads}")
    head_dim = d_model // num_heads if head_dim is None else check_size("head_dim", head_dim, minimum=2, maximum=512)
    rotary_dim = head_dim if rotary_dim is None else check_size("rotary_dim", rotary_dim, minimum=2, maximum=512)
    if rotary_dim % 2 or rotary_dim > head_dim:
        raise ValueError(f"rotary_dim must be an even number from 2 to head_dim={head_dim}, got {rotary_dim}")
    check_base(base)
    return scheme, d_model, num_heads, causal, head_dim, rotary_dim


def check_layer_input(x: object, dtype: torch.dtype, d_model: int) -> int:
    """x's sequence length, once x is known to be (batch, seq, d_model) floats of the layer's dtype."""
    check_floating_tensor("x", x, ndim=(3,))
    if x.dtype != dtype:  # a matrix product needs both sides in one dtype
        raise TypeError(f"x must have the layer's dtype {dtype}, got {x.dtype}")
    if x.shape[-1] != d_model or x.shape[1] == 0:
        raise ValueError(f"x must have shape (batch, seq >= 1, d_model={d_model}), got {tuple(x.shape)}")
    return x.shape[1]


def check_model_ids(ids: object, settings: object, max_sequence_length: int | None, scheme: str) -> None:
    """Token ids a `TinyTransformer` can read: (batch, seq) int64, in its vocabulary, no longer than its positions."""
    from .models import FORMULA_LENGTH

    check_tensor("ids", ids, ndim=(2,))
    if ids.dtype != torch.int64:
        raise TypeError(f"ids must be an int64 tensor of token ids, got dtype {ids.dtype}")
    if ids.numel() and not (0 <= int(ids.min()) and int(ids.max()) < settings.vocab_size):
        raise ValueError(f"ids must be token ids from 0 to {settings.vocab_size - 1}, "
                         f"got values up to {int(ids.max())}")
    limit = FORMULA_LENGTH if max_sequence_length is None else max_sequence_length
    if not 1 <= ids.shape[1] <= limit:
        raise ValueError(f"ids must have 1 to {limit} positions for the {scheme!r} scheme, "
                         f"got shape {tuple(ids.shape)}")
    check_table_fits((ids.shape[0], settings.num_heads, ids.shape[1], ids.shape[1]), torch.float32,
                     name="attention scores", arguments="batch or sequence length")


def check_tiny_model(model: object, model_type: type, *, ids: object = None) -> None:
    """A model of `model_type`; with `ids`, token ids of at least 2 positions (a query with a previous token)."""
    if not isinstance(model, model_type):
        raise TypeError(f"model must be a posenc.models.TinyTransformer, got {type(model).__name__}")
    if ids is not None:
        check_tensor("ids", ids, ndim=(2,))
        if ids.shape[1] < 2:
            raise ValueError(f"ids must have at least 2 positions, so that a query has a previous token, "
                             f"got shape {tuple(ids.shape)}")


def check_progress(progress: object, *, flag: bool = False) -> object:
    """A step callback or None (`flag=True`: True and False are also allowed, and checked by the caller)."""
    if progress is not None and not callable(progress):
        allowed = "True, False, None or a function" if flag else "a function or None"
        raise TypeError(f"progress must be {allowed}, got {type(progress).__name__}")
    return progress


def check_fit(model: object, model_type: type, name: object, batch: object, steps: object, shortest: object,
              longest: object, learning_rate: object, seed: object, progress: object) -> None:
    check_tiny_model(model, model_type)
    check_str("name", name)
    if not callable(batch):
        raise TypeError(f"batch must be a function (length, generator) -> (ids, targets), got {short(batch)}")
    check_size("steps", steps, maximum=100_000)
    shortest = check_size("shortest", shortest, minimum=1, maximum=2**16)
    check_size("longest", longest, minimum=shortest, maximum=2**16)
    check_learning_rate(learning_rate)
    check_size("seed", seed, minimum=0, maximum=2**63 - 1)
    check_progress(progress)


def check_copy_settings(s: object) -> None:
    """A `models.CopySettings`' own fields (the model's sizes are checked by the Settings they make)."""
    check_size("shortest_block", s.shortest_block, minimum=2, maximum=256)
    check_size("longest_block", s.longest_block, minimum=s.shortest_block, maximum=256)
    check_base(s.base)
    factor = s.partial_rotary_factor
    if not is_real(factor) or not 0 < factor <= 1:
        raise ValueError(f"partial_rotary_factor must be a number in (0, 1], the share of each head RoPE turns, "
                         f"got {short(factor)}")


def check_rotary_columns(head_dim: int, factor: float) -> int:
    rotary_dim = int(head_dim * factor)
    if rotary_dim < 2 or rotary_dim % 2:
        raise ValueError(f"partial_rotary_factor={factor!r} of head_dim={head_dim} gives "
                         f"{rotary_dim} columns to turn: it must be an even number >= 2")
    return rotary_dim


def check_copy_model(model: object, model_type: type, settings_type: type) -> object:
    if not isinstance(model, model_type) or not isinstance(getattr(model, "copy_settings", None), settings_type):
        raise TypeError(f"model must be a model from posenc.models.copy_model or train_copy, got {type(model).__name__}")
    return model


def check_fine_tune(steps: object, seed: object, scaling: object, factor: object, longest: int) -> tuple[int, int]:
    steps = check_size("steps", steps, maximum=100_000)
    seed = check_size("seed", seed, minimum=0, maximum=2**63 - 1)
    if scaling is None:  # without a rule, `stretched` is not asked about the factor: it is checked here
        stretch_factor(longest)("factor", factor)
    return steps, seed


def check_decoder(scheme: object, schemes: tuple[str, ...], vocab_size: object, d_model: object, num_heads: object,
                  max_sequence_length: object, seed: object) -> tuple[str, int, int, int, int, int]:
    """`models.TinyDecoder`'s arguments, checked and returned in that order."""
    scheme = one_of(schemes)("scheme", scheme)
    vocab_size = check_size("vocab_size", vocab_size, maximum=2**20)
    d_model = check_size("d_model", d_model, maximum=2**12)
    num_heads = check_size("num_heads", num_heads, maximum=d_model)
    if d_model % num_heads or (scheme == "rotary" and (d_model // num_heads) % 2):
        raise ValueError(f"num_heads={num_heads} must divide d_model={d_model}" +
                         (" into heads of an even head_dim (RoPE turns pairs)" if scheme == "rotary" else ""))
    max_sequence_length = check_size("max_sequence_length", max_sequence_length, maximum=2**16)
    seed = check_size("seed", seed, minimum=0, maximum=2**32 - 1)
    # W_E, W_out and a position table: (2 vocab_size + max_sequence_length) rows of d_model.
    check_table_fits((2 * vocab_size + max_sequence_length, d_model), torch.float32,
                     arguments="vocab_size, max_sequence_length or d_model")
    return scheme, vocab_size, d_model, num_heads, max_sequence_length, seed


def check_decoder_ids(ids: object, vocab_size: int) -> torch.Tensor:
    check_int_tensor("ids", ids, ndim=(2,), what=" of token ids")
    if ids.shape[1] == 0:
        raise ValueError(f"ids must hold at least one token per row, got shape {tuple(ids.shape)}")
    if ids.numel() and not bool(((ids >= 0) & (ids < vocab_size)).all()):
        raise ValueError(f"ids must lie in [0, vocab_size={vocab_size}), got values from {int(ids.min())} "
                         f"to {int(ids.max())}")
    return ids.long()


def check_decoder_cache(cache: object, cache_type: type, batch: int, num_heads: int, head_dim: int) -> int:
    """The number of tokens a decoder's cache holds, once it is known to come from this model and batch."""
    if not isinstance(cache, cache_type):
        raise TypeError(f"cache must be a KVCache (the cache of an earlier call) or None, got {short(cache)}")
    cached = cache.keys.shape[-2] if isinstance(cache.keys, torch.Tensor) and cache.keys.dim() == 4 else -1
    expected = (batch, num_heads, cached, head_dim)
    if (not all(isinstance(t, torch.Tensor) for t in cache) or tuple(cache.keys.shape) != expected
            or cache.values.shape != cache.keys.shape or tuple(cache.key_mask.shape) != (batch, cached)):
        raise ValueError(f"cache must come from this model on a batch of {batch} (keys {expected}), "
                         f"got keys of shape {tuple(getattr(cache.keys, 'shape', ()))}")
    return cached


def check_decoder_mask(attention_mask: object, cache: object, batch: int, offset: int, seq: int) -> torch.Tensor:
    """The bool mask of the cached and the new tokens: `attention_mask`, or the cache's and 1 for every new token."""
    if attention_mask is None:
        new = torch.ones(batch, seq, dtype=torch.bool)
        return new if cache is None else torch.cat([cache.key_mask, new], dim=-1)
    check_attention_mask(attention_mask, ndim=(1, 2))
    if tuple(attention_mask.shape) != (batch, offset + seq):
        raise ValueError(f"attention_mask must be (batch, cached + seq) = {(batch, offset + seq)}: the cached tokens' "
                         f"and the new ones', got shape {tuple(attention_mask.shape)}")
    return attention_mask.bool()


def check_decoder_positions(position_ids: object, batch: int, offset: int, seq: int, scheme: str,
                            max_sequence_length: int, has_table: bool) -> torch.Tensor:
    """`(batch, seq)` position ids: the given ones checked, or `offset + 0, 1, ..., seq - 1`."""
    if position_ids is None:
        from .positions import position_ids as counted

        return counted(length=seq, offset=offset).expand(batch, seq)
    check_int_tensor("position_ids", position_ids, ndim=(1, 2))
    if position_ids.shape[-1] != seq or (position_ids.dim() == 2 and position_ids.shape[0] != batch):
        raise ValueError(f"position_ids must be (batch, seq) = {(batch, seq)} or (seq,), got shape "
                         f"{tuple(position_ids.shape)}")
    limit = max_sequence_length if has_table else 2**24  # float32 counts whole numbers to 2^24
    if position_ids.numel() and not bool(((position_ids >= 0) & (position_ids < limit)).all()):
        raise ValueError(f"position_ids must lie in [0, {limit}) for scheme {scheme!r} "
                         f"(max_sequence_length={max_sequence_length}), got values from "
                         f"{int(position_ids.min())} to {int(position_ids.max())}")
    return position_ids.long().expand(batch, seq)


def check_longest_block(longest_block: int, factor: float, longest: int) -> int:
    if longest_block > longest:
        raise ValueError(f"factor={factor!r} makes blocks of up to {longest_block} symbols, more than {longest}")
    return longest_block


def check_copy_scoring(length: object, longest: int, batch_size: object, seed: object) -> tuple[int, int, int]:
    length = check_size("length", length, minimum=4, maximum=longest)
    if length % 2:
        raise ValueError(f"length must be even, a block and its repeat, got {length}")
    return length, check_size("batch_size", batch_size, maximum=4096), check_size("seed", seed, minimum=0,
                                                                                  maximum=2**63 - 1)


# The tasks -------------------------------------------------------------------------------------


def check_batch(batch_size: object, name: object, length: object, copies: int, vocab_size: object,
                generator: object) -> tuple[int, int, int]:
    """A batch of random token ids: batch_size rows of `copies * length` ids (`name` is the length's argument)."""
    batch_size = check_size("batch_size", batch_size, maximum=2**20)
    length = check_size(name, length, minimum=2, maximum=2**20 // copies)
    vocab_size = check_size("vocab_size", vocab_size, minimum=2, maximum=2**31)
    if batch_size * copies * length > 2**24:
        times = "" if copies == 1 else f"{copies} * "
        raise ValueError(f"batch_size * {times}{name} must be at most {2**24} token ids, "
                         f"got batch_size={batch_size}, {name}={length}")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    return batch_size, length, vocab_size


def check_answers(ids: object, targets: object, causal: object) -> torch.Tensor:
    """Token ids and their answers for `order_blind_accuracy`: the positions scored (targets != -100)."""
    check_tensor("ids", ids, ndim=(2,))
    check_tensor("targets", targets, ndim=(2,))
    causal = check_flag("causal", causal)
    if ids.shape != targets.shape or ids.dtype != torch.int64 or targets.dtype != torch.int64:
        raise ValueError(f"ids and targets must be int64 tensors of one shape, got {tuple(ids.shape)} {ids.dtype} "
                         f"and {tuple(targets.shape)} {targets.dtype}")
    if ids.numel() == 0 or bool((ids < 0).any()) or int(ids.max()) >= 2**16:
        raise ValueError("ids must hold token ids from 0 to 65535, and at least one")
    scored = targets != -100
    if not bool(scored.any()):
        raise ValueError("targets must have at least one position that is not -100")
    if causal and bool(scored[:, 0].any()):
        raise ValueError("targets must be -100 at position 0 when causal=True: position 0 sees no earlier token")
    vocab_size = int(ids.max()) + 1
    if bool((targets[scored] < 0).any()) or bool((targets[scored] >= vocab_size).any()):
        raise ValueError("targets must be token ids that occur in ids, or -100")
    return scored


# Learned tables and ALiBi ----------------------------------------------------------------------


def check_learned_rows(x: object, d_model: int, offset: object, max_sequence_length: int) -> tuple[int, int]:
    """(offset, length) of the rows a learned table adds to x, once it is known to have them all."""
    offset, length = check_rows_to_add(x, d_model=d_model, offset=offset)
    beyond = positions_beyond(offset=offset, length=length, max_sequence_length=max_sequence_length)
    if beyond:
        raise ValueError(
            f"x reaches {beyond}, which the table has no row for: a learned table has rows only for positions "
            f"0 to {max_sequence_length - 1} (max_sequence_length={max_sequence_length}) and no formula "
            f"for the rest; x has {length} positions, offset={offset}. Train a larger table, or use a scheme "
            "with a formula (sinusoidal, rotary, ALiBi)"
        )
    return offset, length


# @checked: the checks of a function in one line above it ----------------------------------------


# True while the body of a checked function runs.
_checked_already = contextvars.ContextVar("checked_already", default=False)


def checked(*, fits: tuple[str | int, ...] = (), **rules: Callable[[str, object], object]) -> Callable:
    """Check a function's arguments before its body runs, so that the body is the formula alone.

    Each keyword names a parameter and its rule: a function `rule(name=..., value=...)` that raises a TypeError or
    ValueError naming the parameter and returns the value as the body uses it (a size as an int, a base as a float).
    `fits` is the shape of a table that must fit in this machine's memory before the body runs, each side a size
    parameter's name or an int, at the function's `dtype` (float32 if it has none). A call Python itself refuses
    (a missing or an unexpected argument) gets Python's own TypeError.

    A value is checked once, where the learner passes it: a checked function called from the body of another is not
    checked again, since the outer one passes on only values it checked or computed. So a checked function gives
    every argument its body passes on a rule, and never calls code a learner wrote.
    """
    def decorate(function: Callable) -> Callable:
        parameters = inspect.signature(function).parameters
        positional = [name for name, p in parameters.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
        defaults = {name: p.default for name, p in parameters.items() if p.default is not p.empty}

        @functools.wraps(function)
        def with_checks(*args, **kwargs):
            if _checked_already.get():
                return function(*args, **kwargs)
            given = {**dict(zip(positional, args)), **kwargs}
            values = {**defaults, **given}
            # Too many, repeated, unknown or missing arguments: Python's own TypeError says which.
            if len(args) > len(positional) or len(given) < len(args) + len(kwargs) or values.keys() != parameters.keys():
                return function(*args, **kwargs)
            for name, rule in rules.items():
                values[name] = rule(name=name, value=values[name])
            if fits:
                shape = tuple(values[side] if isinstance(side, str) else side for side in fits)
                check_table_fits(shape, values.get("dtype", torch.float32), name=f"table {tuple(fits)}".replace("'", ""),
                                 arguments=" or ".join(side for side in fits if isinstance(side, str)))
            inside = _checked_already.set(True)
            try:
                return function(**values)
            finally:
                _checked_already.reset(inside)

        return with_checks

    return decorate


# The rules, each `rule(name=..., value=...) -> value`: in capitals a rule, in lower case a function that makes one.
SIZE = check_size  # an int >= 1
SEED = functools.partial(check_size, minimum=0, maximum=2**64 - 1)


def size(minimum: int = 1, maximum: int | None = None) -> Callable[[str, object], int]:
    """The rule for an int from `minimum` to `maximum`."""
    return functools.partial(check_size, minimum=minimum, maximum=maximum)


FLAG = check_flag
STR = check_str
FLOAT_DTYPE = check_float_dtype
MATRIX = functools.partial(check_floating_tensor, ndim=(2,))  # a 2-D floating tensor
BASE = check_base  # a finite real number > 1
DEVICE = check_device  # None or a device this machine has


def DTYPE(name: str, value: object) -> torch.dtype:
    if not isinstance(value, torch.dtype):
        raise TypeError(f"{name} must be a torch.dtype such as torch.float32, got {short(value)}")
    return value


def PROBABILITY(name: str, value: object) -> float:
    if not is_real(value) or not 0 <= value < 1:
        raise ValueError(f"{name} must be a probability in [0, 1), got {value!r}")
    return float(value)


def str_list(*, if_str: str = "") -> Callable[[str, object], tuple[str, ...]]:
    """The rule for a list of str; `if_str` is the hint for a single str passed instead of a list."""
    return functools.partial(check_str_list, if_str=if_str)


def one_of(choices: tuple) -> Callable[[str, object], object]:
    """The rule for one of `choices` (str, or None if it is among them)."""
    def rule(name: str, value: object) -> object:
        check_str(name, value, optional=None in choices)
        if value not in choices:
            raise ValueError(f"{name} must be one of {choices}, got {value!r}")
        return value
    return rule


def optional_size(*, maximum: int | None = None) -> Callable[[str, object], int | None]:
    """The rule for None or an int from 1 to `maximum`."""
    return lambda name, value: None if value is None else check_size(name, value, maximum=maximum)


def instance_of(cls: type) -> Callable[[str, object], object]:
    """The rule for an instance of `cls`."""
    def rule(name: str, value: object) -> object:
        if not isinstance(value, cls):
            raise TypeError(f"{name} must be a {cls.__module__}.{cls.__qualname__}, got {type(value).__name__}")
        return value
    return rule


def POSITIVE(name: str, value: object) -> float:
    """A finite real number > 0, as a float."""
    if not is_real(value):
        raise TypeError(f"{name} must be a real number > 0, got {short(value)} of type {type(value).__name__}")
    if not 0.0 < float(value) < float("inf"):
        raise ValueError(f"{name} must be a finite number > 0, got {float(value)!r}")
    return float(value)


# RoPE's stretching rules (rope_scaling).


def ROPE_HEAD_DIM(name: str, value: object) -> int:
    value = check_size(name, value, minimum=2, maximum=2**20)
    if value % 2:
        raise ValueError(f"{name} must be even: RoPE turns pairs of columns, got {value}")
    return value


def stretch_factor(maximum: float) -> Callable[[str, object], float]:
    """The rule for the factor s that stretches a context: a real number from 1 to `maximum`."""
    def rule(name: str, value: object) -> float:
        if not is_real(value):
            raise TypeError(f"{name} must be a real number from 1 to {maximum:g}, got {short(value)} of type "
                            f"{type(value).__name__}")
        if not 1.0 <= float(value) <= maximum:
            # factor < 1 would shrink the context, not stretch it; transformers refuses it too.
            raise ValueError(f"{name} must be a number from 1 to {maximum:g} (the new length over the trained one), "
                             f"got {float(value)!r}")
        return float(value)
    return rule


def check_rope_rule(scaling: str | None, head_dim: int, factor: float, original_max_position_embeddings: int | None,
                    *, scalings: tuple) -> None:
    """What each stretching rule needs beyond the checks of each argument."""
    if scaling is None and factor != 1.0:
        raise ValueError(f"factor={factor!r} needs a scaling rule: with scaling=None the frequencies are plain RoPE's; "
                         f"pass scaling as one of {scalings[1:]}, or factor=1.0")
    if scaling == "ntk" and head_dim == 2:
        raise ValueError("head_dim must be at least 4 for scaling='ntk': its base grows by factor^(head_dim / "
                         "(head_dim - 2)), which has no value at head_dim=2")
    if scaling in ("yarn", "llama3") and original_max_position_embeddings is None:
        raise ValueError(f"scaling={scaling!r} needs original_max_position_embeddings, the length the model was trained "
                         "on (an int >= 1): its rule treats pairs by how many turns they make within that length")
