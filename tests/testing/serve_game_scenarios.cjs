// Browser scenarios of the game page (tests/serve_game_test.cc), run by serve_browser.cjs. Each
// plays like a participant would and returns what it saw, for the test to hold against the store.
'use strict';

const PARAMS = '?PROLIFIC_PID=pid-1&STUDY_ID=study-1&SESSION_ID=session-1';

// Consent and onboarding with the mouse; the plates (if shown) answered with args.plateAnswers.
async function onboard(page, ctx) {
  await page.goto(ctx.base + '/' + PARAMS);
  await page.click('#agree');
  await page.selectOption('#language', 'en');
  await page.selectOption('#age_range', '20-29');
  await page.selectOption('#gender', 'female');
  await page.check('input[name="colorblind"][value="no"]');
  await page.click('#start');
  const plates = [];
  for (;;) {
    await page.waitForSelector('#screen, #word');
    if (!(await page.$('#screen'))) break;
    const choice = (ctx.args.plateAnswers || [])[plates.length] ?? 'none';
    plates.push(choice);
    await page.click(`#screen button[data-choice="${choice}"]`);
    await page.waitForSelector(`#screen[data-plate="${plates.length}"], #word`);
  }
  return plates;
}

async function currentItem(page) {
  await page.waitForSelector('#word, #done');
  if (await page.$('#done')) return null;
  const item = await page.$eval('#word', (w) => ({ kind: w.dataset.kind, text: w.textContent, index: Number(w.dataset.index) }));
  return { ...item, progress: await page.textContent('#progress') };
}

module.exports = {
  // A whole session: items answered alternately by clicking a cell and by typing its coordinate
  // (args.cells[i]), the attention check by clicking the cell it names; the reveal after each word,
  // then the completion code and the redirect (answered here, so nothing leaves the machine).
  async game_session(page, ctx) {
    await ctx.context.route(ctx.args.redirectGlob, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'completed' }));
    const plates = await onboard(page, ctx);
    // The participant switches to another tab and back.
    await page.evaluate(() => { window.dispatchEvent(new Event('blur')); window.dispatchEvent(new Event('focus')); });
    const items = [];
    for (let i = 0; ; i++) {
      const item = await currentItem(page);
      if (!item) break;
      let cell;
      let how;
      if (item.kind === 'attention') {
        cell = /cell ([A-P]\d+)/.exec(item.text)[1];
        how = 'click';
        await page.click(`.board-cell[data-cell="${cell}"]`);
        await page.click('#submit');
      } else {
        cell = ctx.args.cells[i];
        how = i % 2 === 0 ? 'click' : 'type';
        if (how === 'click') {
          await page.click(`.board-cell[data-cell="${cell}"]`);
          await page.click('#submit');
        } else {
          await page.fill('#coordinate', cell.toLowerCase());
          await page.press('#coordinate', 'Enter');
        }
      }
      let heatCells = 0;
      let revealText = '';
      if (item.kind === 'word') {
        await page.waitForSelector('#reveal');
        heatCells = await page.$$eval('.board.revealed .board-cell.heat', (n) => n.length);
        revealText = await page.textContent('#reveal');
        await page.click('#next');
      }
      await page.waitForSelector(`#word[data-index="${item.index + 1}"], #done`);
      items.push({ kind: item.kind, word: item.kind === 'word' ? item.text.split(' · ')[0] : '', text: item.text,
        progress: item.progress, cell, how, heatCells, revealText });
    }
    const code = await page.textContent('#code');
    await page.waitForURL(ctx.args.redirectGlob, { timeout: 10000 });
    return { plates, items, code, finalUrl: page.url() };
  },

  // A portrait phone: the first word's page, screenshotted, and where the board lies in the viewport.
  async phone(page, ctx) {
    await onboard(page, ctx);
    await page.waitForSelector('#word');
    const box = await page.$eval('.board', (b) => { const r = b.getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; });
    const cell = await page.$eval('.board-cell', (c) => c.getBoundingClientRect().width);
    const viewport = page.viewportSize();
    await page.screenshot({ path: `${ctx.outDir}/phone.png` });
    return { box, cell, viewport, scrollWidth: await page.evaluate(() => document.documentElement.scrollWidth) };
  },

  // A portrait phone with touch: taps args.tap on the board (a cell next to the one meant), then
  // args.cell in the loupe that opens, and answers. Returns every loupe cell's box, what the tap
  // picked, the viewport's pinch-zoom settings and the answer the page sent.
  async phone_zoom_pick(page, ctx) {
    await onboard(page, ctx);
    await page.waitForSelector('#word');
    const boardCell = await page.$eval('.board-cell', (c) => c.getBoundingClientRect().width);
    await page.tap(`.board .board-cell[data-cell="${ctx.args.tap}"]`);
    await page.waitForSelector('.board-zoom');
    const before = await page.inputValue('#coordinate');
    const loupe = await page.$$eval('.board-zoom-cell', (cells) => cells.map((c) => {
      const r = c.getBoundingClientRect();
      return { cell: c.dataset.cell, x: r.x, y: r.y, width: r.width, height: r.height };
    }));
    await page.screenshot({ path: `${ctx.outDir}/phone-zoom.png` });
    await page.tap(`.board-zoom-cell[data-cell="${ctx.args.cell}"]`);
    await page.waitForSelector('.board-zoom', { state: 'detached' });
    const picked = await page.inputValue('#coordinate');
    const answered = page.waitForResponse((r) => r.url().endsWith('/api/answer'));
    await page.tap('#submit');
    const reply = await (await answered).json();
    return {
      boardCell, before, loupe, picked, answer: reply.answered.coordinate,
      viewportMeta: await page.$eval('meta[name="viewport"]', (m) => m.content),
      touchAction: await page.$eval('.board', (b) => getComputedStyle(b).touchAction),
    };
  },

  // Keyboard only: Tab, arrows, Space and Enter from consent to the end; args.moves[i] are the
  // arrow keys that take the focus from A1 to the answer of word i.
  async keyboard(page, ctx) {
    await page.goto(ctx.base + '/');
    await page.waitForSelector('#agree:focus');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#language:focus');
    const choose = async (steps) => { for (let k = 0; k < steps; k++) await page.keyboard.press('ArrowDown'); };
    await choose(2);  // English
    await page.keyboard.press('Tab');
    await choose(3);  // 20-29
    await page.keyboard.press('Tab');
    await choose(2);  // male
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');  // colour-vision deficiency: No
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');  // Start
    let plates = 0;
    for (;;) {  // the colour-vision plates: Enter on the focused first choice
      await page.waitForSelector('#screen button:focus, #word');
      if (!(await page.$('#screen'))) break;
      await page.keyboard.press('Enter');
      plates++;
      await page.waitForSelector(`#screen[data-plate="${plates}"], #word`);
    }
    const answers = [];
    let words = 0;
    for (;;) {
      const item = await currentItem(page);
      if (!item) break;
      await page.waitForSelector('.board-cell:focus');
      const moves = item.kind === 'attention' ? ctx.args.attentionMoves : ctx.args.moves[words++];
      for (const key of moves) await page.keyboard.press(key);
      const cell = await page.$eval('.board-cell:focus', (c) => c.dataset.cell);
      await page.keyboard.press('Enter');  // pick: the focus goes to the answer button
      await page.waitForSelector('#submit:focus');
      await page.keyboard.press('Enter');
      if (item.kind === 'word') {
        await page.waitForSelector('#next:focus');
        await page.keyboard.press('Enter');
      }
      await page.waitForSelector(`#word[data-index="${item.index + 1}"], #done`);
      answers.push({ kind: item.kind, cell });
    }
    return { plates, answers, done: await page.textContent('#done') };
  },
};
