// The pipeline explorer's front end (anywidget): a typed sentence to padded tokens, one-hot rows, X, PE and X + PE.
//
// Python puts into the model what only the package can compute: the vocabulary (its tokens in id order) and W_E
// (posenc.embedding.embedding_matrix, seed 0) for every d_model the slider reaches, as float32 bytes, one table after
// another (d_model = 1, 2, ...). Everything else happens here, in the key press's own event: the sentence split as
// posenc.tokens.tokenize splits it (lower-cased; a word, or one punctuation mark), padded, looked up (an unknown word
// becomes <UNK>, and the explorer says so), X = W_E's rows, PE (the sinusoidal table) and X + PE in float32.
// For tests the root element carries `posenc` (tokens(), ids(), X(), PE(), sum(), message(), description()).

const TOKEN = /[\p{L}\p{N}_]+(?:'[\p{L}\p{N}_]+)*|[^\p{L}\p{N}_\s]/gu; // posenc.tokens' pattern \w+(?:'\w+)*|[^\w\s]

function render({model, el}) {
  const root = document.createElement("div");
  root.className = "posenc-ex posenc-pipeline-explorer";
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  const style = document.createElement("style");
  style.textContent = STYLE + ".posenc-ex input[type=text] { width: min(100%, 420px); font: inherit; }" +
    ".posenc-ex .posenc-message { color: #B00020; margin: 2px 0; } .posenc-ex .posenc-tokens { margin: 2px 0; }";
  const controls = document.createElement("div");
  controls.className = "posenc-controls";
  const sentenceLabel = document.createElement("label"), sentence = document.createElement("input");
  Object.assign(sentence, {type: "text", name: "sentence", spellcheck: false, value: model.get("sentence")});
  sentenceLabel.append("sentence", sentence);
  sentence.addEventListener("input", () => { model.set("sentence", sentence.value); model.save_changes(); });
  controls.append(sentenceLabel);
  const vocabulary = model.get("_vocabulary"), V = vocabulary.length, ids = new Map(vocabulary.map((t, k) => [t, k]));
  const bytes = model.get("_W_E"), allW = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const dMax = Math.round((Math.sqrt(1 + 8 * (allW.length / V)) - 1) / 2); // V * dMax (dMax + 1) / 2 numbers
  const sliders = {};
  for (const [name, max] of [["max_sequence_length", Math.max(32, model.get("max_sequence_length"))], ["d_model", dMax]]) {
    const label = document.createElement("label"), input = document.createElement("input"), out = document.createElement("output");
    Object.assign(input, {type: "range", min: 1, max, step: 1, name});
    input.addEventListener("input", () => { model.set(name, Number(input.value)); model.save_changes(); });
    label.append(name, input, out);
    controls.append(label);
    sliders[name] = {input, out};
  }
  controls.addEventListener("keydown", e => e.stopPropagation()); // keys stay with the control (slides, JupyterLab)
  const tokensLine = document.createElement("p"), message = document.createElement("p"), canvas = document.createElement("canvas");
  tokensLine.className = "posenc-tokens";
  message.className = "posenc-message";
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", "the pipeline explorer's picture, described below it");
  const description = document.createElement("p");
  description.className = "posenc-description";
  description.setAttribute("aria-live", "polite");
  root.append(style, controls, tokensLine, message, canvas, description);
  el.classList.add("jupyter-widgets"); // as every Jupyter widget's element: the front ends' widget styles and checks
  el.append(root);

  let state = null, pending = false, painted = 0;
  function compute() {
    const L = model.get("max_sequence_length"), d = model.get("d_model");
    const words = (model.get("sentence").toLowerCase().match(TOKEN) || []);
    if (words.length > L) return {error: `ValueError: the sentence has ${words.length} tokens, more than max_sequence_length=${L}; ` +
                                         `shorten it or raise max_sequence_length to at least ${words.length}`, words};
    const padded = words.concat(Array(L - words.length).fill("<PAD>"));
    const rowIds = padded.map(t => (ids.has(t) ? ids.get(t) : ids.get("<UNK>")));
    const offset = (V * d * (d - 1)) / 2, W = allW.subarray(offset, offset + V * d);
    const X = new Float32Array(L * d), PE = table(L, d, 10000), sum = new Float32Array(L * d), oneHot = new Float32Array(L * V);
    rowIds.forEach((id, r) => {
      oneHot[r * V + id] = 1;
      for (let c = 0; c < d; c++) { X[r * d + c] = W[id * d + c]; sum[r * d + c] = X[r * d + c] + PE[r * d + c]; }
    });
    const unknown = [...new Set(words.filter(t => !ids.has(t)))];
    return {L, d, words, padded, rowIds, X, PE, sum, oneHot, unknown};
  }

  function draw() {
    pending = false;
    const start = performance.now(), now = compute();
    if (sentence.value !== model.get("sentence")) sentence.value = model.get("sentence");
    for (const [name, {input, out}] of Object.entries(sliders)) {
      input.value = model.get(name);
      out.value = String(model.get(name));
    }
    const shown = now.error ? now.words : now.padded;
    tokensLine.innerHTML = "";
    tokensLine.append(now.error ? `${now.words.length} tokens: ` : "padded tokens: ");
    shown.forEach((t, k) => {
      const code = document.createElement("code"), bdi = document.createElement("bdi");
      bdi.textContent = t;
      code.append(bdi);
      if (!ids.has(t) && !now.error) code.style.textDecoration = "underline wavy #B00020";
      tokensLine.append(...(k ? [" | ", code] : [code]));
    });
    if (now.error) {
      message.textContent = now.error + ". The picture below is still the last sentence that fit.";
      description.textContent = message.textContent;
      return;
    }
    message.textContent = !now.words.length ? "The sentence is empty: every row is padding."
      : now.unknown.length ? `Not in the vocabulary of ${V} tokens, so read as <UNK> (id ${ids.get("<UNK>")}): ${now.unknown.join(", ")}.` : "";
    message.style.color = now.words.length ? "" : "#333";
    state = now;
    const {L, d, X, PE, sum, oneHot, padded} = now;
    const width = Math.max(300, Math.min(1000, root.clientWidth || 1000)), narrow = width < 640;
    const rowH = Math.max(8, Math.min(22, 300 / L)), plotH = rowH * L;
    const height = narrow ? 2 * plotH + 150 : plotH + 92;
    const ctx = blankCanvas(canvas, width, height);
    let limit = 1;
    for (const M of [X, PE, sum]) for (const v of M) limit = Math.max(limit, Math.abs(v));
    const labelW = Math.min(90, 12 + Math.max(...padded.map(t => ctx.measureText(t).width))), gap = 14;
    const columns = narrow ? 2 : 4, panelW = (width - labelW - 60 - gap * (columns - 1)) / columns;
    const panels = [["one-hot", oneHot, V, 0, 1], ["X = one_hot @ W_E", X, d, -limit, limit], ["PE", PE, d, -limit, limit],
                    ["X + PE", sum, d, -limit, limit]];
    panels.forEach(([title, M, cols, lo, hi], k) => {
      const col = k % columns, row = Math.floor(k / columns);
      const x = labelW + col * (panelW + gap) + (narrow && col ? 8 : 0), y = 36 + row * (plotH + 74);
      const picture = image(M, L, cols, lo, hi), P = panel({x, y, w: panelW, h: plotH}, [-0.5, cols - 0.5], [-0.5, L - 0.5], {down: true});
      if (k === 0) { // one-hot: 0 white, 1 black
        const c = picture.getContext("2d"), img = c.getImageData(0, 0, cols, L);
        for (let i = 0; i < L * cols; i++) img.data.fill(M[i] ? 0 : 255, 4 * i, 4 * i + 3);
        c.putImageData(img, 0, 0);
      }
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(picture, x, y, panelW, plotH);
      axes(ctx, P, {title: `${narrow ? title.split(" =")[0] : title} (${L}, ${cols})`, xlabel: k ? "column" : "vocabulary id", yTicks: []});
      if (col === 0) padded.forEach((t, r) => text(ctx, t.length > 11 ? t.slice(0, 10) + "…" : t, x - 5, P.Y(r), "right", "middle"));
    });
    colourBar(ctx, {x: width - 52, y: 36, w: 10, h: plotH}, -limit, limit, "");
    description.textContent = `${L} rows (${now.words.length} tokens, ${L - now.words.length} <PAD>): one-hot rows (${L}, ${V}), ` +
      `X = one_hot @ W_E, PE and X + PE (${L}, ${d}), the last three on one colour scale from ${readable(-limit)} to ${readable(limit)}.`;
    painted += 1;
    root.dispatchEvent(new CustomEvent("posenc:painted", {detail: {ms: performance.now() - start, count: painted}}));
  }
  const schedule = () => { if (!pending) { pending = true; queueMicrotask(draw); } };
  const names = ["sentence", "max_sequence_length", "d_model"];
  names.forEach(k => model.on(`change:${k}`, schedule));
  const resize = new ResizeObserver(schedule);
  resize.observe(root);
  root.posenc = {
    tokens: () => state.padded, ids: () => state.rowIds, X: () => Array.from(state.X), PE: () => Array.from(state.PE),
    sum: () => Array.from(state.sum), message: () => message.textContent, description: () => description.textContent, draw,
  };
  draw();
  return () => { resize.disconnect(); names.forEach(k => model.off(`change:${k}`, schedule)); };
}

export default {render};
