// The report page's behaviour: loads the embedded font, renders every figure with vega-embed (SVG
// renderer, tooltips), the model filter, sortable tables, light/dark styles, and, in export mode
// (<html data-export>), hands the figures to export.js for `visalign report --figures`.
(function () {
  'use strict';
  const figures = JSON.parse(document.getElementById('visalign-figures').textContent);
  const views = {};
  window.visalignViews = views;

  const root = document.documentElement;
  const exportMode = root.dataset.export === 'true';
  const prefersDark = !exportMode && window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
  root.dataset.theme = prefersDark ? 'dark' : 'light';
  const filterBox = document.getElementById('model-filter');

  // The page's font (DejaVu Sans, embedded): loaded before any figure is laid out, so vega measures
  // its text in the font it is drawn in; export.js draws the same glyphs.
  const font = JSON.parse(document.getElementById('visalign-font').textContent);
  const fontBytes = {};
  const fontLoaded = Promise.all(Object.entries(font.faces).map(([weight, base64]) => {
    const binary = atob(base64);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; ++i) bytes[i] = binary.charCodeAt(i);
    fontBytes[weight] = bytes.buffer;
    const face = new FontFace(font.family, bytes.buffer.slice(0), { weight });
    document.fonts.add(face);
    return face.load();
  }));
  const themeButton = document.getElementById('theme-toggle');

  function embedOptions() {
    const options = {
      renderer: 'svg',
      actions: exportMode ? false : { export: true, source: false, compiled: false, editor: false },
      downloadFileName: 'figure',
    };
    if (root.dataset.theme === 'dark') options.theme = 'dark';
    return options;
  }

  // Whether the model filter `text` (lower case) leaves a figure something to draw: a row of a
  // matching model (as the specs' own filter, under which rows without a model always stay) with a
  // number in each field its marks need (usermeta.need_numbers). A figure left with none is hidden,
  // with a line saying so, instead of being drawn empty (vega warns about an empty scale's extent).
  function figureMatches(figure, text) {
    const rows = (figure.spec.data && figure.spec.data.values) || [];
    const need = (figure.spec.usermeta && figure.spec.usermeta.need_numbers) || [];
    const models = rows.filter((row) => typeof row.model === 'string');
    return text === '' || models.length === 0 || models.some((row) => row.model.toLowerCase().includes(text) &&
      need.every((field) => typeof row[field] === 'number'));
  }

  function showFigure(el, shown) {
    let empty = el.nextElementSibling;
    if (!empty || !empty.classList.contains('filter-empty')) {
      empty = document.createElement('p');
      empty.className = 'filter-empty';
      empty.textContent = 'No model of this figure matches the model filter.';
      el.after(empty);
    }
    el.hidden = !shown;
    empty.hidden = shown;
  }

  async function renderAll() {
    for (const view of Object.values(views)) view.finalize();
    const jobs = [];
    document.querySelectorAll('div.vega[data-figure]').forEach((el) => {
      const figure = figures[Number(el.dataset.figure)];
      const options = embedOptions();
      options.downloadFileName = figure.id;
      jobs.push(
        vegaEmbed(el, figure.spec, options).then((result) => {
          views[figure.id] = result.view;
          if (filterBox.value && figureMatches(figure, filterBox.value.toLowerCase()))
            return result.view.signal('model_filter', filterBox.value).runAsync();
          return null;
        })
      );
    });
    await Promise.all(jobs);
  }

  function applyFilter() {
    const text = filterBox.value.toLowerCase();
    document.querySelectorAll('[data-model]').forEach((el) => {
      el.hidden = text !== '' && !el.dataset.model.toLowerCase().includes(text);
    });
    const jobs = [];
    document.querySelectorAll('div.vega[data-figure]').forEach((el) => {
      const figure = figures[Number(el.dataset.figure)];
      const shown = figureMatches(figure, text);
      showFigure(el, shown);
      const view = views[figure.id];
      if (shown && view) jobs.push(view.signal('model_filter', filterBox.value).runAsync());
    });
    return Promise.all(jobs);
  }

  // A cell's exact text: data-value where the page shows the number rounded.
  function cellValue(cell) {
    return cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent;
  }

  function cellNumber(text) {
    return text.trim() === '' ? NaN : Number(text);
  }

  // Copying from within one table gives its cells' exact values, tab-separated, a row a line
  // (rows the model filter hides left out).
  function copyExact(e) {
    const selection = document.getSelection();
    if (!selection || selection.isCollapsed || selection.rangeCount === 0) return;
    const common = selection.getRangeAt(0).commonAncestorContainer;
    const el = common.nodeType === Node.ELEMENT_NODE ? common : common.parentElement;
    const wrap = el && (el.closest('table.sortable') || el.closest('.table-wrap'));
    const table = wrap && (wrap.matches('table') ? wrap : wrap.querySelector('table.sortable'));
    if (!table) return;
    const lines = [];
    for (const row of table.rows) {
      if (row.hidden) continue;
      const cells = Array.from(row.cells).filter((cell) => selection.containsNode(cell, true));
      if (cells.length) lines.push(cells.map(cellValue).join('\t'));
    }
    if (lines.length === 0) return;
    e.clipboardData.setData('text/plain', lines.join('\n'));
    e.preventDefault();
  }

  function makeSortable(table) {
    table.querySelectorAll('thead th').forEach((th, column) => {
      th.tabIndex = 0;
      th.title = 'sort';
      const sort = () => {
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        const ascending = th.dataset.sort !== 'ascending';
        table.querySelectorAll('thead th').forEach((other) => delete other.dataset.sort);
        th.dataset.sort = ascending ? 'ascending' : 'descending';
        const texts = rows.map((row) => cellValue(row.cells[column]));
        const numeric = texts.every((t) => t.trim() === '' || !Number.isNaN(cellNumber(t)));
        const order = rows.map((row, i) => i);
        order.sort((a, b) => {
          let d;
          if (numeric) {
            const x = cellNumber(texts[a]), y = cellNumber(texts[b]);
            if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) - Number.isNaN(y) || a - b;  // empty last
            d = x - y;
          } else {
            d = texts[a] < texts[b] ? -1 : texts[a] > texts[b] ? 1 : 0;
          }
          return (ascending ? d : -d) || a - b;
        });
        order.forEach((i) => body.appendChild(rows[i]));
      };
      th.addEventListener('click', sort);
      th.addEventListener('keydown', (e) => { if (e.key === 'Enter') sort(); });
    });
  }

  filterBox.addEventListener('input', applyFilter);
  document.addEventListener('copy', copyExact);
  themeButton.addEventListener('click', () => {
    root.dataset.theme = root.dataset.theme === 'dark' ? 'light' : 'dark';
    themeButton.textContent = root.dataset.theme === 'dark' ? 'Light' : 'Dark';
    window.visalignRendered = renderAll().catch((e) => console.error('visalign report: ' + (e && e.message ? e.message : e)));
  });
  themeButton.textContent = root.dataset.theme === 'dark' ? 'Light' : 'Dark';
  document.querySelectorAll('table.sortable').forEach(makeSortable);
  window.visalignRendered = fontLoaded
    .then(renderAll)
    .then(() => (exportMode ? window.visalignExportFigures(figures, views, fontBytes) : null))
    .then(() => { root.dataset.rendered = 'true'; })
    .catch((e) => {
      root.dataset.rendered = 'error';
      console.error('visalign report: ' + (e && e.message ? e.message : e));
    });
})();
