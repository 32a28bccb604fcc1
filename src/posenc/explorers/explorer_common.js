// What the explorers' front ends share (posenc's colours and colour map, the sinusoidal table, axes, heatmaps),
// prepended to each explorer's own module by its Python class: every explorer is still one ES module in the page.

const SIN = "#E69F00", COS = "#0072B2", PROFILE = "#0072B2"; // posenc.plots.SINE_COLOUR, COSINE_COLOUR, OKABE_ITO[3]
// matplotlib's RdBu, reversed (posenc.plots.DIVERGING = "RdBu_r"): 11 colours, 256 steps between them.
const RDBU_R = ["053061", "2166ac", "4393c3", "92c5de", "d1e5f0", "f7f7f7", "fddbc7", "f4a582", "d6604d", "b2182b", "67001f"];
const FONT = "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const STYLE = `
.posenc-ex { font: ${FONT}; color: #111; max-width: 900px; }
.posenc-ex .posenc-controls { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: center; margin-bottom: 4px; }
.posenc-ex label { display: inline-flex; align-items: center; gap: 6px; }
.posenc-ex input[type=range] { width: 150px; }
.posenc-ex output { min-width: 3.5em; font-variant-numeric: tabular-nums; }
.posenc-ex fieldset { border: 0; padding: 0; margin: 0; display: inline-flex; flex-wrap: wrap; gap: 2px 10px; }
.posenc-ex legend { float: left; margin-right: 8px; }
.posenc-ex :focus-visible { outline: 2px solid #0b4f8a; outline-offset: 2px; }
.posenc-ex canvas { display: block; width: 100%; }
.posenc-ex .posenc-description { margin: 4px 0 0; }`;

export const lut = (() => {
  const rgb = RDBU_R.map(h => [0, 2, 4].map(k => parseInt(h.substr(k, 2), 16) / 255));
  const out = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; i++) {
    const x = (i / 255) * 10, k = Math.min(9, Math.floor(x)), t = x - k;
    for (let c = 0; c < 3; c++) out[3 * i + c] = Math.round(255 * (rgb[k][c] + t * (rgb[k + 1][c] - rgb[k][c])));
  }
  return out;
})();

// --- The numbers ------------------------------------------------------------------------------------------------

export function frequencies(d, base) {
  const w = new Float64Array((d + 1) >> 1);
  for (let i = 0; i < w.length; i++) w[i] = Math.pow(base, (-2.0 * i) / d);
  return w;
}

export function table(L, d, base) {
  const w = frequencies(d, base), out = new Float32Array(L * d);
  for (let p = 0; p < L; p++)
    for (let j = 0; j < d; j++) out[p * d + j] = j & 1 ? Math.cos(p * w[j >> 1]) : Math.sin(p * w[j >> 1]);
  return out;
}

/** 4 significant digits, thousands separated, never an exponent (10,000, 6.283, 54,410). */
export function readable(v) {
  if (!isFinite(v) || v === 0) return String(v);
  const r = Number(v.toPrecision(4)), decimals = Math.max(0, 3 - Math.floor(Math.log10(Math.abs(r))));
  return r.toLocaleString("en-US", {minimumFractionDigits: decimals, maximumFractionDigits: decimals});
}

function ticks(lo, hi, count) { // whole numbers, about `count` of them
  const raw = Math.max(1, (hi - lo) / count), mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = Math.max(1, [1, 2, 5, 10].map(m => m * mag).find(s => s >= raw));
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) out.push(v);
  return out;
}

function decimalTicks(lo, hi, count) {
  const raw = (hi - lo) / count, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map(m => m * mag).find(s => s >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Number(v.toFixed(6)));
  return out;
}

// --- Drawing ------------------------------------------------------------------------------------------------------

/** A panel: a box in CSS pixels and its data range; y runs down (images) or up (curves), optionally on a log scale. */
function panel(box, [x0, x1], [y0, y1], {down = false, log = false} = {}) {
  const t = log ? Math.log10 : v => v;
  const fy = v => (t(v) - t(y0)) / (t(y1) - t(y0));
  return {box, x0, x1, y0, y1, log, X: v => box.x + ((v - x0) / (x1 - x0)) * box.w,
          Y: v => (down ? box.y + fy(v) * box.h : box.y + box.h - fy(v) * box.h)};
}

// Size the canvas to `width` x `height` CSS pixels at the screen's pixel ratio (only when they change: resizing clears
// it), and return its context cleared to white, in CSS pixels, with the explorers' font.
function blankCanvas(canvas, width, height) {
  const ratio = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.height = `${height}px`;
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, width, height);
  ctx.font = FONT;
  return ctx;
}

function text(ctx, s, x, y, align = "center", baseline = "alphabetic", colour = "#111") {
  ctx.fillStyle = colour;
  ctx.textAlign = align;
  ctx.textBaseline = baseline;
  ctx.fillText(s, x, y);
}

function axes(ctx, P, {xlabel, ylabel, title, yTicks, xTicks, yRight = false}) {
  const {box} = P;
  ctx.strokeStyle = "#333";
  ctx.lineWidth = 1;
  ctx.strokeRect(box.x, box.y, box.w, box.h);
  ctx.font = FONT;
  for (const v of xTicks || ticks(Math.ceil(Math.min(P.x0, P.x1)), Math.floor(Math.max(P.x0, P.x1)), Math.max(2, box.w / 70))) {
    const x = P.X(v);
    ctx.beginPath(); ctx.moveTo(x, box.y + box.h); ctx.lineTo(x, box.y + box.h + 4); ctx.stroke();
    text(ctx, String(v), x, box.y + box.h + 6, "center", "top");
  }
  const lo = Math.min(P.y0, P.y1), hi = Math.max(P.y0, P.y1);
  const ys = yTicks || (P.log ? [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7].filter(v => v >= lo && v <= hi)
                               : ticks(Math.ceil(lo), Math.floor(hi), Math.max(2, box.h / 40)));
  let widest = 0;
  for (const v of ys) {
    const y = P.Y(v), x = yRight ? box.x + box.w : box.x, label = P.log ? v.toLocaleString("en-US") : String(v);
    ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(yRight ? x + 4 : x - 4, y); ctx.stroke();
    text(ctx, label, yRight ? x + 6 : x - 6, y, yRight ? "left" : "right", "middle");
    widest = Math.max(widest, ctx.measureText(label).width);
  }
  if (xlabel) text(ctx, xlabel, box.x + box.w / 2, box.y + box.h + 22, "center", "top");
  if (ylabel) {
    ctx.save();
    ctx.translate(yRight ? box.x + box.w + widest + 12 : box.x - widest - 10, box.y + box.h / 2);
    ctx.rotate(-Math.PI / 2);
    text(ctx, ylabel, 0, 0, "center", "bottom");
    ctx.restore();
  }
  if (title) text(ctx, title, box.x + box.w / 2, box.y - 6, "center", "bottom");
}

let packedColours = null;
function packed() { // each colour of the map as one RGBA pixel in this machine's byte order
  if (!packedColours) {
    packedColours = new Uint32Array(256);
    const bytes = new Uint8Array(packedColours.buffer);
    for (let k = 0; k < 256; k++) bytes.set([lut[3 * k], lut[3 * k + 1], lut[3 * k + 2], 255], 4 * k);
  }
  return packedColours;
}

/** values (rows x columns, row-major) as an image, coloured as matplotlib's imshow (vmin..vmax in 256 bins). */
function image(values, rows, columns, vmin, vmax, column = (r, c) => r * columns + c) {
  const canvas = document.createElement("canvas");
  canvas.width = columns;
  canvas.height = rows;
  const ctx = canvas.getContext("2d"), img = ctx.createImageData(columns, rows), scale = 256 / (vmax - vmin);
  const pixels = new Uint32Array(img.data.buffer), colours = packed();
  for (let r = 0, k = 0; r < rows; r++)
    for (let c = 0; c < columns; c++, k++) pixels[k] = colours[Math.min(255, Math.max(0, Math.floor((values[column(r, c)] - vmin) * scale)))];
  ctx.putImageData(img, 0, 0);
  return canvas;
}

function colourBar(ctx, box, vmin, vmax, label) {
  const bar = document.createElement("canvas");
  bar.width = 1; bar.height = 256;
  const b = bar.getContext("2d"), img = b.createImageData(1, 256);
  for (let i = 0; i < 256; i++) img.data.set([lut[3 * (255 - i)], lut[3 * (255 - i) + 1], lut[3 * (255 - i) + 2], 255], 4 * i);
  b.putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(bar, box.x, box.y, box.w, box.h);
  const P = panel(box, [0, 1], [vmin, vmax]);
  axes(ctx, P, {yTicks: decimalTicks(vmin, vmax, 4), xTicks: [], yRight: true, ylabel: label});
}

const TICK = 0.06;  // a mark's tick, as a share of the picture's side (encoding_explorer.py MARK_TICK)

function heatmap(ctx, box, picture, rows, columns, marks, title, xlabel) {
  const P = panel(box, [-0.5, columns - 0.5], [-0.5, rows - 0.5], {down: true});
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(picture, box.x, box.y, box.w, box.h);
  // The chosen row and column as black ticks on a white band at the picture's edges, seen on any stripe and leaving
  // the row and column themselves in view (as the kernel's picture draws them): each tick is TICK of the side.
  const mark = (x0, y0, x1, y1) => {
    for (const [colour, width] of [["#fff", 3.5], ["#000", 1.5]]) {
      ctx.strokeStyle = colour; ctx.lineWidth = width;
      ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
    }
  };
  const across = TICK * box.w, down = TICK * box.h;
  if (marks.row !== undefined) {
    mark(box.x, P.Y(marks.row), box.x + across, P.Y(marks.row));
    mark(box.x + box.w - across, P.Y(marks.row), box.x + box.w, P.Y(marks.row));
  }
  if (marks.column !== undefined) {
    mark(P.X(marks.column), box.y, P.X(marks.column), box.y + down);
    mark(P.X(marks.column), box.y + box.h - down, P.X(marks.column), box.y + box.h);
  }
  axes(ctx, P, {xlabel, ylabel: marks.ylabel, title});
}

function dots(ctx, P, xs, ys, colour, radius = 2.2, line = false) {
  ctx.fillStyle = ctx.strokeStyle = colour;
  if (line) {
    ctx.beginPath();
    xs.forEach((x, k) => (k ? ctx.lineTo(P.X(x), P.Y(ys[k])) : ctx.moveTo(P.X(x), P.Y(ys[k]))));
    ctx.stroke();
  }
  if (radius > 0) xs.forEach((x, k) => { ctx.beginPath(); ctx.arc(P.X(x), P.Y(ys[k]), radius, 0, 2 * Math.PI); ctx.fill(); });
}
