// Where the data comes from, the page model and a prepared snapshot: the rows the filters keep.
'use strict';

// A self-contained page (Viewer.static_html) carries {list: [...], snapshots: {id: body}}.
const embeddedElement = document.getElementById('rperf-data');
const embedded = embeddedElement ? JSON.parse(embeddedElement.textContent) : null;

// Where the data comes from, as in rperf 0.11: the server that served this page (<base>/assets/,
// <base>/snapshots), unless an earlier script defines window.RPERF_DATA_SOURCE = { listUrl(),
// snapshotUrl(id), onAuthError(url) } (onAuthError: after a 403, an expired signed URL say, a
// new URL to try once). viewUrl(id, view, query): a file's text; a source without it has none.
const ownScript = document.currentScript && document.currentScript.src;
const BASE = ownScript ? ownScript.replace(/\/assets\/[\w.]+\.js(\?.*)?$/, '') : location.pathname.replace(/\/$/, '');
const customSource = window.RPERF_DATA_SOURCE || null;
const source = Object.assign({
  listUrl: () => BASE + '/snapshots',
  snapshotUrl: (id) => BASE + '/snapshots/' + id,
  timelineUrl: (id) => BASE + '/snapshots/' + id + '/timeline',
  viewUrl: customSource ? null : (id, view, query) => BASE + '/snapshots/' + id + '/' + view + '?' + query,
  onAuthError: null,
}, customSource || {});
const textFromServer = !embedded && typeof source.viewUrl === 'function'; // the Source tab's text

// A response (once more at the URL onAuthError gives for a 403); a refusal throws its error.
async function request(url, init = { headers: { accept: 'application/json' } }) {
  let res = await fetch(url, { cache: 'no-store', ...init });
  if (res.status === 403 && typeof source.onAuthError === 'function') {
    const fresh = await source.onAuthError(url);
    if (fresh) res = await fetch(fresh, { cache: 'no-store', ...init });
  }
  if (res.ok) return res;
  let body = null;
  try { body = await res.json(); } catch (_) { /* not JSON */ }
  throw new Error((body && body.error) || (res.status + ' ' + res.statusText));
}
const fetchJSON = async (url) => (await request(url)).json();

const inFile = (part) => { if (!part) throw new Error('not in this file'); return part; };
const fetchList = async () => (embedded ? embedded.list : fetchJSON(source.listUrl()));
const fetchSnapshot = async (id) => (embedded ? inFile(embedded.snapshots[String(id)]) : fetchJSON(source.snapshotUrl(id)));

// A big timeline travels apart (Viewer.split_timeline) as gzip'd columns (Viewer.timeline_bytes),
// in a self-contained page in base64 in its own element.
async function fetchTimeline(id) {
  const bytes = embedded ? base64Bytes(inFile(document.getElementById('rperf-timeline-' + id)).textContent) : await (await request(source.timelineUrl(id), {})).arrayBuffer();
  return timelineColumns(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer());
}

// {columns: [nodes, weights, threads, label sets, times(, line leaves)], idle} as typed arrays.
function timelineColumns(buffer) {
  const [n, lines, idleCount] = buffer.byteLength >= 16 ? new Uint32Array(buffer, 0, 3) : [0, 0, 0];
  if (buffer.byteLength !== 16 + n * (lines ? 32 : 28) + idleCount * 4) throw new Error('the timeline\'s columns are cut or malformed');
  let at = 16;
  const take = (Type, count) => { const a = new Type(buffer, at, count); at += count * Type.BYTES_PER_ELEMENT; return a; };
  const weights = take(Float64Array, n), times = take(Float64Array, n);
  for (let i = 1; i < n; i++) times[i] += times[i - 1]; // sent as steps
  const columns = [take(Uint32Array, n), weights, take(Uint32Array, n), take(Uint32Array, n), times];
  if (lines) columns.push(take(Int32Array, n));
  return { columns, idle: take(Uint32Array, idleCount) };
}

const timelineLoaded = (p) => !!(p.timeline && (p.timeline.samples || p.timeline.columns));
function base64Bytes(text) {
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

// --- the page model (WebAssembly, ext/rperf/page; page_model.js speaks to it) ---------------
// The page selects its rows and computes every view with it, never with a copy of its own.
const { ROWS } = RperfPageModel;
let model = null; // the PageModel, once loaded

// Loaded once, beside the snapshot list; a failure is tried again at the next snapshot.
let modelLoad = null;
function loadPageModel() {
  if (!modelLoad) modelLoad = instantiatePageModel().catch((e) => { modelLoad = null; throw e; });
  return modelLoad;
}

async function instantiatePageModel() {
  const element = document.getElementById('rperf-page-model'); // a self-contained page's
  const url = ownScript ? new URL('page_model.wasm', ownScript).href : BASE + '/assets/page_model.wasm';
  const res = element ? null : await fetch(url);
  if (res && !res.ok) throw new Error(url + ': ' + res.status + ' ' + ((await res.text()).slice(0, 300) || res.statusText));
  model = await RperfPageModel.instantiate(element ? base64Bytes(element.textContent) : await res.arrayBuffer());
  return model;
}

function modelSnapshot(p) {
  p.handle = model.snapshot({ parents: p.nodes.parent, nodeFrames: p.nodes.frame, frames: p.frames, frameLines: p.frame_lines, labelSets: p.labelSets, lineTree: p.line_tree }, p);
  modelRows(p, ROWS.samples, p.samples, p.idle_samples);
  if (p.allocations) modelRows(p, ROWS.allocations, p.allocations.samples, null);
  if (p.timeline && p.timeline.samples) modelRows(p, ROWS.timeline, p.timeline.samples, p.timeline.idle);
}
function modelRows(p, kind, rows, idleIndexes) { model.rows(p.handle, kind, rows, idleIndexes, !!p.line_tree); }

// A selection of rows of `kind`: the model's kept indexes and weights.
const selection = (kind, kept) => ({ kind, kept });

// A body in rperf 0.11's shape (Viewer.samples_to_json) from a data source becomes ours: the
// model's stack tree of its names (page/page_rows.hh names_tree), one row per sample, one thread.
function fromSamplesJson(p) {
  const tree = model.namesTree(p.samples);
  const labelSets = (p.label_sets || [{}]).map((ls) =>
    Object.fromEntries(Object.entries(ls && typeof ls === 'object' ? ls : {}).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])));
  return Object.assign({}, p, {
    frames: tree.frames, samples: tree.rows, label_sets: labelSets, total_weight_ns: tree.rows.reduce((a, r) => a + r[1], 0),
    nodes: { parent: tree.parents, frame: tree.nodeFrames },
    pruned: { samples: 0, weight_ns: 0 }, timeline: null, allocations: null,
    call_tree_error: 'this snapshot is in rperf 0.11\'s format (names only): no call tree or method table',
  });
}

// --- one snapshot: a prefix tree of stacks (parents first), the flame graph's ----------
function prepare(p) {
  if (!p.nodes && Array.isArray(p.samples)) p = fromSamplesJson(p);
  p.payloadKeys = Object.keys(p); // the body's own, which a transformed snapshot copies
  prepared(p, p.samples.map((s) => s[2]));
  modelSnapshot(p); // with the model's idle marks: idleness is never judged here
  return p;
}

// What the views read of a snapshot besides the model: its tree's children and roots, its
// threads (of threadSeqs, its time samples' threads), label sets and thread totals.
function prepared(p, threadSeqs) {
  p.children = Array.from(p.nodes.parent, () => []);
  p.roots = [];
  p.nodes.parent.forEach((parent, i) => (parent < 0 ? p.roots : p.children[parent]).push(i));
  p.threads = [...new Set(threadSeqs)].sort((a, b) => a - b);
  p.labelSets = p.label_sets.map((ls) => ls || {});
  p.views = new Map(); // the views computed last (modelView), under their filters
  const totals = p.thread_totals || []; // [thread, total, idle, name, Ractor id (another Ractor's thread)]
  p.threadTotals = new Map(totals.map((t) => [t[0], t]));
  p.idleThreads = p.threads.filter((th) => { const [, total, idle] = p.threadTotals.get(th) || []; return total > 0 && idle === total; });
  p.hasIdle = totals.some(([, , idle]) => idle > 0);
  return p;
}

const frameOf = (p, node) => p.frames[p.nodes.frame[node]];

// The snapshot through the page's transforms, made by the model as a snapshot of its own
// (page/page_rows.hh transform_snapshot): the tree of the transformed stacks and every row at its
// stack's new node (idle marks kept: a wait does not change with how its stack is drawn; each
// row's recorded line-level stack kept for the Source tab), so every view honours them.
function transformed(base, list) {
  const p = Object.fromEntries(base.payloadKeys.map((key) => [key, base[key]]));
  const t = model.transform(base.handle, list, p);
  const samples = model.rowColumns(t.handle, ROWS.samples);
  Object.assign(p, {
    base, handle: t.handle, samples: null, line_tree: null, idle_samples: null,
    frames: t.frames, frame_lines: t.frameLines, frame_categories: t.frameCategories,
    nodes: { parent: t.parents, frame: t.nodeFrames }, total_weight_ns: t.totalWeight,
    allocations: base.allocations && Object.assign({}, base.allocations, { samples: null }),
    // The payload's bins are of the untransformed stacks: the page bins the moved rows.
    timeline: base.timeline && Object.assign({}, base.timeline, { samples: null, columns: null, idle: null, bins: null, idle_hidden_bins: null }),
  });
  prepared(p, samples.columns[2]);
  if (timelineLoaded(base)) readMovedTimeline(p);
  return p;
}
// The base's timeline rows, loaded after the transform, moved by the model.
function transformTimeline(p) {
  model.moveRows(p.handle, p.base.handle, ROWS.timeline);
  readMovedTimeline(p);
}
// The moved timeline rows as the page holds a loaded timeline: the model's columns.
function readMovedTimeline(p) { p.timeline.columns = model.rowColumns(p.handle, ROWS.timeline).columns; }

// The filters: the key of the views computed under them.
const filterKey = () => JSON.stringify([state.labelFilter, state.threadFilter, hidingIdle(state.current), state.range, tagFocusRegex() && state.tagFocus, state.tagIgnore]);

// The rows the filters keep (selection), selected by the page model; with a time range, the
// timeline's (a sample covers [t - weight, t] and keeps its part in the range).
function selectSamples(p, opts) {
  const { kind, f } = samplesFilter(p, opts);
  return selection(kind, model.select(p.handle, kind, f));
}
const UNFILTERED = { label: false, thread: false, range: false, hide: false }; // every row
function samplesFilter(p, opts) {
  const o = Object.assign({ label: true, thread: true, range: true, hide: true }, opts);
  const ranged = !!(o.range && state.range && timelineLoaded(p));
  const f = { thread: o.thread ? state.threadFilter : null, hidden: o.hide ? hiddenThreads(p) : null, sets: o.label ? keptLabelSets(p) : null,
    range: ranged ? state.range : null, idle: o.hide && hidingIdle(p) };
  return { kind: ranged ? ROWS.timeline : ROWS.samples, f };
}

// A view of the kept rows, as `rperf report` computes it (page/page_views.hh): 'call_tree',
// 'inverted_tree', 'method_table', or 'sandwich' of fn ([name, file]); all: of every row.
function modelView(p, view, { all = false, ranged = true, fn = null } = {}) {
  if (p.call_tree_error) throw new Error(p.call_tree_error);
  return cached(p.views, [view, all ? '' : filterKey(), ranged, ...(fn || [])].join('\u0000'), () => {
    const { kind, f } = samplesFilter(p, all ? UNFILTERED : { range: ranged });
    return model.view(p.handle, kind, f, view, fn);
  });
}

// The model's view, or null once fail(message) said why not (a names-only body has no call tree).
function viewOr(fail, p, view, opts) {
  try { return modelView(p, view, opts); } catch (e) { fail(e.message); return null; }
}

// The tag focus regex, or null (none, or not a valid one: then only it is skipped, as 0.11.1).
function tagFocusRegex() {
  if (!state.tagFocus) return null;
  try { return new RegExp(state.tagFocus); } catch (_) { return null; }
}

const tagFiltered = () => !!(tagFocusRegex() || state.tagIgnore.length);

// The label sets the label and tag filters keep, or null when none is set: the model's rule
// (profile/label_set_match.hh); the tagfocus regex is JavaScript's, as rperf 0.11.1's.
function keptLabelSets(p) {
  const focus = tagFocusRegex();
  const f = state.labelFilter;
  if (!f && !tagFiltered()) return null;
  const key = JSON.stringify([f, state.tagFocus, state.tagIgnore]);
  if (p.keptSetsKey !== key) {
    if (focus && !p.labelValueList) p.labelValueList = model.labelValues(p.handle);
    p.keptSets = model.matchLabelSets(p.handle, { key: f ? f.key : null, values: f ? f.values.filter((v) => v !== NOT_SET) : [],
      unset: !!(f && f.values.includes(NOT_SET)), focused: focus ? p.labelValueList.filter((v) => focus.test(v)) : null, ignore: state.tagIgnore });
    p.keptSetsKey = key;
  }
  return p.keptSets;
}

// "Hide idle threads": the rows the model says are idle (profile/idle_wait.hh) go, and the
// threads whose time is all idle (but the one the thread filter chose) leave the thread lists.
const hidingIdle = (p) => !!(state.hideIdle && p && p.hasIdle);
function hiddenThreads(p) {
  if (!state.hideIdle || !p) return null;
  const idle = p.idleThreads.filter((th) => th !== state.threadFilter);
  return idle.length ? new Set(idle) : null;
}
const shownThreads = (p, hidden = hiddenThreads(p)) => p.threads.filter((th) => !hidden?.has(th));

// The page model's weights of a selection on the tree: self and total per node, the sum, and
// stateSelf: node -> its self [blocked, wait, gc] (when it has some).
function nodeWeights(p, sel) {
  const { self, total, sum, states } = model.treeWeights(p.handle, sel.kind, sel.kept.rows, sel.kept.weights);
  return { self, total, sum, stateSelf: stateSelfOf(states, (i) => i) };
}

// node -> its self [blocked, wait, gc], of the model's self per state (STATE_COUNT per node,
// the k-th of node nodeAt(k)), for the nodes with some.
function stateSelfOf(states, nodeAt) {
  const stateSelf = new Map();
  for (let k = 0, at = 0; at < states.length; k++, at += RperfPageModel.STATE_COUNT) {
    if (states[at + 1] || states[at + 2] || states[at + 3]) stateSelf.set(nodeAt(k), [states[at + 1], states[at + 2], states[at + 3]]);
  }
  return stateSelf;
}

// The hierarchy of the nodes that have weight; leavesOf(node): more children (allocated classes).
function hierarchy(p, weights, deltaOf, leavesOf) {
  const build = (node) => {
    const kids = p.children[node].filter((c) => weights.total[c] > 0).map(build).concat(leavesOf ? leavesOf(node) : []);
    const [name, file] = frameOf(p, node);
    return { name, file, value: weights.total[node], node, cat: categoryOf(p, node), delta: deltaOf && deltaOf(node), children: kids.length ? kids : undefined };
  };
  return { name: 'all', file: '', value: weights.sum, node: -1, cat: 'other', delta: deltaOf && 0, children: p.roots.filter((r) => weights.total[r] > 0).map(build) };
}

// The flame graph's hierarchy: tagroot groups the samples under "[key: value]" frames (none for
// a sample without the key, as 0.11.1), tagleaf puts each stack's self time under such leaves.
// The model groups and sums them (page_rows.hh tag_groups); here they only become the hierarchy.
function flameHierarchy(p, sel, weights) {
  if (!state.tagRoot.length && !state.tagLeaf.length) return hierarchy(p, weights, null, stateLeaves(weights));
  const { rootFrames, groups } = model.tagGroups(p.handle, sel.kind, sel.kept.rows, sel.kept.weights, state.tagRoot, state.tagLeaf);
  const tagFrame = ({ name, value }) => ({ name, file: '', value, cat: 'other', tag: true });
  const adopt = (parent, child) => (parent.children || (parent.children = [])).push(child);
  // A group's tree: its weights on the nodes it has, and its tagleaf frames under their nodes.
  const tree = (g) => {
    const total = new Float64Array(p.nodes.parent.length);
    g.nodes.forEach((node, k) => { total[node] = g.totals[k]; });
    const w = { total, sum: g.sum, stateSelf: stateSelfOf(g.states, (k) => g.nodes[k]) };
    if (!state.tagLeaf.length) return hierarchy(p, w, null, stateLeaves(w));
    const leaves = g.leaves.map(tagFrame), atNode = new Map();
    g.leaves.forEach((l, k) => (l.parent < 0 ? pushTo(atNode, l.node, leaves[k]) : adopt(leaves[l.parent], leaves[k])));
    return hierarchy(p, w, null, (node) => atNode.get(node) || []);
  };
  if (!state.tagRoot.length) return tree(groups[0]);
  const root = { name: 'all', file: '', value: weights.sum, node: -1, children: [], cat: 'other' };
  const frames = []; // the tagroot frames made so far, each group's new ones before its tree joins
  for (const g of groups) {
    for (let f = frames.length; f < g.rootFramesEnd; f++) {
      frames.push(tagFrame(rootFrames[f]));
      adopt(rootFrames[f].parent < 0 ? root : frames[rootFrames[f].parent], frames[f]);
    }
    const end = g.under < 0 ? root : frames[g.under];
    end.children = (end.children || []).concat(tree(g).children || []);
  }
  return root;
}
