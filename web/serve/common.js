// Shared by every page of `visalign serve`: JSON calls to the API, building DOM nodes without
// HTML strings (text is always set as text, never parsed), and the Hues and Cues board.
//
// drawBoard(container, cells, {onPick, heat, marks, label}) draws the 16 x 30 board from
// GET /api/board's cells ([{cell: "A1", row: "A", col: 1, rgb: [82, 48, 27]}]), each cell in its
// board.csv sRGB colour. It is a keyboard grid: one cell is in the tab order, arrow keys, Home/End
// and PageUp/PageDown move, Enter or Space picks; a click or tap picks too. onPick(cellName) is
// called on a pick. heat ({cell: count}) shades each cell by its share of the largest count;
// marks ({cell: text}) labels cells (e.g. "you"). Returns {element, setHeat, setMarks, focus, cellElement}.
//
// zoom ({label, close}) turns on the zoomed pick for touch: on a phone the board's cells are far
// smaller than a finger (about 12 px on a 390 px screen), so a tap or pen press on a board whose
// cells are narrower than ZOOM_TARGET_PX opens a loupe of the ZOOM_SPAN x ZOOM_SPAN cells around
// it, each ZOOM_TARGET_PX square (Android's 48 dp touch target, above Apple's 44 pt and WCAG 2.5.8's
// 24 px), and the pick is the loupe cell tapped. A mouse, or a board with large cells, picks
// directly. Pinch-zoom stays allowed (touch-action: manipulation; the viewport does not forbid it).

export class ApiError extends Error {
  constructor(status, error) {
    super(`${error.what || 'error'}${error.where ? ` (${error.where})` : ''}${error.expected ? `: ${error.expected}` : ''}`);
    this.status = status;
    this.error = error;
  }
}

export async function api(path, { method = 'GET', body } = {}) {
  const init = { method, headers: {}, credentials: 'same-origin' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (!res.ok) throw new ApiError(res.status, (data && data.error) || { what: res.statusText });
  return data;
}

// el('button', {class: 'primary', onclick: fn, type: 'button'}, 'Text', child, ...)
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (name === 'class') node.className = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

// Shows an error's message in `container`'s one alert paragraph (added on first use).
export function showError(container, e) {
  const box = container.querySelector('.error') || container.appendChild(el('p', { class: 'error', role: 'alert' }));
  box.textContent = e.message;
}

// The consent step of the tool pages: the study's consent text through page(...children); agreeing
// starts the session (nothing is stored before it) and calls onConsented, declining stores nothing.
export function showConsent(page, consentText, onConsented) {
  const agree = async () => {
    try {
      await api('/api/session', { method: 'POST', body: { consent: true } });
      await onConsented();
    } catch (e) { showError(document.getElementById('app'), e); }
  };
  page(
    el('section', { class: 'panel' }, el('p', { id: 'consent-text' }, consentText)),
    el('div', { class: 'row' },
      el('button', { class: 'primary', id: 'agree', type: 'button', onclick: agree }, 'I agree to take part'),
      el('button', { id: 'disagree', type: 'button', onclick: () => page(el('p', { id: 'declined' }, 'Thank you. Nothing was recorded.')) },
        'I do not agree')));
}

// A random id for a submission, so a replay is recognised by the server.
export function clientId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export async function loadBoard() {
  return api('/api/board');
}

export const ZOOM_TARGET_PX = 48;
export const ZOOM_SPAN = 7;

export function drawBoard(container, board, { onPick, heat, marks, label = 'Colour board', zoom } = {}) {
  const cells = Array.isArray(board) ? board : board.cells;
  const rows = [...new Set(cells.map((c) => c.row))];
  const cols = Math.max(...cells.map((c) => c.col));
  const byName = new Map(cells.map((c) => [c.cell, c]));
  const grid = el('div', { class: 'board', role: 'grid', 'aria-label': label });
  grid.style.setProperty('--cols', cols);
  const header = el('div', { class: 'board-row board-header', role: 'row' }, el('span', { class: 'board-corner', role: 'presentation' }));
  for (let c = 1; c <= cols; c++) {
    header.append(el('span', { class: c === 1 || c % 5 === 0 ? 'board-label' : 'board-label minor', role: 'columnheader' }, c));
  }
  grid.append(header);
  const nodes = new Map();
  let current = null;
  for (const row of rows) {
    const line = el('div', { class: 'board-row', role: 'row' }, el('span', { class: 'board-label', role: 'rowheader' }, row));
    for (let c = 1; c <= cols; c++) {
      const cell = byName.get(`${row}${c}`);
      const node = el('span', {
        class: 'board-cell', role: 'gridcell', tabindex: -1, 'data-cell': cell.cell,
        'aria-label': cell.cell,
      });
      node.style.backgroundColor = `rgb(${cell.rgb[0]}, ${cell.rgb[1]}, ${cell.rgb[2]})`;
      const light = 0.299 * cell.rgb[0] + 0.587 * cell.rgb[1] + 0.114 * cell.rgb[2] > 140;
      if (light) node.classList.add('light');
      nodes.set(cell.cell, node);
      line.append(node);
    }
    grid.append(line);
  }
  const move = (name) => {
    if (!nodes.has(name)) return;
    if (current) nodes.get(current).tabIndex = -1;
    current = name;
    const node = nodes.get(name);
    node.tabIndex = 0;
    node.focus();
  };
  const first = `${rows[0]}1`;
  current = first;
  nodes.get(first).tabIndex = 0;
  let pointer = 'mouse';
  let loupe = null;
  const closeLoupe = () => { if (loupe) { loupe.remove(); loupe = null; } };
  const pick = (name) => {
    closeLoupe();
    move(name);
    if (onPick) onPick(name);
  };
  // The loupe around `name`: ZOOM_SPAN x ZOOM_SPAN cells, kept inside the board.
  const openLoupe = (name) => {
    closeLoupe();
    const half = Math.floor(ZOOM_SPAN / 2);
    const span = (n) => Math.min(n, ZOOM_SPAN);
    const r0 = Math.max(0, Math.min(rows.indexOf(name[0]) - half, rows.length - span(rows.length)));
    const c0 = Math.max(1, Math.min(Number(name.slice(1)) - half, cols - span(cols) + 1));
    const cellsGrid = el('div', { class: 'board-zoom-grid', role: 'grid', 'aria-label': zoom.label });
    cellsGrid.style.setProperty('--span', span(cols));
    cellsGrid.style.setProperty('--target', `${ZOOM_TARGET_PX}px`);
    for (let r = r0; r < r0 + span(rows.length); r++) {
      for (let c = c0; c < c0 + span(cols); c++) {
        const cell = byName.get(`${rows[r]}${c}`);
        const node = el('button', { type: 'button', class: 'board-zoom-cell', 'data-cell': cell.cell, 'aria-label': cell.cell,
          title: cell.cell, onclick: () => pick(cell.cell) });
        node.style.backgroundColor = `rgb(${cell.rgb[0]}, ${cell.rgb[1]}, ${cell.rgb[2]})`;
        if (cell.cell === name) node.classList.add('tapped');
        cellsGrid.append(node);
      }
    }
    loupe = el('div', { class: 'board-zoom', role: 'dialog', 'aria-label': zoom.label },
      el('p', { class: 'board-zoom-label' }, zoom.label), cellsGrid,
      el('button', { type: 'button', class: 'board-zoom-close', onclick: closeLoupe }, zoom.close));
    loupe.addEventListener('keydown', (e) => { if (e.key === 'Escape') { closeLoupe(); move(name); } });
    container.append(loupe);
    loupe.querySelector('.tapped').focus();
  };
  grid.addEventListener('pointerdown', (e) => { pointer = e.pointerType || 'mouse'; });
  grid.addEventListener('click', (e) => {
    const node = e.target.closest('.board-cell');
    if (!node) return;
    const small = node.getBoundingClientRect().width < ZOOM_TARGET_PX;
    if (zoom && small && (pointer === 'touch' || pointer === 'pen')) return openLoupe(node.dataset.cell);
    pick(node.dataset.cell);
  });
  grid.addEventListener('keydown', (e) => {
    const node = e.target.closest('.board-cell');
    if (!node) return;
    const name = node.dataset.cell;
    let r = rows.indexOf(name[0]);
    let c = Number(name.slice(1));
    switch (e.key) {
      case 'ArrowLeft': c = Math.max(1, c - 1); break;
      case 'ArrowRight': c = Math.min(cols, c + 1); break;
      case 'ArrowUp': r = Math.max(0, r - 1); break;
      case 'ArrowDown': r = Math.min(rows.length - 1, r + 1); break;
      case 'Home': c = 1; break;
      case 'End': c = cols; break;
      case 'PageUp': r = 0; break;
      case 'PageDown': r = rows.length - 1; break;
      case 'Enter':
      case ' ':
        e.preventDefault();
        if (onPick) onPick(name);
        return;
      default: return;
    }
    e.preventDefault();
    move(`${rows[r]}${c}`);
  });
  container.append(grid);

  const api = {
    element: grid,
    cellElement: (name) => nodes.get(name),
    focus: (name) => move(name || current),
    setHeat(counts) {
      const max = Math.max(0, ...Object.values(counts || {}));
      for (const [name, node] of nodes) {
        const n = (counts && counts[name]) || 0;
        node.classList.toggle('heat', n > 0);
        node.style.setProperty('--heat', max > 0 ? (n / max).toFixed(3) : 0);
        node.setAttribute('aria-label', n > 0 ? `${name}: ${n}` : name);
      }
      grid.classList.toggle('revealed', Boolean(counts));
    },
    setMarks(labels) {
      for (const [name, node] of nodes) {
        const text = labels && labels[name];
        node.classList.toggle('marked', Boolean(text));
        node.dataset.mark = text || '';
      }
    },
  };
  if (heat) api.setHeat(heat);
  if (marks) api.setMarks(marks);
  return api;
}
