// The regionalization tool (docs/serve.md "Regionalization"): after consent, a participant paints the
// board into the 8 basic colour categories — the brush paints the cell clicked (or picked with Enter)
// and every cell a press dragged over, fill paints the connected region of cells that share the
// clicked cell's paint — undoes steps (a whole brush stroke is one), and saves. Each save is one
// painting; the consensus uses a participant's latest.
import { api, clear, clientId, drawBoard, el, loadBoard, showConsent, showError } from './common.js';

const app = document.getElementById('app');
let study = null;
let board = null;
let categories = [];
const paint = new Map();   // cell -> category
const history = [];        // undo steps: [[cell, previous category or undefined], ...]
let tool = 'brush';
let current = null;        // the category painted with
let view = null;           // drawBoard's handle
let stroke = null;         // the brush stroke being dragged: {step (its undo entries), last cell}

function page(...children) {
  clear(app);
  app.append(el('h1', {}, 'Colour regions'), ...children);
}

function consent() {
  showConsent(page, study.regions_consent_text, start);
}

// Shows `cell`'s paint on the board.
function show(cell) {
  const node = view.cellElement(cell);
  const category = paint.get(cell);
  if (category) node.dataset.paint = category;
  else delete node.dataset.paint;
  node.setAttribute('aria-label', category ? `${cell}: ${category}` : cell);
}

function status() {
  app.querySelector('#painted').textContent = `${paint.size} of ${board.cells.length} cells painted`;
  app.querySelector('#undo').disabled = history.length === 0;
}

// Paints `cells` with the current category, recording what they had in the undo step `step`.
function paintInto(step, cells) {
  for (const cell of cells) {
    if (paint.get(cell) === current) continue;
    step.push([cell, paint.get(cell)]);
    paint.set(cell, current);
    show(cell);
  }
}

function apply(changes) {
  const step = [];
  paintInto(step, changes);
  if (step.length) history.push(step);
  status();
}

function boardRows() { return [...new Set(board.cells.map((c) => c.row))]; }
function boardCols() { return Math.max(...board.cells.map((c) => c.col)); }

// The cells on the straight line from `from` to `to`, both included: a fast drag skips cells
// between two pointer events.
function line(from, to) {
  const rows = boardRows();
  const [r0, c0] = [rows.indexOf(from[0]), Number(from.slice(1))];
  const [r1, c1] = [rows.indexOf(to[0]), Number(to.slice(1))];
  const n = Math.max(Math.abs(r1 - r0), Math.abs(c1 - c0));
  const cells = [];
  for (let i = 0; i <= n; i++) {
    const t = n ? i / n : 0;
    cells.push(`${rows[Math.round(r0 + (r1 - r0) * t)]}${Math.round(c0 + (c1 - c0) * t)}`);
  }
  return cells;
}

// The board cell under the pointer (a pointer that pressed keeps its first target, so it is looked up).
function cellAt(e) {
  const node = document.elementFromPoint(e.clientX, e.clientY);
  return node && node.closest('.board .board-cell') ? node.closest('.board-cell').dataset.cell : null;
}

// Brush strokes: pressing on a cell starts one, moving over cells paints them, releasing ends it as
// one undo step. A press without a category is left to the click, which says to choose one.
function strokes(container) {
  container.addEventListener('pointerdown', (e) => {
    const cell = cellAt(e);
    if (!cell || tool !== 'brush' || !current || e.button !== 0) return;
    e.preventDefault();  // no text selection while dragging
    stroke = { step: [], last: cell };
    paintInto(stroke.step, [cell]);
  });
  container.addEventListener('pointermove', (e) => {
    const cell = stroke && cellAt(e);
    if (!cell || cell === stroke.last) return;
    paintInto(stroke.step, line(stroke.last, cell));
    stroke.last = cell;
  });
  const end = () => {
    if (!stroke) return;
    if (stroke.step.length) history.push(stroke.step);
    stroke = null;
    status();
  };
  window.addEventListener('pointerup', end);
  window.addEventListener('pointercancel', end);
}

// The 4-connected cells around `start` that carry the same paint (or none, like it).
function region(start) {
  const rows = boardRows();
  const cols = boardCols();
  const target = paint.get(start);
  const seen = new Set([start]);
  const queue = [start];
  while (queue.length) {
    const cell = queue.shift();
    const r = rows.indexOf(cell[0]);
    const c = Number(cell.slice(1));
    for (const [dr, dc] of [[-1, 0], [1, 0], [0, -1], [0, 1]]) {
      const nr = r + dr;
      const nc = c + dc;
      if (nr < 0 || nr >= rows.length || nc < 1 || nc > cols) continue;
      const next = `${rows[nr]}${nc}`;
      if (seen.has(next) || paint.get(next) !== target) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return [...seen];
}

function pick(cell) {
  if (!current) return showError(app, new Error('Choose a colour category first.'));
  apply(tool === 'fill' ? region(cell) : [cell]);
}

function undo() {
  const step = history.pop();
  if (!step) return;
  for (const [cell, previous] of step) {
    if (previous) paint.set(cell, previous);
    else paint.delete(cell);
    show(cell);
  }
  status();
}

async function save() {
  const saved = app.querySelector('#saved');
  saved.textContent = '';
  try {
    const reply = await api('/api/regions', { method: 'POST', body: { client_id: clientId(), cells: Object.fromEntries(paint) } });
    saved.textContent = `Saved: ${reply.painted} cells.`;
  } catch (e) { showError(app, e); }
}

function toolButton(name, label) {
  return el('button', {
    type: 'button', id: `tool-${name}`, 'aria-pressed': String(tool === name),
    onclick: () => {
      tool = name;
      for (const b of app.querySelectorAll('[id^="tool-"]')) b.setAttribute('aria-pressed', String(b.id === `tool-${name}`));
    },
  }, label);
}

function categoryButton(name) {
  return el('button', {
    type: 'button', class: 'swatch', id: `category-${name}`, 'data-category': name, 'aria-pressed': 'false',
    onclick: () => {
      current = name;
      for (const b of app.querySelectorAll('.swatch')) b.setAttribute('aria-pressed', String(b.dataset.category === name));
    },
  }, name);
}

async function start() {
  const mine = await api('/api/regions');
  categories = mine.categories;
  paint.clear();
  history.length = 0;
  for (const [cell, category] of Object.entries(mine.painting || {})) paint.set(cell, category);
  const container = el('div', { class: 'panel' });
  page(
    el('p', {}, 'Paint every cell with the colour category it belongs to. Brush: paint the cell you click, or ' +
      'press and drag across cells. ' +
      'Fill: paint the connected area of cells that look the same on your painting. Save when you are done.'),
    el('div', { class: 'row', role: 'group', 'aria-label': 'Colour category' }, ...categories.map(categoryButton)),
    el('div', { class: 'row' }, toolButton('brush', 'Brush'), toolButton('fill', 'Fill'),
      el('button', { type: 'button', id: 'undo', onclick: undo }, 'Undo'),
      el('button', { type: 'button', class: 'primary', id: 'save', onclick: save }, 'Save painting'),
      el('span', { id: 'painted', class: 'muted' }), el('span', { id: 'saved', role: 'status' })),
    container);
  view = drawBoard(container, board, { onPick: pick, label: 'Board to paint' });
  strokes(container);
  for (const cell of paint.keys()) show(cell);
  status();
}

(async () => {
  try {
    [study, board] = await Promise.all([api('/api/study'), loadBoard()]);
    const me = await api('/api/me');
    if (!me.session) return consent();
    await start();
  } catch (e) {
    showError(app, e);
  }
})();
