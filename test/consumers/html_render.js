// Opens an rperf HTML report in headless Chromium with the network cut off and prints what
// rendered and every request that tried to leave the file.
const { chromium } = require('playwright-core');

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
  const context = await browser.newContext({ offline: true });
  const page = await context.newPage();
  const external = [];
  page.on('request', (req) => { if (!req.url().startsWith('file:')) external.push(req.url()); });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto('file://' + process.argv[2]);
  await page.waitForSelector('#flame[data-rendered]', { timeout: 10000 });
  const frames = await page.$$eval('#flame .f', (els) => els.map((e) => e.textContent));
  await page.click('#flame .f >> nth=1');
  const zoomed = await page.$eval('#flame', (e) => Number(e.getAttribute('data-rendered')));
  const table = await page.$eval('#top', (e) => e.textContent);
  await browser.close();
  console.log(JSON.stringify({ frames, zoomed, table, external, errors }));
})().catch((e) => { console.error(e); process.exit(1); });
