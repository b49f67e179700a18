// Times the rperf viewer page in headless Chromium (bench/viewer_render_bench.rb): from the
// navigation to the first drawn view, then each tab, RUNS times; with the page's main-thread
// busy time (Chromium's TaskDuration: less sensitive than wall time to a loaded machine).
// Prints JSON.
// Usage: node viewer_render.js URL RUNS TAB...
const { chromium } = require('playwright-core');

const [url, runs, ...tabs] = process.argv.slice(2);

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  const out = { first: [], firstBusy: [], tabs: {}, errors: [] };
  try {
    for (let run = 0; run < Number(runs); run++) {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      page.on('pageerror', (e) => out.errors.push(String(e)));
      const ready = () => page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 120000, polling: 20 });
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Performance.enable');
      const busy = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration').value * 1000;
      const started = Date.now();
      await page.goto(url, { timeout: 120000 });
      await ready();
      out.first.push(Date.now() - started);
      out.firstBusy.push(Math.round(await busy()));
      for (const tab of tabs) {
        if (!(await page.$(`#tabs button[data-tab=${tab}]`))) continue;
        const t = Date.now();
        await page.click(`#tabs button[data-tab=${tab}]`);
        await ready();
        (out.tabs[tab] ||= []).push(Date.now() - t);
      }
      await page.close();
    }
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
