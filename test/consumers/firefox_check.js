// Loads a profile in the Firefox Profiler served by profile-viewer (on 127.0.0.1) in headless
// Chromium and prints, as JSON, what the profiler made of it, for test/firefox_test.rb to check:
// the track names, then per thread (selected by clicking its track): the samples the profiler
// loaded (count, weights), the inverted call tree's roots (the front end's own computation)
// and the rows it drew, and the thread's markers as the marker table lists them.
// Usage: node firefox_check.js URL [SCREENSHOT_PATH]
// Every request that is not for 127.0.0.1 is recorded and aborted.
const { chromium } = require('playwright-core');
// How long to wait for a page's marker: however long a loaded machine takes (15 s was once too
// short beside CPU hogs); a page that never gets there still fails, by its marker.
const WAIT_MS = 120000;

const [url, shot] = process.argv.slice(2);

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
  const out = { external: [], errors: [], failed: [], threads: [] };
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    await page.route('**/*', (route) => {
      const u = new URL(route.request().url());
      if (u.hostname === '127.0.0.1') return route.continue();
      out.external.push(route.request().url());
      return route.abort();
    });
    page.on('pageerror', (e) => out.errors.push(String(e)));
    page.on('response', (r) => { if (r.status() >= 400) out.failed.push(`${r.status()} ${new URL(r.url()).pathname}`); });
    page.on('console', (m) => { if (m.type() === 'error') out.errors.push(m.text()); });
    await page.goto(url);
    // Loaded: the profile is in the store and the call tree tab has drawn rows.
    // (window.profile throws until the profile is in the store: not loaded yet.)
    await page.waitForFunction(() => {
      try {
        return window.profile && document.querySelector('.treeViewRow');
      } catch (e) {
        return false;
      }
    }, null, { timeout: 60000 });
    const profile = await page.evaluate(() => ({
      version: window.profile.meta.preprocessedProfileVersion,
      product: window.profile.meta.product,
      categories: window.profile.meta.categories.map((c) => c.name),
      threads: window.profile.threads.map((t) => ({ name: t.name, pid: t.pid, tid: t.tid })),
    }));
    out.profile = profile;
    out.tracks = await page.$$eval('.timelineTrackNameButton', (bs) => bs.map((b) => b.textContent));
    if (shot) await page.screenshot({ path: shot });

    // Invert the call stack (a setting of the page, for every thread): roots are self times.
    await page.getByText('Invert call stack').click();
    await page.waitForFunction(() => window.getState().urlState.profileSpecific.invertCallstack === true);

    for (let i = 0; i < profile.threads.length; i++) {
      const name = profile.threads[i].name;
      await page.locator('.timelineTrackNameButton', { hasText: name }).first().click();
      await page.waitForFunction((n) => window.filteredThread && window.filteredThread.name === n, name);
      // The tree view draws the new thread a moment after the store has it: until then the
      // rows are the previous thread's. Wait until the top roots' drawn rows (aria-level 1: an
      // expanded root's callers below it carry the same names, with self time 0) show this
      // thread's shares; on a timeout the rows are read as they are and the test's own
      // comparison says what differs.
      await page.waitForFunction(() => {
        const tree = window.callTree;
        const labels = Array.from(document.querySelectorAll('.treeViewBodyInner .treeViewRowScrolledColumns[aria-level="1"]'),
          (r) => r.getAttribute('aria-label') || '');
        return tree.getRoots().slice(0, 3).every((n) => {
          const d = tree.getNodeData(n);
          const row = labels.find((l) => l.startsWith(`${d.funcName},`));
          const share = row && row.match(/\(([\d.]+)%\)/);
          return share && Math.abs(parseFloat(share[1]) - 100 * d.totalRelative) <= 1;
        });
      }, null, { timeout: 20000 }).catch(() => {});
      const thread = await page.evaluate(() => {
        const t = window.filteredThread;
        const tree = window.callTree;
        const roots = tree.getRoots().map((n) => tree.getNodeData(n))
          .map((d) => ({ name: d.funcName, total: d.total, totalRelative: d.totalRelative }));
        const markers = window.filteredMarkers.map((m) => ({ name: m.name, start: m.start, end: m.end, data: m.data }));
        const weights = t.samples.weight ? Array.from(t.samples.weight) : [];
        return { name: t.name, samples: t.samples.length, weight: weights.reduce((a, b) => a + b, 0), roots, markers };
      });
      // The roots drawn (aria-level 1): each one's function and its total and percentage.
      thread.rows = await page.$$eval('.treeViewBodyInner .treeViewRowScrolledColumns[aria-level="1"]', (rows) => rows.map((r) => r.getAttribute('aria-label')));
      out.threads.push(thread);
    }

    // The marker table of the last thread: its rows as drawn.
    await page.getByRole('tab', { name: 'Marker Table' }).click();
    await page.waitForSelector('.markerTable .treeViewRow', { timeout: WAIT_MS });
    out.markerTableRows = await page.$$eval('.markerTable .treeViewRowScrolledColumns', (rows) => rows.map((r) => r.textContent));
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
