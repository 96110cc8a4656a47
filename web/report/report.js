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
          if (filterBox.value) return result.view.signal('model_filter', filterBox.value).runAsync();
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
    return Promise.all(Object.values(views).map((view) => view.signal('model_filter', filterBox.value).runAsync()));
  }

  function cellNumber(text) {
    return text.trim() === '' ? NaN : Number(text);
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
        const texts = rows.map((row) => row.cells[column].textContent);
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
