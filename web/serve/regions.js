// The regionalization tool (docs/serve.md "Regionalization"): after consent, a participant paints the
// board into the 8 basic colour categories — the brush paints the cell clicked (or picked with Enter),
// fill paints the connected region of cells that share the clicked cell's paint — undoes steps, and
// saves. Each save is one painting; the consensus uses a participant's latest.
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

function page(...children) {
  clear(app);
  app.append(el('h1', {}, 'Colour regions'), ...children);
}

function consent() {
  showConsent(page, study.consent_text, start);
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

function apply(changes) {
  const step = [];
  for (const cell of changes) {
    if (paint.get(cell) === current) continue;
    step.push([cell, paint.get(cell)]);
    paint.set(cell, current);
    show(cell);
  }
  if (step.length) history.push(step);
  status();
}

// The 4-connected cells around `start` that carry the same paint (or none, like it).
function region(start) {
  const rows = [...new Set(board.cells.map((c) => c.row))];
  const cols = Math.max(...board.cells.map((c) => c.col));
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
    el('p', {}, 'Paint every cell with the colour category it belongs to. Brush: paint the cell you click. ' +
      'Fill: paint the connected area of cells that look the same on your painting. Save when you are done.'),
    el('div', { class: 'row', role: 'group', 'aria-label': 'Colour category' }, ...categories.map(categoryButton)),
    el('div', { class: 'row' }, toolButton('brush', 'Brush'), toolButton('fill', 'Fill'),
      el('button', { type: 'button', id: 'undo', onclick: undo }, 'Undo'),
      el('button', { type: 'button', class: 'primary', id: 'save', onclick: save }, 'Save painting'),
      el('span', { id: 'painted', class: 'muted' }), el('span', { id: 'saved', role: 'status' })),
    container);
  view = drawBoard(container, board, { onPick: pick, label: 'Board to paint' });
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
