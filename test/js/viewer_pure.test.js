// The viewer's pure functions (lib/rperf/viewer/assets/viewer_pure.js) under node (node --test;
// test/page_model_js_test.rb runs it): formatting, colours, the flame chart's layout, the
// snapshot list's numbers and the view in the address, which a copied link must give back.
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const path = require('path');

const pure = require(path.join(__dirname, '../../lib/rperf/viewer/assets/viewer_pure.js'));

test('times, shares, counts and paths read as the page shows them', () => {
  assert.strictEqual(pure.fmtTime(null), '–');
  assert.strictEqual(pure.fmtTime(NaN), '–');
  assert.strictEqual(pure.fmtTime(999), '999 ns');
  assert.strictEqual(pure.fmtTime(1500), '1.5 µs');
  assert.strictEqual(pure.fmtTime(2.5e6), '2.5 ms');
  assert.strictEqual(pure.fmtTime(3.25e9), '3.25 s');
  assert.strictEqual(pure.fmtTime(-1.5e6), '-1.5 ms');
  assert.strictEqual(pure.fmtSigned(1000), '+1.0 µs');
  assert.strictEqual(pure.fmtSigned(-1000), '-1.0 µs');
  assert.strictEqual(pure.fmtSigned(0), '0 ns');
  assert.strictEqual(pure.pct(1, 4), '25.0%');
  assert.strictEqual(pure.pct(1, 0), '–');
  assert.strictEqual(pure.fmtCount(1234567.4), '1,234,567');
  const long = 'a/'.repeat(40) + 'file.rb';
  assert.strictEqual(pure.shortPath(long), '…' + long.slice(-59));
  assert.strictEqual(pure.shortPath(long).length, 60);
  assert.strictEqual(pure.shortPath('app.rb'), 'app.rb');
  assert.strictEqual(pure.shortPath(null), '');
});

test('maxOf takes a profile-sized array (never spread into a call)', () => {
  const values = Array.from({ length: 300000 }, (_, i) => i % 1000);
  values[123456] = 5000;
  assert.strictEqual(pure.maxOf(values, 0), 5000);
  assert.strictEqual(pure.maxOf([], 1), 1);
});

test('colours: a category keeps its hue, a name its shade; a diff is red, green or grey', () => {
  const hsl = (text) => text.match(/^hsl\((\d+),(\d+)%,(\d+)%\)$/).slice(1).map(Number);
  const [hue, , light] = hsl(pure.categoryColor('gem', 'Foo#bar'));
  assert.strictEqual(hue, pure.CATEGORY_STYLE.gem.hue);
  assert.ok(light >= 62 && light < 76, String(light));
  assert.strictEqual(pure.categoryColor('gem', 'Foo#bar'), pure.categoryColor('gem', 'Foo#bar'));
  assert.strictEqual(hsl(pure.categoryColor('unknown', 'x'))[0], pure.CATEGORY_STYLE.app.hue);
  assert.strictEqual(pure.drawnCategory('gvl', '[GVL blocked]'), 'gvl-blocked');
  assert.strictEqual(pure.drawnCategory('gvl', '[GVL wait]'), 'gvl-wait');
  assert.strictEqual(pure.drawnCategory('stdlib', 'Array#each'), 'stdlib');
  assert.strictEqual(pure.diffColor(0, 10), 'rgb(215,215,215)');
  assert.match(pure.diffColor(5, 10), /^rgb\(235,\d+,\d+\)$/);
  assert.match(pure.diffColor(-5, 10), /^rgb\(\d+,215,\d+\)$/);
  assert.strictEqual(pure.diffColor(10, 10), 'rgb(235,40,40)', 'all of it new: the strongest red');
});

test('layoutTree lays children out by name, each at its parent\'s left plus its elder siblings', () => {
  const root = { name: 'all', value: 10, children: [
    { name: 'b', file: 'b.rb', value: 6, cat: 'app', children: [{ name: 'c', value: 2 }] },
    { name: 'a', value: 4 },
  ] };
  const { cells, count, x, w, d, cell, start, span, depth } = pure.layoutTree(root);
  assert.deepStrictEqual([start, span, depth, count], [0, 10, 2, 4]);
  assert.deepStrictEqual(cells.map((c) => [c.name, c.x, c.w, c.d, c.parent]),
    [['all', 0, 10, 0, -1], ['a', 0, 4, 1, 0], ['b', 4, 6, 1, 0], ['c', 4, 2, 2, 2]]);
  assert.deepStrictEqual([x, w, d], [[0, 0, 4, 4], [10, 4, 6, 2], [0, 1, 1, 2]], 'the columns the renderer reads');
  assert.strictEqual(cell(3), cells[3]);
  assert.strictEqual(cells[2].file, 'b.rb');
  assert.strictEqual(cells[1].cat, 'other', 'no category: drawn as other');
});

test('fitText gives a label what fits its width', () => {
  assert.strictEqual(pure.fitText('Foo#bar', 20), '', 'under three characters: none');
  assert.strictEqual(pure.fitText('Foo#bar', 100), 'Foo#bar');
  const cut = pure.fitText('Some::Long::Name#method', 60);
  assert.ok(cut.endsWith('…') && cut.length === Math.floor((60 - 6) / 6.6), cut);
});

test('a list entry\'s duration and samples, from the entry or a file\'s summary', () => {
  assert.strictEqual(pure.durationNs({ duration_ns: 5 }), 5);
  assert.strictEqual(pure.durationNs({ summary: { total_ms: 2 } }), 2e6);
  assert.strictEqual(pure.durationNs({ summary: 'x' }), null);
  assert.strictEqual(pure.sampleCount({ sampling_count: 0, summary: { samples: 9 } }), 0);
  assert.strictEqual(pure.sampleCount({ summary: { samples: 9 } }), 9);
  assert.strictEqual(pure.isEmpty({ total_weight_ns: 0, sampling_count: 3 }), true);
  assert.strictEqual(pure.isEmpty({ total_weight_ns: 7 }), false);
  assert.strictEqual(pure.isEmpty({ summary: { samples: 0 } }), true);
  assert.strictEqual(pure.isEmpty({}), false, 'not known to be empty');
});

const TABS = ['flame', 'tree', 'methods', 'stack'];
const viewState = (over) => ({
  current: { id: 3 }, tab: 'methods', search: 'Foo', labelFilter: null, threadFilter: null, range: null,
  hideIdle: false, method: null, sandwich: null, stackThread: null, tagFocus: '', tagIgnore: [], tagRoot: [],
  tagLeaf: [], pin: null, source: null, transforms: [], ...over,
});

test('the address gives back the view it was written from', () => {
  const s = viewState({
    labelFilter: { key: 'endpoint', values: ['GET /a', pure.NOT_SET, 'GET /b&c=d'] },
    threadFilter: 2, range: [10.4, 20.2], hideIdle: true, method: 'Foo#bar\u0000app.rb\u000012',
    sandwich: ['Foo#bar', 'app.rb'], tagFocus: '^GET', tagIgnore: [['job', null], ['endpoint', 'GET /x']],
    tagRoot: ['endpoint'], tagLeaf: ['job'], pin: ['Foo#bar', 'app.rb'], source: ['app.rb', 'Foo#bar'],
    transforms: [['focus', 'Foo#bar', 'app.rb'], ['recursion'], ['app']],
  });
  const hash = pure.viewHashOf(s, { view: [1.5, 8], focus: 4 });
  assert.match(hash, /^#snap=3&tab=methods&/);
  const v = pure.parseViewHash(hash, TABS);
  assert.deepStrictEqual(v, {
    snap: 3, search: 'Foo', hideIdle: true, thread: 2, method: s.method, stack: null, sandwich: s.sandwich,
    tab: 'methods', label: { key: 'endpoint', values: ['GET /a', 'GET /b&c=d', pure.NOT_SET] }, range: [10, 21],
    tagFocus: '^GET', tagIgnore: s.tagIgnore, tagRoot: ['endpoint'], tagLeaf: ['job'], pin: s.pin, source: s.source,
    transforms: s.transforms, zoom: { view: [1.5, 8], focus: 4 },
  });
  // Written again from what it read, the address reads the same.
  const again = viewState({ range: v.range, labelFilter: v.label, threadFilter: v.thread, hideIdle: v.hideIdle, method: v.method,
    sandwich: v.sandwich, tagFocus: v.tagFocus, tagIgnore: v.tagIgnore, tagRoot: v.tagRoot, tagLeaf: v.tagLeaf, pin: v.pin,
    source: v.source, transforms: v.transforms });
  assert.deepStrictEqual(pure.parseViewHash(pure.viewHashOf(again, v.zoom), TABS), v);
  // The stack chart's thread is the stack tab's only; a zoom without a frame has no focus.
  const stack = pure.parseViewHash(pure.viewHashOf(viewState({ tab: 'stack', stackThread: 5 }), { view: [0, 3], focus: -1 }), TABS);
  assert.deepStrictEqual([stack.stack, stack.zoom], [5, { view: [0, 3], focus: -1 }]);
  assert.strictEqual(pure.parseViewHash(pure.viewHashOf(viewState({ stackThread: 5 }), null), TABS).stack, null);
});

test('an address the page did not write opens what it can of it', () => {
  assert.strictEqual(pure.parseViewHash('', TABS), null);
  assert.strictEqual(pure.parseViewHash('#', TABS), null);
  const v = pure.parseViewHash('#tab=nope&snap=x&thread=1.5&from=3&tagignore={&tagroot=[1,"k"]&transforms=[["focus","a"],["recursion"]]&zoom=5_2', TABS);
  assert.deepStrictEqual([v.tab, v.snap, v.thread, v.range, v.tagIgnore, v.tagRoot, v.transforms, v.zoom],
    [null, null, null, null, [], ['k'], [['recursion']], null]);
  assert.deepStrictEqual(pure.parseViewHash('#label=k', TABS).label, { key: 'k', values: [''] });
  assert.strictEqual(pure.parseViewHash('#zoom=1_2_-1', TABS).zoom, null);
  assert.strictEqual(pure.parseViewHash('#zoom=1__2', TABS).zoom, null);
});
