// Drives the rperf viewer's navigation features in headless Chromium (issue 27): the flame
// graph's fit, wheel/drag/click zoom and breadcrumb, the search and its share, hide idle
// threads, the stack chart, category colours, the keyboard and the view in the address.
// Prints what the page showed, as JSON, for test/web/viewer_ui_test.rb to check.
// Usage: node viewer_ui_check.js URL PLAN [SCREENSHOT_DIR]; PLAN: "nav" (the above, on a file), or
// "sandwich" (a served page): the Methods tab's method in the Sandwich tab, then a
// Shift+clicked flame-graph frame's, or "bigfile": a file with its timeline apart, the stack chart (merged by the server, in its
// own element) then the timeline, or "address" (served): a view built by hand (snapshot,
// transform, label filter, tagfocus, search, time range, tab, zoom) read again in a new page
// opened at its address, or "idle" (served or a file): "hide idle threads" in every view, then
// an endpoint set (several values of one label) ticked in the value menu, and the address that
// reopens it.
const { chromium } = require('playwright-core');
// How long to wait for a page's marker: however long a loaded machine takes (15 s was once too
// short beside CPU hogs); a page that never gets there still fails, by its marker.
const WAIT_MS = 120000;

const [url, plan, shots] = process.argv.slice(2);
// The plans "search", "keys", "categories" and "filtered" (viewer_ui_views_test.rb) read theirs
// from RPERF_UI_PARAMS (JSON): the search text, the label filter's option.
const params = JSON.parse(process.env.RPERF_UI_PARAMS || '{}');
const out = { errors: [], external: [] }; // what the page showed; its errors are printed on a failure too

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
  try {
    // Every page: nothing fetched from elsewhere, and its errors (thrown or logged) reported.
    const newPage = async (tag) => {
      const pg = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await pg.route('**/*', (route) => {
        const u = new URL(route.request().url());
        if (u.hostname === '127.0.0.1' || u.protocol === 'file:') return route.continue();
        out.external.push(u.href);
        return route.abort();
      });
      pg.on('pageerror', (e) => out.errors.push(tag + String(e)));
      pg.on('console', (m) => { if (m.type() === 'error') out.errors.push(tag + m.text()); });
      return pg;
    };
    const page = await newPage('');
    const ready = () => page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: WAIT_MS });
    // The address is written after a zoom's paint (at most every 200 ms): wait until it is.
    const addressed = (pg) => pg.waitForFunction(() => location.hash === window.rperfViewer.viewHash(), null, { timeout: WAIT_MS });
    // A new page at the address, drawn.
    const reopen = async (href) => {
      const again = await newPage('reopened: ');
      await again.goto(href);
      await again.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: WAIT_MS });
      return again;
    };
    const shot = async (name) => { if (shots) await page.screenshot({ path: `${shots}/${name}.png` }); };
    const view = (sel) => page.$eval(sel, (e) => ({ view: e.dataset.view.split(',').map(Number), zoom: e.dataset.zoom, rendered: Number(e.dataset.rendered) }));
    const crumbs = (sel) => page.$$eval(`${sel} .crumbs .crumb`, (bs) => bs.map((b) => b.textContent));
    const totals = () => page.$eval('#totals', (e) => ({ shown: Number(e.dataset.shownNs), total: Number(e.dataset.totalNs) }));
    const settle = () => page.waitForTimeout(300); // the search box waits 120 ms for more typing

    await page.goto(url);
    await ready();
    if (plan === 'bigfile') { // a file whose timeline is an element of its own, read after the first view
      out.apart = await page.evaluate(() => ({ element: !!document.getElementById('rperf-timeline-1') }));
      await page.waitForFunction(() => timelineLoaded(window.rperfViewer.state.current), null, { timeout: 60000 });
      out.apart.prefetched = true;
      await page.keyboard.press('3');
      await ready();
      out.stack = await page.$eval('#stack', (e) => ({ total: Number(e.dataset.totalNs), thread: Number(e.dataset.thread), rendered: Number(e.dataset.rendered) }));
      out.stackLoadedTimeline = await page.evaluate(() => timelineLoaded(window.rperfViewer.state.current));
      await page.keyboard.press('0'); // the Timeline tab draws the file's bins, not its rows
      await ready();
      const timeline = () => page.$eval('#timeline', (e) => ({ source: e.dataset.source, stateNs: JSON.parse(e.dataset.stateNs), rendered: Number(e.dataset.rendered) }));
      out.timeline = await timeline();
      const hover = async () => {
        const box = await page.$eval('#timeline svg', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width }; });
        await page.mouse.move(box.x + 90 + (box.w - 98) / 2, box.y + 12);
        return page.$eval('#timeline-details', (e) => e.textContent);
      };
      out.timeline.details = await hover();
      out.timelineLoadedRows = await page.evaluate(() => timelineLoaded(window.rperfViewer.state.current));
      // Under a tag filter a file has no bins of its own: its rows are read and binned.
      await page.fill('#tag-focus', 'nothing matches this');
      await page.waitForTimeout(300);
      await ready();
      out.timelineFiltered = await timeline();
      out.timelineFiltered.details = await hover();
      out.rows = await page.evaluate(() => ((t) => (t.samples || t.columns[0]).length)(window.rperfViewer.state.current.timeline));
      console.log(JSON.stringify(out));
      return;
    }
    // Ready, and the page's state as asked: state[key] === value (a key or a typed box redraws
    // a moment later).
    const readyWhen = (key, value) => page.waitForFunction(([k, v]) => document.body.dataset.state === 'ready' &&
      JSON.stringify(window.rperfViewer.state[k]) === JSON.stringify(v), [key, value], { timeout: WAIT_MS });
    const openTab = async (tab) => { await page.click(`#tabs button[data-tab=${tab}]`); await ready(); };
    const frames = (sel) => page.$$eval(`${sel} g.frame`, (gs) => gs.map((g) => ({ name: g.getAttribute('name'), cls: g.getAttribute('class') })));
    if (plan === 'search') { // served: a search marks its matches in every view, the rest dimmed
      await page.fill('#search', params.search);
      await readyWhen('search', params.search);
      out.matchedNs = await page.$eval('#search-info', (e) => Number(e.dataset.matchedNs));
      const chart = async (sel) => ({ frames: await frames(sel), rendered: await page.$eval(sel, (e) => Number(e.dataset.rendered)) });
      out.flame = await chart('#flame');
      await openTab('icicle');
      out.icicle = await chart('#icicle');
      await openTab('stack');
      out.stack = await chart('#stack');
      const treeRows = (sel) => page.$$eval(`${sel} .row`, (rs) => rs.map((r) => ({ name: r.querySelector('.name').textContent, match: r.classList.contains('match') })));
      await openTab('tree');
      out.tree = await treeRows('#tree');
      await openTab('inverted');
      out.inverted = await treeRows('#inverted');
      const tableRows = (sel) => page.$$eval(`${sel} tbody tr`, (rs) => rs.map((r) => ({ name: r.dataset.name, match: r.classList.contains('match') })));
      await openTab('top');
      out.top = await tableRows('#top-table');
      await openTab('methods');
      out.methods = await tableRows('#methods-table');
      // The sandwich of the method named by params.sandwich, picked in the Methods tab.
      await page.click(`#methods-table tbody tr[data-name="${params.sandwich}"]`);
      await openTab('sandwich');
      out.sandwich = { method: await page.evaluate(() => window.rperfViewer.state.sandwich[0]),
        callers: await chart('#sandwich-callers'), callees: await chart('#sandwich-callees') };
      console.log(JSON.stringify(out));
      return;
    }
    if (plan === 'keys') { // a file: each key's effect, and the ? overlay lists every key handled
      const flameView = () => page.$eval('#flame', (e) => e.dataset.view.split(',').map(Number));
      const press = async (...keys) => { for (const k of keys) await page.keyboard.press(k); return flameView(); };
      // The chart keys paint at once.
      out.zoom = { plusTwice: await press('+', '+'), minus: await press('-'), right: await press('ArrowRight'), left: await press('ArrowLeft'),
        rightToEnd: await press('ArrowRight', 'ArrowRight', 'ArrowRight'), leftToStart: await press(...Array(6).fill('ArrowLeft')),
        minusAll: await press('-'), z: await press('=', 'z'), equals: await press('=') };
      await page.keyboard.press('z');
      const idle = async () => ({ totals: await totals(), pressed: await page.$eval('#hide-idle', (b) => b.getAttribute('aria-pressed')) });
      await page.keyboard.press('h');
      await readyWhen('hideIdle', true);
      out.h = [await idle()];
      await page.keyboard.press('h');
      await readyWhen('hideIdle', false);
      out.h.push(await idle());
      // c: a search, a label, a thread and a tagfocus, then cleared at once.
      const filters = () => page.evaluate(() => {
        const s = window.rperfViewer.state;
        const $ = (id) => document.getElementById(id);
        return { search: [s.search, $('search').value], label: [s.labelFilter, $('filter-label').selectedOptions[0].textContent], thread: [s.threadFilter, $('filter-thread').selectedOptions[0].textContent],
          tagFocus: [s.tagFocus, $('tag-focus').value], shown: Number($('totals').dataset.shownNs), info: $('search-info').textContent };
      });
      await page.keyboard.press('/');
      await page.keyboard.type(params.search);
      await readyWhen('search', params.search);
      await page.keyboard.press('Escape');
      const option = await page.$$eval('#filter-label option', (os, text) => os.find((o) => o.textContent.startsWith(text)).value, params.label);
      await page.selectOption('#filter-label', option);
      await page.waitForFunction(() => document.body.dataset.state === 'ready' && window.rperfViewer.state.labelFilter !== null, null, { timeout: WAIT_MS });
      await page.selectOption('#filter-thread', String(params.thread));
      await readyWhen('threadFilter', params.thread);
      await page.fill('#tag-focus', params.tagFocus);
      await readyWhen('tagFocus', params.tagFocus);
      await page.keyboard.press('Escape'); // out of the box: c is a key again
      out.beforeC = await filters();
      await page.keyboard.press('c');
      await ready();
      out.afterC = await filters();
      // The digits: the tab each opens.
      out.digits = [];
      for (const d of ['1', '2', '3', '4', '5', '6', '7', '8', '9', '0']) {
        await page.keyboard.press(d);
        await ready();
        out.digits.push([d, await page.$eval('#tabs button.active', (b) => [b.dataset.tab, b.textContent])]);
      }
      out.tabs = await page.$$eval('#tabs button', (bs) => bs.map((b) => b.textContent));
      await page.keyboard.press('1');
      await ready();
      // The overlay: each key's kbd and its row, and the keys the handler has.
      await page.keyboard.press('?');
      out.help = await page.evaluate(() => ({
        hidden: document.getElementById('help').hidden,
        keys: [...document.querySelectorAll('#help kbd[data-key]')].map((k) => k.dataset.key),
        rows: [...document.querySelectorAll('#help-keys tr')].map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent]),
        handled: window.rperfViewer.keys(),
      }));
      await shot('keys');
      await page.keyboard.press('?');
      out.helpClosed = await page.$eval('#help', (e) => e.hidden);
      console.log(JSON.stringify(out));
      return;
    }
    if (plan === 'categories') { // a file with VM-state frames and labels: their categories and colours
      out.cells = await page.$eval('#flame', (e) => [...e.querySelectorAll('g.frame')].map((g) => {
        const c = e._chart.model.cells[Number(g.dataset.i)];
        return [c.name, c.parent >= 0 ? e._chart.model.cells[c.parent].name : null, g.dataset.cat, g.querySelector('rect').getAttribute('fill')];
      }));
      out.legend = await page.$$eval('#flame .legend.categories span', (ss) => ss.map((s) => [s.dataset.category, s.querySelector('i').getAttribute('style'), s.textContent]));
      await shot('categories');
      console.log(JSON.stringify(out));
      return;
    }
    if (plan === 'filtered') { // served, under a label filter: Bottom-up, icicle and Top
      const option = await page.$$eval('#filter-label option', (os, text) => os.find((o) => o.textContent.startsWith(text)).value, params.label);
      await page.selectOption('#filter-label', option);
      await page.waitForFunction(() => document.body.dataset.state === 'ready' && window.rperfViewer.state.labelFilter !== null, null, { timeout: WAIT_MS });
      out.label = await page.evaluate(() => window.rperfViewer.state.labelFilter);
      out.totals = await totals();
      await openTab('inverted');
      out.inverted = { total: await page.$eval('#inverted', (e) => Number(e.dataset.totalNs)),
        roots: await page.$$eval('#inverted > ul > li', (lis) => lis.map((li) => [li.querySelector('.name').textContent, Number(li.dataset.totalNs)])) };
      await openTab('icicle');
      out.icicle = await page.$eval('#icicle', (e) => {
        const cells = e._chart.model.cells;
        return { root: [cells[0].name, cells[0].value], children: cells.filter((c) => c.parent === 0).map((c) => [c.name, c.value]) };
      });
      await openTab('top');
      out.top = await page.$$eval('#top-table tbody tr', (rs) => rs.map((r) => [r.dataset.name, Number(r.dataset.selfNs), Number(r.dataset.totalNs)]));
      console.log(JSON.stringify(out));
      return;
    }
    if (plan === 'address') { // a view built by hand; a new page at its address shows the same
      // Ready, and the state changed as asked (a key or a typed box redraws a moment later).
      const readyWith = (key, value) => page.waitForFunction(([k, v]) => {
        const s = window.rperfViewer.state;
        const now = { snap: s.current && s.current.id, tagFocus: s.tagFocus, search: s.search, ranged: !!s.range }[k];
        return document.body.dataset.state === 'ready' && now === v;
      }, [key, value], { timeout: WAIT_MS });
      await page.keyboard.press('k'); // the snapshot before the newest, which the page opened
      await readyWith('snap', 1);
      // A transform first: it reopens the snapshot, which clears the time range.
      await page.click('#flame g.frame[name="Set#add"]', { modifiers: ['Shift'] });
      await ready();
      await page.click('.pin-transforms button[data-transform=drop]');
      await ready();
      await page.click('#pin-close');
      await ready();
      const option = await page.$$eval('#filter-label option', (os) => os.find((o) => o.textContent.startsWith('%GVL not set')).value);
      await page.selectOption('#filter-label', option);
      await ready();
      await page.fill('#tag-focus', '/a');
      await readyWith('tagFocus', '/a');
      await page.fill('#search', 'price');
      await readyWith('search', 'price');
      // A time range: a drag across the middle of the Timeline.
      await page.click('#tabs button[data-tab=timeline]');
      await ready();
      const box = await page.$eval('#timeline svg', (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width }; });
      const plot = box.w - 98; // the rows' labels on the left, a margin on the right (drawTimeline)
      await page.mouse.move(box.x + 90 + plot * 0.3, box.y + 12);
      await page.mouse.down();
      await page.mouse.move(box.x + 90 + plot * 0.7, box.y + 12, { steps: 4 });
      await page.mouse.up();
      await readyWith('ranged', true);
      // The icicle, zoomed to a frame by a click, then in by the wheel (a range between cells).
      await page.click('#tabs button[data-tab=icicle]');
      await ready();
      await page.click('#icicle g.frame[name="Shop#price"]');
      out.clicked = await view('#icicle');
      const vp = await page.$eval('#icicle .viewport', (e) => { const r = e.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width }; });
      await page.mouse.move(vp.x + vp.w * 0.4, vp.y + 30);
      await page.mouse.wheel(0, -300);
      await page.waitForFunction((v) => document.getElementById('icicle').dataset.view !== v, out.clicked.view.join(','), { timeout: WAIT_MS });
      await addressed(page);
      // What the page shows and holds, read the same way from both pages.
      const read = (pg) => pg.evaluate(() => {
        const s = window.rperfViewer.state;
        const $ = (id) => document.getElementById(id);
        const label = $('filter-label');
        const icicle = $('icicle');
        const chart = icicle._chart;
        return {
          hash: location.hash,
          snap: s.current.id,
          title: $('snapshot-title').textContent.split(' — ')[0],
          tab: document.querySelector('#tabs button.active').dataset.tab,
          transforms: s.transforms,
          chips: [...document.querySelectorAll('#transforms .transform')].map((b) => b.textContent),
          label: s.labelFilter,
          labelShown: label.selectedOptions[0].textContent,
          tagFocus: [s.tagFocus, $('tag-focus').value],
          search: [s.search, $('search').value],
          range: s.range,
          rangeShown: $('range-info').textContent,
          totals: { shown: Number($('totals').dataset.shownNs), total: Number($('totals').dataset.totalNs), text: $('totals').textContent },
          matched: { ns: Number($('search-info').dataset.matchedNs), text: $('search-info').textContent },
          zoom: { x0: chart.x0, x1: chart.x1, focus: chart.focus, view: icicle.dataset.view, name: icicle.dataset.zoom,
            crumbs: [...icicle.querySelectorAll('.crumbs .crumb')].map((b) => b.textContent), rendered: Number(icicle.dataset.rendered) },
          cells: chart.model.cells.map((c) => [c.name, c.x, c.value]),
        };
      });
      out.before = await read(page);
      await shot('address');
      out.href = await page.evaluate(() => location.href);
      const again = await reopen(out.href);
      out.reopened = await read(again);
      console.log(JSON.stringify(out));
      return;
    }
    if (plan === 'transforms') { // focus / merge / drop a pinned function, collapse recursion: every view
      const flame = () => page.$eval('#flame', (e) => e._chart.model.cells.map((c) => [c.name, c.value, c.parent >= 0 ? e._chart.model.cells[c.parent].name : null]));
      const view = async () => ({ totals: await totals(), flame: await flame(), chips: await page.$$eval('#transforms .transform', (bs) => bs.map((b) => b.textContent)) });
      const pinAnd = async (name, op) => {
        await page.click(`#flame g.frame[name="${name}"]`, { modifiers: ['Shift'] });
        await ready();
        await page.click(`.pin-transforms button[data-transform=${op}]`);
        await page.waitForTimeout(200);
        await ready();
      };
      const undo = async () => { // and unpin (a Shift+click on the pinned frame would unpin it)
        await page.click('#transforms .transform'); await page.waitForTimeout(200); await ready();
        await page.click('#pin-close'); await ready();
      };
      const tree = async () => { await page.click('#tabs button[data-tab=tree]'); await ready(); const ns = await page.$eval('#tree', (e) => Number(e.dataset.totalNs)); await page.click('#tabs button[data-tab=flame]'); await ready(); return ns; };
      out.disabled = await page.$eval('#collapse-recursion', (b) => b.disabled);
      await pinAnd('Shop#checkout', 'focus');
      out.focus = { ...(await view()), tree: await tree(), hash: await page.evaluate(() => location.hash),
        pinShare: await page.$eval('#pin-share', (e) => e.textContent) };
      await shot('focus');
      // The Timeline of the transformed rows, under a label filter too (the page model bins them).
      await page.click('#tabs button[data-tab=timeline]');
      await ready();
      const timeline = () => page.$eval('#timeline', (e) => ({ source: e.dataset.source, stateNs: JSON.parse(e.dataset.stateNs || 'null') }));
      out.focus.timeline = await timeline();
      await page.evaluate(() => { window.rperfViewer.state.labelFilter = { key: '%GVL', values: [NOT_SET] }; return window.rperfViewer.render(); });
      await ready();
      out.focus.labelTimeline = await timeline();
      await page.evaluate(() => { window.rperfViewer.state.labelFilter = null; return window.rperfViewer.render(); });
      await page.click('#tabs button[data-tab=flame]');
      await ready();
      await undo();
      out.undone = (await totals()).shown;
      await pinAnd('Shop#checkout', 'merge');
      out.merge = { ...(await view()), tree: await tree() };
      await undo();
      await pinAnd('Deep#recurse', 'drop');
      out.drop = { ...(await view()), tree: await tree() };
      await undo();
      // The stack chart of thread 3, the one with Deep#recurse (thread 1, the default, has none).
      const stackCells = () => page.$eval('#stack', (e) => ({ thread: Number(e.dataset.thread), cells: Number(e.dataset.cells),
        names: Array.from({ length: e._chart.model.count }, (_, i) => e._chart.model.cell(i).name) }));
      await page.click('#tabs button[data-tab=stack]');
      await ready();
      await page.selectOption('#stack-thread', '3');
      await ready();
      out.stackBefore = await stackCells();
      await page.click('#tabs button[data-tab=flame]');
      await ready();
      await page.click('#collapse-recursion'); // reopens the snapshot: 'loading' at once
      await ready();
      out.recursion = { ...(await view()), pressed: await page.$eval('#collapse-recursion', (b) => b.getAttribute('aria-pressed')) };
      await page.click('#tabs button[data-tab=stack]');
      await ready();
      out.recursion.stack = await stackCells();
      console.log(JSON.stringify(out));
      return;
    }
    if (plan === 'idle') { // "hide idle threads" and an endpoint set (a served page, or a file)
      const attr = (sel, name) => page.$eval(sel, (e, n) => e.dataset[n], name);
      const button = () => page.$eval('#hide-idle', (b) => ({ text: b.textContent, pressed: b.getAttribute('aria-pressed'), idleNs: Number(b.dataset.idleNs) }));
      const flameNames = () => page.$$eval('#flame g.frame', (gs) => [...new Set(gs.map((g) => g.getAttribute('name')))].sort());
      const tab = async (name) => { await page.click(`#tabs button[data-tab=${name}]`); await ready(); };
      // A tree's total, or why this page cannot show it.
      const treeOf = async (name, box) => {
        await tab(name);
        return page.$eval(box, (e) => (e.dataset.totalNs ? Number(e.dataset.totalNs) : (e.querySelector('.unfiltered') || e).textContent.slice(0, 40)));
      };
      const timeline = async () => {
        await tab('timeline');
        return page.$eval('#timeline', (e) => ({ source: e.dataset.source, threads: e.dataset.threads, stateNs: JSON.parse(e.dataset.stateNs) }));
      };
      const stack = async (thread) => {
        await tab('stack');
        if (thread) { await page.selectOption('#stack-thread', String(thread)); await ready(); }
        return page.$eval('#stack', (e) => ({ thread: Number(e.dataset.thread), total: Number(e.dataset.totalNs),
          options: [...document.querySelectorAll('#stack-thread option')].map((o) => Number(o.value)) }));
      };
      const view = async () => ({ totals: await totals(), button: await button() });
      out.before = { ...(await view()), flame: await flameNames() };
      // Hide idle: the idle samples go, from every view.
      await page.click('#hide-idle');
      await ready();
      out.hidden = { ...(await view()), flame: await flameNames(), hash: await page.evaluate(() => location.hash),
        threadOptions: await page.$$eval('#filter-thread option', (os) => os.filter((o) => o.value && !o.hidden).map((o) => Number(o.value))) };
      await shot('hide-idle');
      await tab('threads');
      out.hidden.threads = await page.$$eval('#threads-table tbody tr', (rows) => rows.map((r) => ({ thread: Number(r.dataset.thread), idle: r.dataset.idleShare,
        idleNs: Number(r.dataset.idleNs), hidden: r.classList.contains('hidden-idle') })));
      await shot('threads-idle');
      out.hidden.timeline = await timeline();
      out.hidden.stack = await stack(null);
      out.hidden.stack5 = await stack(5);
      out.hidden.tree = await treeOf('tree', '#tree');
      out.hidden.inverted = await treeOf('inverted', '#inverted');
      await tab('methods');
      out.hidden.methods = await attr('#methods-table', 'totalNs');
      await tab('flame');
      // An endpoint set: GET /a and GET /c ticked in the value menu (idle still hidden).
      const tick = async (sel) => { await page.click('#label-set-menu summary'); await page.setChecked(sel, true); await ready(); await page.click('#label-set-menu summary'); };
      await tick('#label-set-options input[data-key=endpoint][data-value="GET /a"]');
      out.one = { totals: await totals(), select: await page.$eval('#filter-label', (s) => s.options[s.selectedIndex].textContent) };
      await tick('#label-set-options input[data-key=endpoint][data-value="GET /c"]');
      out.set = { totals: await totals(), select: await page.$eval('#filter-label', (s) => s.options[s.selectedIndex].textContent),
        summary: await page.$eval('#label-set-summary', (e) => e.textContent), tree: await treeOf('tree', '#tree') };
      await tab('flame');
      await tick('#label-set-options input[data-key=endpoint][data-none="1"]');
      out.withUnset = { totals: await totals(), tree: await treeOf('tree', '#tree'), timeline: await timeline(), hash: await page.evaluate(() => location.hash) };
      await tab('flame');
      await shot('endpoint-set');
      // The address reopens it: the set, idle hidden.
      const again = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      again.on('pageerror', (e) => out.errors.push(String(e)));
      await again.goto(url.split('#')[0] + out.withUnset.hash);
      await again.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: WAIT_MS });
      out.reopened = await again.evaluate(() => ({ shownNs: Number(document.getElementById('totals').dataset.shownNs),
        pressed: document.getElementById('hide-idle').getAttribute('aria-pressed'),
        select: ((s) => s.options[s.selectedIndex].textContent)(document.getElementById('filter-label')),
        ticked: [...document.querySelectorAll('#label-set-options input:checked')].map((i) => (i.dataset.none === '1' ? null : i.dataset.value)) }));
      // h shows the idle samples again.
      await page.keyboard.press('h');
      await ready();
      out.shown = await view();
      console.log(JSON.stringify(out));
      return;
    }
    if (plan === 'source') { // pin a frame, its file's lines with their time; a file page has none
      await page.click('#flame g.frame[name="Shop#price"]', { modifiers: ['Shift'] });
      await ready();
      await page.click('#pin-source');
      await ready();
      out.tab = await page.$eval('#tabs button.active', (b) => b.dataset.tab);
      out.note = await page.$eval('#source-note', (e) => e.textContent);
      out.path = await page.$eval('#source-table', (t) => t.dataset.path || null);
      out.lines = await page.$$eval('#source-table tbody tr', (rows) => rows.map((r) => ({ line: Number(r.dataset.line), self: Number(r.dataset.selfNs),
        total: Number(r.dataset.totalNs), cls: r.className, code: r.cells[3].textContent })));
      out.hash = await page.evaluate(() => location.hash);
      await shot('source');
      console.log(JSON.stringify(out));
      return;
    }
    if (plan === 'tags') { // rperf 0.11.1's tag filters and pin, on a served page of two snapshots
      const shown = async () => (await totals()).shown;
      const cells = (sel, prefix) => page.$eval(sel, (e, pre) => e._chart.model.cells.filter((c) => c.name.startsWith(pre))
        .map((c) => [c.name, c.value, c.parent >= 0 ? e._chart.model.cells[c.parent].name : null]), prefix);
      const typeFocus = async (text) => { await page.fill('#tag-focus', text); await settle(); await ready(); };
      const check = async (sel, on) => { await page.click('#tag-menu summary'); await page.setChecked(sel, on); await ready(); await page.click('#tag-menu summary'); };
      out.opened = await page.evaluate(() => window.rperfViewer.state.current.id);
      out.all = await shown();
      await typeFocus('GET /a');
      out.focus = { shown: await shown() };
      await page.click('#tabs button[data-tab=tree]');
      await ready();
      out.focus.tree = await page.$eval('#tree', (e) => Number(e.dataset.totalNs));
      await page.click('#tabs button[data-tab=flame]');
      await ready();
      await typeFocus('(');
      out.invalid = { shown: await shown(), cls: await page.$eval('#tag-focus', (e) => e.className) };
      await typeFocus('');
      await check('#tag-options input[data-kind=ignore][data-key=endpoint][data-none="1"]', true);
      out.ignore = { shown: await shown(), summary: await page.$eval('#tag-summary', (e) => e.textContent), hash: await page.evaluate(() => location.hash) };
      await page.click('#tabs button[data-tab=methods]');
      await ready();
      out.ignore.methods = await page.$eval('#methods-table', (t) => Number(t.dataset.totalNs));
      await page.click('#tabs button[data-tab=flame]');
      await ready();
      await check('#tag-options input[data-kind=ignore][data-key=endpoint][data-none="1"]', false);
      await check('#tag-options input[data-kind=ignore][data-key="%GVL"][data-value=blocked]', true);
      out.ignoreBlocked = await shown();
      await page.click('#tabs button[data-tab=stack]');
      await ready();
      out.stackIgnoreBlocked = await page.$eval('#stack', (e) => ({ thread: Number(e.dataset.thread), total: Number(e.dataset.totalNs) }));
      await page.click('#tabs button[data-tab=flame]');
      await ready();
      await check('#tag-options input[data-kind=ignore][data-key="%GVL"][data-value=blocked]', false);
      await check('#tag-options input[data-kind=root][data-key=endpoint]', true);
      out.root = { shown: await shown(), cells: await cells('#flame', '[endpoint') };
      await shot('tagroot');
      await check('#tag-options input[data-kind=root][data-key=endpoint]', false);
      await check('#tag-options input[data-kind=leaf][data-key=endpoint]', true);
      out.leaf = { cells: await cells('#flame', '[endpoint') };
      await check('#tag-options input[data-kind=leaf][data-key=endpoint]', false);
      // Shift+click pins Shop#price: outlined, and its share of each snapshot.
      await page.click('#flame g.frame[name="Shop#price"]', { modifiers: ['Shift'] });
      await ready();
      await page.waitForFunction(() => document.getElementById('pin-panel').dataset.loaded === '1', null, { timeout: WAIT_MS });
      out.pin = {
        tab: await page.$eval('#tabs button.active', (b) => b.dataset.tab),
        name: await page.$eval('#pin-name', (e) => e.textContent),
        outlined: await page.$$eval('#flame g.frame.pinned', (gs) => gs.map((g) => g.getAttribute('name'))),
        shares: await page.$$eval('#pin-trend circle', (cs) => cs.map((c) => [Number(c.dataset.id), Number(c.dataset.share)])),
        text: await page.$eval('#pin-share', (e) => e.textContent),
        hash: await page.evaluate(() => location.hash),
      };
      await shot('pin');
      await page.keyboard.press('k');
      await page.waitForTimeout(200);
      await ready();
      out.pin.afterK = { id: await page.evaluate(() => window.rperfViewer.state.current.id), text: await page.$eval('#pin-share', (e) => e.textContent),
        outlined: await page.$$eval('#flame g.frame.pinned', (gs) => gs.length) };
      await page.click('#pin-sandwich');
      await ready();
      out.pin.sandwich = { tab: await page.$eval('#tabs button.active', (b) => b.dataset.tab), ns: await page.$eval('#sandwich-note', (e) => Number(e.dataset.totalNs || 0)) };
      await page.click('#pin-close');
      await ready();
      out.pin.closed = await page.$eval('#pin-panel', (e) => e.hidden);
      console.log(JSON.stringify(out));
      return;
    }
    if (plan === 'sandwich') {
      const sandwich = async () => ({
        note: await page.$eval('#sandwich-note', (e) => ({ text: e.textContent, ns: Number(e.dataset.totalNs || 0) })),
        callers: await page.$$eval('#sandwich-callers g.frame', (gs) => gs.map((g) => g.getAttribute('name'))),
        callees: await page.$$eval('#sandwich-callees g.frame', (gs) => gs.map((g) => g.getAttribute('name'))),
        callersFit: await page.evaluate(() => { const v = document.querySelector('#sandwich-callers .viewport'); return v ? v.getBoundingClientRect().bottom <= window.innerHeight : null; }),
      });
      await page.keyboard.press('7');
      await ready();
      out.empty = await sandwich();
      await page.keyboard.press('6'); // Methods: pick Shop#checkout
      await ready();
      const i = await page.$$eval('#methods-table tbody tr', (rows) => rows.findIndex((r) => r.dataset.name === 'Shop#checkout'));
      await page.locator('#methods-table tbody tr').nth(i).click();
      await page.keyboard.press('7');
      await ready();
      out.checkout = await sandwich();
      await shot('sandwich');
      await page.keyboard.press('1');
      await ready();
      await page.click('#flame g.frame[name="Deep#recurse"]', { modifiers: ['Shift'] }); // pins it
      await ready();
      await page.click('#pin-sandwich');
      await ready();
      out.tab = await page.$eval('#tabs button.active', (b) => b.dataset.tab);
      out.deep = await sandwich();
      out.hash = await page.evaluate(() => location.hash);
      await page.click('#hide-idle'); // a filter: the sandwich of the remaining samples
      await ready();
      out.hidden = await sandwich();
      // j / k: the next and the previous snapshot, in the same view.
      const current = () => page.evaluate(() => window.rperfViewer.state.current.id);
      out.steps = [await current()];
      for (const key of ['k', 'k', 'j']) {
        await page.keyboard.press(key);
        await page.waitForTimeout(200);
        await ready();
        out.steps.push(await current());
      }
      out.stepTab = await page.$eval('#tabs button.active', (b) => b.dataset.tab);
      console.log(JSON.stringify(out));
      return;
    }

    // Fit: the chart's box ends inside the window, scrolls inside itself, and shows the root.
    out.fit = await page.evaluate(() => {
      const vp = document.querySelector('#flame .viewport');
      const r = vp.getBoundingClientRect();
      const root = document.querySelector('#flame g.frame[name="all"]').getBoundingClientRect();
      return { bottom: r.bottom, windowHeight: window.innerHeight, scrollHeight: vp.scrollHeight, clientHeight: vp.clientHeight,
        rootTop: root.top, rootBottom: root.bottom, boxTop: r.top, boxBottom: r.bottom };
    });
    // Hovering a frame near the root: the details line above the chart is on screen.
    await page.hover('#flame g.frame[name="Object#main"]');
    out.details = await page.$eval('#flame-details', (e) => { const r = e.getBoundingClientRect(); return { text: e.textContent, top: r.top, bottom: r.bottom }; });
    out.categories = await page.$$eval('#flame g.frame', (gs) => Object.fromEntries(gs.map((g) => [g.getAttribute('name'), g.dataset.cat])));
    out.fills = await page.$$eval('#flame g.frame', (gs) => Object.fromEntries(gs.map((g) => [g.getAttribute('name'), g.querySelector('rect').getAttribute('fill')])));
    out.legend = await page.$$eval('#flame .legend.categories span', (ss) => ss.map((s) => s.dataset.category));
    out.initial = await view('#flame');
    await shot('flame');
    out.transformsDisabled = await page.$eval('#collapse-recursion', (b) => ({ disabled: b.disabled, title: b.title }));

    // Click to zoom, the breadcrumb, a crumb, reset.
    await page.click('#flame g.frame[name="Shop#checkout"]');
    out.clicked = { ...(await view('#flame')), crumbs: await crumbs('#flame') };
    await page.locator('#flame .crumbs .crumb').nth(1).click();
    out.crumbClicked = await view('#flame');
    await page.click('#flame .reset-zoom');
    out.reset = await view('#flame');
    // Wheel zoom around the pointer, drag to pan.
    const box = await page.$eval('#flame .viewport', (e) => { const r = e.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; });
    await page.mouse.move(box.x + box.w * 0.25, box.y + box.h - 30);
    await page.mouse.wheel(0, -600);
    await page.waitForTimeout(100);
    out.wheeled = await view('#flame');
    await page.mouse.move(box.x + box.w * 0.5, box.y + box.h - 30);
    await page.mouse.down();
    await page.mouse.move(box.x + box.w * 0.3, box.y + box.h - 30, { steps: 5 });
    await page.mouse.up();
    await page.waitForTimeout(100);
    out.dragged = await view('#flame');
    await page.keyboard.press('z');
    out.keyReset = await view('#flame');
    await page.keyboard.press('+');
    out.keyZoom = await view('#flame');
    await page.keyboard.press('z');

    // Search: / focuses the box; the share of the matches; highlighted frames and rows.
    await page.keyboard.press('/');
    out.searchFocused = await page.evaluate(() => document.activeElement && document.activeElement.id);
    await page.keyboard.type('price');
    await settle();
    await ready();
    out.search = {
      info: await page.$eval('#search-info', (e) => ({ text: e.textContent, ns: Number(e.dataset.matchedNs) })),
      matched: await page.$$eval('#flame g.frame.match', (gs) => gs.map((g) => g.getAttribute('name'))),
      dimmed: await page.$$eval('#flame g.frame.dim', (gs) => gs.length),
      totals: await totals(),
    };
    await shot('search');
    await page.keyboard.press('Escape');
    out.afterEscape = await page.evaluate(() => ({ value: document.getElementById('search').value, focused: document.activeElement.id }));
    await page.keyboard.press('4'); // the Top tab
    await ready();
    out.topMatches = await page.$$eval('#top-table tbody tr.match td.fn', (tds) => tds.map((t) => t.textContent));
    // The bottom-up tree: the running functions first, each with its callers under it.
    await page.click('#tabs button[data-tab=inverted]');
    await ready();
    const invertedRows = () => page.$$eval('#inverted > ul > li', (lis) => lis.map((li) => [li.querySelector('.name').textContent, Number(li.dataset.totalNs)]));
    out.inverted = { roots: await invertedRows(), total: await page.$eval('#inverted', (e) => Number(e.dataset.totalNs)),
      matched: await page.$$eval('#inverted .row.match .name', (ns) => ns.map((n) => n.textContent)) };
    await page.locator('#inverted > ul > li', { hasText: 'Shop#price' }).locator('.toggle').first().click();
    out.inverted.priceCallers = await page.$$eval('#inverted > ul > li', (lis) => {
      const li = lis.find((l) => l.querySelector('.name').textContent === 'Shop#price');
      return [...li.querySelectorAll(':scope > ul > li')].map((c) => [c.querySelector('.name').textContent, Number(c.dataset.totalNs)]);
    });
    await shot('bottom-up');

    // Hide idle threads.
    await page.click('#hide-idle');
    await ready();
    out.hidden = { totals: await totals(), button: await page.$eval('#hide-idle', (b) => b.textContent),
      info: await page.$eval('#search-info', (e) => Number(e.dataset.matchedNs)) };
    await page.keyboard.press('9'); // Threads
    await ready();
    out.threads = await page.$$eval('#threads-table tbody tr', (rows) => rows.map((r) => ({ thread: r.dataset.thread, idle: r.dataset.idleShare, cls: r.className, text: r.cells[0].textContent })));

    // The stack chart of the busiest thread that is not idle.
    await page.keyboard.press('3');
    await ready();
    out.stack = {
      thread: await page.$eval('#stack', (e) => Number(e.dataset.thread)),
      total: await page.$eval('#stack', (e) => Number(e.dataset.totalNs)),
      options: await page.$$eval('#stack-thread option', (os) => os.map((o) => o.value)),
      cells: await page.$$eval('#stack g.frame', (gs) => gs.map((g) => g.getAttribute('name'))),
      matched: await page.$$eval('#stack g.frame.match', (gs) => gs.length),
      view: await view('#stack'),
      axis: await page.$$eval('#stack text.axis', (ts) => ts.map((t) => t.textContent)),
    };
    await page.hover('#stack g.frame[name="Object#main"]');
    out.stack.details = await page.$eval('#stack-details', (e) => e.textContent);
    await shot('stack');
    await page.click('#stack g.frame[name="Set#add"]');
    out.stack.zoomed = await view('#stack');

    // The keyboard overlay.
    await page.keyboard.press('?');
    out.help = await page.$eval('#help', (e) => ({ hidden: e.hidden, text: e.textContent }));
    await shot('help');
    await page.keyboard.press('Escape');
    out.helpAfterEscape = await page.$eval('#help', (e) => e.hidden);

    // The address reproduces the view in a new page.
    await addressed(page);
    out.hash = await page.evaluate(() => location.hash);
    const again = await reopen(url.split('#')[0] + out.hash);
    out.reopened = await again.evaluate(() => ({
      tab: document.querySelector('#tabs button.active').dataset.tab,
      search: document.getElementById('search').value,
      matchedNs: Number(document.getElementById('search-info').dataset.matchedNs),
      shownNs: Number(document.getElementById('totals').dataset.shownNs),
      stackThread: Number(document.getElementById('stack').dataset.thread),
      pressed: document.getElementById('hide-idle').getAttribute('aria-pressed'),
      stackView: document.getElementById('stack').dataset.view,
      stackZoom: document.getElementById('stack').dataset.zoom,
    }));
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); console.error('page errors: ' + JSON.stringify(out.errors)); process.exit(1); });
