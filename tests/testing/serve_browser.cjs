// The shared headless-Chromium driver of the `visalign serve` tests (tests/testing/serve_process.h):
//   node serve_browser.cjs NODE_MODULES SCENARIOS.cjs NAME BASE_URL ARGS.json OUT_DIR
// starts Debian's /usr/bin/chromium through playwright-core (headless, --no-sandbox --disable-gpu
// --disable-background-networking, a fresh --user-data-dir), runs scenario NAME of SCENARIOS.cjs
// (module.exports = {NAME: async (page, ctx) => result}, ctx = {base, args, outDir, context}) and
// prints one JSON object: {"result": what the scenario returned, "errors": console errors and
// uncaught exceptions, "external_requests": requests to any other origin than BASE_URL}.
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');

const [modules, scenarios, name, base, argsFile, outDir] = process.argv.slice(2);
const { chromium } = require(path.resolve(modules, 'playwright-core'));
const scenario = require(path.resolve(scenarios))[name];

(async () => {
  if (!scenario) throw new Error(`no scenario ${name} in ${scenarios}`);
  const args = JSON.parse(fs.readFileSync(argsFile, 'utf8'));
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'visalign-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: args.viewport || { width: 1280, height: 900 },
    deviceScaleFactor: args.deviceScaleFactor || 1,
    isMobile: Boolean(args.isMobile),
    hasTouch: Boolean(args.isMobile),
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--disable-quic', '--no-first-run'],
  });
  const out = { errors: [], external_requests: [] };
  const origin = new URL(base).origin;
  const watch = (page) => {
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      // Chromium fetches a page's favicon outside Playwright's routing, so the favicon of a routed
      // page on another origin (the completion redirect) fails to resolve at times: not the app's error.
      const at = msg.location().url || '';
      if (/\/favicon\.ico$/.test(at) && !at.startsWith(origin)) return;
      out.errors.push(`console: ${msg.text()}`);
    });
    page.on('pageerror', (e) => out.errors.push(`exception: ${e.message}`));
    page.on('request', (req) => {
      const url = req.url();
      if (!url.startsWith('data:') && new URL(url).origin !== origin) out.external_requests.push(url);
    });
  };
  context.on('page', watch);
  const page = context.pages()[0] || await context.newPage();
  watch(page);
  try {
    out.result = await scenario(page, { base, args, outDir, context });
  } catch (e) {
    // What the page showed and said, for the failure message.
    const text = await page.evaluate(() => document.body.innerText).catch(() => '');
    throw new Error(`${e.message}\npage text: ${text}\npage errors: ${out.errors.join(' | ')}`);
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify(out) + '\n');
})().catch((e) => {
  process.stderr.write(`serve_browser: ${e.stack || e}\n`);
  process.exit(1);
});
