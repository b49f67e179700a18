// Opens rack-mini-profiler's flamegraph page in headless Chromium, waits for the speedscope it
// bundles to load the profile, saves a screenshot of the flame graph, then reads speedscope's
// Sandwich table (the function names, as DOM text). Every request that is not to the page's own
// origin (127.0.0.1:port) is blocked and reported.
// Usage: node mini_profiler_render.js URL SCREENSHOT.png
const { chromium } = require('playwright-core');
// How long to wait for a page's marker: however long a loaded machine takes (15 s was once too
// short beside CPU hogs); a page that never gets there still fails, by its marker.
const WAIT_MS = 120000;

(async () => {
  const [url, screenshot] = process.argv.slice(2);
  const origin = new URL(url).origin;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const external = [];
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(origin + '/') || u.startsWith('blob:') || u.startsWith('data:')) return route.continue();
    external.push(u);
    return route.abort();
  });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url);
  const iframe = await (await page.waitForSelector('#speedscope-iframe', { timeout: WAIT_MS })).contentFrame();
  // The view switcher appears once speedscope has imported the profile.
  await iframe.waitForSelector('text=Sandwich', { timeout: WAIT_MS });
  await iframe.click('text=Left Heavy');
  await page.waitForTimeout(500);
  await page.screenshot({ path: screenshot });
  const toolbar = await iframe.evaluate(() => document.body.innerText.split('\n').slice(0, 8).join(' | '));
  await iframe.click('text=Sandwich');
  await page.waitForTimeout(500);
  const text = await iframe.evaluate(() => document.body.innerText);
  await browser.close();
  console.log(JSON.stringify({ toolbar, text, external, errors }));
})().catch((e) => { console.error(e); process.exit(1); });
