// Times a Viewer page in Chromium (script/bench-viewer): its first render, then every tab under
// each filter of the plan. Usage: node viewer_bench.js URL '{"filters": [{"name":, "thread":} |
// {"name":, "label": [key, value]}]}'. Prints JSON: {firstRender, filters: {name: {tab: ms}}}.
'use strict';
const { chromium } = require('playwright-core');

(async () => {
  const [url, planText] = process.argv.slice(2);
  const plan = JSON.parse(planText || '{}');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const ready = () => page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 120000 });
    const started = Date.now();
    await page.goto(url);
    await ready();
    const out = { firstRender: Date.now() - started, filters: {} };
    const tabs = await page.$$eval('#tabs button', (bs) => bs.map((b) => b.dataset.tab));
    for (const f of plan.filters || [{ name: 'none' }]) {
      await page.evaluate((filter) => {
        const v = window.rperfViewer;
        v.state.threadFilter = filter.thread === undefined ? null : filter.thread;
        v.state.labelFilter = filter.label ? { key: filter.label[0], values: [filter.label[1]] } : null;
        return v.render();
      }, f);
      await ready();
      const times = {};
      for (const name of tabs) {
        const t = Date.now();
        await page.click(`#tabs button[data-tab="${name}"]`);
        await ready();
        times[name] = Date.now() - t;
      }
      out.filters[f.name] = times;
    }
    console.log(JSON.stringify(out));
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error(e); process.exit(1); });
