// The viewer's state (what every view reads), constants, DOM helpers (text only), the address.
'use strict';

// The four states, in the model's order (TimelineState, profile/vm_state.hh).
const STATES = [
  { key: 'running', color: '#4e79a7', text: 'running' },
  { key: 'blocked', color: '#bab0ac', text: 'GVL blocked' },
  { key: 'wait', color: '#f28e2b', text: 'GVL wait' },
  { key: 'gc', color: '#e15759', text: 'GC' },
];
const MAX_TABLE_ROWS = 300;
const FILTERED_CACHE_SIZE = 16; // filtered views (call trees, method tables, ...) kept per snapshot

const state = {
  list: [], current: null, baseId: null, threadFilter: null, tab: 'flame', topSort: 'self', methodSort: 'total', stackThread: null,
  payloads: new Map(), // id -> prepared snapshot (the few opened last)
  labelFilter: null, // {key, values: [value, ...]}: any of the values (an endpoint set); NOT_SET = samples without that key
  range: null, // [t0, t1] in ns since the start, from the timeline
  method: null, // the key (name, file, line) of the method whose callers and callees are shown
  tree: null, // the call tree drawn last
  allocField: 'allocated', // or 'retained'
  search: '', // frames whose name or file holds this (case-insensitive) are highlighted
  hideIdle: false, // "hide idle threads": the rows the model says are idle left out
  sandwich: null, // [name, file] of the Sandwich tab's method
  // rperf 0.11.1's tag filters: tagfocus keeps the samples with a label value matching the
  // regex, tagignore drops those with a key = value (value null: without the key); tagroot and
  // tagleaf (keys) add "[key: value]" frames at the root or the leaf of the flame graph and icicle.
  tagFocus: '', tagIgnore: [], tagRoot: [], tagLeaf: [],
  pin: null, // [name, file] of the pinned method (Shift+click): outlined, its share per snapshot
  source: null, // [file, name]: the Source tab's file, and the method it was opened for
  // The model's transforms of the stacks: [op, name, file] (focus, merge, drop), ['recursion'] or ['app'].
  transforms: [],
  // The address's zoom {tab, view: [x0, x1], focus: cell or -1}, for the next chart of that
  // tab; the zoom on screen is the chart's own (chart.x0, x1, focus): a redraw starts over.
  zoom: null,
};

const $ = (id) => document.getElementById(id);

function appendAll(node, items) {
  for (const item of items) {
    if (Array.isArray(item)) appendAll(node, item);
    else if (item !== null && item !== undefined) node.append(item);
  }
  return node;
}

// --- DOM helpers: text only --------------------------------------------------------------
// el(tag, props, child, [children], ...): an Array child is a list of children; svgEl the same
// for an SVG element. props: attributes (null: none), text, dataset, on<event> listeners.
const el = (tag, props, ...children) => build(document.createElement(tag), props, children);
const svgEl = (tag, props, ...children) => build(document.createElementNS('http://www.w3.org/2000/svg', tag), props, children);
function build(e, props, children) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null) continue;
    if (k === 'text') e.textContent = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  return appendAll(e, children);
}
const td = (cls, text, title) => el('td', { class: cls, text, title });
// The tab bar: a button per tab section, in the page's order.
for (const s of document.querySelectorAll('section.tab')) {
  $('tabs').append(el('button', { type: 'button', 'data-tab': s.id.slice(4), text: s.dataset.title, onclick: () => { state.tab = s.id.slice(4); render(); } }));
}
// Each table's head from its data-head (the columns, '|' between), and its body.
for (const t of document.querySelectorAll('table[data-head]')) {
  t.append(el('thead', null, el('tr', null, t.dataset.head.split('|').map((text) => el('th', { text })))), el('tbody'));
}
const clear = (node) => node.replaceChildren();
// The node's children replaced by items (as el's: arrays flattened, null left out).
const fill = (node, ...items) => { clear(node); return appendAll(node, items); };
// A view's box with nothing drawn in it (data-rendered 0, no chart), and a hint when given.
function emptyBox(box, text) {
  fill(box, text ? el('p', { class: 'hint', text }) : null);
  delete box._chart;
  box.dataset.rendered = '0';
}
// map.get(key), made by make() the first time; the map keeps the `size` made last.
function cached(map, key, make, size = FILTERED_CACHE_SIZE) {
  if (!map.has(key)) {
    while (map.size >= size) map.delete(map.keys().next().value); // the oldest
    map.set(key, make());
  }
  return map.get(key);
}
// The rows of table `id` replaced (data-rows: how many).
function fillTable(id, rows) {
  fill($(id).tBodies[0], rows);
  $(id).dataset.rows = String(rows.length);
}
// (map.get(key) || []).push(value), the list kept in the map.
const pushTo = (map, key, value) => (map.get(key) || map.set(key, []).get(key)).push(value);

const setStatus = (text, kind) => { $('status').textContent = text; document.body.dataset.state = kind || 'ready'; };

// --- the view in the address (viewHashOf, parseViewHash) ---------------------------------
// The zoom on screen, or the address's while its chart is not drawn yet.
const viewHash = () => viewHashOf(state, state.zoom && state.zoom.tab === state.tab ? state.zoom : chartZoom(activeChart()));
let hashWrittenAt = -Infinity;
function writeHash() {
  const hash = viewHash();
  if (location.hash !== hash) { history.replaceState(null, '', hash); hashWrittenAt = performance.now(); }
}
// A zoom or pan: at most one history update per 200 ms (the wheel paints every frame, and
// browsers refuse a flood of them); a render under way writes the address when it is done.
let hashTimer = null;
function writeHashSoon() {
  if (hashTimer !== null) return;
  hashTimer = setTimeout(() => { hashTimer = null; if (document.body.dataset.state === 'ready') writeHash(); }, Math.max(0, hashWrittenAt + 200 - performance.now()));
}
const TABS = () => [...$('tabs').querySelectorAll('button')].map((b) => b.dataset.tab);
const readHash = () => parseViewHash(location.hash, TABS());
// Before fillFilters, which keeps the filters only when the snapshot has them.
function applyView(v) {
  Object.assign(state, {
    tab: v.tab || state.tab, search: v.search, hideIdle: v.hideIdle, labelFilter: v.label, threadFilter: v.thread, range: v.range,
    method: v.method, sandwich: v.sandwich, tagFocus: v.tagFocus, tagIgnore: v.tagIgnore, tagRoot: v.tagRoot, tagLeaf: v.tagLeaf,
    pin: v.pin && v.pin.length === 2 ? v.pin : null, source: v.source && v.source[0] ? v.source : null, transforms: v.transforms,
  });
  if (v.stack !== null) state.stackThread = v.stack;
  state.zoom = v.zoom ? { tab: state.tab, ...v.zoom } : null;
  $('search').value = v.search;
  $('tag-focus').value = v.tagFocus;
}
let pendingView = null;
