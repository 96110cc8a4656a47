// Browser scenarios of the tools of `visalign serve` (tests/serve_tools_test.cc), run by
// serve_browser.cjs: the regionalization tool, the result explorer and the ACVA rating page. Each
// works the page as a person would and returns what it saw, for the test to hold against the store.
'use strict';

async function consent(page) {
  await page.waitForSelector('#agree');
  await page.click('#agree');
}

// Every cell's paint as the page shows it: {cell: category}.
function shownPaint(page) {
  return page.$$eval('.board-cell[data-paint]', (cells) => Object.fromEntries(cells.map((c) => [c.dataset.cell, c.dataset.paint])));
}

async function choose(page, category) {
  await page.click(`#category-${category}`);
}

module.exports = {
  // args.steps: [{tool: "fill"|"brush", category, cell}], {tool: "brush", category, drag: [from, to]}
  // (press on `from`, move to `to` in a few pointer events, release) or {undo: true}, done in
  // order; then Save.
  // Returns the paint shown after each step and the save's status text.
  async regions_session(page, ctx) {
    await page.goto(ctx.base + '/regions');
    await consent(page);
    await page.waitForSelector('.board-cell[data-cell="A1"]');
    const shown = [];
    for (const step of ctx.args.steps) {
      if (step.undo) {
        await page.click('#undo');
      } else if (step.drag) {
        await page.click(`#tool-${step.tool}`);
        await choose(page, step.category);
        const [from, to] = await Promise.all(step.drag.map((cell) => page.locator(`.board-cell[data-cell="${cell}"]`).boundingBox()));
        await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
        await page.mouse.down();
        await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 3 });
        await page.mouse.up();
      } else {
        await page.click(`#tool-${step.tool}`);
        await choose(page, step.category);
        await page.click(`.board-cell[data-cell="${step.cell}"]`);
      }
      shown.push(await shownPaint(page));
    }
    await page.click('#save');
    await page.waitForSelector('#saved >> text=/^Saved/');
    const saved = await page.$eval('#saved', (s) => s.textContent);
    // A reload shows the saved painting again.
    await page.reload();
    await page.waitForSelector('.board-cell[data-cell="A1"]');
    await page.waitForSelector('#painted >> text=/cells painted/');
    return { shown, saved, reloaded: await shownPaint(page), painted: await page.$eval('#painted', (p) => p.textContent) };
  },

  // Picks args.word and args.model, then each of args.filters ({colorblind, gender, ...}) in turn;
  // returns for each view what the board and the plot show.
  async explorer_session(page, ctx) {
    await page.goto(ctx.base + '/explorer');
    await page.waitForSelector('#app[data-updates]');
    const views = [];
    const look = async () => ({
      summary: await page.$eval('#summary', (s) => s.textContent),
      heatCells: await page.$$eval('.board-cell.heat', (cells) => cells.length),
      heatLabels: await page.$$eval('.board-cell.heat', (cells) => cells.map((c) => c.getAttribute('aria-label'))),
      marks: await page.$$eval('.board-cell.marked', (cells) => Object.fromEntries(cells.map((c) => [c.dataset.cell, c.dataset.mark]))),
      plotHumans: await page.$$eval('#xy .humans circle', (c) => c.length),
      ellipsePoints: await page.$eval('#xy .ellipse', (e) => e.getAttribute('points').trim().split(/\s+/).length).catch(() => 0),
      plotModel: await page.$$eval('#xy .model path', (p) => p.map((x) => x.dataset.cell)),
      top: await page.$$eval('#top li', (li) => li.map((x) => x.textContent)),
    });
    // Sets select `name` to `value` and waits for the page to show the new view.
    const set = async (name, value) => {
      if ((await page.$eval(`#${name}`, (s) => s.value)) === value) return;
      const before = await page.$eval('#app', (a) => Number(a.dataset.updates));
      await page.selectOption(`#${name}`, value);
      await page.waitForSelector(`#app[data-updates="${before + 1}"]`);
    };
    await set('word', ctx.args.word);
    await set('model', ctx.args.model);
    views.push(await look());
    for (const filter of ctx.args.filters) {
      for (const [name, value] of Object.entries(filter)) await set(name, value);
      views.push(await look());
    }
    return { views };
  },

  // Rates the images the page offers in args.language (all, or the first args.max): each question
  // answered with args.levels[k % levels] for an image of sample k (the image id's last part).
  // Returns the images rated in order, with the questions and scale shown, and the final text.
  async rating_session(page, ctx) {
    await page.goto(ctx.base + '/rate');
    await consent(page);
    await page.waitForSelector('#rating, #done');
    if (ctx.args.language !== 'en') {
      await page.selectOption('#language', ctx.args.language);
      await page.waitForSelector(`#rating[data-language="${ctx.args.language}"], #done`);
    }
    const rated = [];
    for (;;) {
      await page.waitForSelector('#rating, #done');
      if (await page.$('#done') || (ctx.args.max && rated.length >= ctx.args.max)) break;
      const image = await page.$eval('#rating', (f) => f.dataset.image);
      const width = await page.$eval('#image', (img) => img.decode().then(() => img.naturalWidth));
      if (!(width > 0)) throw new Error(`image ${image} did not load`);
      const questions = await page.$$eval('.question legend', (l) => l.map((x) => x.textContent));
      const scale = await page.$eval('#rating p', (p) => p.textContent);
      const level = ctx.args.levels[Number(image.split('/').pop()) % ctx.args.levels.length];
      const fieldsets = await page.$$('.question');
      for (const f of fieldsets) await (await f.$(`input[value="${level}"]`)).check();
      await page.click('#submit');
      await page.waitForSelector(`#rating:not([data-image="${image}"]), #done`);
      rated.push({ image, level, questions, scale });
    }
    const done = await page.$('#done');
    return { rated, done: done ? await done.textContent() : null, progress: await page.$eval('#progress', (p) => p.textContent) };
  },

  // The consent page of each of args.paths, as a visitor who has not agreed sees it: its text.
  async consent_texts(page, ctx) {
    const texts = {};
    for (const path of ctx.args.paths) {
      await page.goto(ctx.base + path);
      await page.waitForSelector('#consent-text');
      texts[path] = await page.textContent('#consent-text');
    }
    return { texts };
  },
};
