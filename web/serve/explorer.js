// The result explorer (docs/serve.md "Explorer"): pick a word, a model and which players count; the
// board shows the human answers as a heat map and the model's top-5 as numbered cells, and a CIE xy
// plot shows the answers, their mean and the 95 % ellipse, and the model's top-5.
import { api, clear, drawBoard, el, loadBoard, showError } from './common.js';

// The SVG namespace, a name rather than an address: written with \u002F escapes, as the report's
// embedding step writes XML namespaces, so no URL appears in the embedded app.
const SVG = 'http:\u002F\u002Fwww.w3.org\u002F2000\u002Fsvg';
const PLOT = { width: 420, height: 360, margin: 36 };
const app = document.getElementById('app');
let meta = null;
let view = null;

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  return node;
}

function select(id, label, options) {
  return el('label', { for: id }, label,
    el('select', { id, onchange: update }, ...options.map(([value, text]) => el('option', { value }, text))));
}

// The CIE xy plot: one circle per answered cell (area ∝ answers, filled with the cell's colour), the
// ellipse, the mean and the model's top-5 as numbered diamonds.
function drawPlot(word, model) {
  const plot = clear(app.querySelector('#xy'));
  const points = [];
  word.counts.forEach((n, i) => { if (n > 0) points.push(meta.xy[i]); });
  for (const p of word.ellipse) points.push(p);
  if (model) for (const t of model.top) points.push(meta.xy[meta.index.get(t.cell)]);
  if (!points.length) return;
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const pad = 0.01;
  const [x0, x1] = [Math.min(...xs) - pad, Math.max(...xs) + pad];
  const [y0, y1] = [Math.min(...ys) - pad, Math.max(...ys) + pad];
  const sx = (x) => PLOT.margin + ((x - x0) / (x1 - x0)) * (PLOT.width - 2 * PLOT.margin);
  const sy = (y) => PLOT.height - PLOT.margin - ((y - y0) / (y1 - y0)) * (PLOT.height - 2 * PLOT.margin);
  const root = svg('svg', { viewBox: `0 0 ${PLOT.width} ${PLOT.height}`, role: 'img', 'aria-label': `CIE xy of ${word.word}` });
  root.append(svg('rect', { x: PLOT.margin, y: PLOT.margin, width: PLOT.width - 2 * PLOT.margin,
    height: PLOT.height - 2 * PLOT.margin, class: 'frame' }));
  const label = (text, x, y, anchor) => {
    const t = svg('text', { x, y, 'text-anchor': anchor, class: 'axis' });
    t.textContent = text;
    return t;
  };
  root.append(label(`x ${x0.toFixed(3)}–${x1.toFixed(3)}`, PLOT.width / 2, PLOT.height - 8, 'middle'),
    label(`y ${y0.toFixed(3)}–${y1.toFixed(3)}`, 8, PLOT.margin - 10, 'start'));
  const max = Math.max(...word.counts);
  const humans = svg('g', { class: 'humans' });
  word.counts.forEach((n, i) => {
    if (n === 0) return;
    const rgb = meta.board.cells[i].rgb;
    const dot = svg('circle', { cx: sx(meta.xy[i][0]), cy: sy(meta.xy[i][1]), r: 3 + 9 * Math.sqrt(n / max),
      fill: `rgb(${rgb.join(',')})`, 'data-cell': meta.board.cells[i].cell });
    const title = svg('title');
    title.textContent = `${meta.board.cells[i].cell}: ${n}`;
    dot.append(title);
    humans.append(dot);
  });
  root.append(humans);
  if (word.ellipse.length) {
    root.append(svg('polyline', { class: 'ellipse', points: word.ellipse.map((p) => `${sx(p[0])},${sy(p[1])}`).join(' ') }));
  }
  if (word.mean) {
    const [mx, my] = [sx(word.mean[0]), sy(word.mean[1])];
    root.append(svg('path', { class: 'mean', d: `M${mx - 6},${my}H${mx + 6}M${mx},${my - 6}V${my + 6}` }));
  }
  if (model) {
    const top = svg('g', { class: 'model' });
    for (const t of model.top) {
      const [x, y] = meta.xy[meta.index.get(t.cell)];
      const mark = svg('path', { d: `M${sx(x)},${sy(y) - 7}l7,7l-7,7l-7,-7z`, 'data-cell': t.cell, 'data-rank': t.rank });
      const title = svg('title');
      title.textContent = `${model.model} #${t.rank}: ${t.cell}`;
      mark.append(title);
      top.append(mark);
    }
    root.append(top);
  }
  plot.append(root);
}

async function update() {
  const params = new URLSearchParams({ word: app.querySelector('#word').value });
  for (const name of ['colorblind', 'gender', 'age', 'language', 'model']) {
    const value = app.querySelector(`#${name}`).value;
    if (value) params.set(name, value);
  }
  try {
    const reply = await api(`/api/explorer/word?${params}`);
    const word = reply.view;
    const heat = {};
    word.counts.forEach((n, i) => { if (n > 0) heat[meta.board.cells[i].cell] = n; });
    view.setHeat(heat);
    const marks = {};
    if (reply.model) for (const t of reply.model.top) marks[t.cell] = String(t.rank);
    view.setMarks(marks);
    const mean = word.mean ? `mean (${word.mean[0].toFixed(4)}, ${word.mean[1].toFixed(4)})` : 'no mean';
    const ellipse = word.ellipse.length ? `ellipse at d² = ${word.d2.toFixed(3)} (${meta.threshold.spec})` : 'no ellipse (too few or collinear answers)';
    app.querySelector('#summary').textContent = `${word.word}: ${word.n} answers; ${mean}; ${ellipse}.`;
    const top = app.querySelector('#top');
    clear(top);
    if (reply.model) top.append(...reply.model.top.map((t) => el('li', {}, `${t.cell} (similarity ${t.similarity === null ? '–' : t.similarity.toFixed(4)})`)));
    drawPlot(word, reply.model);
    app.dataset.ready = params.toString();
    app.dataset.updates = String(Number(app.dataset.updates || 0) + 1);
  } catch (e) { showError(app, e); }
}

(async () => {
  try {
    const [info, board] = await Promise.all([api('/api/explorer'), loadBoard()]);
    meta = { ...info, board, index: new Map(board.cells.map((c, i) => [c.cell, i])) };
    const any = [['', 'any']];
    const choices = (name) => any.concat(info.filters[name].map((v) => [v, v]));
    const container = el('div', { class: 'panel' });
    clear(app).append(
      el('h1', {}, 'Result explorer'),
      el('div', { class: 'row controls' },
        select('word', 'Word', info.words.map((w) => [w.word, `${w.word} (${w.category})`])),
        select('model', 'Model', [['', 'none']].concat(info.models.map((m) => [m, m]))),
        select('colorblind', 'Colour-blind players', info.filters.colorblind.map((v) => [v, v])),
        select('gender', 'Gender', choices('gender')),
        select('age', 'Age', choices('age')),
        select('language', 'Language', choices('language'))),
      el('p', { id: 'summary', role: 'status' }),
      el('div', { class: 'explorer' }, container,
        el('div', { class: 'panel' }, el('h2', {}, `CIE xy (${info.chromaticity})`), el('div', { id: 'xy' }),
          el('h2', {}, 'Model top-5'), el('ol', { id: 'top' }))));
    view = drawBoard(container, board, { label: 'Human answers on the board' });
    await update();
  } catch (e) { showError(app, e); }
})();
