// The encoding explorer's front end (anywidget): controls, the numbers and the picture, all in the page.
//
// The model holds the settings (d_model, max_sequence_length, base, position, dimension, view, compare_layouts);
// everything else is computed here, as posenc computes it, and drawn on a canvas in the same event as the key press.
// The table: frequencies base^(-2i / d_model) in float64, angle pos * frequency in float64, its sine (even columns)
// or cosine (odd columns) rounded once to float32: posenc.builder.sinusoidal_encoding's numbers up to 2^16 entries,
// which the sliders never pass. For tests and benchmarks the root element carries `posenc` (table(), wavelengths(),
// similarity(), description()) and fires "posenc:painted" after each repaint.

const VIEWS = ["heatmap", "curves", "wavelengths", "similarity"];

export function wavelengths(d, base) {
  const w = frequencies(d, base);
  return Array.from({length: d}, (_, j) => (2 * Math.PI) / w[j >> 1]);
}

/** PE[p] . PE[q] for every pair (float64): sin a sin b + cos a cos b = cos(a - b), so a sum per offset p - q; an odd
 *  d_model's last sine column, with no cosine partner, adds its own product. */
export function similarity(T, L, d, base) {
  const w = frequencies(d, base), pairs = d >> 1, byOffset = new Float64Array(L), S = new Float64Array(L * L);
  for (let k = 0; k < L; k++) for (let i = 0; i < pairs; i++) byOffset[k] += Math.cos(k * w[i]);
  for (let p = 0; p < L; p++)
    for (let q = 0; q < L; q++)
      S[p * L + q] = byOffset[Math.abs(p - q)] + (d & 1 ? T[p * d + d - 1] * T[q * d + d - 1] : 0);
  return S;
}

// --- The widget ---------------------------------------------------------------------------------------------------

function render({model, el}) {
  const root = document.createElement("div");
  root.className = "posenc-ex posenc-encoding-explorer";
  root.setAttribute("data-lm-suppress-shortcuts", "true"); // JupyterLab: keys on a control stay with the control
  const style = document.createElement("style");
  style.textContent = STYLE;
  const controls = document.createElement("div");
  controls.className = "posenc-controls";
  const uid = Math.random().toString(36).slice(2);
  const sliders = {};
  const slider = (name, min, max, step, {log = false} = {}) => {
    const label = document.createElement("label"), input = document.createElement("input"), out = document.createElement("output");
    label.append(name, input, out);
    Object.assign(input, {type: "range", min, max, step, id: `posenc-${name}-${uid}`, name});
    input.addEventListener("input", () => {
      const v = log ? Number(Math.pow(10, Number(input.value)).toPrecision(12)) : Number(input.value);
      model.set(name, v);
      model.save_changes();
    });
    controls.append(label);
    sliders[name] = {input, out, log};
  };
  slider("d_model", 1, Math.max(256, model.get("d_model")), 1);
  slider("max_sequence_length", 1, Math.max(256, model.get("max_sequence_length")), 1);
  slider("base", 0.3, 6, 0.05, {log: true});
  slider("position", 0, 1, 1);
  slider("dimension", 0, 1, 1);
  const views = document.createElement("fieldset");
  views.innerHTML = "<legend>view</legend>";
  const radios = VIEWS.map(v => {
    const label = document.createElement("label"), input = document.createElement("input");
    Object.assign(input, {type: "radio", name: `posenc-view-${uid}`, value: v});
    input.addEventListener("change", () => { if (input.checked) { model.set("view", v); model.save_changes(); } });
    label.append(input, v);
    views.append(label);
    return input;
  });
  const compare = document.createElement("input");
  compare.type = "checkbox";
  compare.addEventListener("change", () => { model.set("compare_layouts", compare.checked); model.save_changes(); });
  const compareLabel = document.createElement("label");
  compareLabel.append(compare, "add the concatenated layout");
  controls.append(views, compareLabel);
  // A key on a control moves the control, not the page around it (reveal.js slides turn on arrow keys).
  controls.addEventListener("keydown", e => e.stopPropagation());
  const canvas = document.createElement("canvas");
  canvas.setAttribute("role", "img");
  const description = document.createElement("p");
  description.className = "posenc-description";
  description.setAttribute("aria-live", "polite");
  canvas.setAttribute("aria-label", "the encoding explorer's picture, described below it");
  root.append(style, controls, canvas, description);
  el.classList.add("jupyter-widgets"); // as every Jupyter widget's element: the front ends' widget styles and checks
  el.append(root);

  let cache = {key: null}, painted = 0, pending = false;
  const settings = () => {
    const s = Object.fromEntries(["d_model", "max_sequence_length", "base", "position", "dimension", "view", "compare_layouts"]
      .map(k => [k, model.get(k)]));
    s.position = Math.min(s.position, s.max_sequence_length - 1);
    s.dimension = Math.min(s.dimension, s.d_model - 1);
    return s;
  };
  const numbers = s => {
    const key = `${s.max_sequence_length},${s.d_model},${s.base}`;
    if (cache.key !== key) cache = {key, lengths: wavelengths(s.d_model, s.base)};
    // Each view computes only what it draws: the similarity needs the table only for an odd d_model's last column.
    if (!cache.T && (s.view !== "similarity" || s.d_model & 1)) cache.T = table(s.max_sequence_length, s.d_model, s.base);
    if (s.view === "heatmap" && !cache.picture) cache.picture = image(cache.T, s.max_sequence_length, s.d_model, -1, 1);
    if (s.view === "similarity" && !cache.S) cache.S = similarity(cache.T, s.max_sequence_length, s.d_model, s.base);
    return cache;
  };

  function describe(s, n) {
    const {position: p, dimension: j, max_sequence_length: L, d_model: d} = s, kind = j % 2 ? "cos" : "sin";
    const repeats = `column ${j} (${kind}) turns once every ${readable(n.lengths[j])} positions`;
    if (s.view === "heatmap") {
      const right = s.compare_layouts ? ` (column ${j % 2 ? ((d + 1) >> 1) + (j >> 1) : j >> 1} on the right)` : "";
      return `Heatmap of the table, ${L} positions by ${d} columns, base ${readable(s.base)}; position ${p} and column ${j}${right} marked; ${repeats}.`;
    }
    if (s.view === "curves") {
      const value = n.T[p * d + j];
      return `Column ${j}${d % 2 && j === d - 1 ? ", with no cos partner," : ` and its ${kind === "sin" ? "cos" : "sin"} partner`} over ${L} positions: ${repeats}; at position ${p} it is ${value.toFixed(3)}.`;
    }
    if (s.view === "wavelengths") {
      // A full turn fits within positions 0 to L - 1 when the wavelength is at most the last position, L - 1.
      const within = n.lengths.filter(v => v <= L - 1).length;
      return `Wavelengths from ${readable(n.lengths[0])} to ${readable(n.lengths[d - 1])} positions (base ${readable(s.base)}); ` +
             `${within} of ${d} columns make a full turn within positions 0 to ${L - 1}; ${repeats}.`;
    }
    const row = n.S.subarray(p * L, (p + 1) * L);
    let least = 0;
    row.forEach((v, q) => { if (v < row[least]) least = q; });
    return `PE[p] . PE[q] for every pair of ${L} positions; row ${p} is largest at itself (${readable(row[p])}) and smallest at position ${least} (${readable(row[least])}).`;
  }

  function draw() {
    pending = false;
    const start = performance.now(), s = settings(), n = numbers(s);
    const {max_sequence_length: L, d_model: d, position: p, dimension: j} = s;
    // The controls show the settings (a change from Python moves them too).
    for (const [name, {input, out, log}] of Object.entries(sliders)) {
      if (name === "position") input.max = L - 1;
      if (name === "dimension") input.max = d - 1;
      const v = s[name], shown = log ? Math.log10(v) : v;
      if (Number(input.value) !== shown && !(log && Math.abs(Number(input.value) - shown) < 1e-9)) input.value = shown;
      out.value = log ? readable(v) : String(v);
    }
    radios.forEach(r => (r.checked = r.value === s.view));
    compare.checked = s.compare_layouts;
    compareLabel.style.display = s.view === "heatmap" ? "" : "none";

    const width = Math.max(300, Math.min(900, root.clientWidth || 900)), narrow = width < 600;
    const height = narrow ? 320 : 360;
    const ctx = blankCanvas(canvas, width, height);
    const left = 52, top = 26, bottom = 44, bar = 84, plotW = width - left - bar, plotH = height - top - bottom;
    const kind = k => (k % 2 ? "cos" : "sin");

    if (s.view === "heatmap") {
      const box = {x: left, y: top, w: plotW, h: plotH};
      if (!s.compare_layouts) {
        heatmap(ctx, box, n.picture, L, d, {row: p, column: j, ylabel: "position pos"},
                `PE: ${L} positions x d_model = ${d}, base = ${readable(s.base)}`, "dimension (column) j");
      } else {
        const half = (plotW - 16) / 2, sines = (d + 1) >> 1;
        heatmap(ctx, {...box, w: half}, n.picture, L, d, {row: p, column: j, ylabel: "position pos"}, "interleaved", "dimension j");
        if (!cache.concatenated) cache.concatenated = image(n.T, L, d, -1, 1, (r, c) => r * d + (c < sines ? 2 * c : 2 * (c - sines) + 1));
        heatmap(ctx, {...box, x: left + half + 16, w: half}, cache.concatenated, L, d,
                {row: p, column: j % 2 ? sines + (j >> 1) : j >> 1}, "concatenated: sines, then cosines", "column");
      }
      colourBar(ctx, {x: width - bar + 18, y: top, w: 14, h: plotH}, -1, 1, "PE(pos, j)");
    } else if (s.view === "curves") {
      const pair = [j - (j % 2), j - (j % 2) + 1], h = (plotH - 44) / 2;
      pair.forEach((c, k) => {
        const P = panel({x: left, y: top + k * (h + 44), w: plotW + bar - 20, h}, [-0.5, L - 0.5], [-1.15, 1.15]);
        if (c >= d) {
          axes(ctx, P, {title: `column ${c} does not exist: d_model = ${d} is odd, column ${c - 1} has no cos partner`,
                        yTicks: [-1, 0, 1]});
          return;
        }
        const w = 2 * Math.PI / n.lengths[c], wave = c % 2 ? Math.cos : Math.sin, fine = [], positions = [];
        for (let i = 0; i <= 400; i++) fine.push((i / 400) * Math.max(L - 1, 1));
        for (let q = 0; q < L; q++) positions.push(q);
        ctx.lineWidth = 1.4;
        dots(ctx, P, fine, fine.map(x => wave(x * w)), c % 2 ? COS : SIN, 0, true);
        dots(ctx, P, positions, positions.map(q => n.T[q * d + c]), c % 2 ? COS : SIN, L > 128 ? 1.2 : 2.2);
        ctx.setLineDash([4, 3]); ctx.strokeStyle = "#555"; ctx.lineWidth = 1;
        ctx.beginPath(); ctx.moveTo(P.X(p), P.box.y); ctx.lineTo(P.X(p), P.box.y + h); ctx.stroke(); ctx.setLineDash([]);
        dots(ctx, P, [p], [n.T[p * d + c]], "#000", 4.5);
        axes(ctx, P, {title: `j = ${c}: ${kind(c)}(pos / ${readable(1 / w)}), wavelength ${readable(n.lengths[c])}${c === j ? " (chosen)" : ""}`,
                      yTicks: [-1, 0, 1], xlabel: k ? "position pos" : "", ylabel: "PE(pos, j)"});
      });
    } else if (s.view === "wavelengths") {
      const P = panel({x: left + 22, y: top, w: plotW + bar - 42, h: plotH}, [-0.5, d - 0.5],
                      [3, Math.max(s.base * 6.3 * 1.5, L * 2)], {log: true});
      ctx.setLineDash([2, 3]); ctx.strokeStyle = "#555"; ctx.lineWidth = 1;
      const last = Math.max(L - 1, 1); // the table's last position (a one-position table: drawn at 1, on the log axis)
      ctx.beginPath(); ctx.moveTo(P.box.x, P.Y(last)); ctx.lineTo(P.box.x + P.box.w, P.Y(last)); ctx.stroke(); ctx.setLineDash([]);
      text(ctx, `last position, ${L - 1}`, P.box.x + P.box.w - 4, P.Y(last) - 3, "right", "bottom", "#333");
      const columns = [...Array(d).keys()];
      for (const parity of [0, 1]) {
        const cs = columns.filter(c => c % 2 === parity);
        dots(ctx, P, cs, cs.map(c => n.lengths[c]), parity ? COS : SIN, d > 128 ? 1.3 : 2);
      }
      ctx.strokeStyle = "#000"; ctx.lineWidth = 1.5;
      ctx.beginPath(); ctx.arc(P.X(j), P.Y(n.lengths[j]), 6, 0, 2 * Math.PI); ctx.stroke();
      axes(ctx, P, {xlabel: narrow ? "column j (sin orange, cos blue)" : "column j: sin columns orange, cos columns blue",
                    ylabel: "wavelength (positions)",
                    title: `circled: column ${j}, ${readable(n.lengths[j])} positions; base ${readable(s.base)}`});
    } else {
      const size = Math.min(plotH, narrow ? width * 0.42 : plotW * 0.42);
      // One diverging scale for every base, from -limit to +limit (as posenc.plots.similarity_figure): base 10,000 and
      // base 10 can be compared by their colours.
      let limit = 0; // |PE[p] . PE[q]| <= max(|PE[p]|^2, |PE[q]|^2) (Cauchy-Schwarz): the largest is on the diagonal
      for (let q = 0; q < L; q++) limit = Math.max(limit, n.S[q * L + q]);
      limit = limit || 1;
      if (!cache.similarityPicture) cache.similarityPicture = image(n.S, L, L, -limit, limit);
      heatmap(ctx, {x: left, y: top, w: size, h: size}, cache.similarityPicture, L, L, {row: p, ylabel: "position p"},
              `every pair of positions, base ${readable(s.base)}`, "position q");
      colourBar(ctx, {x: left + size + 8, y: top, w: 10, h: size}, -limit, limit, "");
      const x = left + size + (narrow ? 56 : 90), row = Array.from(n.S.subarray(p * L, (p + 1) * L));
      // The profile's axis runs from 0 (or the row's lowest value, if below 0) to the peak: the bumps fill the panel,
      // and whether the row comes near 0 still shows (as posenc.plots.similarity_figure).
      const low = Math.min(0, ...row) - 0.05 * limit;
      const P = panel({x, y: top, w: width - x - 50, h: plotH}, [-p - 0.5, L - p - 0.5], [low, 1.05 * limit]);
      ctx.lineWidth = 1;
      dots(ctx, P, row.map((_, q) => q - p), row, PROFILE, L > 128 ? 0 : 1.8, true); // past 128 points, the line alone
      axes(ctx, P, {title: narrow ? `row p = ${p}` : `row p = ${p} against the offset q - p`, xlabel: "offset q - p", yRight: true,
                    yTicks: decimalTicks(low, 1.05 * limit, 4), ylabel: "PE[p] . PE[q]"});
    }
    description.textContent = describe(s, n);
    painted += 1;
    root.dispatchEvent(new CustomEvent("posenc:painted", {detail: {ms: performance.now() - start, count: painted}}));
  }
  // Draw once per event, before the browser paints: several settings changed together give one picture.
  const schedule = () => { if (!pending) { pending = true; queueMicrotask(draw); } };
  const names = ["d_model", "max_sequence_length", "base", "position", "dimension", "view", "compare_layouts"];
  names.forEach(k => model.on(`change:${k}`, schedule));
  const resize = new ResizeObserver(schedule);
  resize.observe(root);
  root.posenc = {
    table: () => Array.from(numbers({...settings(), view: "curves"}).T), wavelengths: () => numbers(settings()).lengths,
    similarity: () => Array.from(numbers({...settings(), view: "similarity"}).S), description: () => description.textContent,
    state: settings, draw,
  };
  draw();
  return () => { resize.disconnect(); names.forEach(k => model.off(`change:${k}`, schedule)); };
}

export default {render};
