"""The tiny Transformers, trained live on the CPU, and the one training loop they share; one file per job.

    transformer   `TinyTransformer`: embedding, pre-norm attention blocks, a read-out; one position scheme
                  ("none", "learned", "sinusoidal", "rotary", "alibi"), in its one `Attention` layer; `Settings`
    training      `fit` and `predictions`, the one training loop (AdamW) and the one evaluation every experiment
                  uses; the previous-token experiment (`train`, `compare`, `accuracy`, `evaluation_batch`); what a
                  trained model attends to (`attention_map`, `previous_token_head`)
    copy_task     the same model as a causal RoPE decoder on "repeat the block" (`copy_model`, `train_copy`),
                  `stretched` (a rule from `rope_scaling` replaces its frequencies), `fine_tune`, `copy_accuracy`
    decoder       `TinyDecoder`, a one-layer decoder called as transformers' decoders are (attention mask,
                  position ids, a KV cache), `decode_with_cache`, which generates one token per call, and
                  `packing_differences`, one attention head on a packed row run four ways

Every model's attention is `attention.attend`; every rotation `schemes.rotate_pairs`. Everything is seeded and
trains on one thread, so a run gives the same numbers on any number of cores (the last digits can still move with
the CPU's kernels). Import a module by its job: `from posenc.models import training, transformer`.
"""
