// The Viewer's table of events per request (drawWorkEvents in viewer_other_views.js) in headless Chromium: opens a page
// (a file URL), waits for it to be drawn, prints one JSON line: the table's rows as the page
// shows them and their data, and the page's errors.
'use strict';
const { chromium } = require('playwright-core');

const WAIT_MS = 120000; // however long a loaded machine takes
const [url] = process.argv.slice(2);

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  const out = { errors: [] };
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => out.errors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') out.errors.push(m.text()); });
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: WAIT_MS });
    out.hidden = await page.$eval('#work-events', (e) => e.hidden);
    out.summary = await page.$eval('#work-events summary', (e) => e.textContent).catch(() => null);
    out.head = await page.$$eval('#work-events-table tr:first-child th', (ths) => ths.map((th) => th.textContent));
    out.rows = await page.$$eval('#work-events-table tr:not(:first-child)', (trs) => trs.map((tr) => ({
      labels: JSON.parse(tr.dataset.labels),
      cells: [...tr.children].map((td) => td.textContent),
      counts: Object.fromEntries([...tr.querySelectorAll('td[data-event]')].map((td) => [td.dataset.event, [Number(td.dataset.count), Number(td.dataset.max)]])),
    })));
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
