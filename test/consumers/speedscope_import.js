// Imports a profile file into speedscope (its npm package's offline build, in headless Chromium)
// by dropping it on the page (as a user would), then reads the Sandwich table (the function names speedscope
// made of the file, as DOM text). Nothing leaves the machine: only file: URLs are allowed.
// Usage: node speedscope_import.js FILE
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');
// How long to wait for a page's marker: however long a loaded machine takes (15 s was once too
// short beside CPU hogs); a page that never gets there still fails, by its marker.
const WAIT_MS = 120000;

(async () => {
  const file = path.resolve(process.argv[2]);
  const index = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist/release/index.html');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const external = [];
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith('file:') || u.startsWith('blob:') || u.startsWith('data:')) return route.continue();
    external.push(u);
    return route.abort();
  });
  const page = await context.newPage();
  const errors = [];
  const log = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => (m.type() === 'error' ? errors : log).push(m.text()));
  await page.goto('file://' + index);
  await page.waitForSelector('text=Browse');
  const content = fs.readFileSync(file, 'utf8');
  await page.evaluate(([name, body]) => {
    const data = new DataTransfer();
    data.items.add(new File([body], name));
    const target = document.querySelector('body > div') || document.body;
    for (const type of ['dragenter', 'dragover', 'drop']) {
      target.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
    }
  }, [path.basename(file), content]);
  await page.waitForSelector('text=Sandwich', { timeout: WAIT_MS });
  await page.click('text=Sandwich');
  await page.waitForTimeout(500);
  const text = await page.evaluate(() => document.body.innerText);
  await browser.close();
  console.log(JSON.stringify({ text, log, external, errors }));
})().catch((e) => { console.error(e); process.exit(1); });
