// The viewer's pure functions (no DOM, no page state), tested under node (test/js/viewer_pure.test.js).
'use strict';

const NOT_SET = '\u0000not set';

// Profile-sized arrays are never spread into a call (f(...rows), Math.max(...rows),
// push(...rows)): every argument goes on the stack, and Chromium throws "Maximum call stack
// size exceeded" beyond ~120,000 of them. maxOf folds instead.
const maxOf = (values, start) => values.reduce((max, v) => (v > max ? v : max), start);

function fmtTime(ns) {
  if (ns === null || ns === undefined || Number.isNaN(ns)) return '–';
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(2) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(1) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(1) + ' µs';
  return Math.round(ns) + ' ns';
}
const fmtSigned = (ns) => (ns > 0 ? '+' : '') + fmtTime(ns);
const pct = (part, total) => (total > 0 ? (100 * part / total).toFixed(1) + '%' : '–');
const shortPath = (p) => (p && p.length > 60 ? '…' + p.slice(-59) : p || '');

const fmtCount = (n) => Math.round(n).toLocaleString('en-US');

const CATEGORY_STYLE = {
  app: { hue: 24, sat: 85, text: 'application' },
  gem: { hue: 268, sat: 45, text: 'gems' },
  stdlib: { hue: 135, sat: 40, text: 'stdlib' },
  native: { hue: 205, sat: 30, text: 'native (C)' },
  gc: { hue: 0, sat: 70, text: 'GC' },
  'gvl-blocked': { hue: 30, sat: 5, text: 'GVL blocked (off the GVL)' },
  'gvl-wait': { hue: 48, sat: 90, text: 'GVL wait' },
  other: { hue: 0, sat: 0, text: 'rperf ([pruned], no Ruby frames)' },
};

const STATE_LEAF = { blocked: ['[GVL blocked]', 'gvl-blocked'], wait: ['[GVL wait]', 'gvl-wait'], gc: ['[GC]', 'gc'] };

function hashOf(text) {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return h;
}
function categoryColor(cat, name) {
  const style = CATEGORY_STYLE[cat] || CATEGORY_STYLE.app;
  const light = 62 + (Math.abs(hashOf(name || '')) % 14); // neighbours stay apart
  return `hsl(${style.hue},${style.sat}%,${light}%)`;
}
// A VM state's frame ("[GVL blocked]", "[GVL wait]": the payload's category gvl) is drawn as
// the VM-state leaf of the same name is: the legend's GVL blocked or GVL wait.
const drawnCategory = (cat, name) => (cat === 'gvl' ? (name === STATE_LEAF.blocked[0] ? STATE_LEAF.blocked[1] : STATE_LEAF.wait[1]) : cat);

// A d3-style hierarchy {name, file, value, children, cat} laid out as cells, children sorted
// by name (the same function lands at the same place in every snapshot), in the charts' shape
// (drawChart): their x, w and d as columns, cell(i) the whole cell.
function layoutTree(root) {
  const cells = [];
  let depth = 0;
  const visit = (node, x, d, parent) => {
    const i = cells.length;
    cells.push({ x, w: node.value, d, name: node.name, file: node.file || '', cat: node.cat || 'other', value: node.value, delta: node.delta, parent });
    if (d > depth) depth = d;
    const kids = (node.children || []).slice().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let at = x;
    for (const k of kids) { visit(k, at, d + 1, i); at += k.value; }
  };
  visit(root, 0, 0, -1);
  const column = (key) => cells.map((c) => c[key]);
  return { cells, count: cells.length, x: column('x'), w: column('w'), d: column('d'), cell: (i) => cells[i], start: 0, span: root.value, depth };
}

function fitText(text, px) {
  const chars = Math.floor((px - 6) / 6.6);
  return chars < 3 ? '' : text.length <= chars ? text : text.slice(0, chars - 1) + '…';
}

// Red for more time than before, green for less, grey for no change.
function diffColor(delta, value) {
  if (!delta) return 'rgb(215,215,215)';
  const v = Math.min(1, Math.abs(delta) / Math.max(Math.abs(value), Math.abs(delta), 1));
  const soft = Math.round(215 - 175 * v);
  return delta > 0 ? `rgb(235,${soft},${soft})` : `rgb(${soft},215,${soft})`;
}

// A file's entry (as rperf 0.11's) has its duration and sample count in its summary only.
const summaryOf = (s) => (s.summary && typeof s.summary === 'object' ? s.summary : {});
const numberOr = (v, scale) => (typeof v === 'number' ? v * scale : null);
const durationNs = (s) => s.duration_ns ?? numberOr(summaryOf(s).total_ms, 1e6);
const sampleCount = (s) => s.sampling_count ?? numberOr(summaryOf(s).samples, 1);

// A list entry known to hold no sample: no weight (a snapshot's GVL/GC intervals weigh
// without a timer sample), else (files know only their sample count) no sample.
const isEmpty = (s) => (s.total_weight_ns ?? null) === null ? sampleCount(s) === 0 : s.total_weight_ns === 0;

// #snap=2&tab=flame&q=...&label=K&value=V(&value=W...) (and/or &unset=1)&thread=N&from=T0&to=T1
// &idle=hide&method=name%00file%00line&stack=N&zoom=X0_X1[_I]: a copied link opens the same
// view. The zoom is the chart's (flame graph, icicle, stack chart...) range in its units, exact
// (the same filters lay the chart out the same), and I the cell of the frame it was zoomed to.
// viewHashOf(state, zoom): the address of the view `state` shows (zoom: the chart's, or null);
// parseViewHash(hash, tabs): the view an address names (tabs: the page's), or null.
const HASH_PAIRS = ['sandwich', 'pin', 'source']; // [name, file] ([file, name]), NUL-joined
const HASH_LISTS = [ // [parameter, state field, each item's check], JSON
  ['tagignore', 'tagIgnore', (e) => Array.isArray(e) && typeof e[0] === 'string' && (e[1] === null || typeof e[1] === 'string')],
  ['tagroot', 'tagRoot', (k) => typeof k === 'string'], ['tagleaf', 'tagLeaf', (k) => typeof k === 'string'],
  ['transforms', 'transforms', (t) => Array.isArray(t) && (t.length === 3 || (t.length === 1 && (t[0] === 'recursion' || t[0] === 'app'))) && t.every((x) => typeof x === 'string')],
];
function viewHashOf(state, zoom) {
  const q = new URLSearchParams();
  if (state.current) q.set('snap', String(state.current.id));
  q.set('tab', state.tab);
  if (state.search) q.set('q', state.search);
  if (state.labelFilter) {
    q.set('label', state.labelFilter.key);
    for (const v of state.labelFilter.values) if (v === NOT_SET) q.set('unset', '1'); else q.append('value', v);
  }
  if (state.threadFilter !== null) q.set('thread', String(state.threadFilter));
  if (state.range) { q.set('from', String(Math.floor(state.range[0]))); q.set('to', String(Math.ceil(state.range[1]))); }
  if (state.hideIdle) q.set('idle', 'hide');
  if (state.method) q.set('method', state.method);
  if (state.tab === 'stack' && state.stackThread !== null) q.set('stack', String(state.stackThread));
  if (state.tagFocus) q.set('tagfocus', state.tagFocus);
  for (const k of HASH_PAIRS) if (state[k]) q.set(k, state[k].join('\u0000'));
  for (const [k, field] of HASH_LISTS) if (state[field].length) q.set(k, JSON.stringify(state[field]));
  if (zoom) q.set('zoom', zoom.view.join('_') + (zoom.focus >= 0 ? '_' + zoom.focus : '')); // _: not escaped
  return '#' + q.toString();
}
function parseViewHash(hash, tabs) {
  const q = new URLSearchParams(hash.replace(/^#/, ''));
  if (![...q.keys()].length) return null;
  const num = (k) => (q.has(k) && /^-?\d+$/.test(q.get(k)) ? Number(q.get(k)) : null);
  const out = { snap: num('snap'), search: q.get('q') || '', hideIdle: q.get('idle') === 'hide', thread: num('thread'),
    method: q.get('method'), stack: num('stack'), tab: tabs.includes(q.get('tab')) ? q.get('tab') : null, label: null, range: null, tagFocus: q.get('tagfocus') || '' };
  if (q.has('label')) {
    const values = q.getAll('value');
    if (q.get('unset') === '1') values.push(NOT_SET);
    out.label = { key: q.get('label'), values: values.length ? values : [''] };
  }
  if (num('from') !== null && num('to') !== null) out.range = [num('from'), num('to')];
  for (const k of HASH_PAIRS) out[k] = q.has(k) ? q.get(k).split('\u0000').slice(0, 2) : null;
  for (const [k, field, ok] of HASH_LISTS) {
    try { const v = JSON.parse(q.get(k) || '[]'); out[field] = Array.isArray(v) ? v.filter(ok) : []; } catch (_) { out[field] = []; }
  }
  out.tagIgnore = out.tagIgnore.map((e) => [e[0], e[1]]);
  const zoom = (q.get('zoom') || '').split('_').map((x) => (x === '' ? NaN : Number(x)));
  out.zoom = (zoom.length === 2 || (zoom.length === 3 && Number.isInteger(zoom[2]) && zoom[2] >= 0)) && zoom.every(Number.isFinite) && zoom[0] < zoom[1]
    ? { view: [zoom[0], zoom[1]], focus: zoom.length === 3 ? zoom[2] : -1 } : null;
  return out;
}

// What the node tests read.
if (typeof module !== 'undefined') {
  module.exports = {
    NOT_SET, maxOf, fmtTime, fmtSigned, pct, shortPath, fmtCount, CATEGORY_STYLE, categoryColor,
    drawnCategory, layoutTree, fitText, diffColor, durationNs, sampleCount, isEmpty, viewHashOf,
    parseViewHash,
  };
}
