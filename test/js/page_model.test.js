// The page model's JavaScript side under node (node --test; test/page_model_js_test.rb runs it):
// its one call, with clear errors; texts cross both ways; a snapshot's rows are selected, summed
// and made views as the page does, and moved by the transforms.
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const path = require('path');

const assets = path.join(__dirname, '../../lib/rperf/viewer/assets');
const { ROWS, instantiate, textBlob, readTexts } = require(path.join(assets, 'page_model.js'));
const bytes = fs.readFileSync(path.join(assets, 'page_model.wasm'));

test('the module\'s interface is one call, and a wrong one is a clear error', async () => {
  const model = await instantiate(bytes);
  const exported = Object.keys(model.w).filter((n) => n.startsWith('rperf_page_')).sort();
  assert.deepStrictEqual(exported, ['rperf_page_call', 'rperf_page_request']);
  assert.throws(() => model.call('no_such_operation'), /the page model has no operation no_such_operation/);
  assert.throws(() => model.call('select', { handle: 99, kind: 0 }), /select: no snapshot 99/);
  assert.throws(() => model.call('new', { parents: [-1] }), /new: no /);
  const { handle } = model.call('new', { parents: [], frames: [], labels: [], paths: [], lines: [], pairs: [], texts: [] });
  assert.throws(() => model.call('set_rows', { handle, kind: 7, node: [], thread_seq: [], label_set: [], weight: [] }), /no rows of kind 7/);
  assert.throws(() => model.call('label_values', { handle: 'one' }), /handle is not numbers/);
  assert.deepStrictEqual(model.call('select', { handle, kind: 0 }), { rows: new Uint32Array(0), weights: new Float64Array(0) });
  // A request cut short (an operation's name of 9 bytes, 2 sent) is an error, not a read past it.
  new Uint8Array(model.w.memory.buffer, model.w.rperf_page_request(6), 6).set([9, 0, 0, 0, 110, 101]);
  const at = model.w.rperf_page_call();
  const answer = new Uint8Array(model.w.memory.buffer, at + 4, new DataView(model.w.memory.buffer).getUint32(at, true));
  assert.match(new TextDecoder().decode(answer), /error.*the page model cannot read the request/s);
});

test('texts cross as the module reads them', () => {
  const texts = ['', 'a', 'Shop#price', 'é\u2028\uFFFD', 'x'.repeat(300)];
  assert.deepStrictEqual(readTexts(textBlob(texts), texts.length), texts);
  assert.deepStrictEqual(readTexts(textBlob(['a', 'b']), 5), ['a', 'b'], 'a short blob ends the list');
});

// main > a > b, main > c; rows: two threads, a GVL-blocked label set.
const SNAPSHOT = {
  parents: [-1, 0, 1, 0], nodeFrames: [0, 1, 2, 3],
  frames: [['main', 'm.rb'], ['a', 'a.rb'], ['b', 'b.rb'], ['c', 'c.rb']], frameLines: [1, 10, 20, 30],
  labelSets: [{}, { '%GVL': 'blocked' }, { endpoint: 'x' }],
};
const SAMPLES = [[2, 10, 1, 0], [1, 20, 1, 1], [3, 5, 2, 2], [2, 4, 2, 2]];

test('a snapshot\'s rows: selected, summed and made views by the model', async () => {
  const model = await instantiate(bytes);
  const handle = model.snapshot(SNAPSHOT);
  assert.strictEqual(model.rows(handle, ROWS.samples, SAMPLES, [1])[1], 1, 'idle marks per row');
  const all = { thread: null, hidden: null, sets: null, range: null, idle: false };
  const kept = model.select(handle, ROWS.samples, all);
  assert.deepStrictEqual(Array.from(kept.rows), [0, 1, 2, 3]);
  const w = model.treeWeights(handle, ROWS.samples, kept.rows, kept.weights, 4);
  assert.strictEqual(w.sum, 39);
  assert.deepStrictEqual(Array.from(w.total), [39, 34, 14, 5]);
  assert.strictEqual(model.select(handle, ROWS.samples, { ...all, idle: true }).rows.length, 3);
  const endpoint = model.matchLabelSets(handle, { key: 'endpoint', values: ['x'], unset: false, focused: null, ignore: [] });
  assert.deepStrictEqual(Array.from(endpoint), [2]);
  assert.deepStrictEqual(model.labelValues(handle), ['blocked', 'x']);

  const tree = model.view(handle, ROWS.samples, all, 'call_tree');
  assert.strictEqual(tree.total_ns, 39);
  assert.deepStrictEqual(tree.methods[tree.nodes[1][1]], ['main', 'm.rb', 1]);
  assert.ok(tree.methods.some((m) => m[0] === '[GVL blocked]'), 'the blocked row ends in its state');
  const thread2 = model.view(handle, ROWS.samples, { ...all, thread: 2 }, 'method_table');
  assert.strictEqual(thread2.total_ns, 9);
  assert.deepStrictEqual(thread2.entries.map(([m, self]) => [thread2.methods[m][0], self]).filter(([, self]) => self > 0).sort(),
    [['b', 4], ['c', 5]]);
  const sandwich = model.view(handle, ROWS.samples, all, 'sandwich', ['a', 'a.rb']);
  assert.strictEqual(sandwich.total_ns, 34);
  assert.deepStrictEqual(model.threadSums(handle, ROWS.samples, kept.rows, kept.weights).map((t) => [t[0], t[1]]), [[1, 30], [2, 9]]);
  assert.deepStrictEqual(model.diffTotals([{ name: 'a', file: 'a.rb', self: 5, total: 9 }], [{ name: 'a', file: 'a.rb', self: 2, total: 9 }], 1),
    [[0, 0, 2, 5, 9, 9]]);
});

test('the transforms make a snapshot in the model, the rows moved to their new nodes there', async () => {
  const model = await instantiate(bytes);
  const base = model.snapshot(SNAPSHOT);
  model.rows(base, ROWS.samples, SAMPLES, [1]);
  // Merge a, drop c: main and main>a are main, main>a>b is main>b, main>c goes.
  const t = model.transform(base, [['merge', 'a', 'a.rb'], ['drop', 'c', 'c.rb']]);
  assert.deepStrictEqual(t.parents, [-1, 0]);
  assert.deepStrictEqual(t.nodeFrames.map((f) => t.frames[f][0]), ['main', 'b']);
  assert.deepStrictEqual(t.frameLines.slice(0, 4), [1, 10, 20, 30]);
  assert.strictEqual(t.totalWeight, 34);
  const moved = model.rowColumns(t.handle, ROWS.samples);
  assert.deepStrictEqual(moved.columns.map((c) => Array.from(c)), [[1, 0, 1], [10, 20, 4], [1, 1, 2], [0, 1, 2]], 'the row at main>c goes, the others in order');
  assert.deepStrictEqual(Array.from(moved.idle), [0, 1, 0], 'idle marks kept');
  const all = { thread: null, hidden: null, sets: null, range: null, idle: false };
  const kept = model.select(t.handle, ROWS.samples, all);
  assert.deepStrictEqual(Array.from(model.treeWeights(t.handle, ROWS.samples, kept.rows, kept.weights).total), [34, 14]);
  assert.strictEqual(model.select(t.handle, ROWS.samples, { ...all, idle: true }).rows.length, 2);

  // A timeline the base gets later moves into the transformed snapshot, from its base only.
  assert.strictEqual(model.rowColumns(t.handle, ROWS.timeline).columns[0].length, 0);
  model.rows(base, ROWS.timeline, [[2, 3, 1, 0, 3], [3, 2, 2, 0, 5]], [0]);
  model.moveRows(t.handle, base, ROWS.timeline);
  const timeline = model.rowColumns(t.handle, ROWS.timeline);
  assert.deepStrictEqual(timeline.columns.map((c) => Array.from(c)), [[1], [3], [1], [0], [3]]);
  assert.deepStrictEqual(Array.from(timeline.idle), [1]);
  const other = model.snapshot({ parents: [-1], nodeFrames: [0], frames: [['main', 'm.rb']], labelSets: [{}] });
  assert.throws(() => model.moveRows(t.handle, other, ROWS.timeline), /move_rows: the snapshot is not a transform of snapshot/);
  assert.throws(() => model.transform(base, [['merge']]), /cannot apply the transforms/);
});

test('a transformed snapshot\'s rows keep their recorded lines: the Source tab\'s are the base rows\'', async () => {
  const model = await instantiate(bytes);
  // Line nodes as the tree's nodes: main:2, main:2>a:11, main:2>a:11>b:21, main:2>c:31.
  const base = model.snapshot({ ...SNAPSHOT, lineTree: { parent: [-1, 0, 1, 0], frame: [0, 1, 2, 3], line: [2, 11, 21, 31] } });
  model.rows(base, ROWS.samples, SAMPLES.map((r) => [...r, r[0]]), [], true);
  const t = model.transform(base, [['merge', 'a', 'a.rb'], ['drop', 'c', 'c.rb']]);
  const kept = model.select(t.handle, ROWS.samples, { thread: null, hidden: null, sets: null, range: null, idle: false });
  for (const file of ['m.rb', 'a.rb', 'b.rb']) {
    assert.deepStrictEqual(model.sourceLines(t.handle, ROWS.samples, kept.rows, kept.weights, file),
      model.sourceLines(base, ROWS.samples, [0, 1, 3], kept.weights, file), file);
  }
  assert.deepStrictEqual(model.sourceLines(t.handle, ROWS.samples, kept.rows, kept.weights, 'a.rb'), { lines: [[11, 20, 34]], keptNs: 34 });
});

test('rperf 0.11\'s names-only samples become the model\'s tree', async () => {
  const model = await instantiate(bytes);
  const t = model.namesTree([{ stack: ['main', 'a'], weight: 3, label_set_id: 1 }, { stack: ['main'], weight: 2 }]);
  assert.deepStrictEqual(t.frames.map((f) => f[0]), ['main', 'a']);
  assert.deepStrictEqual(t.parents, [-1, 0]);
  assert.deepStrictEqual(t.rows, [[1, 3, 0, 1], [0, 2, 0, 0]]);
});

test('the label menus\' weights and the Diff tab\'s tree come from the model', async () => {
  const model = await instantiate(bytes);
  const after = model.snapshot(SNAPSHOT);
  model.rows(after, ROWS.samples, SAMPLES, []);
  const all = { thread: null, hidden: null, sets: null, range: null, idle: false };
  // Each key's values heaviest first, then the weight of the rows without the key.
  assert.deepStrictEqual(model.view(after, ROWS.samples, {}, 'label_values'), [['%GVL', [['blocked', 20]], 19], ['endpoint', [['x', 9]], 30]]);
  // The base: main > b (not main > a > b), main > a > b, in another frame order.
  const base = model.snapshot({ parents: [-1, 0, 0, 2], nodeFrames: [0, 1, 2, 1], frames: [['main', 'm.rb'], ['b', 'b.rb'], ['a', 'a.rb']], labelSets: [{}] });
  model.rows(base, ROWS.samples, [[1, 8, 1, 0], [3, 6, 1, 0]], []);
  const d = model.treeDiff(after, ROWS.samples, all, base, ROWS.samples, all, false);
  assert.deepStrictEqual([d.sum, d.baseSum, d.baseScale], [39, 14, 1]);
  assert.deepStrictEqual(Array.from(d.selfChange), [0, 20, 8, 5]);
  const thread2 = model.treeDiff(after, ROWS.samples, { ...all, thread: 2 }, base, ROWS.samples, all, true);
  assert.strictEqual(thread2.baseScale, 9 / 14, 'normalized: the base scaled to the kept rows\' sum');
  assert.deepStrictEqual(Array.from(thread2.selfChange), [0, 0, 4 - 6 * (9 / 14), 5]);
});

test('the flame graph\'s tag groups come from the model, cut per group', async () => {
  const model = await instantiate(bytes);
  const handle = model.snapshot(SNAPSHOT);
  model.rows(handle, ROWS.samples, SAMPLES, []);
  const kept = model.select(handle, ROWS.samples, { thread: null, hidden: null, sets: null, range: null, idle: false });
  const t = model.tagGroups(handle, ROWS.samples, kept.rows, kept.weights, ['endpoint'], ['%GVL']);
  assert.deepStrictEqual(t.rootFrames, [{ parent: -1, name: '[endpoint: x]', value: 9 }]);
  const plain = t.groups.map((g) => ({ ...g, nodes: Array.from(g.nodes), totals: Array.from(g.totals), states: Array.from(g.states) }));
  assert.deepStrictEqual(plain, [
    { sum: 30, under: -1, rootFramesEnd: 0, nodes: [0, 1, 2], totals: [30, 30, 10], states: [0, 0, 0, 0, 0, 20, 0, 0, 10, 0, 0, 0],
      leaves: [{ node: 1, parent: -1, name: '[%GVL: blocked]', value: 20 }] },
    { sum: 9, under: 0, rootFramesEnd: 1, nodes: [0, 1, 2, 3], totals: [9, 4, 4, 5], states: [0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0],
      leaves: [] },
  ]);
  const none = model.tagGroups(handle, ROWS.samples, kept.rows, kept.weights, [], []);
  assert.deepStrictEqual([none.groups.length, none.groups[0].sum, none.rootFrames], [1, 39, []]);
});
