// Drives the rperf viewer (served by a real server on 127.0.0.1) in headless Chromium and prints
// what every view rendered, as JSON, for test/web/viewer_browser_test.rb to check.
// Usage: node viewer_check.js URL PLAN_JSON [SCREENSHOT_DIR]
// PLAN: { current, base, timelineSnapshot, label: [key, value], frame }, or { static: true } for
// a file written by Rperf::Viewer.static_html (with its methods tab; method: name, that method's
// graph; views: true, label: [key, value]: also its call tree, threads and label filter), or
// { methods: true, method, caller, label: [key, value], thread }: the methods tab by total and by
// self, `method`'s graph, then `caller`'s (clicked in it), then `method`'s under the label and
// the thread filters, or { alloc: true, current, other, labels:
// [[key, value], ...], thread, allocLabel: [key, value] }: the call tree under each filter, the
// tree cache's size after 20 more filters, and the allocations view of
// `current`, then the allocations tab of `other` (no allocation samples), then (broken: id) what
// the page says of a profile the model refuses, or { big: true }: the time to
// the first render and to each tab (a profile of hundreds of thousands of timeline rows), the
// timeline and a dragged range's totals, or { bigFile: true, label: [key, value] }: the same
// timings on a file, what each tab drew, then the Timeline of all samples and of the label's
// (the file's rows, binned by the page), or { opened: true }: the snapshot the page opened, or
// { source: true }: the same, the flame graph and the call-tree tab of a page whose data comes
// from window.RPERF_DATA_SOURCE.
// Every request that is not for 127.0.0.1 (or the file itself) is recorded and aborted.
const { chromium } = require('playwright-core');
// How long to wait for a page's marker: however long a loaded machine takes (15 s was once too
// short beside CPU hogs); a page that never gets there still fails, by its marker.
const WAIT_MS = 120000;

const [url, planJson, shots] = process.argv.slice(2);
const plan = JSON.parse(planJson);

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
  const out = { requests: [], external: [], errors: [], dialogs: [] };
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.route('**/*', async (route) => {
      const u = new URL(route.request().url());
      out.requests.push(u.pathname);
      if (u.hostname === '127.0.0.1' || u.protocol === 'file:') return route.continue();
      out.external.push(route.request().url());
      return route.abort();
    });
    page.on('pageerror', (e) => out.errors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') out.errors.push(m.text()); });
    page.on('dialog', (d) => { out.dialogs.push(d.message()); d.dismiss(); });
    // Let the page settle before a picture.
    const shot = async (name) => { if (shots) { await page.waitForTimeout(400); await page.screenshot({ path: `${shots}/${name}.png` }); } };
    // A page that never gets ready says what went wrong in it.
    const ready = () => page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: WAIT_MS })
      .catch((e) => { throw new Error(e.message + (out.errors.length ? '; errors in the page: ' + out.errors.join(' | ') : '')); });
    const tab = async (name) => { await page.click(`#tabs button[data-tab=${name}]`); await ready(); };
    const rendered = (sel) => page.$eval(sel, (e) => Number(e.dataset.rendered || 0));
    // A view drawn after a tab switch: its nodes once drawn (the switch may answer 'ready' before
    // the view's own render starts); 0 when nothing is drawn within the wait.
    const drawn = async (sel) => {
      // However long a loaded machine takes (15 s was once too short at load average 11-13);
      // a view that never draws fails here, by name.
      await page.waitForFunction((s) => Number(document.querySelector(s)?.dataset.rendered || 0) > 0, sel, { timeout: WAIT_MS })
        .catch(() => { throw new Error(`${sel} drew nothing within ${WAIT_MS / 1000} s`); });
      return rendered(sel);
    };
    const totals = () => page.$eval('#totals', (e) => ({ shown: Number(e.dataset.shownNs), total: Number(e.dataset.totalNs) }));
    const frameNames = (sel) => page.$$eval(`${sel} g.frame`, (gs) => gs.map((g) => g.getAttribute('name')));

    const select = async (key, value) => {
      const idx = await page.$eval('#filter-label', (sel, [k, v]) => {
        const choices = window.rperfViewer.state.filterChoices;
        return String(choices.findIndex((c) => c.key === k && c.value === v));
      }, [key, value]);
      await page.selectOption('#filter-label', idx);
    };
    const choose = async (key, value) => { await select(key, value); await ready(); };
    // A view read under the plan's thread filter (the label filter cleared first), then with
    // no filter again.
    const threadThenReset = async (read) => {
      await page.selectOption('#filter-label', '');
      await ready();
      await page.selectOption('#filter-thread', String(plan.thread));
      await ready();
      const thread = await read();
      await page.selectOption('#filter-thread', '');
      await ready();
      return { thread, reset: await read() };
    };
    const treeItems = () => page.$$eval('#tree li', (li) => li.length);
    const exerciseTree = async () => {
      await tab('tree');
      out.tree = { before: await treeItems(), total: await page.$eval('#tree', (t) => Number(t.dataset.totalNs)) };
      await page.click('#tree li[aria-expanded="false"] > .row > .toggle');
      out.tree.afterExpand = await treeItems();
      await page.click('#tree-collapse');
      await ready();
      out.tree.collapsed = await treeItems();
    };
    const threadRows = () => page.$$eval('#threads-table tbody tr', (rows) => rows.map((r) => r.dataset.thread));
    // The methods tab: its rows, and the selected method's graph (callers, the method, callees).
    const methodRows = () => page.$$eval('#methods-table tbody tr', (rows) => rows.map((r) => ({
      name: r.dataset.name, self: Number(r.dataset.selfNs), total: Number(r.dataset.totalNs), selected: r.classList.contains('selected'),
    })));
    const methodGraph = () => page.$eval('#method-graph', (g) => ({
      hidden: g.hidden,
      method: g.dataset.method || null,
      rows: [...g.tBodies[0].rows].map((r) => ({
        cls: r.className, kind: r.dataset.kind || null, name: r.dataset.name || null, ns: r.dataset.ns ? Number(r.dataset.ns) : null,
        total: r.dataset.totalNs ? Number(r.dataset.totalNs) : null, self: r.dataset.selfNs ? Number(r.dataset.selfNs) : null,
        share: r.querySelector('.share') ? r.querySelector('.share').textContent : null, text: r.textContent,
      })),
    }));
    const methodsView = async () => ({
      rows: await methodRows(), graph: await methodGraph(), total: await page.$eval('#methods-table', (t) => Number(t.dataset.totalNs)),
      note: await page.$eval('#methods-note', (e) => e.textContent), hint: await page.$eval('#method-hint', (e) => !e.hidden),
    });
    // Clicks the row of the method named `name` in the rows of `sel` (the table or the graph).
    const pickMethod = async (sel, name) => {
      const i = await page.$$eval(`${sel} tr`, (rows, n) => rows.findIndex((r) => r.dataset.name === n), name);
      if (i < 0) throw new Error(`no ${name} in ${sel}`);
      await page.locator(`${sel} tr`).nth(i).click();
    };

    // Every tab of the page (its buttons), the open one last, each switch timed (ms) into out.tabs;
    // after each, show(name) when given: what the tab drew, into out.shows.
    const timeTabs = async (show) => {
      const all = await page.$$eval('#tabs button', (bs) => bs.map((b) => [b.dataset.tab, b.classList.contains('active')]));
      const names = plan.tabs || [...all.filter(([, a]) => !a), ...all.filter(([, a]) => a)].map(([n]) => n);
      out.tabs = {};
      out.shows = {};
      for (const name of names) {
        const t = Date.now();
        await tab(name);
        out.tabs[name] = Date.now() - t;
        if (show) out.shows[name] = await show(name);
      }
    };

    const started = Date.now();
    await page.goto(url);
    await ready();
    if (plan.source) { // a page whose data comes from window.RPERF_DATA_SOURCE: what it opened and drew
      out.opened = await page.evaluate(() => window.rperfViewer.state.current.id);
      out.rows = await page.$$eval('#snapshot-list tbody tr', (rows) => rows.map((r) => ({ id: Number(r.dataset.id), text: r.textContent })));
      out.status = await page.$eval('#status', (e) => e.textContent);
      out.totals = await totals();
      out.flame = { rendered: await rendered('#flame'), names: await frameNames('#flame') };
      await tab('tree');
      out.tree = await page.$eval('#tab-tree', (e) => e.textContent);
      // No stack chart without the server's views: the tab is marked and says why.
      out.stackTab = await page.$eval('#tabs button[data-tab="stack"]', (b) => ({ cls: b.className, title: b.title }));
      await tab('stack');
      out.stack = await page.$eval('#stack-details', (e) => e.textContent);
      console.log(JSON.stringify(out));
      return;
    }
    if (plan.opened) { // the snapshot opened on arrival, and how the list shows each one
      out.opened = await page.evaluate(() => window.rperfViewer.state.current.id);
      out.rows = await page.$$eval('#snapshot-list tbody tr', (rows) => rows.map((r) => ({ id: Number(r.dataset.id), cls: r.className, text: r.textContent })));
      console.log(JSON.stringify(out));
      return;
    }
    if (plan.big) { // every tab of a big profile, timed; the timeline with a dragged range
      out.firstRender = Date.now() - started;
      out.opened = await page.evaluate(() => window.rperfViewer.state.current.id);
      out.rows = await page.$$eval('#snapshot-list tbody tr', (rows) => rows.map((r) => ({ id: Number(r.dataset.id), cls: r.className, text: r.textContent })));
      await timeTabs();
      await tab('stack');
      out.stack = await page.$eval('#stack', (e) => ({ total: Number(e.dataset.totalNs), thread: Number(e.dataset.thread), cells: Number(e.dataset.cells) }));
      await tab('timeline');
      // Drawn from the model's bins, with no row unpacked; a range then loads the rows.
      out.timeline = {
        rendered: await rendered('#timeline'),
        source: await page.$eval('#timeline', (e) => e.dataset.source),
        stateNs: await page.$eval('#timeline', (e) => JSON.parse(e.dataset.stateNs)),
        rowsLoaded: await page.evaluate(() => timelineLoaded(window.rperfViewer.state.current)),
      };
      const box = await page.$eval('#timeline svg', (s) => { const r = s.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
      await page.mouse.move(box.x + 90 + (box.w - 98) / 4, box.y + 10);
      await page.mouse.down();
      await page.mouse.move(box.x + 90 + (box.w - 98) / 2, box.y + 12, { steps: 4 });
      await page.mouse.up();
      await ready();
      out.timeline.stateRange = await page.evaluate(() => window.rperfViewer.state.range);
      out.timeline.totals = await totals();
      out.timeline.rows = await page.evaluate(() => ((t) => (t.samples || t.columns[0]).length)(window.rperfViewer.state.current.timeline));
      await tab('flame');
      out.flameInRange = await drawn('#flame');
      await tab('tree');
      out.treeInRange = await page.$eval('#tree', (t) => Number(t.dataset.totalNs));
      console.log(JSON.stringify(out));
      return;
    }
    if (plan.bigFile) { // a --html file of a big profile: every tab timed and what it drew; the Timeline under a label
      out.firstRender = Date.now() - started;
      const text = (sel) => page.$eval(sel, (e) => e.textContent);
      const num = (sel, key) => page.$eval(sel, (e, k) => Number(e.dataset[k] || 0), key);
      const shows = {
        flame: () => rendered('#flame'), icicle: () => rendered('#icicle'), stack: () => num('#stack', 'cells'),
        top: () => page.$$eval('#top-table tbody td.fn', (tds) => tds.map((t) => t.textContent)),
        tree: () => num('#tree', 'totalNs'), inverted: () => num('#inverted', 'totalNs'), methods: () => num('#methods-table', 'totalNs'),
        threads: () => num('#threads-table', 'rows'), timeline: () => rendered('#timeline'),
        sandwich: () => text('#sandwich-note'), source: () => text('#source-note'), diff: () => text('#diff-summary'), alloc: () => text('#alloc-summary'),
      };
      await timeTabs((name) => (shows[name] ? shows[name]() : null));
      const timeline = () => page.$eval('#timeline', (e) => ({
        source: e.dataset.source, stateNs: JSON.parse(e.dataset.stateNs), threads: e.dataset.threads.split(',').map(Number), rendered: Number(e.dataset.rendered),
      }));
      await tab('timeline');
      out.timeline = await timeline(); // the file's bins, no row unpacked
      out.timeline.rowsLoaded = await page.evaluate(() => timelineLoaded(window.rperfViewer.state.current));
      // Under the label filter the file has no bins: the page reads its rows and bins them.
      const t = Date.now();
      await choose(plan.label[0], plan.label[1]);
      out.filteredMs = Date.now() - t;
      out.filtered = await timeline();
      out.filtered.rows = await page.evaluate(() => ((t) => (t.samples || t.columns[0]).length)(window.rperfViewer.state.current.timeline));
      out.filtered.totals = await totals();
      console.log(JSON.stringify(out));
      return;
    }
    if (plan.methods) { // every method, by total and by self; one method's graph, then a caller's; under a label and a thread
      await tab('methods');
      out.methods = { before: await methodsView() };
      await page.click('#tab-methods [data-sort=self]');
      await ready();
      out.methods.bySelf = await methodRows();
      await page.click('#tab-methods [data-sort=total]');
      await ready();
      await pickMethod('#methods-table tbody', plan.method);
      out.methods.selected = await methodsView();
      await shot('methods');
      await pickMethod('#method-graph tbody', plan.caller);
      out.methods.caller = await methodGraph();
      await pickMethod('#methods-table tbody', plan.method);
      await choose(...plan.label);
      out.methods.label = await methodsView();
      Object.assign(out.methods, await threadThenReset(methodsView));
      console.log(JSON.stringify(out));
      return;
    }
    if (plan.alloc) {
      await page.click(`#snapshot-list tr[data-id="${plan.current}"]`);
      await ready();
      // Call tree (expanded to calls >= 1%): the root's total and its top rows, with no filter and with each filter.
      const treeTotals = async () => { await page.click('#tree-expand'); await ready(); return page.$eval('#tree', (t) => ({
        total: Number(t.dataset.totalNs),
        top: [...t.querySelectorAll(':scope > ul > li')].reduce((a, li) => a + Number(li.dataset.totalNs), 0),
        names: [...t.querySelectorAll('li .name')].map((e) => e.textContent),
        note: document.getElementById('tree-note').textContent,
      })); };
      await tab('tree');
      out.tree = { all: await treeTotals(), labels: [] };
      // 20 more filtered trees (label values no sample has): the page keeps the last 16.
      out.tree.cached = await page.evaluate(async () => {
        const v = window.rperfViewer;
        for (let i = 0; i < 20; i++) { v.state.labelFilter = { key: 'endpoint', values: ['none ' + i] }; await v.render(); }
        v.state.labelFilter = null;
        await v.render();
        return v.state.current.views.size;
      });
      for (const [key, value] of plan.labels) {
        await choose(key, value);
        out.tree.labels.push(await treeTotals());
      }
      Object.assign(out.tree, await threadThenReset(treeTotals));
      await shot('tree');
      // Allocations: allocated, then retained, then one label's allocations.
      const alloc = async () => ({
        allocated: await page.$eval('#alloc-summary', (e) => Number(e.dataset.allocated)),
        retained: await page.$eval('#alloc-summary', (e) => Number(e.dataset.retained)),
        rendered: await rendered('#alloc-flame'),
        names: await frameNames('#alloc-flame'),
        rows: await page.$$eval('#alloc-table tbody tr', (rows) => rows.slice(0, 5).map((r) => [...r.cells].map((c) => c.textContent))),
      });
      await tab('alloc');
      out.allocated = await alloc();
      await shot('allocations');
      await page.click('#tab-alloc [data-field=retained]');
      await ready();
      out.retained = await alloc();
      await choose(plan.allocLabel[0], plan.allocLabel[1]);
      out.labelled = await alloc();
      await page.selectOption('#filter-label', '');
      await ready();
      await page.click(`#snapshot-list tr[data-id="${plan.other}"]`);
      await ready();
      out.none = { text: await page.$eval('#alloc-summary', (e) => e.textContent), rendered: await rendered('#alloc-flame'),
                   tableHidden: await page.$eval('#alloc-table', (e) => e.hidden) };
      if (plan.broken) { // a Hash the model refuses: the page says why, and its list entry too
        await page.click(`#snapshot-list tr[data-id="${plan.broken}"]`);
        await page.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: WAIT_MS });
        out.broken = { status: await page.$eval('#status', (e) => e.textContent),
                       entry: await page.$eval(`#snapshot-list tr[data-id="${plan.broken}"]`, (e) => e.textContent) };
      }
      console.log(JSON.stringify(out));
      return;
    }
    if (plan.static) { // a self-contained file: one snapshot, every view from inline data
      for (const name of ['flame', 'icicle', 'timeline']) {
        await tab(name);
        out[name] = await rendered('#' + name);
      }
      await tab('top');
      out.top = await page.$$eval('#top-table tbody tr', (rows) => rows.length);
      await tab('methods');
      out.methods = await methodsView();
      if (plan.method) {
        await pickMethod('#methods-table tbody', plan.method);
        out.methods.selected = await methodGraph();
      }
      await tab('alloc');
      out.alloc = { rendered: await rendered('#alloc-flame'), allocated: await page.$eval('#alloc-summary', (e) => Number(e.dataset.allocated || 0)) };
      await tab('flame');
      out.title = await page.title();
      out.status = await page.$eval('#status', (e) => e.textContent);
      await shot('static');
      if (plan.views) { // the rest of the viewer, as `rperf report --html` writes it
        // Call tree: expand one collapsed node, then collapse all, then expand all.
        await exerciseTree();
        await page.click('#tree-expand');
        await ready();
        out.tree.expandedNames = await page.$$eval('#tree li .name', (n) => n.map((e) => e.textContent));
        // Threads: one row per thread with its heaviest function; a click keeps only its samples.
        await tab('threads');
        out.threads = await page.$$eval('#threads-table tbody tr', (rows) => rows.map((r) => ({ thread: Number(r.dataset.thread), heaviest: r.querySelector('td.fn').textContent })));
        out.threadTotals = {};
        for (const t of out.threads) {
          await page.click(`#threads-table tr[data-thread="${t.thread}"]`);
          await ready();
          out.threadTotals[t.thread] = await totals();
          await page.click(`#threads-table tr[data-thread="${t.thread}"]`);
          await ready();
        }
        out.unfiltered = await totals();
        // Label filter.
        out.labelOptions = await page.$$eval('#filter-label option', (o) => o.map((e) => e.textContent));
        await choose(plan.label[0], plan.label[1]);
        out.filtered = await totals();
        out.filteredThreads = await threadRows();
        // A file's tree and methods are the page model's of the filtered samples: shown under a
        // filter as without one, the tab not marked; the 'c' key clears the filters.
        const clearFilters = async () => { await page.focus('body'); await page.keyboard.press('c'); await ready(); };
        const unfiltered = async (name) => ({
          marked: await page.$eval(`#tabs button[data-tab=${name}]`, (b) => b.classList.contains('unfiltered') && b.title),
          text: await page.$eval(name === 'tree' ? '#tree' : '#methods-note', (e) => e.textContent),
          total: await page.$eval(name === 'tree' ? '#tree' : '#methods-table', (e) => (e.dataset.totalNs ? Number(e.dataset.totalNs) : null)),
          rows: name === 'tree' ? await treeItems() : await page.$$eval('#methods-table tbody tr', (r) => r.length),
          tableShown: await page.$eval('#methods-split', (e) => !e.hidden && e.getBoundingClientRect().height > 0),
        });
        await tab('tree');
        out.filteredTree = await unfiltered('tree');
        await tab('methods');
        out.filteredMethods = await unfiltered('methods');
        await clearFilters();
        out.clearedMethods = await methodsView();
        out.reset = await totals();
        // A time range (dragged on the timeline): the same, then "clear the filters" in the tree tab.
        await tab('timeline');
        const tl = await page.$eval('#timeline svg', (s) => { const r = s.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width }; });
        await page.mouse.move(tl.x + 90 + (tl.w - 98) / 4, tl.y + 10);
        await page.mouse.down();
        await page.mouse.move(tl.x + 90 + (tl.w - 98) / 2, tl.y + 12, { steps: 4 });
        await page.mouse.up();
        await ready();
        out.ranged = await totals();
        await tab('tree');
        out.rangedTree = await unfiltered('tree');
        await clearFilters();
        out.clearedTree = { total: await page.$eval('#tree', (t) => Number(t.dataset.totalNs)), totals: await totals(),
                            marked: await page.$eval('#tabs button[data-tab=tree]', (b) => b.classList.contains('unfiltered')) };
        out.diffTab = await page.$eval('#tabs button[data-tab=diff]', (b) => ({ marked: b.classList.contains('unfiltered'), title: b.title }));
      }
      console.log(JSON.stringify(out));
      return;
    }
    out.snapshots = await page.$$eval('#snapshot-list tbody tr', (rows) => rows.map((r) => Number(r.dataset.id)));
    out.sparklineDots = await page.$$eval('#sparkline circle', (c) => c.length);
    await page.click(`#snapshot-list tr[data-id="${plan.current}"]`);
    await ready();
    out.title = await page.$eval('#snapshot-title', (e) => e.textContent);

    // Flame graph and icicle.
    out.flame = { rendered: await rendered('#flame'), names: await frameNames('#flame') };
    await shot('flame');
    await page.hover(`#flame g.frame[name="${plan.frame}"]`);
    out.flame.details = await page.$eval('#flame-details', (e) => e.textContent);
    await tab('icicle');
    out.icicle = { rendered: await rendered('#icicle') };

    // Top table, both orders.
    await tab('top');
    const topRows = () => page.$$eval('#top-table tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
    out.top = { self: (await topRows()).slice(0, 5) };
    await page.click('#tab-top [data-sort=total]');
    await ready();
    out.top.total = (await topRows()).slice(0, 5);

    // Call tree: expand one collapsed node, then collapse all.
    await exerciseTree();
    await shot('tree');

    // Threads.
    await tab('threads');
    out.threads = await threadRows();

    // Label filter: one label value, then %GVL=blocked, then all samples again.
    await tab('flame');
    out.labelOptions = await page.$$eval('#filter-label option', (o) => o.map((e) => e.textContent));
    out.unfiltered = await totals();
    await choose(plan.label[0], plan.label[1]);
    out.filtered = { totals: await totals(), names: await frameNames('#flame') };
    await shot('filtered');
    await choose('%GVL', 'blocked');
    out.blocked = await totals();
    await page.selectOption('#filter-label', '');
    await ready();
    out.reset = await totals();

    // Diff against the base snapshot, within the endpoint of the plan (both snapshots filtered).
    await choose(plan.label[0], plan.label[1]);
    await tab('diff');
    await page.selectOption('#diff-base', String(plan.base));
    await ready();
    out.diff = {
      rendered: await rendered('#diff-flame'),
      fills: await page.$$eval('#diff-flame g.frame', (gs) => Object.fromEntries(gs.map((g) => [g.getAttribute('name'), g.querySelector('rect').getAttribute('fill')]))),
      rows: await page.$$eval('#diff-table tbody tr', (rows) => rows.slice(0, 8).map((r) => ({ cls: r.className, cells: [...r.cells].map((c) => c.textContent) }))),
      summary: await page.$eval('#diff-summary', (e) => e.textContent),
    };
    await shot('diff');
    await page.selectOption('#filter-label', '');
    await ready();

    // Timeline of the snapshot with raw samples: drag over its middle third.
    await page.click(`#snapshot-list tr[data-id="${plan.timelineSnapshot}"]`);
    await ready();
    await tab('timeline');
    out.timeline = { rendered: await rendered('#timeline') };
    // Under the label filter, the server's bins of its samples; then every sample's (the payload's).
    await choose(plan.label[0], plan.label[1]);
    const timelineDrawn = () => page.$eval('#timeline', (e) => ({ source: e.dataset.source, stateNs: JSON.parse(e.dataset.stateNs), threads: e.dataset.threads.split(',').map(Number) }));
    out.timeline.filtered = await timelineDrawn();
    await page.selectOption('#filter-label', '');
    await ready();
    out.timeline.all = await timelineDrawn();
    const box = await page.$eval('#timeline svg', (s) => { const r = s.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
    const plotLeft = box.x + 90;
    const plotWidth = box.w - 98;
    await page.mouse.move(plotLeft + plotWidth / 3, box.y + 10);
    await page.mouse.down();
    await page.mouse.move(plotLeft + plotWidth / 2, box.y + 12, { steps: 4 });
    await page.mouse.move(plotLeft + 2 * plotWidth / 3, box.y + 14, { steps: 4 });
    await page.mouse.up();
    await ready();
    out.timeline.range = await page.$eval('#range-info', (e) => (e.hidden ? null : e.textContent));
    out.timeline.totals = await totals();
    out.timeline.stateRange = await page.evaluate(() => window.rperfViewer.state.range);
    await shot('timeline');
    await tab('flame');
    out.timeline.flameInRange = await drawn('#flame');
    await page.click('#clear-range');
    await ready();
    out.timeline.cleared = await totals();

    // Nothing from the profile ran as code or became markup.
    out.xss = await page.evaluate(() => ({ flag: window.__xss === undefined ? null : window.__xss, imgs: document.querySelectorAll('img').length, scripts: document.scripts.length }));
    out.status = await page.$eval('#status', (e) => e.textContent);
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
