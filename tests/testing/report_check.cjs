// Opens a `visalign report` page in headless Chromium (Debian's /usr/bin/chromium through
// playwright-core) and prints what the page did as one JSON object on stdout, for
// tests/report_test.cc to hold against expectations:
//   node report_check.cjs NODE_MODULES REPORT.html [--filter TEXT]... [--screenshot OUT.png] [--hover FIGURE:MARKS]
//     [--sort TABLE:COLUMN] [--copy TABLE]
// {"errors": console errors and uncaught exceptions, "requests": every request other than the
//  file itself, "rendered": <html data-rendered>, "marks": {figure id: {mark name: items}},
//  "tables": {table id: rows of the exact values the cells carry (data-value, else the text)},
//  "shown": {table id: rows of the cells' text as shown}, "notes": {section id: its warning notes' text},
//  "filtered_marks": the marks with the model filter set to the first TEXT, "filters": per TEXT
//  {"text", "marks", "hidden": ids of the figures hidden as matching no model, "messages": console
//  messages of every level while filtering}, "hidden_after_filters": figures still hidden once the
//  filter is cleared, "dark_errors": errors and warnings after
//  switching to the dark style and back, "tooltip": with --hover, the tooltip's text while the
//  pointer is on the first mark of FIGURE's MARKS group (e.g. hues-1-fail-rates:models_marks),
//  "sorted": with --sort, {"ascending", "descending"}: the exact values of column COLUMN (0-based) of table
//  TABLE after one click on its header and after a second, "copied": with --copy, the text the
//  clipboard gets when TABLE's body is selected and Ctrl+C pressed, "print": in the dark style with print
//  media, {"controls": the controls' display, "background": the page's background colour}}
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');

const [modules, report, ...rest] = process.argv.slice(2);
const option = (name) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1] : undefined;
};
const options = (name) => rest.flatMap((value, i) => (rest[i - 1] === name ? [value] : []));
const { chromium } = require(path.resolve(modules, 'playwright-core'));

function marksOf() {
  const out = {};
  for (const fig of document.querySelectorAll('figure.plot')) {
    const counts = {};
    for (const g of fig.querySelectorAll('svg g.role-mark')) {
      const name = Array.from(g.classList).find((c) => c.endsWith('_marks'));
      if (name) counts[name] = (counts[name] || 0) + g.children.length;
    }
    out[fig.id.replace(/^fig-/, '')] = counts;
  }
  return out;
}

(async () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'visalign-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--disable-quic', '--no-first-run'],
  });
  const result = { errors: [], requests: [], filters: [], dark_errors: [] };
  let errors = result.errors;
  let messages = null;  // while filtering: every console message
  const page = await context.newPage();
  const url = 'file://' + path.resolve(report);
  page.on('console', (msg) => {
    if (messages) messages.push(`${msg.type()}: ${msg.text()}`);
    else if (msg.type() === 'error' || msg.type() === 'warning') errors.push(`${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`exception: ${e.message}`));
  page.on('request', (req) => { if (req.url() !== url && !req.url().startsWith('data:')) result.requests.push(req.url()); });
  await page.goto(url);
  await page.waitForFunction(() => document.documentElement.dataset.rendered, null, { timeout: 120000 });
  result.rendered = await page.evaluate(() => document.documentElement.dataset.rendered);
  result.marks = await page.evaluate(marksOf);
  const cellsOf = (exact) => page.evaluate((exactValues) => {
    const out = {};
    for (const t of document.querySelectorAll('table.sortable'))
      out[t.id] = Array.from(t.tBodies[0].rows).map((r) => Array.from(r.cells)
        .map((c) => (exactValues && c.dataset.value !== undefined ? c.dataset.value : c.textContent)));
    return out;
  }, exact);
  result.tables = await cellsOf(true);
  result.shown = await cellsOf(false);
  result.notes = await page.evaluate(() => {
    const out = {};
    for (const s of document.querySelectorAll('main > section'))
      out[s.id] = Array.from(s.querySelectorAll(':scope > .notes .note')).map((n) => n.textContent);
    return out;
  });
  const hover = option('--hover');
  if (hover !== undefined) {
    const [figure, marks] = hover.split(':');
    await page.hover(`#fig-${figure} svg g.${marks} > *:first-child`);
    await page.waitForSelector('#vg-tooltip-element.visible', { timeout: 10000 });
    result.tooltip = await page.evaluate(() => document.getElementById('vg-tooltip-element').innerText);
    await page.mouse.move(0, 0);
  }
  const sort = option('--sort');
  if (sort !== undefined) {
    const [table, column] = sort.split(':');
    const cells = () => page.evaluate(([t, c]) => Array.from(document.getElementById(t).tBodies[0].rows)
      .map((r) => r.cells[Number(c)]).map((cell) => (cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent)),
    [table, column]);
    const header = `#${table} thead th:nth-child(${Number(column) + 1})`;
    await page.click(header);
    result.sorted = { ascending: await cells() };
    await page.click(header);
    result.sorted.descending = await cells();
  }
  const copy = option('--copy');
  if (copy !== undefined) {
    await page.evaluate((t) => {
      window.visalignCopied = null;
      window.addEventListener('copy', (e) => { window.visalignCopied = e.clipboardData.getData('text/plain'); });
      const range = document.createRange();
      range.selectNodeContents(document.getElementById(t).tBodies[0]);
      document.getSelection().removeAllRanges();
      document.getSelection().addRange(range);
    }, copy);
    await page.keyboard.press('Control+C');
    result.copied = await page.evaluate(() => window.visalignCopied);
    await page.evaluate(() => document.getSelection().removeAllRanges());
  }
  const screenshot = option('--screenshot');
  if (screenshot) await page.screenshot({ path: screenshot });
  const settle = () => page.evaluate(() => Promise.all(Object.values(window.visalignViews).map((v) => v.runAsync())).then(() => null));
  for (const filter of options('--filter')) {
    const entry = { text: filter, messages: [] };
    messages = entry.messages;
    // Typed key by key, as a user does: every prefix is a filter too.
    await page.click('#model-filter');
    await page.keyboard.type(filter);
    await settle();
    entry.marks = await page.evaluate(marksOf);
    entry.hidden = await page.evaluate(() => Array.from(document.querySelectorAll('figure.plot'))
      .filter((f) => f.querySelector('div.vega').hidden).map((f) => f.id.replace(/^fig-/, '')));
    await page.fill('#model-filter', '');
    await settle();
    messages = null;
    result.filters.push(entry);
  }
  if (result.filters.length) result.filtered_marks = result.filters[0].marks;
  result.hidden_after_filters = await page.evaluate(() => document.querySelectorAll('div.vega[hidden]').length);
  errors = result.dark_errors;
  await page.click('#theme-toggle');
  await page.evaluate(() => window.visalignRendered.then(() => null));
  result.dark_theme = await page.evaluate(() => document.documentElement.dataset.theme);
  await page.emulateMedia({ media: 'print' });
  result.print = await page.evaluate(() => ({
    controls: getComputedStyle(document.querySelector('.controls')).display,
    background: getComputedStyle(document.body).backgroundColor,
  }));
  await page.emulateMedia({ media: 'screen' });
  await page.click('#theme-toggle');
  await page.evaluate(() => window.visalignRendered.then(() => null));
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
  process.stdout.write(JSON.stringify(result) + '\n');
})().catch((e) => {
  process.stderr.write(`report_check: ${e.stack || e}\n`);
  process.exit(1);
});
