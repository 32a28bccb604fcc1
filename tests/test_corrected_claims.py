"""Sentences that readers found false, that were corrected, and that a later rewrite put back once already.

Each entry is a wording that is false wherever it stands (the corrected wording is in the notebook). The notebooks'
text, their code and the package's messages must not use it again. A rewrite that needs the idea says it the true way.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# (notebook, false wording as a regular expression, why it is false)
CORRECTED = [
    ("00", r"set of all rows", "a set loses the repeated word; attention counts each row"),
    ("00", r"Plain attention cannot see", "07's causal mask alone marks position: only attention without a mask cannot"),
    ("00", r"ignores their order", "unmasked attention reorders its outputs with the words; it does not ignore order, "
     "each word's output just does not depend on where the word stands"),
    ("00", r"output is\s+the same\s+wherever", "a word's output depends on the other words: it stays the same only when "
     "the same words are reordered"),
    ("00", r"its \*id\*\.\s+The text is lower-cased", "after 'a model splits text into tokens', it says models lower-case; "
     "most real tokenizers (GPT-2's BPE, Llama's) keep case: lower-casing is this series' choice"),
    ("01", r"Ids have\s+neither", "ids have an order, the order tokens joined the vocabulary; that order only means nothing"),
    ("02", r"no gradient reaches that row", "with the output layer tied to W_E the <PAD> row gets one; the lookup sends none"),
    ("02", r"gives the `<PAD>` row a gradient of 0 anyway", "only the lookup's share is 0: with the output layer tied "
     "to W_E, as in the 2017 Transformer, the <PAD> row still gets a gradient"),
    ("02", r"hides them from attention", "the padding mask hides <PAD> only as a key; <PAD> rows still make queries and outputs"),
    ("03", r"almost seven turns", "44 / 2pi = 7.003: pair 0 is just past seven turns at position 44"),
    ("03", r"[Ff]our properties motivated", "Vaswani et al., section 3.5, give two reasons"),
    ("03", r"much\s+worse a few dozen", "Press et al. say the sinusoidal model cannot extrapolate more than a few dozen "
     "tokens beyond L: its perplexity stops improving there and rises after; it is not already much worse"),
    ("03", r"the score is \(M @ PE\[p\]\)", "attention reads X + PE: that is only the PE part of the score, word terms dropped"),
    ("04", r"parameter\*? is a tensor the optimizer changes", "a parameter is what the module lists in parameters(); "
     "the optimizer changes only what it is handed, and a frozen (requires_grad=False) parameter stays a parameter"),
    ("03", r"grows without\s+bound and would\s+drown", "in any table pos stops at its last row: what rules it out is "
     "that a few positions in it is far larger than word entries of standard deviation 1"),
    ("04", r"writes into it gets its columns reordered\.\s+The model then gives", "incomplete: per-column weights, "
     "such as a LayerNorm's gain and bias, must be reordered too, or the outputs change"),
    ("04", r"does not change\. So whatever a model can learn", "one unchanged product covers the first layer only: "
     "X must be learned in the new order, and every later weight reordered"),
    ("05", r"like one row of real scores", "0, σ, 2σ is a toy row; a real row has many scores, not three evenly spaced"),
    ("05", r"σ = 22(?![.\d])", "the std of q·k measured at d_k = 512 is 22.63: the toy uses it, printed as 22.6"),
    ("05", r"variant of BERT", "TUPE changes how position enters; its authors test it by pre-training BERT"),
    ("05", r"first columns, the fast pairs", "PE[4] - PE[0] is large in the first pair only (-0.76, -1.65); the second "
     "pair differs by 0.18 and 0.02"),
    ("05", r"never goes flat", "sigma stays near 1 after scaling only for unit-variance q and k, roughly at the start of "
     "training; trained weights can still push the scores, and the softmax, into its flat regions"),
    ("06", r"their masks mean opposite things", "float masks are added by both calls; only the boolean masks are opposite"),
    ("06", r"(?<!OpenAI's )GPT-2 draws", "the 0.02 initialisation is in OpenAI's released code, not a documented recipe"),
    ("06", r"entry of std `?s`? adds", "only an entry with mean 0 adds s² to the squared length on average; "
     "in general it adds s² + mean²"),
    ("06", r"model cannot rely on any one", "dropout discourages relying on one entry; it does not make it impossible"),
    ("06", r"drowns\s+`?PE`?\s+only\s+when", "the table tests two starts only; any std well above 1/sqrt(d_model) drowns PE, "
     "and a std of 0.02, times the factor, gives word rows longer than PE rows at d_model = 2048"),
    ("05", r"So each score has four\s+terms", "the four-term expansion holds in the first layer only: later layers' inputs "
     "are no longer a word row plus a position row (TUPE expands the first layer)"),
    ("05", r"`<PAD>`\s+tokens\s+hidden", "the padding mask hides <PAD> only as a key: the <PAD> rows still make queries and "
     "get outputs"),
    ("05", r"slope\s+of\s+0\.(?!\d)", "the raw row's slope p(1 - p) is about 1.5e-10: tiny, and printed as 0.0000, but not 0"),
    ("05", r"A\s+first-layer\s+score\s+is\s+the\s+dot\s+product", "BERT sums word, position and segment "
     "rows and applies LayerNorm before layer 1: the four-term expansion holds only when LayerNorm and segment rows are ignored"),
    ("06", r"paper's\s+last\s+two\s+input\s+steps", "the paper's input side is embedding, times sqrt(d_model), + PE, "
     "dropout: the factor comes before + PE, so the factor and dropout are not its last two steps"),
    ("05", r"adds\s+that\s+same\s+table", "TUPE (section 3.3) gives each head its own U^Q and U^K: one position-position "
     "table per head, shared by all layers, not one table"),
    ("06", r"predictions\s+nearly\s+even", "entries of std 1/sqrt(d_model) against a layer-normed row of norm about "
     "sqrt(d_model) give first output scores of std about 1: spread out, not nearly even"),
    ("05", r"scores\s+must\s+become\s+weights", "weights that are never negative and add up to 1 are attention's design "
     "choice, so the output is an average of the values; nothing forces it"),
    ("07", r"ten numbers to a line", "linewidth=120 counts characters, not numbers: 12 to 14 four-decimal numbers fit"),
    ("07", r"lower triangle already hides", "the causal mask keeps its lower triangle; the keys it hides are above the diagonal"),
    ("07", r"can still mark position\.", "only if the values differ: when every value is equal, position leaves no trace"),
    ("07", r"only regroups neighbours", "view merges any axes whose strides fit; here heads and head_dim do not"),
    ("07", r"No view of that memory", "the transpose is a view of it; a flat, one-stride view cannot read 0, 3, 1, 4, 2, 5"),
    ("07", r"[Pp]acked documents need a document mask", "GPT-3 packs documents under the plain causal mask with a separator "
     "token (Brown et al., app. B); Llama 3 found the document mask of limited impact in standard pre-training"),
    ("07", r"so every row becomes NaN", "only the rows of the sentence with the NaN key and value: each other sentence of "
     "the batch attends to its own keys"),
    ("07", r"five tools", "the five rows use three tools: softmax twice, nn.MultiheadAttention twice, and SDPA"),
    ("07", r"gives NaN with `need_weights=True` and 0 without", "in eval() under torch.no_grad(), nn.MultiheadAttention's "
     "fast path (torch._native_multi_head_attention) gives NaN with need_weights=False too (torch 2.13, CPU)"),
    ("07", r"So the paper runs\s+several attentions", "the cat/mat blur is the suite's illustration, not the paper's "
     "reasoning: Vaswani et al. (3.2.2) give attending to different representation subspaces at different positions"),
    ("08", r"depends only on q − p\s*\(\[11\]", "11 never shows that PE[p] . PE[q] depends only on the offset: "
     "08 derives the sum itself, 10 builds on it"),
    ("07", r"GPT keeps only the decoder\s+and\s+writes", "GPT's blocks are the decoder's without its attention to the "
     "encoder (cross-attention), which would have nothing to read"),
    ("08", r"Its limit is the\s+table's last column", "in 08 the table is PE, whose last column limits nothing; the count "
     "tends to about 630 as its wavelength tends to the printout's 628.3"),
    ("08", r"cat sat on the mat", "the explorer knows 01's 11 words only: every word of that sentence is <UNK>"),
    ("07", r"called\s+\*?heads\*?,\s+avoid\s+this", "heads only let a model learn separate weights (Vaswani et al. 3.2.2: "
     "multi-head attention 'allows' it); with 07's random weights nothing is separated yet"),
    ("07", r"[Mm]ake\s+sure\s+every\s+row\s+sees\s+a\s+key", "a row with no key is a <PAD> query that no real word reads: "
     "any finite answer (-1e9's 0.1, SDPA's 0, Hugging Face's unmasked row) is harmless; only NaN spreads"),
    ("08", r"[Ee]very\s+dot\s+product\s+is\s+positive", "true only in 08's 64-row table at d_model 128: at base 10,000 "
     "the sum of cos(w_i k) over the 64 pairs first goes negative at offset 1,707"),
    ("09", r"ignores word order", "only with no PE and no mask, and the outputs are reordered, not ignored"),
    ("10", r"RoPE \(\[13\]\) uses the same matrix", "RoPE applies the blocks to a column, so it turns the other way"),
    ("10", r"key p - 1 scores \{best", "PE[p] . PE[p] = 32 is a PE dot product; the hand-set head's score is 3 times it, 96"),
    ("10", r"Attention reads\s+`PE\[p\] W_Q", "attention reads (X + PE) W_Q . (X + PE) W_K: "
     "the PE-only product is one of its four terms"),
    ("10", r"Equal values mean", "equal pos-pos values at one offset are necessary, not sufficient: offset-keeping asks "
     "for every offset"),
    ("10", r"3 R_1\^T`\. Its blocks `\[\[c, s\]", "3 R_1^T's blocks are 3 [[c, s], [-s, c]], so a = 3c and b = -3s"),
    ("10", r"counts the rows whose largest", "the noise cell prints a share of rows (a mean, as a percentage), not a count"),
    ("11", r"zero padding lets them encode", "Islam et al. show padding gives position in 2-D image CNNs; nothing measures "
     "it for C.Origami's 1-D encoder"),
    ("11", r"rows are nearly equal", "they point almost the same way (cosine >= 0.91); they are not equal"),
    ("11", r"flag, `temp_bug_fix=False`", "LoFTR's temp_bug_fix defaults to True; only set to False does it restore "
     "the old line"),
    ("11", r"Partly,\s+from\s+pairs\s+2\s+to\s+5", "pairs 0 and 1 carry position too (they repeat every 6.3 and 46 "
     "positions), pairs 6 to 63 are as linear as 4 and 5, and LoFTR's CNN backbone pads with zeros"),
    ("11", r"haven't\s+released\s+it\"", "issue #64 says 'we haven't released it yet': dropping 'yet' turns "
     "an intention into a refusal"),
    ("11", r"positions run from 1 to 256", "256 is LoFTR's table size; a 640x480 image, at 1/8 scale, uses positions 1 to 80"),
    ("12", r"at most 2\^-24", "torch.pow is not correctly rounded: the drift is about 2^-24 per rounding, not at most"),
    ("12", r"often run in bfloat16", "its source is one example that loads Llama 3 in bfloat16: it shows loading, not how often"),
    ("12", r"Never store positions", "positions 0 to 256 are exact in bfloat16: the rule is for positions above 256"),
    ("12", r"Llama computes these tables in float32, as our", "Llama multiplies float32 positions by float32 inverse "
     "frequencies; f32 divides by float32 denominators: the same precision, not the same recipe"),
    ("12", r"typical value of a sine", "0.75 stands for every sine in [0.5, 1), where a sine is rounded across its widest gap, "
     "not as typical"),
    ("12", r"the widest any sine has", "a sine stored as exactly 1.0 has gap 2^-23 in float32, twice the gap at 0.75; "
     "it is the rounding gap, the spacing below 1, that no sine exceeds"),
    ("12", r"sine moves no further than its angle", "a sine is not compared with an angle: its change is at most "
     "the angle's change, |sin a - sin b| <= |a - b|"),
    ("12", r"float32\s+errors\s+grow\s+with\s+the\s+position", "only float32 angles drift: the f64->f32 table stays at 2^-25 at "
     "every position"),
    ("13", r"`PE` was \[1, 2\]", "sources 1 and 2 (ConvS2S, BERT) add learned tables; after 'PE was' they credit the sinusoid"),
    ("13", r"`x \* cos \+ swapped \* sin` \[6\]", "Hugging Face's line uses rotate_half, which turns half-split pairs; "
     "the neighbouring-pair swapped is the exercise's bug, not Hugging Face's"),
    ("13", r"rotate_half`? swaps", "rotate_half turns each half-split pair (a, b) into (-b, a): it swaps the halves and "
     "negates one, and a plain swap gets the sign wrong"),
    ("13", r"scales `q` by it", "ALiBi's code multiplies q by 1/sqrt(d_k), not by sqrt(d_k)"),
    ("13", r"ALiBi was built for causal", "its paper tests causal models only; it does not say ALiBi suits only them"),
    ("13", r"score can read where each token is", "X + P lets a score change when both tokens shift; it need not read positions"),
    ("13", r"same penalty on both\s+sides of the query \[4\]", "ALiBi's paper defines only the causal bias; "
     "the symmetric form comes from an issue in the authors' repository"),
    ("13", r"score you found in \[10\]", "10's Exercise 2 asks for a count of constant terms; the score 15.97 is "
     "printed after it, not found by the learner"),
    ("13", r"score sees only the offset", "the score also depends on the two words; positions enter only through the offset"),
    ("14", r"so it can count them", "Haviv et al. conjecture the counting; they do not show it"),
    ("14", r"[Tt]he scheme and the causal mask matter most", "one toy, one size, 250 steps: size, steps and data never varied"),
    ("14", r"no positions did best overall", "Kazemnejad et al.: NoPE on par with or better than the best explicit scheme on "
     "average (mean rank over tasks); it does not win every task"),
    ("14", r"[Ee]very 2π ≈ 6\.3 tokens back", "pair 0 matches 1 back only near 1 + 2πk back (7, 14, 20, ... 51), not every 6.3"),
    ("15", r"[Ii]n a packed row, pass a 4D document mask, or",
     "a 4D mask alone leaves a learned or sinusoidal table's positions running along the row: only RoPE needs no restart"),
    ("15", r"cuts the text into words and punctuation",
     "GPT-2's pre-tokenizer also splits off numbers, runs of other symbols, contractions such as 's, and runs of spaces"),
    ("15", r"Only their order and the\s+capital M", "the space moves too: My loses the space before it and Grant gains one"),
    ("15", r"one-token call cannot tell where", "the model can work it out: Llama from the cache length, BLOOM from the mask"),
    ("15", r"Llama uses the number of tokens already in the cache", "only when the call passes no position ids "
     "(LlamaModel.forward: position_ids is None)"),
    ("15", r"After left padding, pass position ids, in the prompt", "RoPE is equal in the prompt without them (section 2's "
     "table); only models that add position vectors need them there"),
    ("14", r"(?<!sinusoid, )[Tt]he\s+embedding's scale mattered too", "only for the sinusoid: rotary scored 1.00 with and "
     "without the sqrt(d_model) factor"),
    ("15", r"Llama accepts a document mask in two ways", "only with the default attention: with flash attention, "
     "DataCollatorWithFlattening(return_flash_attn_kwargs=True) passes cu_seq_lens_q/k, a third way"),
    ("15", r"starts\s+from\s+single\s+bytes[^\[]*\[1\]", "Sennrich et al. [1] start from characters; "
     "starting from bytes is GPT-2's idea [2], section 2.2"),
    ("14", r"So its ALiBi penalises distance either way", "the symmetric bias is a choice, not forced by the encoder: "
     "ALiBi's paper defines only the causal form, and Press's issue #5 offers abs(i - j) as one way to extend it"),
    ("16", r"the theory behind the rule", "the NTK theory motivated NTK-aware scaling (YaRN, section 3.1); it is no derivation"),
    ("16", r"no further than training did", "NTK-aware turns pair 40 to 0.59 turns against 0.36 in training"),
    ("16", r"learned to tell neighbours apart", "an inference no run measures; YaRN's paper argues it"),
    ("17", r"length a rule is built for", "no config or card says so: Llama 3.1 ships 8 x 8,192 = 65,536 and supports 128K"),
    ("17", r"the trained length", "L is original_max_position_embeddings; Llama 4 Scout trained at 256K, past it"),
    ("16", r"is the new length over the trained one", "real configs differ: Llama 3.1 sets s = 8 for 8K -> 128K (16x), "
     "DeepSeek-V3 s = 40 for 4K -> 128K (32x)"),
    ("17", r"NoPE\*? layer\s+still gets position in two ways", "Llama 4's NoPE layers also scale their queries by "
     "log1p(floor((p + 1) / 8192)) * 0.1 + 1 (transformers' attn_temperature_tuning): a third way"),
    ("17", r"routes agree only when every column turns", "they also agree on any score whose unturned part is 0"),
    ("16", r"ramp starts at the \*?32-turn point", "YaRN's code and transformers round the 32-turn point down to a whole pair "
     "(18.08 -> 18) and the 1-turn point up (34.98 -> 35); a fractional start would give pair 19 0.959, not 0.956"),
    ("16", r"odels often set it to the new length", "of 17's four models only Qwen3 does (4 = 131,072 / 32,768); "
     "Llama 3.1 sets 8 for 16x, DeepSeek-V3 40 for 32x, Scout 16 for a 10M card"),
    ("16", r"These are the first block, which cannot", "-100 sits at the first block's positions; the answer at its last "
     "position is the repeat's first symbol, so it is positions, not the block's tokens, that go unscored"),
    ("16", r"trouble is not new angles", "at s = 2 PI turns pair 0 by 0.5 rad per token, an angle its whole-number "
     "distances never gave it in training: PI avoids only the slow pairs' out-of-range angles"),
    ("03", r"[Aa] slow\s+pair barely moves between neighbours and never", "only the slowest pairs never come back: at "
     "d_model = 128, pair 5 (wavelength 12.9) comes back three times within 64 positions"),
    ("04", r"Calling it twice on one `?x`? gives the same result", "an x += ... module passes it: it returns the "
     "caller's own tensor both times, so torch.equal(m(x), m(x)) is True; the requirement is that x is left unchanged"),
    ("16", r"trouble is not the slow pairs", "under PI no pair has an out-of-range angle, so the sentence implies some "
     "that do not matter: PI brings the slow pairs back into range, and its trouble is pair 0's halved step"),
    ("17", r"a setting fixed at 16,384", "max_seq_len is a ModelArgs default (4096 * 4) that config_671B.json leaves "
     "alone, not a constant"),
    ("17", r"slowed pair needs", "only a pair divided by the full factor: blended pairs are slowed less, kept pairs not at all"),
    ("10", r"no two bad\s+waves cancel", "pairwise is not enough: the block rule needs that no weighted mix of the waves "
     "depends on q - p alone, which holds because each has its own pair of frequencies"),
    ("16", r"larger base slows every pair(?!\s+except|\s+but)", "pair 0 turns base^0 = 1 rad per position at any base"),
    ("16", r"Its trouble is pair 0", "keeping pair 0 lifts PI from 0.11-0.44 to 0.75-0.86 at 64 tokens, short of the "
     "0.93 to 0.97 of 32 tokens: pair 0 is PI's main trouble, not its only one"),
    ("16", r"PI's\s+paper\s+found\s+the\s+opposite", "PI's paper fine-tuned LLaMA without PI to 8,192 tokens (4x) and saw little "
     "gain; it ran no PI-tuned control at 2x, so its finding is not the opposite of the toy's"),
    ("17", r"sharpens\s+attention\s+on\s+long\s+inputs", "Llama 4's NoPE query factor depends on the query's position, not the "
     "input's length: queries before position 8,191 of a long input are unchanged"),
    ("17", r"A\s+rule\s+exists\s+for\s+distances\s+past",
     "reads as Meta's reason for Scout's rule; Meta does not say why it sets one"),
    ("14", r"[Ww]hy\s+does\s+key\s+0\s+win", "at query 39 key 0 only about ties key 38 (10.1 against 10.2) and shares the "
     "weight; it outscores the key 1 back only from query 45"),
    ("14", r"rotary\s+decoder\s+fails", "the rotary decoder still scores about 0.7 at 64 tokens, second of four (the "
     "benchmark asserts only 'below 0.8'); it falls, it does not fail"),
    ("17", r"gets\s+position\s+in\s+three\s+ways", "Llama 4's NoPE query factor is one number per query, the same for every "
     "key: it cannot tell keys apart; its setting is named attn_temperature_tuning, a temperature, not a position signal"),
    ("03", r"d_model\)\)?,\s+a\s+little\s+under\s+10000", "the last denominator 10000^((d_model - 2)/d_model) is near "
     "10000 only at a large d_model: at d_model = 6 it is 464"),
    ("10", r"splits\s+each\s+product\s+into\s+a\s+part\s+that\s+depends", "only within one pair: a product of waves from "
     "two different pairs splits into waves in w_i p ± w_j q, which depend on neither q - p nor p + q"),
    ("00", r"[Tt]o\s+attention\s+without\s+positions,\s+each\s+sentence\s+is\s+a\s+bag", "only attention with no mask "
     "sees a bag of words: under 07's causal mask each word sees a different number of earlier words, and causal models "
     "with no positions learn position from that (Haviv et al. 2022)"),
    ("02", r"masks\s+(?:\(.*?\)\s+)?usually\s+keep\s+the\s+loss", "05's padding mask hides <PAD> only as a key: the <PAD> "
     "positions still get outputs, and the loss must skip them too (ignore_index; tensor2tensor's weights_nonzero)"),
    ("03", r"[Rr]aw\s+`?pos`?\s+is\s+1,\s+2,\s+3", "PE's rows start at position 0 (torch.arange): raw pos is 0, 1, 2, ..."),
    ("04", r"no\s+wave\s+finishes\s+a\s+turn\s+in\s+64\s+positions,\s+so\s+each\s+column\s+changes\s+smoothly",
     "the step per row, not a finished turn, sets smoothness: columns 10-11 (28 degrees per row) finish four turns "
     "and still change smoothly"),
    ("12", r"At\s+100,000,\s+the\s+worst", "at position 100,000 (row 99,999) the worst f32 entry is off by 0.0017; "
     "0.0068 is the most over all rows up to 100,000, at row 99,483"),
    ("12", r"positions\s+too\s+\(side\s+note\)", "the side note covers only inv_freq, the frequencies; positions "
     "rounded to bfloat16 come from source 5 (transformers 4.31's _set_cos_sin_cache)"),
    ("13", r"BERT\s+and\s+ConvS2S,\s+a\s+convolutional\s+translation\s+model\s+\[1,\s*2\]", "source 1 is ConvS2S and "
     "source 2 is BERT: read in order, the marks credit the wrong papers"),
    ("16", r"does\s+the\s+work,\s+not\s+PI", "after 100 steps at 2x PI still adds up to 0.05 (seed 5) over the control: "
     "in this toy the extra training does most of the work, not all of it"),
    ("16", r"tested\s+LLaMA\s+at\s+4x", "PI's paper tested PI up to 16x (32,768 tokens); only its fine-tune without PI "
     "was at 4x (8,192), and that model, not the paper, found the passkey up to 2,560 tokens"),
    ("17", r"meets\s+no\s+new\s+angles", "at 2x a pair that made a full turn still lands between the angles it met, not on "
     "them: pair 1 (wavelength 19.9) meets new angles at distances 33 to 63"),
    ("10", r"one\s+close\s+rival,\s+key\s+1", "the hand-set head's row 1 gives key 0 0.963 and key 1 0.037: key 1 is the "
     "only other key with weight, not a close rival"),
    ("10", r"feed\s+four\s+separate\s+waves", "each of the four entries joining pairs i and j feeds two waves, and each wave "
     "cos/sin(w_i p ± w_j q) gets a sum or difference of two entries: four equations at 0 force the entries to 0"),
    ("14", r"at\s+least\s+as\s+well\s+as\s+the\s+best\s+explicit", "Kazemnejad et al. (section 4) say NoPE did 'on par with "
     "or even better than the best-performing explicit PE': about as well, or better, not at least as well"),
    ("14", r"key\s+0\s+scores\s+13\.0", "13.0 and 13.6 are mean scores of all keys 45 and 51 back, over every query and input, "
     "not key 0's own scores at queries 45 and 51"),
    ("14", r"wins\s+only\s+if\s+no\s+offset", "understated: the key 1 back also needs the many keys at unseen offsets to score "
     "well below it, or they dilute the softmax even if none scores higher"),
    ("13", r"work\s+only\s+in\s+the\s+layout", "Meta's interleaved weights work in Hugging Face's half-split code once the "
     "columns of W_Q and W_K are reordered (permute, PermuteForRope), as the optional last section shows"),
    ("12", r"float32\s+angles\s+drift\s+by\s+up\s+to", "the 2^-23 x angle bound holds for position / a float32 denominator "
     "rounded once (exact exponents, as at d_model 64): f32 at d_model 100 drifts 3x that, exp-then-multiply at 64 4.6x"),
    ("15", r"A\s+model\s+generates\s+one\s+token\s+per\s+call", "the prefill reads the whole prompt in one call; only the steps "
     "after it take one token per call"),
    ("04", r"Saving\s+a\s+model\s+writes\s+its", "overstated: torch.save(model) pickles the whole module, non-persistent "
     "buffers included; writing the state_dict is only the usual way"),
    ("04", r"stands\s+in\s+for\s+any\s+order", "one random order passing allclose shows nothing about every order: the "
     "sum-reordering argument after the cell proves it"),
    ("04", r"Exercise\s+1's\s+run\s+built\s+`?table", "the cell before Exercise 1 builds table; "
     "Exercise 1 only predicts its shape"),
    ("10", r"`PE\[p\]`\s+is\s+a\s+row\s+multiplied\s+from\s+the\s+left", "backwards: in PE[p] @ R_k, R_k multiplies the row "
     "from the right; 'multiplied from the left' means something stands to the row's left"),
    ("10", r"but\s+only\s+while\s+word\s+rows\s+stay", "shown for one hand-set head, whose W_QK reads every direction: a W_QK "
     "that ignored the directions words occupy would not be disturbed by them"),
    ("10", r"nothing\s+else\s+can\s+cancel\s+such\s+a\s+wave", "other entries can cancel some of these waves (a block's "
     "(p + q) halves; two cross-pair entries' sum wave), and at one offset all of them, but never at every offset"),
    ("16", r"So\s+PI's\s+main\s+trouble\s+is\s+pair\s+0", "shown only for this toy at 2x, with 4 seeds: keeping pair 0 lifts PI "
     "above YaRN there; say 'in this toy at 2x'"),
    ("16", r"two\s+can\s+differ\s+at\s+pair\s+0", "YaRN's code (ramp linear in the pair index) and paper (linear in the turns) "
     "differ at every blended pair: at Llama 3's settings, s = 4, pair 19 keeps 0.956 by the code, 0.867 by the paper"),
    ("17", r"YaRN\s+matches\s+training", "DeepSeek-V3 pre-trained at 4K with plain RoPE; only its two long-context phases "
     "(4K -> 32K -> 128K) used YaRN at s = 40 (DeepSeek-V3 report, section 4.3)"),
    ("17", r"others\s+carry\s+no\s+position(?!\s+of\s+their\s+own)", "unturned columns get no rotation, but past the first "
     "layer they can carry position that earlier layers wrote into their input rows"),
    ("17", r"Nothing\s+in\s+the\s+8\s+unturned\s+columns\s+changes", "true only in the first layer: later layers compute those "
     "columns from outputs that the new angles change"),
    ("15", r"into\s+words,\s+numbers\s+and\s+runs\s+of\s+other\s+symbols", "GPT-2's pre-tokenizer also splits off "
     "contractions such as 's as one piece (an apostrophe alone would be an 'other symbol') and keeps runs of spaces"),
    ("14", r"why\s+this\s+caps\s+accuracy\s+at\s+0\.58", "the symmetric-ALiBi cap "
     "(0.55 (L - 2) + 1) / (L - 1) depends on the length: 0.61 at 8 tokens, 0.58 at 16, 0.565 at 32"),
    ("15", r"(?<!default attention, )transformers'\s+Llama\s+(?:can\s+keep|keeps)\s+packed\s+documents\s+apart",
     "only with the default attention: with flash attention, DataCollatorWithFlattening(return_flash_attn_kwargs=True) "
     "passes cu_seq_lens_q/k, a third way"),
    ("00", r"keeps\s+scores\s+from\s+growing\s+with\s+the\s+width", "dividing by sqrt(d) keeps the spread (std) of the "
     "scores about constant as the width grows; it does not stop any one score from growing"),
    ("01", r"`?<UNK>`?\s+stands\s+for\s+any\s+word", "any token not in the vocabulary becomes <UNK>, punctuation included "
     "(the comma in 02's Exercise 1)"),
    ("02", r"docs\s+are\s+right\s+for\s+an\s+`?Embedding`?\s+built\s+from\s+scratch", "too narrow both ways: the <PAD> row "
     "also stays fixed under an optimizer without weight decay, and a new Embedding whose <PAD> row is set non-zero decays"),
    ("13", r"its\s+authors\s+suggest\s+it", "the symmetric ALiBi comes from issue 5 of the ALiBi repository, opened by "
     "Ofir Press, the first author, alone: not a suggestion of all three authors"),
    ("13", r"rows\s+for\s+4\s+and\s+8\s+heads,\s+not\s+6", "the paper's rule 2^(-8k/H) misses the 12-head row too "
     "(x = 2/3, 4/3, ...): naming only 6 implies it gives the 12-head row"),
    ("16", r"takes\s+(?:these\s+pairs|them)\s+to\s+angles\s+they\s+never\s+met", "said of pairs 35 to 63: pair 35 "
     "makes 0.997 turns within L, so a longer input takes it only a sliver past the angles it met; "
     "only the slower pairs meet much that is new"),
    ("16", r"angle\s+near\s+0\.5\s+rad\s+meant\s+tokens\s+13\s+apart", "true on pair 0 only (13 rad wraps to 0.43, the "
     "nearest of distances 1 to 31); on other pairs distance 13 gives other angles"),
    ("16", r"Every\s+rule\s+divides\s+the\s+slowest", "said before the rules, it reads as a definition of a rule; it holds of "
     "the four rules shown (PI, NTK-aware, YaRN, Llama 3.1), not of every rule"),
    ("10", r"key\s+`?p\s+-\s+1`?\s+holds\s+the\s+same\s+row\s+as\s+query", "the hand-set head's query is 3 PE[p] and "
     "key p - 1 is 8 PE[p]: different rows that point the same way, which among keys of one length scores highest"),
    ("11", r"Partly,\s+from\s+the\s+pairs\s+that\s+turn", "pairs 4 and 5, a source of position there, barely turn "
     "(0.086 and 0.012 radian at position 256), so 'the pairs that turn' (0 to 3) is the wrong set"),
    ("14", r"also\s+near\s+1\s+\+\s+2πk", "under pair 0 (1 rad a token) keys 20, 39 and 51 back end 1.15, 1.30 and 0.73 rad "
     "round, not all near 1 + 2πk; pair 0's part drops to 8.2 at 51 back"),
    ("14", r"39,\s+45\s+and\s+51\s+high", "pair 1 scores 39 back 2.1, about as 1 back (1.8); only 45 and 51 back (4.9, 6.0) "
     "are high"),
    ("15", r"no\s+KV\s+cache\s+of\s+earlier\s+keys", "any cache object blocks the packed document mask, even an empty "
     "one made on the call (masking_utils: past_key_values is None): the 'cache left on' row is not equal"),
    ("13", r"rows\s+for\s+4\s+and\s+8\s+heads\s+only", "the paper (section 3) states a rule for every head count, "
     "2^(-8k/n); for 6 and 12 heads it gives other slopes, and the table's rows follow the authors' code"),
    ("12", r"some\s+long-position\s+entries\s+are\s+off", "after model.to(bfloat16), Llama 3.1 has an entry off by more "
     "than 1 at 130,419 of 131,072 positions, from position 595 on: not only at some long positions"),
    ("12", r"no\s+more\s+than\s+its\s+angle(?!\s+changes)", "a sine is not compared with an angle: its change is at "
     "most the angle's change"),
    ("04", r"last\s+denominator\s+is\s+exactly\s+10000,\s+and\s+ours", "it reads as if only the last differs: tensor2tensor's "
     "denominators are 10000^(i / (pairs - 1)), so every one after the first differs (1, 100, 10000 against 1, 21.5, 464)"),
    ("17", r"cards\s+state\s+their\s+longest\s+training\s+input", "the cards state a context length (\"Context length\" "
     "128k, \"Context Length\" 128K); it equals the longest training input only by the papers (sources 8 and 10)"),
    ("17", r"layers\s+without\s+positions", "Llama 4's NoPE layers have no RoPE, but they get position from the causal mask, "
     "and transformers scales their queries by a factor of the query's position from 8,191 on"),
    ("03", r"one\s+language\s+model\s+with\s+the\s+sinusoidal", "Press et al. train two models of one design, at L = 512 "
     "and at L = 1024"),
    ("00", r"output\s+size\s+is\s+in\s+blue,\s+as\s+\(rows,\s+columns\)", "the pipeline diagram's first boxes show token "
     "counts (4 tokens, 10 tokens) and Q, K, V shows 3 x (rows, columns): not every size is a (rows, columns) pair"),
    ("01", r"identity\s+matrix\*\*,\s+1s\s+on\s+the\s+diagonal\.", "1s on the diagonal does not define the identity: "
     "every other entry must be 0"),
    ("02", r"2017\s+Transformer\s+is\s+an\s+exception", "every model whose output layer reuses W_E gets a <PAD> gradient "
     "there (BERT's MLM head too): the 2017 Transformer is one of them, not a lone exception"),
    ("14", r"[Kk]eys\s+ahead\s+a\s+bonus", "ALiBi as published has no bias for keys ahead: Press et al. define it for a "
     "causal mask only, and issue #5 says the causal matrix is right only on and below the diagonal"),
    ("14", r"end\s+near\s+1\s+radian\s+too", "under pair 0 keys 20, 39 and 51 back end at 1.15, 1.30 and 0.73 rad: the last "
     "two are 0.3 rad from 1, and pair 0's part drops at 51 back"),
    ("14", r"39\s+about\s+as\s+1\s+back", "fails in seed 2 (pair 1 scores 3.2 at 39 back against 0.8 at 1 back), and the "
     "benchmark asserts nothing about score_by_pair"),
    ("15", r"largest\s+logit\s+gap,\s+over\s+all\s+documents", "decoder.packing_differences runs one attention head "
     "with no read-out: its table compares the head's outputs, not logits"),
    ("11", r"[Pp]airs\s+4\s+to\s+63\s+add\s+small\s+sines", "LoFTR builds its table in float32: from pair 52 on exp(-2i) is "
     "exactly 0, and from pair 10 on the sine at position 256 is below 1e-6, too small for a weight to scale up"),
    ("03", r"look\s+at\s+the\s+word\s+`?k`?\s+places\s+back", "Vaswani et al. 3.5 hoped for attending by relative "
     "position, an offset k either way (the encoder looks both ways): not only k places back"),
    ("04", r"d2l\s+\[4\]\s+write\s+the\s+same\s+table\s+with", "the Annotated Transformer builds its denominators "
     "through exp(-log(10000) / d * 2i): its table equals ours only up to rounding (about 1e-7)"),
    ("00", r"output\s+size\s+is\s+in\s+blue,\s+a\s+token\s+count\s+or\s+\(rows,\s+columns\)\.", "the Q, K, V box "
     "reads 3 x (10, 6): three matrices, neither a token count nor one (rows, columns) pair"),
    ("00", r"network\s+behind\s+language\s+models", "overstated: n-gram and RNN language models are not Transformers"),
    ("01", r"cuts\s+\*don't\*\s+with\s+the\s+regular\s+expression,\s+then", "tokens.tokenize does not cut don't: "
     "it prints [\"don't\"] and keeps it whole"),
    ("12", r"Their\s+sign\s+flips\s+\[2,\s*5\]", "sources 2 and 5 show the mechanism (code and issue), not the sign "
     "flip: that is our own computation with Llama 3.1's config"),
    ("12", r"Some\s+code\s+rounds\s+frequencies\s+or\s+positions\s+to\s+bfloat16\s+too\s+\[2", "overstates source 2: in "
     "transformers 4.38.2 to 5.23.0 the frequencies stay float32 unless the user calls model.to(torch.bfloat16)"),
    ("12", r"type\s+\[4\]\.\s+After\s+`model\.to\(torch\.bfloat16\)`", "loading in bfloat16 (the cited example) keeps "
     "inv_freq float32 in transformers 5.23.0; only a later model.to(torch.bfloat16) rounds it, so the two must not be paired"),
    ("13", r"one\s+matrix\s+\$R_p\$,\s+as\s+in\s+\[10\]", "RoPE turns anticlockwise and 10's rotation_matrix turns a "
     "row clockwise: apply_rotary(q)[p] equals q[p] @ rotation_matrix(position=p).T, so RoPE's R_p is its transpose"),
    ("07", r"no\s+longer\s+sit\s+right\s+after", "head_outputs comes from a matmul, so each head is one block in memory: a "
     "token's head-0 and head-1 numbers never sat together, and transpose moves nothing"),
    ("07", r"a\s+marker\s+that\s+every\s+sentence\s+begins\s+with", "07's batch has no shared start token, so as a fact "
     "it is false: the counting demo must say it supposes one"),
    ("16", r"keeps\s+little\s+of\s+the\s+model's\s+sense\s+of\s+position", "an inference no run measures: "
     "bench_stretching calls the one-token match a reference line, not a test of long offsets"),
    ("17", r"scaled\s+up,\s+by\s+the\s+same\s+factor", "transformers' NoPE query factor, 1 + 0.1 ln(1 + floor((p + 1) "
     "/ 8192)), grows with the query's position p: it is one factor per query, not one for all"),
    ("14", r"ALiBi\s+was\s+made\s+for\s+a\s+causal", "13's 'built for causal' in other words: Press et al. define it for a "
     "causal mask and test only causal models; they do not say it suits only them"),
    ("14", r"[Ii]n\s+this\s+encoder\s+none\s+does", "understated: the key 1 back also needs the keys at unseen offsets to "
     "score well below it, not just none above it, or they dilute the softmax"),
    ("14", r"scores\s+20\s+back\s+low", "the benchmark asserts nothing about score_by_pair, only that the decoder's pair 1 "
     "peaks 10 to 15 ahead (about 48 to 53 back); 20 and 45 back lie outside that"),
    ("14", r"shows\s+why\s+attention\s+reads\s+a\s+bag", "only attention with no positions and no mask reads a bag"),
    ("05", r"Scaling\s+keeps\s+σ\s+near\s+1\s+at\s+every\s+width", "only if q and k have entries of variance about 1, "
     "the side note's assumption: W_Q and W_K set the std of Q and K, so scaling alone does not"),
    ("06", r"Below\s+are\s+three,\s+at", "the table has three lines but two initializations: lines 1 and 2 both draw std 1, "
     "line 2 only adds the factor"),
    ("11", r"[Pp]airs\s+4\s+to\s+63\s+barely\s+turn", "LoFTR's table is float32: from pair 52 on exp(-2i) rounds to "
     "exactly 0, so those 12 pairs do not turn at all"),
    ("11", r"batch_first=True`?,\s+so\s+the\s+module\s+gets", "cause and effect reversed: C.Origami's ConvTransModel "
     "transposes to (batch, length, hidden) before AttnModule; batch_first=True only matches that"),
    ("07", r"transformers\s+even\s+lets\s+such\s+rows", "true of transformers 4.x's SDPA path only: in 5.23 "
     "_unmask_unattended is still in modeling_attn_mask_utils.py, but no model calls it"),
    ("08", r"slowest\s+pair\s+no\s+longer\s+decides", "it never decided: at base 100 its dip lies past the table (half "
     "a turn is 292 positions), and both answers are just the table's last row"),
    ("14", r"new\s+PE\s+rows\s+drown\s+out", "every PE row is sqrt(d_model / 2) = 4 long, at trained positions and past them: "
     "the ratio 0.95 : 4 is the same everywhere, so the rows past training are new, not louder"),
    ("10", r"In\s+each\s+row\s+of\s+the\s+map,\s+look\s+for\s+0\.93", "only rows 2 to 7 of the hand-set head's map give "
     "key p - 1 0.93: row 0 has no key p - 1 (key 0 takes 1.00) and row 1's key 0 gets 0.96"),
    ("10", r"√32,\s+and\s+so\s+will\s+every\s+key", "a key is 8 PE[q + 1], of length 8√32 = 45.25, not √32: the keys share "
     "one length, not PE's"),
    ("17", r"Larger\s+scores\s+give\s+more\s+peaked", "adding the same amount to every score leaves softmax unchanged: "
     "only multiplying every score by a factor above 1, as YaRN's 1/t does, makes the weights more peaked"),
    ("16", r"in\s+this\s+toy\s+the\s+extra\s+training", "shown at 2x only: at 128 tokens with PI x2 more, the PI-tuned "
     "model beats the control by 0.20 to 0.40 in the learned seeds (bench_stretching.py), so PI's share is not small there"),
    ("06", r"With\s+entries\s+of\s+std\s+1/sqrt\(d_model\),\s+each\s+word's\s+first\s+output\s+score", "overstated: a "
     "score is the decoder's last vector times a W_E row, so its std is near 1 only if that vector's entries have std "
     "about 1 (the layer norm at the start of training); the small entries alone do not give it"),
    ("10", r"cancel\s+some\s+of\s+these\s+waves,\s+but\s+never\s+all", "at one fixed offset, entries in the two blocks "
     "joining pairs 0 and 1 make waves of the same two frequencies and can be set to cancel them exactly (8 entries, "
     "4 constraints); only zeros cancel them at every offset"),
    ("12", r"longer\s+than\s+any\s+before", "transformers 4.31 rebuilt Llama's table in bfloat16 only after model.to(bfloat16) "
     "and only for an input longer than the cached table (at first max_position_embeddings), not any input longer than before"),
    ("12", r"adds\s+their\s+worst\s+cases", "torch.pow is not correctly rounded: each of the two roundings moves the angle by "
     "about 2^-24 of itself (0.80 x 2^-24 measured), so the dotted line is not a sum of worst cases"),
    ("07", r"SDPA\s+path,\s+so\s+such\s+rows\s+saw\s+every\s+key", "transformers 4.x called _unmask_unattended only when the "
     "mask was on a CUDA (later also XPU) device (modeling_attn_mask_utils.py: device.type in ['cuda', 'xpu']); on CPU the "
     "rows kept their finfo.min scores, which weigh every key equally"),
    ("07", r"softmax\s+divides\s+0\s+by\s+0", "torch.softmax subtracts the row maximum first: with every score -inf its NaN "
     "comes from -inf - (-inf), not from a division; only the formula is 0/0"),
    ("03", r"It\s+did\s+not\s+test\s+this", "Vaswani et al. 3.5 report no test of extrapolation or of attending by "
     "relative position; whether the authors tested them is not known"),
    ("04", r"or\s+converts\s+them\s+to\s+another\s+number\s+type", "Module.to(dtype) casts only floating-point (and "
     "complex) parameters and buffers: an integer buffer keeps its type"),
    ("07", r"on\s+CPU\s+they\s+stayed\s+fully\s+masked", "transformers 4.x fills masked scores with finfo(dtype).min, "
     "not -inf: on CPU a row with no key weighs every key equally (SDPA returns the mean of V), so it is not masked in effect"),
    ("14", r"Each\s+model\s+adds\s+one\s+position\s+scheme", "the no-position model adds no scheme: each model adds a "
     "position scheme or none (round 70 diff review F1)"),
    ("05", r"rows\s+are\s+not\s+ours", "example.sentence_rows draws W_E with the same seed, so ids 0 to 3 get our "
     "rows: the cat sentence's 'the' and 'cat' rows equal the running sentence's first two (round 72, C and C2; "
     "later ids differ, diff review F1)"),
    ("05", r"rescales\s+the\s+sum\s+\(a\s+layer\s+norm", "a layer norm subtracts the mean, divides by the std and applies "
     "a learned gain and bias: it normalizes, it does not only rescale (round 71 diff review D2)"),
    ("12", r"from\s+about\s+position\s+600,\s+nearly", "after model.to(bfloat16), Llama 3.1's first entry off by more "
     "than 512 units is at position 595, but only 72.5% of positions 600-799 have one; every position does from 1,000 on"),
    ("11", r"run\s+before\s+attention,\s+may\s+still\s+give\s+it\s+some\s+order\s+\[5\]", "source 5 (Islam et al.) measures "
     "2-D image CNNs; nothing measures it for C.Origami's 1-D encoder, so [5] backs it only as an image-CNN analogy"),
    ("14", r"Only\s+its\s+two\s+neighbours\s+trade\s+sides", "reversing moves every other token to the opposite side, "
     "not only the two neighbours: in 4 9 3 0 5 the middle 3 has 4 and 9 before it, in 5 0 3 9 4 it has 5 and 0"),
    ("14", r"[Oo]ur\s+decoders\s+agree\s+at\s+64", "overstated: Press et al. rank perplexity of language models, the toy "
     "ranks accuracy on a copying task; the decoders give the same order, on a different task and measure"),
    ("04", r"parameters\(\)`?,\s+the\s+list", "Module.parameters() returns a generator, not a list: the optimizer takes "
     "what it yields, and printing it needs list(...)"),
    ("04", r"any\s+model\s+trained\s+with\s+the\s+interleaved", "the twin argument holds only for a model whose steps are "
     "weighted per column or treat all columns alike, such as the Transformer, not for any model"),
    ("16", r"A\s+real\s+model\s+fared\s+worse", "the toy's fine-tune rows are at 2x; PI's paper tuned LLaMA without PI at 4x "
     "and ran no PI-tuned control at 2x; the toy's tuned models score only 0.05 to 0.39 at 4x (128 tokens)"),
    ("16", r"slow\s+pairs\s+turn\s+further\s+than\s+in\s+training", "past L every pair turns further than in training; "
     "only the slow pairs reach angles they never met"),
    ("17", r"Llama\s+4\s+section\s+(?:offers\s+one\s+reason|explains\s+part\s+of\s+that\s+gap)",
     "the chunks show only that no RoPE layer meets a distance past L; "
     "the NoPE layers still attend over the whole 10M input, and nothing shows they cope"),
    ("17", r"Qwen3's\s+card\s+gives\s+its\s+matched\s+length\.", "the card gives 32,768 natively and 131,072 with YaRN; "
     "only the second is the matched length"),
]
# True of the package's toys, whose L is the length they trained at: checked in the notebook only.
NOTEBOOK_ONLY = {("17", r"the trained length")}


def _text(notebook: str) -> str:
    (path,) = (ROOT / "notebooks").glob(f"{notebook}_*.ipynb")
    return "\n".join("".join(cell["source"]) for cell in json.loads(path.read_text())["cells"])


PACKAGE = "\n".join(path.read_text() for path in sorted((ROOT / "src" / "posenc").rglob("*.py")))


@pytest.mark.parametrize("notebook, wording, why", CORRECTED, ids=[f"{n}-{w[:24]}" for n, w, _ in CORRECTED])
def test_a_corrected_sentence_does_not_come_back(notebook, wording, why):
    found = re.search(wording, _text(notebook))
    assert not found, f"{notebook} says {found.group(0)!r} again, which is false: {why}"
    found = None if (notebook, wording) in NOTEBOOK_ONLY else re.search(wording, PACKAGE)
    assert not found, f"the package says {found.group(0)!r}, which is false: {why}"


def test_the_list_can_find_what_it_looks_for():
    # Each wording is a pattern that matches its own false sentence (a typo would make the test above pass forever).
    samples = {"set of all rows": "on the set of all rows", "at most 2\\^-24": "adds at most 2^-24",
               "(?<!OpenAI's )GPT-2 draws": "GPT-2 draws",
               "[Tt]he scheme and the causal mask matter most": "The scheme and the causal mask matter most for how far",
               "RoPE \\(\\[13\\]\\) uses the same matrix": "RoPE ([13]) uses the same matrix.",
               "key p - 1 scores \\{best": 'print(f"key p - 1 scores {best:.3f}")',
               "same penalty on both\\s+sides of the query \\[4\\]": "the same penalty on both\n  sides of the query [4].",
               "rotate_half`? swaps": "Its `rotate_half` swaps half-split pairs.",
               "[Ee]very 2π ≈ 6\\.3 tokens back": "Every 2π ≈ 6.3 tokens back, it scores",
               "[Ii]n a packed row, pass a 4D document mask, or": "In a packed row, pass a 4D document mask, or restarted",
               "NoPE\\*? layer\\s+still gets position in two ways": "Such a *NoPE* layer\nstill gets position in two ways.",
               "parameter\\*? is a tensor the optimizer changes": "A *parameter* is a tensor the optimizer changes.",
               "[Pp]acked documents need a document mask": "* Packed documents need a document mask.",
               "Attention reads\\s+`PE\\[p\\] W_Q": "Attention reads\n`PE[p] W_Q · PE[q] W_K` instead.",
               "ramp starts at the \\*?32-turn point": "The code's ramp starts at the *32-turn point*, the fractional",
               "grows without\\s+bound and would\\s+drown": "The number `pos` grows without\nbound and would drown the word.",
               "writes into it gets its columns reordered\\.\\s+The model then gives":
                   "A matrix that writes into it gets its columns reordered. The model then gives the same outputs",
               "entry of std `?s`? adds": "An entry of std `s` adds about",
               "(?<!sinusoid, )[Tt]he\\s+embedding's scale mattered too": "it held. The\n  embedding's scale mattered too.",
               "[Aa] slow\\s+pair barely moves between neighbours and never":
                   "A slow\npair barely moves between neighbours and never",
               "Calling it twice on one `?x`? gives the same result": "- Calling it twice on one `x` gives the same result.",
               "depends only on q − p\\s*\\(\\[11\\]": "Then `PE[p] · PE[q]` depends only on q − p\n([11](11_pitfalls.ipynb)).",
               "output is\\s+the same\\s+wherever": "Each word's output is\nthe same wherever the word stands.",
               "Ids have\\s+neither": "Ids have\nneither.",
               "its \\*id\\*\\.\\s+The text is lower-cased": "a number, its *id*.\nThe text is lower-cased first, so",
               "larger base slows every pair(?!\\s+except|\\s+but)": "A larger base slows every pair, so more pairs",
               "Only their order and the\\s+capital M": "Only their order and the\ncapital M differ.",
               "much\\s+worse a few dozen": "It got\nmuch worse a few dozen tokens past its training length.",
               "drowns\\s+`?PE`?\\s+only\\s+when": "So the factor drowns `PE` only when `W_E` starts at std 1.",
               "So each score has four\\s+terms": "So each score has four\nterms:",
               "So the paper runs\\s+several attentions": "So the paper runs several attentions side by side",
               "no two bad\\s+waves cancel": "so no two bad\nwaves cancel at every `p` and offset.",
               "sharpens\\s+attention\\s+on\\s+long\\s+inputs": "it sharpens attention on long inputs",
               "A\\s+rule\\s+exists\\s+for\\s+distances\\s+past": "A rule exists for distances past `L`",
               "PI's\\s+paper\\s+found\\s+the\\s+opposite": "PI's paper found the opposite.",
               "float32\\s+errors\\s+grow\\s+with\\s+the\\s+position": "float32 errors grow with the position",
               "[Ww]hy\\s+does\\s+key\\s+0\\s+win": "Why does key 0 win at those rows?",
               "rotary\\s+decoder\\s+fails": "## Side note: why the rotary decoder fails at 64 tokens",
               "gets\\s+position\\s+in\\s+three\\s+ways": "Such a *NoPE* layer still gets position in three\nways.",
               "starts\\s+from\\s+single\\s+bytes[^\\[]*\\[1\\]": "starts from single bytes and merges pairs [1]",
               "d_model\\)\\)?,\\s+a\\s+little\\s+under\\s+10000":
                   "is 10000^((d_model − 2)/d_model), a little under\n10000.",
               "`<PAD>`\\s+tokens\\s+hidden": "its output, with the `<PAD>` tokens hidden.",
               "slope\\s+of\\s+0\\.(?!\\d)": "Look for the raw row to put everything on one key, with a\nslope of 0.",
               "splits\\s+each\\s+product\\s+into\\s+a\\s+part\\s+that\\s+depends":
                   "splits each product into a part that\n  depends on `q - p`",
               "[Tt]o\\s+attention\\s+without\\s+positions,\\s+each\\s+sentence\\s+is\\s+a\\s+bag":
                   "To\nattention without positions, each sentence is a bag of words.",
               "masks\\s+(?:\\(.*?\\)\\s+)?usually\\s+keep\\s+the\\s+loss":
                   "masks (from [05](05_x_plus_pe_and_qkv.ipynb) on) usually keep the loss from",
               "A\\s+first-layer\\s+score\\s+is\\s+the\\s+dot\\s+product": "A first-layer score is the dot\nproduct of",
               "paper's\\s+last\\s+two\\s+input\\s+steps": "Part 2 adds the\npaper's last two input steps",
               "[Rr]aw\\s+`?pos`?\\s+is\\s+1,\\s+2,\\s+3": "Raw `pos` is 1, 2, 3, … down the table.",
               "no\\s+wave\\s+finishes\\s+a\\s+turn\\s+in\\s+64\\s+positions,\\s+so\\s+each\\s+column\\s+changes\\s+smoothly":
                   "no wave\n  finishes a turn in 64 positions, so each column changes smoothly.",
               "At\\s+100,000,\\s+the\\s+worst": "dotted bound. At 100,000, the worst `f32` entry",
               "positions\\s+too\\s+\\(side\\s+note\\)": "Some code rounds frequencies or\npositions too (side note).",
               "BERT\\s+and\\s+ConvS2S,\\s+a\\s+convolutional\\s+translation\\s+model\\s+\\[1,\\s*2\\]":
                   "as in BERT and ConvS2S, a\nconvolutional translation model [1, 2].",
               "does\\s+the\\s+work,\\s+not\\s+PI": "So the extra training does the work, not PI.",
               "tested\\s+LLaMA\\s+at\\s+4x": "PI's paper\ntested LLaMA at 4x, where fine-tuning without PI barely helped.",
               "meets\\s+no\\s+new\\s+angles": "Only a pair that made a full turn in training meets no new angles at 2x.",
               "one\\s+close\\s+rival,\\s+key\\s+1": "Row 1 gets 0.96, with one close rival,\nkey 1.",
               "feed\\s+four\\s+separate\\s+waves": "the four entries joining pairs `i` and `j` feed four\nseparate waves",
               "at\\s+least\\s+as\\s+well\\s+as\\s+the\\s+best\\s+explicit":
                   "generalised to\n  longer inputs at least as well as the best explicit scheme",
               "key\\s+0\\s+scores\\s+13\\.0": "At queries 45 and 51, key 0 scores 13.0 and 13.6",
               "wins\\s+only\\s+if\\s+no\\s+offset": "It still wins\nonly if no offset unseen in training scores higher.",
               "A\\s+model\\s+generates\\s+one\\s+token\\s+per\\s+call": "A model generates one token per call.",
               "GPT keeps only the decoder\\s+and\\s+writes": "GPT keeps only the decoder and writes text",
               "Its limit is the\\s+table's last column": "Its limit is the\ntable's last column, the same at every width.",
               "Saving\\s+a\\s+model\\s+writes\\s+its": "Saving a model writes its\n`state_dict()`.",
               "stands\\s+in\\s+for\\s+any\\s+order": "The order is random, so it stands in for any order,",
               "Exercise\\s+1's\\s+run\\s+built\\s+`?table": "# Exercise 1's run built table.",
               "`PE\\[p\\]`\\s+is\\s+a\\s+row\\s+multiplied\\s+from\\s+the\\s+left":
                   "Here `PE[p]` is a row multiplied from the left.",
               "but\\s+only\\s+while\\s+word\\s+rows\\s+stay":
                   "a head look one position back, but only while word\nrows stay short.",
               "nothing\\s+else\\s+can\\s+cancel\\s+such\\s+a\\s+wave":
                   "Over enough\n> positions, nothing else can cancel such a wave.",
               "called\\s+\\*?heads\\*?,\\s+avoid\\s+this": "Several attentions side by\nside, called *heads*, avoid this.",
               "work\\s+only\\s+in\\s+the\\s+layout": "Trained weights work only in the layout they were trained in",
               "float32\\s+angles\\s+drift\\s+by\\s+up\\s+to": "float32 angles drift by up to about 2^-23 times the angle.",
               "So\\s+PI's\\s+main\\s+trouble\\s+is\\s+pair\\s+0": "So PI's main trouble\nis pair 0.",
               "two\\s+can\\s+differ\\s+at\\s+pair\\s+0": "instead [2]. The two can differ at pair 0.",
               "YaRN\\s+matches\\s+training": "This *static* YaRN matches training.",
               "others\\s+carry\\s+no\\s+position(?!\\s+of\\s+their\\s+own)": "The others carry no position.",
               "Nothing\\s+in\\s+the\\s+8\\s+unturned\\s+columns\\s+changes": "Nothing in the 8 unturned columns changes at 2x.",
               "into\\s+words,\\s+numbers\\s+and\\s+runs\\s+of\\s+other\\s+symbols":
                   "cuts the text into words, numbers and runs of other symbols\n[2].",
               "why\\s+this\\s+caps\\s+accuracy\\s+at\\s+0\\.58": "**Side note: why this caps accuracy at 0.58.**",
               "(?<!default attention, )transformers'\\s+Llama\\s+(?:can\\s+keep|keeps)\\s+packed\\s+documents\\s+apart":
                   "transformers' Llama can keep packed documents apart in two ways [4].",
               "keeps\\s+scores\\s+from\\s+growing\\s+with\\s+the\\s+width": "This keeps scores from growing with the\nwidth",
               "`?<UNK>`?\\s+stands\\s+for\\s+any\\s+word": "`<UNK>` stands for any word not in the list.",
               "docs\\s+are\\s+right\\s+for\\s+an\\s+`?Embedding`?\\s+built\\s+from\\s+scratch":
                   "The docs are right for an `Embedding` built from scratch.",
               "its\\s+authors\\s+suggest\\s+it": "It is not in the paper, but its\n  authors suggest it [4].",
               "rows\\s+for\\s+4\\s+and\\s+8\\s+heads,\\s+not\\s+6": "The paper's rule gives the rows for 4 and 8 heads, not 6.",
               "adds\\s+that\\s+same\\s+table": "Every layer adds that same table to its word–word\nscores.",
               "predictions\\s+nearly\\s+even": "make the first predictions nearly\neven.",
               "takes\\s+(?:these\\s+pairs|them)\\s+to\\s+angles\\s+they\\s+never\\s+met":
                   "A longer input takes these pairs to angles they never met.",
               "cards\\s+state\\s+their\\s+longest\\s+training\\s+input":
                   "Llama 3.1's and DeepSeek-V3's cards state their\nlongest training input.",
               "layers\\s+without\\s+positions": "## Llama 4: layers without positions, and chunks",
               "angle\\s+near\\s+0\\.5\\s+rad\\s+meant\\s+tokens\\s+13\\s+apart":
                   "In training, an angle near\n0.5 rad meant tokens 13 apart.",
               "Every\\s+rule\\s+divides\\s+the\\s+slowest": "Every\nrule divides the slowest pair's frequency by `s`.",
               "key\\s+`?p\\s+-\\s+1`?\\s+holds\\s+the\\s+same\\s+row\\s+as\\s+query":
                   "The plan: key `p - 1` holds the same row as query\n`p`.",
               "Partly,\\s+from\\s+the\\s+pairs\\s+that\\s+turn": "Partly, from the pairs that turn.",
               "also\\s+near\\s+1\\s+\\+\\s+2πk": "So do keys 20, 39 and 51, also near 1 + 2πk back.",
               "39,\\s+45\\s+and\\s+51\\s+high": "It happens to score 20 back low and 39, 45 and 51 high.",
               "no\\s+KV\\s+cache\\s+of\\s+earlier\\s+keys": "only when the call has no KV cache of earlier keys and values",
               "rows\\s+for\\s+4\\s+and\\s+8\\s+heads\\s+only": "The paper's rule gives the rows for 4 and 8 heads only.",
               "some\\s+long-position\\s+entries\\s+are\\s+off": "Then some long-position\n entries are off by almost 2",
               "no\\s+more\\s+than\\s+its\\s+angle(?!\\s+changes)": "A sine changes by no\nmore than its angle, since",
               "last\\s+denominator\\s+is\\s+exactly\\s+10000,\\s+and\\s+ours": "last\ndenominator is exactly 10000, and ours",
               "one\\s+language\\s+model\\s+with\\s+the\\s+sinusoidal": "one language model with the sinusoidal encoding",
               "scores\\s+must\\s+become\\s+weights": "Each row of scores must become weights that are never negative.",
               "output\\s+size\\s+is\\s+in\\s+blue,\\s+as\\s+\\(rows,\\s+columns\\)":
                   "Each box's output\nsize is in blue, as (rows, columns).",
               "identity\\s+matrix\\*\\*,\\s+1s\\s+on\\s+the\\s+diagonal\\.":
                   "The fast route uses the **identity matrix**, 1s on the diagonal.",
               "2017\\s+Transformer\\s+is\\s+an\\s+exception": "The 2017 Transformer is an exception.",
               "Partly,\\s+from\\s+pairs\\s+2\\s+to\\s+5": "Partly, from pairs 2 to 5.",
               "haven't\\s+released\\s+it\\\"": "so we haven't released it\".",
               "[Mm]ake\\s+sure\\s+every\\s+row\\s+sees\\s+a\\s+key": "So make sure every row sees a key, as right padding does.",
               "[Ee]very\\s+dot\\s+product\\s+is\\s+positive": "Every dot product is positive, and row 10's",
               "[Kk]eys\\s+ahead\\s+a\\s+bonus": "Keys behind the query get a penalty, and keys ahead a\nbonus",
               "end\\s+near\\s+1\\s+radian\\s+too": "Keys 20, 39 and 51 back end near 1 radian too, at 1.2, 1.3 and 0.7.",
               "39\\s+about\\s+as\\s+1\\s+back": "Pair 1 happens to score 20 back low, 39 about as 1 back, and 45",
               "largest\\s+logit\\s+gap,\\s+over\\s+all\\s+documents":
                   "Each entry is the largest logit gap, over\nall documents, between a document read packed",
               "[Pp]airs\\s+4\\s+to\\s+63\\s+add\\s+small\\s+sines": "> its own angles. Pairs 4 to 63 add small sines that",
               "look\\s+at\\s+the\\s+word\\s+`?k`?\\s+places\\s+back": "easy to learn to look at the word `k` places back",
               "d2l\\s+\\[4\\]\\s+write\\s+the\\s+same\\s+table\\s+with":
                   "The Annotated Transformer [3] and d2l [4] write the same table with",
               "output\\s+size\\s+is\\s+in\\s+blue,\\s+a\\s+token\\s+count\\s+or\\s+\\(rows,\\s+columns\\)\\.":
                   "Each box's output\nsize is in blue, a token count or (rows, columns).",
               "network\\s+behind\\s+language\\s+models": "a Transformer, the network behind language models,",
               "cuts\\s+\\*don't\\*\\s+with\\s+the\\s+regular\\s+expression,\\s+then":
                   "The last line cuts *don't* with the regular\nexpression, then with the package's",
               "Their\\s+sign\\s+flips\\s+\\[2,\\s*5\\]": "about 1,024 units.\n  Their sign flips [2, 5].",
               "Some\\s+code\\s+rounds\\s+frequencies\\s+or\\s+positions\\s+to\\s+bfloat16\\s+too\\s+\\[2":
                   "Some code rounds frequencies or\npositions to bfloat16 too [2, 5].",
               "one\\s+matrix\\s+\\$R_p\\$,\\s+as\\s+in\\s+\\[10\\]":
                   "Collect all the turns at position $p$ in one matrix $R_p$, as in [10](10_relative_positions.ipynb).",
               "no\\s+longer\\s+sit\\s+right\\s+after": "a token's head-1 numbers no longer sit right after its head-0",
               "a\\s+marker\\s+that\\s+every\\s+sentence\\s+begins\\s+with": "(a marker that every sentence begins with)",
               "keeps\\s+little\\s+of\\s+the\\s+model's\\s+sense\\s+of\\s+position":
                   "A rule near it keeps little of the model's sense of position.",
               "scaled\\s+up,\\s+by\\s+the\\s+same\\s+factor": "its queries\nare scaled up, by the same factor",
               "ALiBi\\s+was\\s+made\\s+for\\s+a\\s+causal": "ALiBi was made for a causal mask, where no key lies ahead.",
               "[Ii]n\\s+this\\s+encoder\\s+none\\s+does": "could still outscore it. In this\nencoder none does, so",
               "scores\\s+20\\s+back\\s+low": "Here pair 1 scores 20 back low, and 45 and 51 high.",
               "shows\\s+why\\s+attention\\s+reads\\s+a\\s+bag": "shows why\nattention reads a bag.)",
               "Scaling\\s+keeps\\s+σ\\s+near\\s+1\\s+at\\s+every\\s+width": "Scaling keeps σ near 1\nat every width, so",
               "Below\\s+are\\s+three,\\s+at": "Below are three, at `d_model = 512`, with entries of",
               "[Pp]airs\\s+4\\s+to\\s+63\\s+barely\\s+turn": "As written, pairs 4 to 63 barely turn, so each adds",
               "batch_first=True`?,\\s+so\\s+the\\s+module\\s+gets":
                   "Its Transformer layers use\n`batch_first=True`, so the module gets batch-first tensors.",
               "transformers\\s+even\\s+lets\\s+such\\s+rows": "Hugging Face's transformers even lets such rows see every key",
               "slowest\\s+pair\\s+no\\s+longer\\s+decides": "the table, and the slowest pair no longer decides.",
               "type\\s+\\[4\\]\\.\\s+After\\s+`model\\.to\\(torch\\.bfloat16\\)`":
                   "a 16-bit float type [4]. After `model.to(torch.bfloat16)`,\nLlama rounds",
               "new\\s+PE\\s+rows\\s+drown\\s+out": "past the trained positions the\nnew PE rows drown out the token.",
               "In\\s+each\\s+row\\s+of\\s+the\\s+map,\\s+look\\s+for\\s+0\\.93": "In each row of the map, look for 0.93",
               "√32,\\s+and\\s+so\\s+will\\s+every\\s+key": "has the same length, √32, and so\nwill every key.",
               "With\\s+entries\\s+of\\s+std\\s+1/sqrt\\(d_model\\),\\s+each\\s+word's\\s+first\\s+output\\s+score":
                   "With entries of std 1/sqrt(d_model), each word's first output score has std near 1",
               "cancel\\s+some\\s+of\\s+these\\s+waves,\\s+but\\s+never\\s+all":
                   "Several such\n   entries can cancel some of these waves, but never all.",
               "longer\\s+than\\s+any\\s+before": "rounded the positions of inputs longer than any before [5].",
               "adds\\s+their\\s+worst\\s+cases": "The dotted line adds their worst cases, 2 × 2^-24",
               "SDPA\\s+path,\\s+so\\s+such\\s+rows\\s+saw\\s+every\\s+key":
                   "called it in its SDPA path, so\n    such rows saw every key.",
               "softmax\\s+divides\\s+0\\s+by\\s+0": "The plain softmax divides 0 by 0 and should give NaN.",
               "It\\s+did\\s+not\\s+test\\s+this": "[1]. It did not test this.",
               "or\\s+converts\\s+them\\s+to\\s+another\\s+number\\s+type":
                   "to a GPU (`\"cuda\"`) or converts them to another number type.",
               "Each\\s+model\\s+adds\\s+one\\s+position\\s+scheme": "Each model adds one position scheme, built as in",
               "Larger\\s+scores\\s+give\\s+more\\s+peaked": "attention is *sharper*. Larger scores give more peaked weights.",
               "in\\s+this\\s+toy\\s+the\\s+extra\\s+training": "So in this toy the extra training does most of the work.",
               "rows\\s+are\\s+not\\s+ours": "# a small vocabulary of its own, so its rows are not ours",
               "rescales\\s+the\\s+sum\\s+\\(a\\s+layer\\s+norm": "adds a segment row and rescales the sum (a layer norm).",
               "from\\s+about\\s+position\\s+600,\\s+nearly": "Then, from about position 600, nearly\n  every position",
               "run\\s+before\\s+attention,\\s+may\\s+still\\s+give\\s+it\\s+some\\s+order\\s+\\[5\\]":
                   "Its zero-padded convolutions, run before\nattention, may still give it some order [5].",
               "Only\\s+its\\s+two\\s+neighbours\\s+trade\\s+sides": "other token. Only its two neighbours trade sides, and",
               "[Oo]ur\\s+decoders\\s+agree\\s+at\\s+64": "in perplexity [3]. Our decoders agree at 64 tokens.",
               "parameters\\(\\)`?,\\s+the\\s+list": "lists in `parameters()`, the list you hand the optimizer.",
               "any\\s+model\\s+trained\\s+with\\s+the\\s+interleaved":
                   "So any model trained with the interleaved layout has a twin",
               "on\\s+CPU\\s+they\\s+stayed\\s+fully\\s+masked": "the mask was on CUDA; on CPU they stayed fully masked.",
               "A\\s+real\\s+model\\s+fared\\s+worse": "does most of the work.\nA real model fared worse. In PI's paper",
               "slow\\s+pairs\\s+turn\\s+further\\s+than\\s+in\\s+training": "slow pairs turn further than in training.",
               "Llama\\s+4\\s+section\\s+(?:offers\\s+one\\s+reason|explains\\s+part\\s+of\\s+that\\s+gap)":
                   "The Llama 4 section explains\npart of that gap.",
               "Qwen3's\\s+card\\s+gives\\s+its\\s+matched\\s+length\\.": "Qwen3's card gives its matched length. Llama 3.1's",
               }  # one entry per line, each ending with a comma, so that branches which add entries merge cleanly
    for _, wording, _ in CORRECTED:
        sample = samples.get(wording, wording.replace("[Ff]", "F").replace("\\", ""))
        assert re.search(wording, sample), wording
