/* The encoding explorer, live in a static page: no kernel, no network.
 *
 * The same controls and views as posenc.explorers.EncodingExplorer (the teaching reference), computed here in the
 * browser and drawn on a canvas in the same event as the key press or drag that moved a control. tools/web/explorer/
 * embed.py puts one <div class="posenc-live-explorer" data-posenc-explorer="{settings}"> where a notebook's saved
 * explorer was, and this script once per page.
 *
 * The table is computed as posenc.builder.sinusoidal_encoding computes it. Up to 2^16 entries (every table the
 * sliders reach: 256 x 256) the same float32 numbers: the frequencies base^(-2i / d_model) in float64, the angle
 * pos * frequency in float64, its sine (even columns) or cosine (odd columns) in float64, rounded once to float32.
 * Larger tables (an explorer started larger, up to 512 x 512) by the package's rotation of small tables (below).
 *
 * For tests and benchmarks: window.posencExplorer (the page's first explorer) has table(), tableBytes(), state(),
 * set(), caption(), encoding(), encodingBytes() and similarity(); each repaint dispatches "posenc:painted" on the explorer's element.
 */
(function () {
  "use strict";
  if (window.posencExplorers) return; // the script is on the page twice: mount once
  const VIEWS = ["heatmap", "curves", "wavelengths", "similarity"];

  // --- The numbers -----------------------------------------------------------------------------------------------

  /** base^(-2i / d_model) for each (sin, cos) pair i, in float64: as posenc.builder.frequencies, same order of operations. */
  function frequencies(dModel, base) {
    const pairs = (dModel + 1) >> 1;
    const w = new Float64Array(pairs);
    for (let i = 0; i < pairs; i++) w[i] = Math.pow(base, (-2.0 * i) / dModel);
    return w;
  }

  // As posenc.builder: up to this many entries the table is computed directly; above, by rotating small tables.
  const DIRECT_LIMIT = 1 << 16;
  const f32 = Math.fround;

  /** The table, row after row, as a Float32Array of maxSequenceLength * dModel entries: the package's numbers. */
  function encoding(maxSequenceLength, dModel, base) {
    const w = frequencies(dModel, base);
    if (maxSequenceLength * dModel > DIRECT_LIMIT) return rotatedTable(maxSequenceLength, dModel, w);
    const table = new Float32Array(maxSequenceLength * dModel);
    for (let pos = 0; pos < maxSequenceLength; pos++) {
      const row = pos * dModel;
      for (let j = 0; j < dModel; j++) {
        const angle = pos * w[j >> 1]; // float64, as torch.outer of two float64 vectors
        table[row + j] = j & 1 ? Math.cos(angle) : Math.sin(angle); // the store rounds to float32 once
      }
    }
    return table;
  }

  /** posenc.builder._rotated_table in float32, for tables of more than 2^16 (and up to 2^21) entries: row a * B + b from
   *  the float64 angles b w (offsets) and a (w B) (block starts), each sine and cosine rounded to float32, then
   *  sin(w(aB + b)) = sin(wb) cos(waB) + cos(wb) sin(waB), cos(...) = cos(wb) cos(waB) - sin(wb) sin(waB), in float32
   *  (Math.fround; a product of two float32 numbers is exact in float64), clamped to [-1, 1]. For even d_model torch
   *  multiplies complex64 numbers, each product rounded before the sum; for odd d_model its addcmul_ rounds the second
   *  product and the sum at once (a fused multiply-add). torch's last few columns, after its widest vectors, may be
   *  fused too, depending on the CPU: there the two can differ by one unit in the last place of float32. (Past 2^21
   *  entries the package also nudges the factors inside the unit circle; no explorer starts that large.) */
  function rotatedTable(L, d, w) {
    let block = Math.max(1, Math.floor(Math.sqrt(L)));
    while (block * block > L) block--; // math.isqrt: the largest B with B * B <= L
    while ((block + 1) * (block + 1) <= L) block++;
    const blocks = Math.floor(L / block), pairs = w.length;
    // The two small tables, float64 angles rounded to float32 once: offsets b * w, block starts a * (w * B).
    const sinB = new Float32Array(block * pairs), cosB = new Float32Array(block * pairs);
    const sinA = new Float32Array((blocks + 1) * pairs), cosA = new Float32Array((blocks + 1) * pairs);
    for (let b = 0; b < block; b++) {
      for (let i = 0; i < pairs; i++) {
        sinB[b * pairs + i] = Math.sin(b * w[i]);
        cosB[b * pairs + i] = Math.cos(b * w[i]);
      }
    }
    for (let a = 0; a <= blocks; a++) {
      for (let i = 0; i < pairs; i++) {
        const angle = a * (w[i] * block);
        sinA[a * pairs + i] = Math.sin(angle);
        cosA[a * pairs + i] = Math.cos(angle);
      }
    }
    const table = new Float32Array(L * d);
    const clamp = v => (v > 1 ? 1 : v < -1 ? -1 : v);
    for (let pos = 0; pos < L; pos++) {
      const a = Math.floor(pos / block), b = pos - a * block, row = pos * d;
      for (let j = 0; j < d; j++) {
        const i = j >> 1, sb = sinB[b * pairs + i], cb = cosB[b * pairs + i];
        const ca = cosA[a * pairs + i], sa = sinA[a * pairs + i];
        let value;
        if (d % 2 === 0) {
          // (sb + i cb) * (ca - i sa) as torch multiplies complex64: the real part sb ca - cb (-sa), the imaginary cb ca + sb (-sa).
          value = j & 1 ? f32(f32(cb * ca) + f32(sb * -sa)) : f32(f32(sb * ca) - f32(cb * -sa));
        } else {
          // Odd d_model: a multiply, then an add of the second product (torch.mul, then addcmul_).
          value = j & 1 ? f32(f32(cb * ca) + -sb * sa) : f32(f32(sb * ca) + cb * sa);
        }
        table[row + j] = clamp(value);
      }
    }
    return table;
  }

  /** PE[p] . PE[q] for every pair of positions (float64), by sin a sin b + cos a cos b = cos(a - b).
   *  The sum over the columns depends on p - q only, so a table of L * d/2 cosines replaces L^2 * d multiply-adds; an odd
   *  d_model's last sine column, which has no cosine partner, adds its own sin(p w) sin(q w). */
  function similarity(table, maxSequenceLength, dModel, base) {
    const L = maxSequenceLength, w = frequencies(dModel, base), pairs = dModel >> 1;
    const byOffset = new Float64Array(L);
    for (let delta = 0; delta < L; delta++) {
      let sum = 0;
      for (let i = 0; i < pairs; i++) sum += Math.cos(delta * w[i]);
      byOffset[delta] = sum;
    }
    const matrix = new Float64Array(L * L);
    for (let p = 0; p < L; p++) {
      for (let q = 0; q < L; q++) matrix[p * L + q] = byOffset[Math.abs(p - q)];
      if (dModel & 1) {
        const last = table[p * dModel + dModel - 1];
        for (let q = 0; q < L; q++) matrix[p * L + q] += last * table[q * dModel + dModel - 1];
      }
    }
    return matrix;
  }

  /** A number as d3-format ",.4r" writes it (the Python explorer's readouts): 4 significant digits, thousands separated. */
  function readable(value) {
    if (!isFinite(value) || value === 0) return String(value);
    const rounded = Number(value.toPrecision(4));
    const decimals = Math.max(0, 3 - Math.floor(Math.log10(Math.abs(rounded))));
    return rounded.toLocaleString("en-US", {minimumFractionDigits: decimals, maximumFractionDigits: decimals});
  }

  function tickLabel(value) {
    return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(6)));
  }

  /** At most about `count` round ticks from lo to hi; whole numbers only when `integer` (no tick at 2.5). */
  function niceTicks(lo, hi, count, integer) {
    if (!(hi > lo)) return [lo];
    const raw = (hi - lo) / count;
    const magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    const steps = (integer ? [1, 2, 5, 10] : [1, 2, 2.5, 5, 10]).map(m => m * magnitude);
    let step = steps.find(s => s >= raw) || steps[steps.length - 1];
    if (integer) step = Math.max(1, Math.round(step));
    const ticks = [];
    for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) ticks.push(Number(v.toFixed(9)));
    return ticks;
  }

  function lookupTable(hex) {
    // 256 colours, "rrggbb" each, from matplotlib's colour map (embed.py writes them): [r, g, b] as bytes.
    const lut = new Uint8Array(256 * 3);
    for (let k = 0; k < 256 * 3; k++) lut[k] = parseInt(hex.substr(2 * k, 2), 16);
    return lut;
  }

  const packedCache = new Map();
  function packedColours(lut) {
    // Each colour as one 32-bit RGBA pixel in the byte order of this machine (ImageData is bytes R, G, B, A).
    if (!packedCache.has(lut)) {
      const packed = new Uint32Array(256), bytes = new Uint8Array(packed.buffer);
      for (let k = 0; k < 256; k++) bytes.set([lut[3 * k], lut[3 * k + 1], lut[3 * k + 2], 255], 4 * k);
      packedCache.set(lut, packed);
    }
    return packedCache.get(lut);
  }

  /** An offscreen canvas of columns x rows pixels, values coloured as matplotlib's imshow does (vmin..vmax -> 256 bins). */
  function imageOf(values, rows, columns, lut, vmin, vmax, column = (r, c) => r * columns + c) {
    const canvas = document.createElement("canvas");
    canvas.width = columns;
    canvas.height = rows;
    const ctx = canvas.getContext("2d");
    const image = ctx.createImageData(columns, rows);
    const pixels = new Uint32Array(image.data.buffer), packed = packedColours(lut), scale = 256 / (vmax - vmin);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < columns; c++) {
        const bin = Math.min(255, Math.max(0, Math.floor((values[column(r, c)] - vmin) * scale)));
        pixels[r * columns + c] = packed[bin];
      }
    }
    ctx.putImageData(image, 0, 0);
    return canvas;
  }

  // --- Drawing helpers -------------------------------------------------------------------------------------------

  /** A panel: a box in canvas pixels and its data limits; y limits are (at the bottom, at the top). */
  class Panel {
    constructor(ctx, font, box, x, y, {logY = false} = {}) {
      Object.assign(this, {ctx, font, box, x, y, logY});
    }
    X(v) { return this.box.x + ((v - this.x[0]) / (this.x[1] - this.x[0])) * this.box.w; }
    Y(v) {
      const t = this.logY ? Math.log10 : (u => u);
      return this.box.y + this.box.h - ((t(v) - t(this.y[0])) / (t(this.y[1]) - t(this.y[0]))) * this.box.h;
    }
    clip(draw) {
      const {ctx, box} = this;
      ctx.save();
      ctx.beginPath();
      ctx.rect(box.x, box.y, box.w, box.h);
      ctx.clip();
      draw();
      ctx.restore();
    }
    frame({xticks, yticks, xlabel, ylabel, title, xLabels = true, yRight = false, logTicks = null}) {
      const {ctx, box, font} = this;
      ctx.strokeStyle = "#000";
      ctx.lineWidth = 1;
      ctx.strokeRect(box.x + 0.5, box.y + 0.5, box.w, box.h);
      ctx.fillStyle = "#222";
      ctx.font = `12px ${font}`;
      ctx.beginPath();
      ctx.textAlign = "center";
      ctx.textBaseline = "top";
      for (const v of xticks || []) {
        const px = Math.round(this.X(v)) + 0.5;
        if (px < box.x - 1 || px > box.x + box.w + 1) continue;
        ctx.moveTo(px, box.y + box.h);
        ctx.lineTo(px, box.y + box.h + 4);
        if (xLabels) ctx.fillText(tickLabel(v), px, box.y + box.h + 6);
      }
      ctx.textAlign = yRight ? "left" : "right";
      ctx.textBaseline = "middle";
      const edge = yRight ? box.x + box.w : box.x;
      const out = yRight ? 4 : -4;
      for (const v of yticks || []) {
        const py = Math.round(this.Y(v)) + 0.5;
        if (py < box.y - 1 || py > box.y + box.h + 1) continue;
        ctx.moveTo(edge, py);
        ctx.lineTo(edge + out, py);
        if (logTicks) this.power(logTicks(v), edge + 2 * out, py, yRight);
        else ctx.fillText(tickLabel(v), edge + 1.5 * out, py);
      }
      ctx.stroke();
      ctx.font = `13px ${font}`;
      ctx.textAlign = "center";
      if (xlabel) {
        ctx.textBaseline = "top";
        ctx.fillText(xlabel, box.x + box.w / 2, box.y + box.h + (xLabels ? 22 : 6));
      }
      if (ylabel) {
        ctx.save();
        // Read from bottom to top on either side, as matplotlib writes it; the glyphs stand away from the axis.
        const margin = yRight ? box.x + box.w + 34 : box.x - (logTicks ? 44 : 42);
        ctx.translate(margin, box.y + box.h / 2);
        ctx.rotate(-Math.PI / 2);
        ctx.textBaseline = yRight ? "top" : "bottom";
        ctx.fillText(ylabel, 0, 0);
        ctx.restore();
      }
      if (title) {
        ctx.textBaseline = "bottom";
        ctx.fillText(title, box.x + box.w / 2, box.y - 5, Math.max(box.w, 10) + 80);
      }
    }
    power(exponent, x, y, left) {
      // 10 with a raised exponent, as matplotlib labels a log axis.
      const {ctx, font} = this;
      ctx.save();
      ctx.textAlign = "left";
      ctx.font = `12px ${font}`;
      const base = ctx.measureText("10").width;
      ctx.font = `9px ${font}`;
      const sup = ctx.measureText(String(exponent)).width;
      const start = left ? x : x - base - sup;
      ctx.font = `12px ${font}`;
      ctx.fillText("10", start, y);
      ctx.font = `9px ${font}`;
      ctx.fillText(String(exponent), start + base, y - 5);
      ctx.restore();
    }
    hline(v, colour, width, dash = []) { this.line(this.box.x, this.Y(v), this.box.x + this.box.w, this.Y(v), colour, width, dash); }
    vline(v, colour, width, dash = []) { this.line(this.X(v), this.box.y, this.X(v), this.box.y + this.box.h, colour, width, dash); }
    line(x0, y0, x1, y1, colour, width, dash) {
      const ctx = this.ctx;
      ctx.save();
      ctx.strokeStyle = colour;
      ctx.lineWidth = width;
      ctx.setLineDash(dash);
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.lineTo(x1, y1);
      ctx.stroke();
      ctx.restore();
    }
    dots(xs, ys, colour, radius, {hollow = false, width = 1.5} = {}) {
      const ctx = this.ctx;
      ctx.beginPath();
      for (let k = 0; k < xs.length; k++) {
        const px = this.X(xs[k]), py = this.Y(ys[k]);
        ctx.moveTo(px + radius, py);
        ctx.arc(px, py, radius, 0, 2 * Math.PI);
      }
      if (hollow) {
        ctx.strokeStyle = colour;
        ctx.lineWidth = width;
        ctx.stroke();
      } else {
        ctx.fillStyle = colour;
        ctx.fill();
      }
    }
    polyline(xs, ys, colour, width) {
      const ctx = this.ctx;
      ctx.beginPath();
      for (let k = 0; k < xs.length; k++) ctx[k ? "lineTo" : "moveTo"](this.X(xs[k]), this.Y(ys[k]));
      ctx.strokeStyle = colour;
      ctx.lineWidth = width;
      ctx.stroke();
    }
    image(canvas, x0, x1, yTop, yBottom) {
      // Pixel (c, r) covers [c - 0.5, c + 0.5] x [r - 0.5, r + 0.5], as imshow's extent.
      const ctx = this.ctx;
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(canvas, this.X(x0), this.Y(yTop), this.X(x1) - this.X(x0), this.Y(yBottom) - this.Y(yTop));
    }
  }

  function colourBar(ctx, font, box, lut, vmin, vmax, label) {
    const strip = document.createElement("canvas");
    strip.width = 1;
    strip.height = 256;
    const sctx = strip.getContext("2d"), image = sctx.createImageData(1, 256);
    for (let k = 0; k < 256; k++) {
      const bin = 255 - k;
      image.data.set([lut[3 * bin], lut[3 * bin + 1], lut[3 * bin + 2], 255], 4 * k);
    }
    sctx.putImageData(image, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(strip, box.x, box.y, box.w, box.h);
    const panel = new Panel(ctx, font, box, [0, 1], [vmin, vmax]);
    panel.frame({yticks: niceTicks(vmin, vmax, 5, false), yRight: true});
    ctx.save();
    ctx.font = `13px ${font}`;
    ctx.fillStyle = "#222";
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    ctx.translate(box.x + box.w + 36, box.y + box.h / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(label, 0, 0);
    ctx.restore();
  }

  function legend(ctx, font, x, y, entries) {
    ctx.save();
    ctx.font = `12px ${font}`;
    ctx.textBaseline = "middle";
    ctx.textAlign = "left";
    entries.forEach(([draw, text], k) => {
      const cy = y + 10 + 20 * k;
      draw(x + 10, cy);
      ctx.fillStyle = "#222";
      ctx.fillText(text, x + 26, cy);
    });
    ctx.restore();
  }

  // --- The explorer ----------------------------------------------------------------------------------------------

  let count = 0;

  class EncodingExplorer {
    constructor(root, settings) {
      this.root = root;
      this.settings = settings;
      this.id = `posenc-explorer-${count++}`;
      this.luts = {diverging: lookupTable(settings.colormaps.diverging), sequential: lookupTable(settings.colormaps.sequential)};
      this.cache = {};
      this.build();
      this.measure();
      this.draw();
      if (window.ResizeObserver) {
        new ResizeObserver(() => {
          if (this.canvas.clientWidth !== this.width) {
            this.measure();
            this.draw();
          }
        }).observe(this.canvas);
      }
    }

    slider(name, {min, max, step, value, text}) {
      const label = document.createElement("label");
      label.className = "posenc-x-slider";
      label.dataset.name = name;
      const title = document.createElement("span");
      title.className = "posenc-x-name";
      title.textContent = name;
      const input = document.createElement("input");
      Object.assign(input, {type: "range", min, max, step, value});
      input.setAttribute("aria-label", name);
      const output = document.createElement("output");
      output.setAttribute("aria-hidden", "true"); // the slider's aria-valuetext says the same
      label.append(title, input, output);
      const control = {label, input, output, text};
      input.addEventListener("input", () => {
        if (name === "base") this.base = Math.pow(10, Number(input.value)); // as ipywidgets' FloatLogSlider
        this.draw();
      });
      return control;
    }

    build() {
      const s = this.settings;
      const controls = document.createElement("div");
      controls.className = "posenc-x-controls";
      const row = (...children) => {
        const div = document.createElement("div");
        div.className = "posenc-x-row";
        div.append(...children);
        controls.append(div);
        return div;
      };
      this.sliders = {
        d_model: this.slider("d_model", {min: 1, max: s.d_model_max, step: 1, value: s.d_model, text: v => String(v)}),
        max_sequence_length: this.slider("max_sequence_length", {min: 1, max: s.max_sequence_length_max, step: 1,
                                                                 value: s.max_sequence_length, text: v => String(v)}),
        base: this.slider("base", {min: s.base_exponents[0], max: s.base_exponents[1], step: s.base_exponents[2],
                                   value: Math.log10(s.base), text: () => readable(this.base)}),
        position: this.slider("position", {min: 0, max: s.max_sequence_length - 1, step: 1, value: s.position,
                                           text: v => String(v)}),
        dimension: this.slider("dimension", {min: 0, max: s.d_model - 1, step: 1, value: s.dimension,
                                             text: v => `${v} (${v % 2 ? "cos" : "sin"})`}),
      };
      this.base = s.base; // exact, until the base slider moves (then 10^exponent, as ipywidgets' FloatLogSlider)
      const sl = this.sliders;
      // One grid: three sliders a row where the column is wide (as the Python explorer: sizes and base, then position
      // and dimension), two where it is narrower, one on a phone.
      row(...Object.values(sl).map(control => control.label)).className = "posenc-x-sliders";
      const views = document.createElement("div");
      views.className = "posenc-x-views";
      views.setAttribute("role", "radiogroup");
      views.setAttribute("aria-label", "view");
      const viewName = document.createElement("span");
      viewName.className = "posenc-x-name";
      viewName.textContent = "view";
      views.append(viewName);
      this.viewInputs = VIEWS.map(view => {
        const label = document.createElement("label");
        const input = document.createElement("input");
        Object.assign(input, {type: "radio", name: `${this.id}-view`, value: view, checked: view === s.view});
        input.addEventListener("change", () => this.draw());
        label.append(input, document.createTextNode(view));
        views.append(label);
        return input;
      });
      const compare = document.createElement("label");
      compare.className = "posenc-x-check";
      this.compare = document.createElement("input");
      Object.assign(this.compare, {type: "checkbox", checked: Boolean(s.compare_layouts)});
      this.compare.addEventListener("change", () => this.draw());
      compare.append(this.compare, document.createTextNode("add the concatenated layout"));
      row(views, compare);
      this.canvas = document.createElement("canvas");
      this.canvas.setAttribute("role", "img");
      this.canvasHeight = s.height || 380;
      this.caption = document.createElement("p");
      this.caption.className = "posenc-x-caption";
      this.root.replaceChildren(controls, this.canvas, this.caption);
      if (s.note) {
        const note = document.createElement("p");
        note.className = "posenc-x-note";
        note.textContent = s.note;
        this.root.append(note);
      }
    }

    state() {
      const value = name => Number(this.sliders[name].input.value);
      return {
        d_model: value("d_model"), max_sequence_length: value("max_sequence_length"), base: this.base,
        position: value("position"), dimension: value("dimension"),
        view: this.viewInputs.find(input => input.checked).value, compare_layouts: this.compare.checked,
      };
    }

    /** Move controls as a learner would (base as a number: the slider goes to its nearest step), then repaint once. */
    set(changes) {
      const sl = this.sliders;
      for (const name of ["d_model", "max_sequence_length"]) {
        if (name in changes) sl[name].input.value = changes[name];
      }
      this.fit();
      if ("base" in changes) {
        sl.base.input.value = Math.log10(changes.base);
        this.base = changes.base;
      }
      for (const name of ["position", "dimension"]) {
        if (name in changes) sl[name].input.value = changes[name];
      }
      if ("view" in changes) this.viewInputs.forEach(input => { input.checked = input.value === changes.view; });
      if ("compare_layouts" in changes) this.compare.checked = Boolean(changes.compare_layouts);
      this.draw();
      return this.state();
    }

    fit() {
      // A position or dimension past the new end moves to the last one (the range input clamps its value itself).
      const sl = this.sliders;
      for (const [name, size] of [["position", "max_sequence_length"], ["dimension", "d_model"]]) {
        const last = String(Number(sl[size].input.value) - 1);
        if (sl[name].input.max !== last) sl[name].input.max = last;
      }
    }

    measure() {
      // Read once and on a resize, never while repainting: reading a size there would force a layout of the whole page.
      this.width = Math.max(320, this.canvas.clientWidth || this.root.clientWidth || 800);
      this.font = getComputedStyle(this.root).fontFamily || "sans-serif";
    }

    table() {
      const {max_sequence_length: L, d_model: d} = this.state();
      return {shape: [L, d], values: Array.from(this.current().table)};
    }

    current() {
      // The table and what is drawn from it, recomputed only when the sizes or the base change.
      const {max_sequence_length: L, d_model: d} = this.state();
      const key = `${L} ${d} ${this.base}`;
      if (this.cache.key !== key) {
        this.cache = {key, table: encoding(L, d, this.base), w: frequencies(d, this.base)};
      }
      return this.cache;
    }

    message(st) {
      const {max_sequence_length: L, d_model: d, position: p, dimension: j, view} = st;
      const what = {
        heatmap: `Heatmap of the table, lines at position ${p} and dimension ${j}`,
        curves: `Columns ${j - (j % 2)} (sin) and ${j - (j % 2) + 1} (cos) as curves over the positions, position ${p} marked`,
        wavelengths: `The wavelength of every column on a log scale, dimension ${j} marked`,
        similarity: `PE[p] . PE[q] for every pair of positions, and row ${p} against the offset q - p`,
      }[view];
      return `${what}. table shape (${L}, ${d}), base ${readable(this.base)}; position ${p}, dimension ${j} ` +
             `(${j % 2 === 0 ? "sin" : "cos"})`;
    }

    draw() {
      const start = performance.now();
      this.fit();
      const st = this.state();
      const canvas = this.canvas, dpr = window.devicePixelRatio || 1;
      const width = this.width, height = this.canvasHeight;
      if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
        canvas.width = Math.round(width * dpr);
        canvas.height = Math.round(height * dpr);
        canvas.style.height = `${height}px`;
      }
      const ctx = canvas.getContext("2d");
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, width, height);
      this[st.view](ctx, width, height, st, this.current());
      // The text around the picture last: the canvas is drawn before anything asks the page for a new layout.
      for (const control of Object.values(this.sliders)) {
        const text = control.text(Number(control.input.value));
        if (control.output.textContent !== text) {
          control.output.textContent = text;
          control.input.setAttribute("aria-valuetext", text);
        }
      }
      const disabled = st.view !== "heatmap";
      if (this.compare.disabled !== disabled) {
        this.compare.disabled = disabled;
        this.compare.parentElement.classList.toggle("posenc-x-disabled", disabled);
        this.compare.parentElement.title = disabled ? "in the heatmap view" : "";
      }
      const text = this.message(st);
      this.caption.textContent = text;
      canvas.setAttribute("aria-label", text);
      this.paintMs = performance.now() - start;
      this.root.dispatchEvent(new CustomEvent("posenc:painted", {detail: {ms: this.paintMs, state: st}}));
    }

    heatmapImage(current, compare, d, L) {
      const key = compare ? "concatenatedImage" : "image";
      if (!current.image) current.image = imageOf(current.table, L, d, this.luts.diverging, -1, 1);
      if (compare && !current.concatenatedImage) {
        // Column k of the concatenated layout: all sines (even j), then all cosines (odd j).
        const half = (d + 1) >> 1;
        current.concatenatedImage = imageOf(current.table, L, d, this.luts.diverging, -1, 1,
                                            (r, c) => r * d + (c < half ? 2 * c : 2 * (c - half) + 1));
      }
      return current[key];
    }

    heatmap(ctx, width, height, st, current) {
      const {max_sequence_length: L, d_model: d, position: p, dimension: j} = st;
      const font = this.font, top = 26, bottom = 44, left = 62, right = 96;
      const panels = [["", this.heatmapImage(current, false, d, L), j]];
      if (st.compare_layouts) {
        panels.push(["concatenated_", this.heatmapImage(current, true, d, L), j % 2 === 0 ? j >> 1 : ((d + 1) >> 1) + (j >> 1)]);
      }
      const gap = 24, w = (width - left - right - gap * (panels.length - 1)) / panels.length;
      panels.forEach(([prefix, image, column], k) => {
        const box = {x: left + k * (w + gap), y: top, w, h: height - top - bottom};
        const panel = new Panel(ctx, font, box, [-0.5, d - 0.5], [L - 0.5, -0.5]);
        panel.image(image, -0.5, d - 0.5, -0.5, L - 0.5);
        panel.clip(() => {
          panel.hline(p, "#000", 1.2);
          panel.vline(column, "#000", 1.2, [5, 3]);
        });
        const title = !st.compare_layouts ? `PE: ${L} positions x d_model = ${d}, base = ${readable(this.base)}`
          : prefix ? "concatenated: all sin, then all cos" : "interleaved: sin, cos, sin, cos, ...";
        panel.frame({xticks: niceTicks(0, d - 1, Math.max(2, Math.floor(w / 70)), true),
                     yticks: k === 0 ? niceTicks(0, L - 1, 8, true) : [],
                     xlabel: prefix ? "column: all sines, then all cosines" : "dimension (column) j",
                     ylabel: k === 0 ? "position pos" : "", title});
      });
      colourBar(ctx, font, {x: width - right + 16, y: top + 0.05 * (height - top - bottom), w: 14, h: 0.9 * (height - top - bottom)},
                this.luts.diverging, -1, 1, "PE(pos, j)");
    }

    curves(ctx, width, height, st, current) {
      const {max_sequence_length: L, d_model: d, position: p, dimension: j} = st;
      const font = this.font, top = 22, bottom = 44, left = 62, gap = 24;
      const h = (height - top - bottom - gap) / 2;
      const pair = [j - (j % 2), j - (j % 2) + 1];
      const xmax = Math.max(L - 1, 1);
      const fine = Array.from({length: 400}, (_, k) => (k * xmax) / 399);
      const positions = Array.from({length: L}, (_, k) => k);
      pair.forEach((column, k) => {
        const box = {x: left, y: top + k * (h + gap), w: width - left - 16, h};
        const panel = new Panel(ctx, font, box, [-0.5, L - 0.5], [-1.15, 1.15]);
        let title;
        if (column >= d) {
          title = `column ${column} does not exist: d_model = ${d} is odd, column ${column - 1} has no cos partner`;
        } else {
          const denominator = 1 / current.w[column >> 1];
          const wave = column % 2 === 0 ? Math.sin : Math.cos;
          const colour = column % 2 === 0 ? this.settings.colours.sin : this.settings.colours.cos;
          panel.clip(() => {
            panel.vline(p, "#555", 1, [5, 3]);
            panel.polyline(fine, fine.map(x => wave(x / denominator)), colour, 1.4);
            panel.dots(positions, positions.map(x => wave(x / denominator)), colour, 2);
            panel.dots([p], [wave(p / denominator)], "#000", 4);
          });
          title = `j = ${column}: ${column % 2 === 0 ? "sin" : "cos"}(pos / ${readable(denominator)}), ` +
                  `wavelength ${readable(2 * Math.PI * denominator)}${column === j ? "  (chosen)" : ""}`;
        }
        panel.frame({xticks: niceTicks(0, L - 1, 10, true), yticks: [-1, 0, 1], xLabels: k === 1,
                     xlabel: k === 1 ? "position pos" : "", ylabel: "PE(pos, j)", title});
      });
    }

    wavelengths(ctx, width, height, st, current) {
      const {max_sequence_length: L, d_model: d, dimension: j} = st;
      const font = this.font, top = 26, bottom = 44, left = 66, right = 190;
      const lengths = Array.from({length: d}, (_, c) => (2 * Math.PI) / current.w[c >> 1]);
      const ylim = [3, Math.max(this.base * 6.3 * 1.5, L * 2)];
      const box = {x: left, y: top, w: width - left - right, h: height - top - bottom};
      const panel = new Panel(ctx, font, box, [-0.5, d - 0.5], ylim, {logY: true});
      const columns = Array.from({length: d}, (_, c) => c);
      const even = columns.filter(c => c % 2 === 0), odd = columns.filter(c => c % 2 === 1);
      const {sin, cos} = this.settings.colours;
      panel.clip(() => {
        panel.hline(L, "#555", 1, [1.5, 3]);
        panel.dots(even, even.map(c => lengths[c]), sin, 2);
        panel.dots(odd, odd.map(c => lengths[c]), cos, 2);
        panel.dots([j], [lengths[j]], "#000", 6, {hollow: true});
      });
      const decades = [];
      for (let e = Math.ceil(Math.log10(ylim[0])); e <= Math.floor(Math.log10(ylim[1])); e++) decades.push(Math.pow(10, e));
      panel.frame({xticks: niceTicks(0, d - 1, Math.max(2, Math.floor(box.w / 70)), true), yticks: decades,
                   logTicks: v => Math.round(Math.log10(v)), xlabel: "dimension (column) j", ylabel: "wavelength (positions)",
                   title: `wavelengths from 2 pi = 6.283 to ${readable(lengths[d - 1])} (base = ${readable(this.base)}); ` +
                          `column ${j}: ${readable(lengths[j])} positions`});
      const dot = colour => (x, y) => { ctx.fillStyle = colour; ctx.beginPath(); ctx.arc(x, y, 2.5, 0, 2 * Math.PI); ctx.fill(); };
      legend(ctx, font, box.x + box.w + 8, box.y, [
        [dot(sin), "sin columns (even j)"], [dot(cos), "cos columns (odd j)"],
        [(x, y) => { ctx.strokeStyle = "#000"; ctx.lineWidth = 1.5; ctx.beginPath(); ctx.arc(x, y, 6, 0, 2 * Math.PI); ctx.stroke(); },
         "chosen dimension"],
        [(x, y) => { ctx.strokeStyle = "#555"; ctx.setLineDash([1.5, 3]); ctx.beginPath(); ctx.moveTo(x - 9, y); ctx.lineTo(x + 9, y);
                     ctx.stroke(); ctx.setLineDash([]); }, "max_sequence_length"],
      ]);
    }

    similarityOf(current, st) {
      const {max_sequence_length: L, d_model: d} = st;
      if (!current.similarity) {
        const matrix = similarity(current.table, L, d, this.base);
        let min = Infinity, limit = 0;
        for (const v of matrix) {
          min = Math.min(min, v);
          limit = Math.max(limit, Math.abs(v));
        }
        limit = limit || 1;
        // Never negative (the usual case): a sequential map from 0. Negative values too: diverging around 0.
        const nonNegative = min >= 0;
        const vmin = nonNegative ? 0 : -limit;
        current.similarity = {matrix, limit, nonNegative, vmin,
                              image: imageOf(matrix, L, L, nonNegative ? this.luts.sequential : this.luts.diverging, vmin, limit)};
      }
      return current.similarity;
    }

    similarity(ctx, width, height, st, current) {
      const {max_sequence_length: L, position: p} = st;
      const font = this.font, top = 26, bottom = 44, left = 62;
      const sim = this.similarityOf(current, st);
      const side = Math.min(height - top - bottom, (width - left) * 0.42);
      const matrixBox = {x: left, y: top, w: side, h: side};
      const matrixPanel = new Panel(ctx, font, matrixBox, [-0.5, L - 0.5], [L - 0.5, -0.5]);
      matrixPanel.image(sim.image, -0.5, L - 0.5, -0.5, L - 0.5);
      matrixPanel.clip(() => matrixPanel.hline(p, sim.nonNegative ? "#fff" : "#000", 1.2));
      matrixPanel.frame({xticks: niceTicks(0, L - 1, 6, true), yticks: niceTicks(0, L - 1, 8, true), xlabel: "position q",
                         ylabel: "position p", title: "every pair of positions"});
      colourBar(ctx, font, {x: left + side + 12, y: top + 0.075 * side, w: 12, h: 0.85 * side},
                sim.nonNegative ? this.luts.sequential : this.luts.diverging, sim.vmin, sim.limit, "PE[p] . PE[q]");
      const x0 = left + side + 120, profileBox = {x: x0, y: top, w: width - x0 - 70, h: height - top - bottom};
      const offsets = Array.from({length: L}, (_, q) => q - p);
      const ylim = [(sim.nonNegative ? -0.05 : -1.05) * sim.limit, sim.limit * 1.05];
      const profile = new Panel(ctx, font, profileBox, [offsets[0] - 0.5, offsets[L - 1] + 0.5], ylim);
      const row = sim.matrix.subarray(p * L, (p + 1) * L);
      profile.clip(() => {
        profile.vline(0, "#555", 1, [5, 3]);
        profile.polyline(offsets, row, this.settings.colours.profile, 1);
        profile.dots(offsets, row, this.settings.colours.profile, 1.3);
      });
      profile.frame({xticks: niceTicks(offsets[0], offsets[L - 1], Math.max(2, Math.floor(profileBox.w / 60)), true),
                     yticks: niceTicks(ylim[0], ylim[1], 6, false), yRight: true, xlabel: "offset q - p",
                     ylabel: "PE[p] . PE[q]", title: `row p = ${p} of the matrix, against the offset q - p`});
    }
  }

  // --- Mount every explorer on the page --------------------------------------------------------------------------

  function base64(floats) {
    const bytes = new Uint8Array(floats.buffer, floats.byteOffset, floats.byteLength);
    let text = "";
    for (let k = 0; k < bytes.length; k += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(k, k + 0x8000));
    return btoa(text);
  }

  window.posencExplorers = [];
  function mount() {
    document.querySelectorAll(".posenc-live-explorer:not([data-mounted])").forEach(root => {
      root.dataset.mounted = "true";
      const explorer = new EncodingExplorer(root, JSON.parse(root.dataset.posencExplorer));
      window.posencExplorers.push(explorer);
    });
    const first = window.posencExplorers[0];
    if (first && !window.posencExplorer) {
      window.posencExplorer = {
        table: () => first.table(), state: () => first.state(), set: changes => first.set(changes),
        caption: () => first.caption.textContent, encoding: (L, d, base) => Array.from(encoding(L, d, base)),
        // The float32 bytes themselves (little-endian, base64): a large table crosses to a test quickly and exactly.
        tableBytes: () => base64(first.current().table), encodingBytes: (L, d, base) => base64(encoding(L, d, base)),
        similarity: () => Array.from(first.similarityOf(first.current(), first.state()).matrix),
        explorer: first,
      };
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
})();
