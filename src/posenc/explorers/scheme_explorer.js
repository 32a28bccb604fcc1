// The scheme explorer's front end (anywidget): RoPE against the added sinusoid, ALiBi's bias, a learned table.
//
// Python puts into the model only what the package alone computes: the schemes notebook's word and its W_Q and W_K (float32,
// d_model 64) and, given a trained model, its learned position table before and after training. The rest is computed
// here in float64, as posenc.schemes computes it (same_word_scores, alibi_slopes, alibi_bias, and the rows' cosine
// similarity), and drawn on a canvas in the same event as the key press. For tests and benchmarks the root element
// carries `posenc` (scores(), slopes(), bias(), similarity(), tables(), description(), state(), draw()) and fires
// "posenc:painted" after each repaint.

const SCHEMES = ["rotary", "alibi", "learned"], REACH = 60; // keys up to REACH positions from the query
const COLOUR = {rotary: "#0072B2", sinusoidal: "#009E73", alibi: "#D55E00", learned: "#E69F00"}; // plots.SCHEME_COLOURS
// matplotlib's viridis (ALiBi's bias, as posenc's figures draw it), 11 colours; a masked cell (-inf) grey.
const VIRIDIS = ["440154", "482475", "414487", "355f8d", "2a788e", "21918c", "22a884", "44bf70", "7ad151", "bddf26", "fde725"]
  .map(h => [0, 2, 4].map(k => parseInt(h.substr(k, 2), 16))), GREY = [217, 217, 217, 255];
const SETTINGS = ["view", "base", "query_position", "num_heads", "head", "max_sequence_length", "causal", "position"];
const ASK = 'The learned view shows a trained table: pass trained=training.train("learned") (a few seconds of training) to SchemeExplorer.';
const floats = b => Float64Array.from(new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)));
const dot = (a, b) => a.reduce((sum, x, i) => sum + x * b[i], 0);
const range = (a, b) => Array.from({length: b - a + 1}, (_, k) => a + k);
const short = v => String(Number(v.toPrecision(4))); // 0.0625, 0.003906, 4.5

/** posenc.schemes.same_word_scores: one word at position p against itself at p + k, for each offset k (float64).
 *  W holds W_Q then W_K, each (d, d): sinusoidal (word + PE[p]) W_Q . (word + PE[p + k]) W_K, rotary RoPE_p(word W_Q) .
 *  RoPE_{p + k}(word W_K), pairs (2i, 2i + 1) turned by position * base^(-2i / d). */
export function sameWordScores(word, W, scheme, p, offsets, base) {
  const d = word.length, w = frequencies(d, base), WQ = W.subarray(0, d * d), WK = W.subarray(d * d);
  const times = (x, M) => {
    const out = new Float64Array(d);
    for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) out[j] += x[i] * M[i * d + j];
    return out;
  };
  if (scheme === "sinusoidal") {
    const row = pos => word.map((x, j) => x + (j & 1 ? Math.cos(pos * w[j >> 1]) : Math.sin(pos * w[j >> 1])));
    const q = times(row(p), WQ);
    return offsets.map(k => dot(times(row(p + k), WK), q));
  }
  const turn = (x, pos) => {
    const out = new Float64Array(d);
    for (let i = 0; 2 * i + 1 < d; i++) {
      const c = Math.cos(pos * w[i]), s = Math.sin(pos * w[i]);
      out[2 * i] = x[2 * i] * c - x[2 * i + 1] * s;
      out[2 * i + 1] = x[2 * i] * s + x[2 * i + 1] * c;
    }
    return out;
  };
  const q = turn(times(word, WQ), p), k = times(word, WK);
  return offsets.map(o => dot(turn(k, p + o), q));
}

/** posenc.schemes.alibi_slopes: 2^(-8k / c) for the largest power of two c <= n, then every other slope of 2c heads. */
export function alibiSlopes(n) {
  let c = 1;
  while (2 * c <= n) c *= 2;
  const exponents = range(1, c).map(k => k * (8 / c));
  for (let k = 1; exponents.length < n; k += 2) exponents.push(k * (8 / (2 * c)));
  return exponents.map(e => Math.pow(2, -e));
}

/** posenc.schemes.alibi_bias, (n, L, L) row-major: -slope |i - j|; with causal, -inf for a key after its query. */
export function alibiBias(n, L, causal) {
  const m = alibiSlopes(n), out = new Float64Array(n * L * L);
  for (let h = 0; h < n; h++)
    for (let i = 0; i < L; i++)
      for (let j = 0; j < L; j++) out[(h * L + i) * L + j] = causal && j > i ? -Infinity : -m[h] * Math.abs(i - j) + 0;
  return out;
}

/** The cosine similarity of row p of T (rows x d) to every row. */
export function cosineSimilarity(T, rows, d, p) {
  const row = r => T.subarray(r * d, (r + 1) * d), a = row(p);
  return range(0, rows - 1).map(r => dot(a, row(r)) / Math.max(Math.sqrt(dot(a, a) * dot(row(r), row(r))), 1e-8));
}

/** An (L, L) matrix as an L x L image in viridis from vmin to vmax, -inf grey. */
function viridisImage(values, L, vmin, vmax) {
  const canvas = Object.assign(document.createElement("canvas"), {width: L, height: L}), ctx = canvas.getContext("2d");
  const img = ctx.createImageData(L, L);
  values.forEach((v, k) => {
    const x = Math.min(1, Math.max(0, (v - vmin) / (vmax - vmin))) * 10, i = Math.min(9, Math.floor(x)), t = x - i;
    img.data.set(Number.isFinite(v) ? [...[0, 1, 2].map(c => VIRIDIS[i][c] + t * (VIRIDIS[i + 1][c] - VIRIDIS[i][c])), 255] : GREY, 4 * k);
  });
  ctx.putImageData(img, 0, 0);
  return canvas;
}

function viridisBar(ctx, box, vmin, vmax, label) {
  const gradient = ctx.createLinearGradient(0, box.y + box.h, 0, box.y);
  VIRIDIS.forEach((c, k) => gradient.addColorStop(k / 10, `rgb(${c})`));
  ctx.fillStyle = gradient;
  ctx.fillRect(box.x, box.y, box.w, box.h);
  axes(ctx, panel(box, [0, 1], [vmin, vmax]), {yTicks: decimalTicks(vmin, vmax, 4), xTicks: [], yRight: true, xlabel: label});
}

/** One entry of a legend at (x, y): a line as the curve's, and its label. */
function key(ctx, x, y, label, colour, dash = [], faint = false) {
  Object.assign(ctx, {strokeStyle: colour, globalAlpha: faint ? 0.3 : 1, lineWidth: faint ? 5 : 1.6});
  ctx.setLineDash(dash);
  ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x + 24, y); ctx.stroke();
  ctx.globalAlpha = 1;
  ctx.setLineDash([]);
  text(ctx, label, x + 30, y, "left", "middle");
}

// --- The widget ---------------------------------------------------------------------------------------------------

function render({model, el}) {
  const make = (tag, props = {}, ...children) => { const n = Object.assign(document.createElement(tag), props); n.append(...children); return n; };
  const save = (name, value) => { model.set(name, value); model.save_changes(); };
  const uid = Math.random().toString(36).slice(2), inputs = {};
  const radios = SCHEMES.map(v => make("input", {type: "radio", name: `posenc-scheme-${uid}`, value: v,
                                                 onchange: e => e.target.checked && save("view", v)}));
  const views = make("fieldset", {}, make("legend", {}, "scheme"), ...radios.map((r, k) => make("label", {}, r, SCHEMES[k])));
  const groups = Object.fromEntries(SCHEMES.map(v => [v, make("div", {className: "posenc-controls"})]));
  const slider = (view, name, text, min, max, log = false) => {
    const input = make("input", {type: "range", min, max, step: log ? 0.05 : 1, name}), out = make("output");
    input.addEventListener("input", () => {
      const v = log ? Number(Math.pow(10, Number(input.value)).toPrecision(12)) : Number(input.value);
      if (name === "num_heads" && model.get("head") > v - 1) model.set("head", v - 1); // the last head, as in Python
      save(name, v);
    });
    groups[view].append(make("label", {}, text, input, out));
    inputs[name] = {input, out, log};
  };
  const shape = model.get("_table_shape"), [rows, d] = shape.length ? shape : [0, 0];
  slider("rotary", "query_position", "query position p", 0, 1000);
  slider("rotary", "base", "base", 0.3, 6, true);
  slider("alibi", "num_heads", "num_heads", 1, 16);
  slider("alibi", "head", "head", 0, 15);
  slider("alibi", "max_sequence_length", "max_sequence_length", 2, 64);
  const causal = make("input", {type: "checkbox", name: "causal", onchange: () => save("causal", causal.checked)});
  groups.alibi.append(make("label", {}, causal, "causal (keys after the query masked)"));
  slider("learned", "position", "position p", 0, Math.max(rows - 1, 0));
  const controls = make("div", {}, make("div", {className: "posenc-controls"}, views), ...Object.values(groups));
  controls.addEventListener("keydown", e => e.stopPropagation()); // a key moves the control, not the page (slides)
  const canvas = make("canvas"), description = make("p", {className: "posenc-description"});
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", "the scheme explorer's picture, described below it");
  description.setAttribute("aria-live", "polite");
  const root = make("div", {className: "posenc-ex posenc-scheme-explorer"},
                    make("style", {}, STYLE + "\n.posenc-ex [hidden] { display: none !important; }"), controls, canvas, description);
  root.setAttribute("data-lm-suppress-shortcuts", "true"); // JupyterLab: keys on a control stay with the control
  el.classList.add("jupyter-widgets");
  el.append(root);

  const word = floats(model.get("_word")), W = floats(model.get("_weights"));
  const tables = rows ? floats(model.get("_tables")) : null;
  const before = tables && tables.subarray(0, rows * d), after = tables && tables.subarray(rows * d);
  let cache = {}, painted = 0, pending = false;
  const settings = () => {
    const s = Object.fromEntries(SETTINGS.map(k => [k, model.get(k)]));
    s.head = Math.min(s.head, s.num_heads - 1);
    return s;
  };
  const scores = (p, offsets, base) => ({offsets, rotary: sameWordScores(word, W, "rotary", p, offsets, base),
                                         sinusoidal: sameWordScores(word, W, "sinusoidal", p, offsets, base)});
  function numbers(s) { // each view computes only what it draws; the rotary curves are kept until p or the base moves
    if (s.view === "rotary") {
      if (cache.base !== s.base) cache = {base: s.base, at0: scores(0, range(0, REACH), s.base)};
      if (cache.p !== s.query_position)
        Object.assign(cache, {p: s.query_position, atP: scores(s.query_position, range(-Math.min(s.query_position, REACH), REACH), s.base)});
      return cache;
    }
    if (s.view === "alibi") return {slopes: alibiSlopes(s.num_heads), bias: alibiBias(s.num_heads, s.max_sequence_length, s.causal)};
    return tables && {before: cosineSimilarity(before, rows, d, s.position), after: cosineSimilarity(after, rows, d, s.position)};
  }

  function drawRotary(s, n, width, narrow) {
    const legend = narrow ? 4 : 2, top = 26 + legend * 16, height = top + (narrow ? 320 : 290), ctx = blankCanvas(canvas, width, height);
    const lines = [["rotary", n.at0, "RoPE, query at 0", true], ["sinusoidal", n.at0, "added sinusoid, query at 0", true],
                   ["rotary", n.atP, "RoPE, query at p", false], ["sinusoidal", n.atP, "added sinusoid, query at p", false]];
    const all = lines.flatMap(([scheme, c]) => c[scheme]), lo = Math.min(...all), hi = Math.max(...all), margin = 0.05 * (hi - lo) || 1;
    const P = panel({x: 58, y: top, w: width - 70, h: height - top - 46}, [-REACH - 1, REACH + 1], [lo - margin, hi + margin]);
    ctx.setLineDash([2, 3]); ctx.strokeStyle = "#555"; ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(P.X(0), P.box.y); ctx.lineTo(P.X(0), P.box.y + P.box.h); ctx.stroke();
    lines.forEach(([scheme, c, label, faint], k) => {
      const dash = scheme === "sinusoidal" && !faint ? [6, 3] : [];
      Object.assign(ctx, {globalAlpha: faint ? 0.3 : 1, lineWidth: faint ? 5 : 1.6});
      ctx.setLineDash(dash);
      dots(ctx, P, c.offsets, c[scheme], COLOUR[scheme], faint ? 0 : narrow ? 1.5 : 2.2, true);
      key(ctx, P.box.x + (k % (4 / legend)) * 190, 12 + Math.floor(k / (4 / legend)) * 16, label, COLOUR[scheme], dash, faint);
    });
    axes(ctx, P, {title: `one word, query at p = ${s.query_position}, base = ${readable(s.base)}`, ylabel: "score",
                  xlabel: narrow ? "key offset (key - query position)" : "offset of the key (key position - query position)",
                  yTicks: decimalTicks(lo - margin, hi + margin, 5)});
  }

  function drawAlibi(s, n, width, narrow) {
    const {num_heads: H, head: h, max_sequence_length: L} = s, m = n.slopes[h], size = Math.min(narrow ? width - 150 : width * 0.34, 320);
    const ctx = blankCanvas(canvas, width, narrow ? size + 344 : size + 80), box = {x: 52, y: 26, w: size, h: size};
    const own = n.bias.subarray(h * L * L, (h + 1) * L * L);
    heatmap(ctx, box, viridisImage(own, L, -m * (L - 1), 0), L, L, {ylabel: "query position i"},
            `head ${h} of ${H}: slope ${short(m)}${s.causal ? " (grey: masked)" : ""}`, "key position j");
    viridisBar(ctx, {x: box.x + size + 8, y: box.y, w: 10, h: size}, -m * (L - 1), 0, "bias");
    const last = h2 => n.bias.subarray((h2 * L + L - 1) * L, (h2 * L + L) * L), lowest = -Math.max(...n.slopes) * (L - 1);
    const x = narrow ? 58 : box.x + size + 120, y = narrow ? box.y + size + 70 : box.y;
    const P = panel({x, y, w: width - x - 14, h: narrow ? 200 : size}, [-0.5, L - 0.5], [1.05 * lowest - 0.05, -0.05 * lowest + 0.05]);
    ctx.lineWidth = 1;
    for (let k = 0; k < H; k++) if (k !== h) dots(ctx, P, range(0, L - 1), last(k), "#BBBBBB", 0, true);
    ctx.lineWidth = 1.6;
    dots(ctx, P, range(0, L - 1), last(h), COLOUR.alibi, L > 32 ? 1.6 : 2.4, true);
    axes(ctx, P, {title: `the last query (i = ${L - 1}): head ${h} in colour`, xlabel: "key position j", ylabel: "bias",
                  yTicks: decimalTicks(1.05 * lowest - 0.05, -0.05 * lowest + 0.05, 5)});
  }

  function drawLearned(s, n, width, narrow) {
    const p = s.position, w = narrow ? (width - 190) / 2 : width * 0.2, h = narrow ? 200 : 260;
    const ctx = blankCanvas(canvas, width, narrow ? h + 362 : h + 106);
    [["before", before], ["after", after]].forEach(([when, T], k) => {
      const x = 48 + k * (w + (narrow ? 80 : 96)), limit = T.reduce((a, v) => Math.max(a, Math.abs(v)), 0) || 1;
      heatmap(ctx, {x, y: 26, w, h}, image(T, rows, d, -limit, limit), rows, d, {row: p, ylabel: k ? "" : "position"},
              `${when} training`, "dimension");
      colourBar(ctx, {x: x + w + 6, y: 26, w: 8, h}, -limit, limit, "");
    });
    const x = narrow ? 58 : 48 + 2 * (w + 96) + 20, y = narrow ? h + 96 : 26;
    const P = panel({x, y, w: width - x - 14, h: narrow ? 190 : h}, [-0.5, rows - 0.5], [-1.1, 1.1]);
    ctx.lineWidth = 1.6;
    ctx.setLineDash([5, 3]);
    dots(ctx, P, range(0, rows - 1), n.before, "#999999", 2, true);
    ctx.setLineDash([]);
    dots(ctx, P, range(0, rows - 1), n.after, COLOUR.learned, 2.4, true);
    key(ctx, P.box.x, P.box.y + P.box.h + 48, "before training", "#999999", [5, 3]);
    key(ctx, P.box.x, P.box.y + P.box.h + 64, "after training", COLOUR.learned);
    axes(ctx, P, {title: `row ${p} against every row`, xlabel: "row", ylabel: "cosine similarity",
                  yTicks: [-1, -0.5, 0, 0.5, 1]});
  }

  function describe(s, n) {
    if (s.view === "rotary") {
      const at = (c, scheme) => c[scheme][c.offsets.indexOf(1)].toFixed(2);
      return `Scores of one word with itself against the key's offset, query at position ${s.query_position}, base ` +
             `${readable(s.base)} (d_model = 64). RoPE's curve is the same for every p (offset +1: ${at(n.atP, "rotary")}); the ` +
             `added sinusoid's moves with p (offset +1: ${at(n.atP, "sinusoidal")}; with the query at 0, ${at(n.at0, "sinusoidal")}). ` +
             "Faint: the query at position 0.";
    }
    if (s.view === "alibi") {
      const m = n.slopes[s.head], L = s.max_sequence_length;
      return `head ${s.head} of ${s.num_heads}: slope ${short(m)} = 2^-${short(-Math.log2(m))}; ${L} positions, ` +
             (s.causal ? "causal: a key after its query is masked (-inf)" : "not causal: the bias is symmetric, -slope |i - j|") +
             `. A key k positions away gets -${short(m)} k, down to ${short(-m * (L - 1))}. ` +
             `Every head's bias along the last query row (i = ${L - 1}), slopes from ${short(Math.min(...n.slopes))} ` +
             `to ${short(Math.max(...n.slopes))}.`;
    }
    if (!n) return ASK;
    const p = s.position, closest = sim => range(0, rows - 1).filter(q => q !== p).reduce((a, q) => (sim[q] > sim[a] ? q : a), p ? 0 : 1);
    const [b, a] = [closest(n.before), closest(n.after)];
    return `A learned table (${rows} positions x d_model = ${d}) before and after training on the previous-token task, ` +
           `and how alike row ${p} is to every row (cosine similarity). The most alike other row: before training ` +
           `${b} (${n.before[b].toFixed(2)}), after training ${a} (${n.after[a].toFixed(2)}).`;
  }

  function draw() {
    pending = false;
    const start = performance.now(), s = settings(), n = numbers(s);
    for (const [name, {input, out, log}] of Object.entries(inputs)) { // the controls show the settings (Python moves them too)
      if (name === "head") input.max = s.num_heads - 1;
      const v = s[name], shown = log ? Math.log10(v) : v;
      if (Math.abs(Number(input.value) - shown) > 1e-9) input.value = shown;
      out.value = log ? readable(v) : String(v);
    }
    causal.checked = s.causal;
    radios.forEach(r => (r.checked = r.value === s.view));
    SCHEMES.forEach(v => (groups[v].hidden = v !== s.view || (v === "learned" && !tables)));
    canvas.hidden = !n;
    const width = Math.max(300, Math.min(900, root.clientWidth || 900)), narrow = width < 600;
    if (n) ({rotary: drawRotary, alibi: drawAlibi, learned: drawLearned})[s.view](s, n, width, narrow);
    description.textContent = describe(s, n);
    painted += 1;
    root.dispatchEvent(new CustomEvent("posenc:painted", {detail: {ms: performance.now() - start, count: painted}}));
  }
  // Draw once per event, before the browser paints: several settings changed together give one picture.
  const schedule = () => { if (!pending) { pending = true; queueMicrotask(draw); } };
  SETTINGS.forEach(k => model.on(`change:${k}`, schedule));
  const resize = new ResizeObserver(schedule);
  resize.observe(root);
  root.posenc = {
    scores: () => { const c = numbers({...settings(), view: "rotary"}); return {...c.atP, at0: c.at0}; },
    slopes: () => alibiSlopes(settings().num_heads),
    bias: () => { const s = settings(); return Array.from(alibiBias(s.num_heads, s.max_sequence_length, s.causal)); },
    similarity: () => numbers({...settings(), view: "learned"}), tables: () => tables && {rows, d, before: Array.from(before), after: Array.from(after)},
    description: () => description.textContent, state: settings, draw,
  };
  draw();
  return () => { resize.disconnect(); SETTINGS.forEach(k => model.off(`change:${k}`, schedule)); };
}

export default {render};
