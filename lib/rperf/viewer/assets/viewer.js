// rperf viewer: reads the snapshot list and one snapshot at a time from the server (JSON, see
// Rperf::Viewer::Payload) and draws every view in the browser. Profile text (frame names,
// files, label values) is user data: it only ever reaches the page through textContent,
// attribute values or d3's .text(), never as HTML.
(function () {
  'use strict';

  // The Viewer's four states, in the model's order (TimelineState, profile/vm_state.hh: which
  // state a sample is in is the model's to say).
  const STATES = [
    { key: 'running', color: '#4e79a7' },
    { key: 'blocked', color: '#bab0ac' },
    { key: 'wait', color: '#f28e2b' },
    { key: 'gc', color: '#e15759' },
  ];
  const NOT_SET = '\u0000not set';
  const MAX_TABLE_ROWS = 300;
  const FILTERED_CACHE_SIZE = 16; // filtered call trees (and method tables) kept per snapshot, as the server's cache

  const state = {
    list: [],
    payloads: new Map(), // id -> prepared snapshot (the few opened last)
    current: null,
    baseId: null,
    labelFilter: null, // {key, values: [value, ...]}: any of the values (an endpoint set); NOT_SET = samples without that key
    threadFilter: null,
    range: null, // [t0, t1] in ns since the start, from the timeline
    tab: 'flame',
    topSort: 'self',
    methodSort: 'total',
    method: null, // the key (name, file, line) of the method whose callers and callees are shown
    tree: null, // the call tree drawn last
    allocField: 'allocated', // or 'retained'
    search: '', // frames whose name or file holds this (case-insensitive) are highlighted
    hideIdle: false, // "hide idle threads": the samples the model says are idle left out (Payload's idle_samples)
    stackThread: null, // the stack chart's thread
    sandwich: null, // [name, file] of the Sandwich tab's method
    // rperf 0.11.1's tag filters: tagfocus keeps the samples with a label value matching the
    // regex, tagignore drops those with a key = value (value null: without the key); tagroot and
    // tagleaf add "[key: value]" frames at the root or the leaf of the flame graph and icicle.
    tagFocus: '',
    tagIgnore: [], // [[key, value or null], ...]
    tagRoot: [], // keys
    tagLeaf: [], // keys
    pin: null, // [name, file] of the pinned method (Shift+click): outlined, its share per snapshot
    source: null, // [file, name]: the Source tab's file, and the method it was opened for
    // Transforms of the stacks, applied by the server to the profile every view is built from
    // (Viewer::Transforms): [op, name, file] (focus, merge, drop), ['recursion'] or ['app'].
    transforms: [],
    // The address's zoom {tab, view: [x0, x1], focus: cell or -1}, for the next chart of that
    // tab; the zoom on screen is the chart's own (chart.x0, x1, focus): a redraw starts over.
    zoom: null,
  };

  const $ = (id) => document.getElementById(id);

  // Profile-sized arrays are never spread into a call (f(...rows), Math.max(...rows),
  // push(...rows)): every argument goes on the stack, and Chromium throws "Maximum call stack
  // size exceeded" beyond ~120,000 of them. These loop instead.
  function maxOf(values, start) {
    let max = start;
    for (const v of values) if (v > max) max = v;
    return max;
  }
  function appendAll(node, items) {
    for (const item of items) if (item !== null && item !== undefined) node.append(item);
    return node;
  }

  // --- DOM helpers: text only --------------------------------------------------------------
  // el(tag, props, child, [children], ...): an Array child is a list of children.
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (v === undefined || v === null) continue;
        if (k === 'class') e.className = v;
        else if (k === 'text') e.textContent = v;
        else if (k === 'dataset') Object.assign(e.dataset, v);
        else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v);
      }
    }
    for (const c of children) {
      if (Array.isArray(c)) appendAll(e, c);
      else if (c !== null && c !== undefined) e.append(c);
    }
    return e;
  }
  const svgEl = (tag, attrs) => {
    const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  };
  const clear = (node) => { while (node.firstChild) node.removeChild(node.firstChild); };

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

  function setStatus(text, kind) {
    $('status').textContent = text;
    document.body.dataset.state = kind || 'ready';
  }

  // A self-contained page (Rperf::Viewer.static_html) carries its data in a JSON script
  // element: {list: [...], snapshots: {id: body}}; a served page fetches it.
  const embeddedElement = document.getElementById('rperf-data');
  const embedded = embeddedElement ? JSON.parse(embeddedElement.textContent) : null;

  // Where the data comes from, as in rperf 0.11: the server that served this page (its
  // assets are at <base>/assets/, the snapshots at <base>/snapshots), unless a script that runs
  // before this one defines window.RPERF_DATA_SOURCE = { listUrl(), snapshotUrl(id),
  // onAuthError(url) }: an async hook called when a request answers 403 (an expired signed URL,
  // say) that may return a new URL to try once. viewUrl(id, view, query) names the call tree or
  // method table of a filter (the server's <base>/snapshots/<id>/<view>?<query>); a source
  // without it shows the trees of all samples only.
  const script = document.currentScript && document.currentScript.src;
  const BASE = script ? script.replace(/\/assets\/viewer\.js(\?.*)?$/, '') : location.pathname.replace(/\/$/, '');
  const customSource = window.RPERF_DATA_SOURCE || null;
  const source = Object.assign({
    listUrl: () => BASE + '/snapshots',
    snapshotUrl: (id) => BASE + '/snapshots/' + id,
    timelineUrl: (id) => BASE + '/snapshots/' + id + '/timeline',
    viewUrl: customSource ? null : (id, view, query) => BASE + '/snapshots/' + id + '/' + view + '?' + query,
    onAuthError: null,
  }, customSource || {});
  const filteredFromServer = !embedded && typeof source.viewUrl === 'function';

  async function fetchJSON(url) {
    let res = await fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store' });
    if (res.status === 403 && typeof source.onAuthError === 'function') {
      const fresh = await source.onAuthError(url);
      if (fresh) res = await fetch(fresh, { headers: { accept: 'application/json' }, cache: 'no-store' });
    }
    let body = null;
    try { body = await res.json(); } catch (_) { /* not JSON */ }
    if (!res.ok) throw new Error((body && body.error) || (res.status + ' ' + res.statusText));
    return body;
  }

  async function fetchList() {
    return embedded ? embedded.list : fetchJSON(source.listUrl());
  }

  // A big timeline travels apart from its snapshot (Viewer.split_timeline): in a
  // self-contained page as its own script element (JSON, or gzip'd JSON in base64).
  // ?transforms=... of a served page's requests ('' for none): the server applies them.
  const transformsKey = () => (state.transforms.length ? JSON.stringify(state.transforms) : '');
  const transformsQuery = () => (filteredFromServer && state.transforms.length ? 'transforms=' + encodeURIComponent(transformsKey()) : '');
  const withTransforms = (url) => (transformsQuery() ? url + (url.includes('?') ? '&' : '?') + transformsQuery() : url);

  async function fetchTimeline(id) {
    let body;
    if (!embedded) body = await fetchJSON(withTransforms(source.timelineUrl(id)));
    else {
      const element = document.getElementById('rperf-timeline-' + id);
      if (!element) throw new Error('not in this file');
      body = await readDataElement(element);
    }
    // {rows, idle}: the rows, and which of them the model says are idle (Viewer.timeline_columns).
    return Array.isArray(body) ? { rows: body, idle: [] } : { rows: rowsOfColumns(body.columns), idle: body.idle || [] };
  }

  // The rows [node, weight, thread, label set, time] of a timeline sent as columns
  // (Viewer.timeline_columns).
  function rowsOfColumns([nodes, weights, threads, sets, times]) {
    const rows = new Array(nodes.length);
    for (let i = 0; i < nodes.length; i++) rows[i] = [nodes[i], weights[i], threads[i], sets[i], times[i]];
    return rows;
  }

  // A data element of a self-contained page: JSON, or gzip'd JSON in base64.
  async function readDataElement(element) {
    if (element.type !== 'application/gzip+base64') return JSON.parse(element.textContent);
    const bytes = base64Bytes(element.textContent);
    const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
    return JSON.parse(text);
  }

  function base64Bytes(text) {
    if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(text);
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }

  // --- the page model (WebAssembly, ext/rperf/page; page_model.js speaks to it) ---------------
  // The server's sample filter (profile/sample_filter.hh), its sums and its views, compiled for
  // the page: the page selects its rows and computes its views with it, never with a copy of its
  // own. A served page fetches page_model.wasm beside viewer.js; a self-contained one carries it.
  const { ROWS } = RperfPageModel;
  let model = null; // the PageModel, once loaded

  // Loaded once (started with the page, beside the snapshot list's request); a failure is
  // tried again at the next snapshot.
  let modelLoad = null;
  function loadPageModel() {
    if (!modelLoad) modelLoad = instantiatePageModel().catch((e) => { modelLoad = null; throw e; });
    return modelLoad;
  }

  async function instantiatePageModel() {
    const element = document.getElementById('rperf-page-model');
    let bytes;
    if (element) bytes = base64Bytes(element.textContent);
    else {
      const url = script ? new URL('page_model.wasm', script).href : BASE + '/assets/page_model.wasm';
      const res = await fetch(url);
      if (!res.ok) throw new Error(url + ': ' + res.status + ' ' + ((await res.text()).slice(0, 300) || res.statusText));
      bytes = await res.arrayBuffer();
    }
    model = await RperfPageModel.instantiate(bytes);
    return model;
  }

  // The snapshot's tree and label sets in the module; its rows as they come.
  function modelSnapshot(p) {
    p.handle = model.snapshot({ parents: p.nodes.parent, nodeFrames: p.nodes.frame, frames: p.frames, frameLines: p.frame_lines, labelSets: p.labelSets }, p);
    p.idle = [null, null, null]; // per kind: the model's idle marks (Uint8Array), or null
    modelRows(p, ROWS.samples, p.samples, p.idle_samples);
    if (p.allocations) modelRows(p, ROWS.allocations, p.allocations.samples, null);
    if (p.timeline && p.timeline.samples) modelRows(p, ROWS.timeline, p.timeline.samples, p.timeline.idle);
  }
  function modelRows(p, kind, rows, idleIndexes) { p.idle[kind] = model.rows(p.handle, kind, rows, idleIndexes); }

  // A selection of rows of `kind`: the model's kept indexes and weights (kept), and, when a view
  // reads them one by one (the tag groups), the rows themselves (rows(): keptRows').
  function selection(p, kind, source, kept) {
    let rows = null;
    return { kind, kept, rows: () => rows || (rows = keptRows(p, kind, source, kept)) };
  }

  // Kept rows of `kind` as [node, kept weight, thread, label set, idle, index] (index: the row's
  // in the payload), with .kind.
  function keptRows(p, kind, source, kept) {
    const idle = p.idle[kind];
    const rows = new Array(kept.rows.length);
    for (let k = 0; k < rows.length; k++) {
      const i = kept.rows[k];
      const r = source[i];
      rows[k] = [r[0], kept.weights[k], r[2], r[3], idle ? idle[i] === 1 : false, i];
    }
    rows.kind = kind;
    return rows;
  }

  // The indexes and weights of a selection, or of rows made by keptRows (a part of them).
  function keptColumns(rows) {
    if (rows.kept) return [rows.kept.rows, rows.kept.weights];
    const indexes = new Uint32Array(rows.length), weights = new Float64Array(rows.length);
    for (let k = 0; k < rows.length; k++) { indexes[k] = rows[k][5]; weights[k] = rows[k][1]; }
    return [indexes, weights];
  }

  async function fetchSnapshot(id) {
    if (!embedded) return fetchJSON(withTransforms(source.snapshotUrl(id)));
    const body = embedded.snapshots[String(id)];
    if (!body) throw new Error('not in this file');
    return body;
  }

  // A body in rperf 0.11's shape (Rperf::Viewer.samples_to_json: samples of
  // {stack: [name, ...] root first, weight, label_set_id}), from a source that stores them,
  // becomes ours: the model's stack tree of them (page/names_tree.hh, in the page model), frames
  // of (name, no file), one row per sample, one thread.
  function fromSamplesJson(p) {
    const tree = model.namesTree(p.samples);
    const labelSets = (p.label_sets || [{}]).map((ls) => {
      const out = {};
      if (ls && typeof ls === 'object') for (const [k, v] of Object.entries(ls)) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
      return out;
    });
    return Object.assign({}, p, {
      frames: tree.frames, samples: tree.rows, label_sets: labelSets, total_weight_ns: tree.rows.reduce((a, r) => a + r[1], 0),
      nodes: { parent: tree.parents, frame: tree.nodeFrames },
      pruned: { samples: 0, weight_ns: 0 }, timeline: null, allocations: null,
      call_tree_error: 'this snapshot is in rperf 0.11\'s format (names only): no call tree or method table',
    });
  }

  // --- one snapshot ------------------------------------------------------------------------
  // The server sends a prefix tree of stacks (parents come before their children), so the
  // flame graph is that tree: weights go to the leaf node of each sample and are summed upwards.
  function prepare(p) {
    if (!p.nodes && Array.isArray(p.samples)) p = fromSamplesJson(p);
    const n = p.nodes.parent.length;
    const children = Array.from({ length: n }, () => []);
    const roots = [];
    for (let i = 0; i < n; i++) {
      const parent = p.nodes.parent[i];
      if (parent < 0) roots.push(i); else children[parent].push(i);
    }
    p.children = children;
    p.roots = roots;
    p.threads = [...new Set(p.samples.map((s) => s[2]))].sort((a, b) => a - b);
    p.labelSets = p.label_sets.map((ls) => ls || {});
    // The rows in the page model, with the model's idle marks (Payload: idle_samples, the
    // timeline's idle rows); each thread's idle time (thread_totals): never judged here.
    modelSnapshot(p);
    p.idleNs = new Map((p.thread_totals || []).map(([th, , idle]) => [th, idle]));
    p.totalNs = new Map((p.thread_totals || []).map(([th, total]) => [th, total]));
    p.idleThreads = p.threads.filter((th) => p.totalNs.get(th) > 0 && p.idleNs.get(th) === p.totalNs.get(th));
    p.hasIdle = (p.thread_totals || []).some(([, , idle]) => idle > 0);
    p.threadNames = new Map((p.thread_totals || []).filter((t) => t[3]).map(([th, , , name]) => [th, name]));
    return p;
  }

  const frameOf = (p, node) => p.frames[p.nodes.frame[node]];

  // ?label=K&value=V&value=W (&unset=1: K not set), as Viewer::SampleFilter reads it.
  function labelQuery(q, f = state.labelFilter) {
    if (!f) return;
    q.set('label', f.key);
    for (const v of f.values) if (v === NOT_SET) q.set('unset', '1'); else q.append('value', v);
  }

  // The samples the filters keep (time range, label, thread, idle), selected by the page model:
  // rows [node, kept weight, thread, label set, idle, index] (keptRows). With a time range, the
  // timeline's rows (a sample covers [t - weight, t] and keeps its part in the range).
  function selectSamples(p, opts) {
    const { kind, f } = samplesFilter(p, opts);
    return selection(p, kind, kind === ROWS.timeline ? p.timeline.samples : p.samples, model.select(p.handle, kind, f));
  }
  // The kind of rows the filters read and the filter itself (modelFilter's f).
  function samplesFilter(p, opts) {
    const o = Object.assign({ label: true, thread: true, range: true, hide: true }, opts);
    const ranged = !!(o.range && state.range && p.timeline && p.timeline.samples);
    return {
      kind: ranged ? ROWS.timeline : ROWS.samples,
      f: {
        thread: o.thread ? state.threadFilter : null, hidden: o.hide ? hiddenThreads(p) : null, sets: o.label ? keptLabelSets(p) : null,
        range: ranged ? state.range : null, idle: o.hide && hidingIdle(p),
      },
    };
  }

  // A view of the rows the filters keep, computed by the page model as `rperf report` computes
  // it (page/page_views.hh: the model's CallTree and MethodTable): 'call_tree', 'inverted_tree',
  // 'method_table', or 'sandwich' of fn ([name, file]); all: of every row. The last few are kept.
  function modelView(p, view, { all = false, ranged = true, fn = null } = {}) {
    if (p.call_tree_error) throw new Error(p.call_tree_error);
    const key = [view, all ? '' : filterQuery(), ranged, ...(fn || [])].join('\u0000');
    if (!p.views) p.views = new Map();
    if (!p.views.has(key)) {
      const none = { label: false, thread: false, range: false, hide: false };
      const { kind, f } = samplesFilter(p, all ? none : { range: ranged });
      const body = model.view(p.handle, kind, f, view, fn);
      while (p.views.size >= FILTERED_CACHE_SIZE) p.views.delete(p.views.keys().next().value); // the oldest
      p.views.set(key, body);
    }
    return p.views.get(key);
  }

  // The tag focus regex, or null (none, or not a valid one: then only it is skipped, as 0.11.1).
  function tagFocusRegex() {
    if (!state.tagFocus) return null;
    try { return new RegExp(state.tagFocus); } catch (_) { return null; }
  }

  // Whether tagfocus (a valid one) or tagignore is set.
  const tagFiltered = () => !!(tagFocusRegex() || state.tagIgnore.length);

  // The label sets the label and tag filters keep (sorted ids), or null when none is set: the
  // model's rule (profile/label_set_match.hh), the server's too. The tagfocus regex is the
  // page's (JavaScript's, as rperf 0.11.1's), run on the model's label values.
  function keptLabelSets(p) {
    const focus = tagFocusRegex();
    if (!state.labelFilter && !tagFiltered()) return null;
    const key = JSON.stringify([state.labelFilter, state.tagFocus, state.tagIgnore]);
    if (p.keptSetsKey === key) return p.keptSets;
    const f = state.labelFilter;
    const values = f ? f.values.filter((v) => v !== NOT_SET) : [];
    const focused = focus ? labelValues(p).filter((v) => focus.test(v)) : [];
    const sets = model.matchLabelSets(p.handle, { key: f ? f.key : null, values, unset: !!(f && f.values.includes(NOT_SET)), focused: focus ? focused : null, ignore: state.tagIgnore });
    p.keptSetsKey = key;
    p.keptSets = sets;
    return p.keptSets;
  }

  // Every label value of the snapshot, each once (the model's label_values).
  function labelValues(p) {
    if (!p.labelValueList) p.labelValueList = model.labelValues(p.handle);
    return p.labelValueList;
  }

  // "Hide idle threads": the samples the model says are idle (off the GVL in a known wait of a
  // server or job runner: profile/idle_wait.hh) go, marked by the payload; a thread whose time
  // is all idle (thread_totals) goes from the thread lists. hidingIdle: the button is on and
  // something is idle; hiddenThreads: those threads (but the one the thread filter chose), or null.
  function hidingIdle(p) {
    return !!(state.hideIdle && p && p.hasIdle);
  }
  function hiddenThreads(p) {
    if (!state.hideIdle || !p) return null;
    const idle = p.idleThreads.filter((th) => th !== state.threadFilter);
    return idle.length ? new Set(idle) : null;
  }

  // The weights of kept rows (keptRows', or a part of them) on the tree, from the page model:
  // self and total per node, the sum, and each node's self weight per VM state (stateSelf:
  // node -> [blocked, wait, gc], for the nodes that have some).
  function nodeWeights(p, rows, kind = rows.kind) {
    const n = p.nodes.parent.length;
    const { self, total, sum, states } = model.treeWeights(p.handle, kind, ...keptColumns(rows), n);
    const PAGE_STATES = RperfPageModel.STATE_COUNT;
    const stateSelf = new Map();
    for (let i = 0; i < n; i++) {
      const at = i * PAGE_STATES;
      if (states[at + 1] || states[at + 2] || states[at + 3]) stateSelf.set(i, [states[at + 1], states[at + 2], states[at + 3]]);
    }
    return { self, total, sum, stateSelf };
  }

  // The hierarchy {name, file, value, cat, children, delta?} of the nodes that have weight;
  // leavesOf(node): more children (the allocations view's classes).
  function hierarchy(p, weights, deltaOf, leavesOf) {
    const build = (node) => {
      const [name, file] = frameOf(p, node);
      const out = { name, file, value: weights.total[node], node, cat: categoryOf(p, node) };
      if (deltaOf) out.delta = deltaOf(node);
      const kids = p.children[node].filter((c) => weights.total[c] > 0).map(build);
      if (leavesOf) for (const leaf of leavesOf(node)) kids.push(leaf);
      if (kids.length) out.children = kids;
      return out;
    };
    const top = p.roots.filter((r) => weights.total[r] > 0).map(build);
    const root = { name: 'all', file: '', value: weights.sum, node: -1, children: top, cat: 'other' };
    if (deltaOf) root.delta = 0;
    return root;
  }

  // The flame graph's and icicle's hierarchy. With tagroot keys: the samples grouped by their
  // values, each group's tree under "[key: value]" frames (a sample without a key gets no frame
  // for it, as 0.11.1); with tagleaf keys: each stack's self time under "[key: value]" leaves
  // (instead of the VM-state leaves).
  function flameHierarchy(p, sel, weights) {
    const tagPath = (keys, lsi) => {
      const ls = p.labelSets[lsi] || {};
      return keys.filter((k) => k in ls).map((k) => '[' + k + ': ' + ls[k] + ']');
    };
    // Adds `value` along the tag frames `path` under `parent` (merging equal names); the last one.
    const along = (parent, path, value) => {
      let at = parent;
      for (const name of path) {
        if (!at.children) at.children = [];
        let next = at.children.find((c) => c.tag && c.name === name);
        if (!next) { next = { name, file: '', value: 0, cat: 'other', tag: true }; at.children.push(next); }
        next.value += value;
        at = next;
      }
      return at;
    };
    const build = (rowsOf, w) => { // rowsOf(): the rows, read only for tagleaf
      if (!state.tagLeaf.length) return hierarchy(p, w, null, stateLeaves(w));
      const byNode = new Map(); // node -> its self time's tag leaves
      for (const r of rowsOf()) {
        const path = tagPath(state.tagLeaf, r[3]);
        if (!path.length) continue;
        let holder = byNode.get(r[0]);
        if (!holder) byNode.set(r[0], holder = { children: [] });
        along(holder, path, r[1]);
      }
      return hierarchy(p, w, null, (node) => (byNode.has(node) ? byNode.get(node).children : []));
    };
    if (!state.tagRoot.length) return build(sel.rows, weights);
    const groups = new Map();
    for (const r of sel.rows()) {
      const key = JSON.stringify(tagPath(state.tagRoot, r[3]));
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(r);
    }
    const root = { name: 'all', file: '', value: weights.sum, node: -1, children: [], cat: 'other' };
    for (const [key, group] of groups) {
      const tree = build(() => group, nodeWeights(p, group, sel.kind));
      const end = along(root, JSON.parse(key), tree.value);
      if (!end.children) end.children = [];
      for (const c of tree.children || []) end.children.push(c);
    }
    return root;
  }

  // --- flame charts ------------------------------------------------------------------------
  // One renderer for the flame graph, the icicle, the stack chart, the allocations and the
  // diff: cells {x, w, d, name, file, cat, value, parent} laid out in the chart's units (weight,
  // objects or time) from `start` over `span`. The chart fits the window (it scrolls inside its
  // own box, so the root and the hover details stay in view), zooms with the wheel around the
  // pointer, pans by dragging, and zooms to a frame on click, with a breadcrumb back out.
  // Presentation only: the weights are those the view computed.
  const CELL_H = 18;
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
  const LEGEND = Object.keys(CATEGORY_STYLE);
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
  const categoryOf = (p, node) => (p.categories && p.frame_categories ? drawnCategory(p.categories[p.frame_categories[p.nodes.frame[node]]], frameOf(p, node)[0]) : 'app');

  function categoryLegend(cats) {
    return el('div', { class: 'legend categories' }, cats.map((c) =>
      el('span', { dataset: { category: c } }, el('i', { style: 'background:' + categoryColor(c, '') }), (CATEGORY_STYLE[c] || { text: c }).text)));
  }

  const searchText = () => (state.search || '').trim().toLowerCase();
  const matches = (q, name, file) => !!q && (String(name).toLowerCase().includes(q) || String(file || '').toLowerCase().includes(q));

  // A d3-style hierarchy {name, file, value, children, cat} laid out as cells, children sorted
  // by name (the same function lands at the same place in every snapshot).
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
    return { cells, start: 0, span: root.value, depth };
  }

  // Draws `model` into `container` (a new chart: the zoom starts at `view` or the whole span).
  function drawChart(container, details, model, opts) {
    clear(container);
    container.removeAttribute('data-rendered');
    container.classList.add('chart-host');
    const crumbs = el('div', { class: 'crumbs' });
    const viewport = el('div', { class: 'viewport' });
    container.append(crumbs);
    if (opts.legend) container.append(opts.legend); // above the chart: in view with it
    container.append(viewport);
    const chart = { container, details, model, opts, crumbs, viewport, x0: model.start, x1: model.start + model.span, focus: -1, first: true };
    if (opts.view) { chart.x0 = Math.max(model.start, opts.view[0]); chart.x1 = Math.min(model.start + model.span, opts.view[1]); }
    // The address's zoom goes to the chart the keys and the address follow (the tab's first).
    const z = state.zoom;
    if (z && z.tab === state.tab && container === document.querySelector('.tab.active .chart-host')) {
      state.zoom = null;
      const x0 = Math.max(model.start, z.view[0]);
      const x1 = Math.min(model.start + model.span, z.view[1]);
      if (x1 > x0) { chart.x0 = x0; chart.x1 = x1; chart.focus = z.focus < model.cells.length ? z.focus : -1; }
    }
    container._chart = chart;
    wireChart(chart);
    paintChart(chart);
    return chart;
  }

  function fitText(text, px) {
    const chars = Math.floor((px - 6) / 6.6);
    if (chars < 3) return '';
    return text.length <= chars ? text : text.slice(0, chars - 1) + '…';
  }

  function paintChart(chart) {
    const { model, opts, viewport, container } = chart;
    const width = Math.max(320, viewport.clientWidth || container.clientWidth || 960);
    // The box ends at the window's bottom edge: the graph scrolls inside it, the page does not.
    const top = viewport.getBoundingClientRect().top;
    const room = Math.floor(window.innerHeight - Math.max(0, top) - 12);
    viewport.style.maxHeight = Math.max(160, opts.maxHeight ? Math.min(room, Math.floor(window.innerHeight * opts.maxHeight)) : room) + 'px';
    const axisH = opts.axis ? 16 : 0; // the stack chart's time axis, on top
    const height = (model.depth + 1) * CELL_H + axisH;
    const scale = width / Math.max(chart.x1 - chart.x0, 1e-9);
    const q = searchText();
    const svg = svgEl('svg', { width, height, class: 'chart' });
    let drawn = 0;
    const frag = document.createDocumentFragment();
    for (let i = 0; i < model.cells.length; i++) {
      const c = model.cells[i];
      if (c.x + c.w <= chart.x0 || c.x >= chart.x1) continue;
      let px = (c.x - chart.x0) * scale;
      let pw = c.w * scale;
      if (pw < 1) continue;
      if (px < 0) { pw += px; px = 0; }
      if (px + pw > width) pw = width - px;
      const y = axisH + (opts.inverted ? c.d * CELL_H : (model.depth - c.d) * CELL_H);
      const hit = matches(q, c.name, c.file);
      const pinned = state.pin && c.name === state.pin[0] && c.file === state.pin[1];
      const g = svgEl('g', { class: 'frame' + (q ? (hit ? ' match' : ' dim') : '') + (pinned ? ' pinned' : ''), name: c.name, 'data-i': i, 'data-cat': c.cat, transform: `translate(${px.toFixed(1)},${y})` });
      g.append(svgEl('rect', { width: Math.max(0.5, pw - 0.5).toFixed(1), height: CELL_H - 1, fill: opts.color ? opts.color(c) : categoryColor(c.cat, c.name) }));
      const label = fitText(c.name, pw);
      if (label) { const t = svgEl('text', { x: 3, y: 13 }); t.textContent = label; g.append(t); }
      frag.append(g);
      drawn++;
    }
    if (opts.axis) {
      const ticks = Math.max(2, Math.floor(width / 140));
      for (let k = 0; k <= ticks; k++) {
        const t = svgEl('text', { class: 'axis', x: k * width / ticks, y: 12, 'text-anchor': k === 0 ? 'start' : k === ticks ? 'end' : 'middle' });
        t.textContent = opts.axis(chart.x0 + k * (chart.x1 - chart.x0) / ticks);
        frag.append(t);
      }
    }
    svg.append(frag);
    const keepScroll = viewport.scrollTop;
    clear(viewport);
    viewport.append(svg);
    // A flame graph's root is at the bottom: start there.
    if (chart.first) { viewport.scrollTop = opts.inverted ? 0 : viewport.scrollHeight; chart.first = false; } else viewport.scrollTop = keepScroll;
    container.dataset.rendered = String(drawn);
    container.dataset.view = Math.round(chart.x0) + ',' + Math.round(chart.x1);
    container.dataset.zoom = chart.focus >= 0 ? model.cells[chart.focus].name : '';
    paintCrumbs(chart);
    if (chart === activeChart()) writeHashSoon();
  }

  // The chart's zoom for the address: its range and the frame clicked last (its breadcrumb), or
  // null when it shows everything.
  function chartZoom(chart) {
    if (!chart) return null;
    const { start, span } = chart.model;
    if (chart.x0 <= start && chart.x1 >= start + span) return null;
    return { view: [chart.x0, chart.x1], focus: chart.focus };
  }

  function paintCrumbs(chart) {
    const { crumbs, model } = chart;
    clear(crumbs);
    const path = [];
    for (let i = chart.focus; i >= 0; i = model.cells[i].parent) path.unshift(i);
    const zoomed = chart.x0 > model.start || chart.x1 < model.start + model.span;
    const reset = el('button', { type: 'button', class: 'reset-zoom', text: 'reset zoom', title: 'Show everything (0)' });
    reset.disabled = !zoomed;
    reset.addEventListener('click', () => zoomChart(chart, -1));
    crumbs.append(reset);
    for (const i of path) {
      const b = el('button', { type: 'button', class: 'crumb', text: model.cells[i].name, title: model.cells[i].file });
      b.addEventListener('click', () => zoomChart(chart, i));
      crumbs.append(el('span', { class: 'sep', text: '›' }), b);
    }
    crumbs.append(el('span', { class: 'hint', text: zoomed ? '' : ' wheel: zoom · drag: pan · click a frame: zoom to it' }));
  }

  // Zooms to cell i (-1: everything).
  function zoomChart(chart, i) {
    const { model } = chart;
    chart.focus = i;
    if (i < 0 || (model.cells[i].parent < 0 && model.cells[i].w >= model.span)) {
      chart.focus = -1;
      chart.x0 = model.start; chart.x1 = model.start + model.span;
    } else { chart.x0 = model.cells[i].x; chart.x1 = model.cells[i].x + model.cells[i].w; }
    paintChart(chart);
  }

  // Zooms by `factor` (< 1: in) around the chart coordinate `at`, then clamps to the span.
  function scaleChart(chart, factor, at) {
    const { model } = chart;
    const minSpan = Math.max(model.span / 1e6, 1e-6);
    const w = Math.min(model.span, Math.max(minSpan, (chart.x1 - chart.x0) * factor));
    const ratio = (at - chart.x0) / (chart.x1 - chart.x0 || 1);
    chart.x0 = at - ratio * w;
    chart.x1 = chart.x0 + w;
    clampChart(chart);
  }
  function panChart(chart, by) { chart.x0 += by; chart.x1 += by; clampChart(chart); }
  function clampChart(chart) {
    const { start, span } = chart.model;
    const w = chart.x1 - chart.x0;
    if (chart.x0 < start) { chart.x0 = start; chart.x1 = start + w; }
    if (chart.x1 > start + span) { chart.x1 = start + span; chart.x0 = Math.max(start, chart.x1 - w); }
    if (chart.x1 - chart.x0 >= span) chart.focus = -1;
  }

  function wireChart(chart) {
    const { viewport, model, opts, details } = chart;
    let pending = false;
    const repaint = () => { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; paintChart(chart); }); } };
    const cellAt = (evt) => {
      const g = evt.target.closest && evt.target.closest('g.frame');
      return g ? model.cells[Number(g.dataset.i)] : null;
    };
    const coordAt = (evt) => {
      const r = viewport.getBoundingClientRect();
      return chart.x0 + (evt.clientX - r.left) / Math.max(1, r.width) * (chart.x1 - chart.x0);
    };
    viewport.addEventListener('mousemove', (evt) => {
      const c = cellAt(evt);
      if (c && details) details.textContent = opts.label(c);
    });
    viewport.addEventListener('wheel', (evt) => {
      evt.preventDefault();
      if (evt.shiftKey || Math.abs(evt.deltaX) > Math.abs(evt.deltaY)) {
        const d = evt.shiftKey ? evt.deltaY || evt.deltaX : evt.deltaX;
        panChart(chart, d / Math.max(1, viewport.clientWidth) * (chart.x1 - chart.x0));
      } else {
        scaleChart(chart, Math.exp(evt.deltaY * 0.002), coordAt(evt));
      }
      chart.focus = chart.x1 - chart.x0 >= model.span ? -1 : chart.focus;
      repaint();
    }, { passive: false });
    chart.repaint = repaint;
    viewport.addEventListener('mousedown', (evt) => {
      if (evt.button !== 0) return;
      chartDrag = { chart, x: evt.clientX, y: evt.clientY, x0: chart.x0, x1: chart.x1, top: viewport.scrollTop, moved: false };
      evt.preventDefault();
    });
    viewport.addEventListener('mouseup', (evt) => {
      const drag = chartDrag;
      chartDrag = null;
      if (!drag || drag.chart !== chart || drag.moved) return;
      const g = evt.target.closest && evt.target.closest('g.frame');
      if (!g) return;
      const c = model.cells[Number(g.dataset.i)];
      // Shift+click: pins the function (0.11.1's pin: outlined, its share per snapshot); in
      // the sandwich, makes it the middle.
      if (evt.shiftKey && c.file && !opts.color) {
        if (state.tab === 'sandwich') { state.sandwich = [c.name, c.file]; render(); } else togglePin([c.name, c.file]);
        return;
      }
      zoomChart(chart, Number(g.dataset.i));
    });
  }

  // A drag that started in a chart: one pair of window listeners for every chart drawn.
  let chartDrag = null;
  window.addEventListener('mousemove', (evt) => {
    const drag = chartDrag;
    if (!drag) return;
    const { chart } = drag;
    const dx = evt.clientX - drag.x;
    const dy = evt.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    if (!drag.moved || !chart.viewport.isConnected) return;
    chart.x0 = drag.x0; chart.x1 = drag.x1;
    panChart(chart, -dx / Math.max(1, chart.viewport.clientWidth) * (drag.x1 - drag.x0));
    chart.viewport.scrollTop = drag.top - dy;
    chart.repaint();
  });
  window.addEventListener('mouseup', () => { chartDrag = null; }); // after the chart's own (bubbling)

  // The chart of the tab on screen, for the keyboard.
  const activeChart = () => {
    const host = document.querySelector('.tab.active .chart-host');
    return host && host._chart && host.isConnected ? host._chart : null;
  };

  function drawFlame(container, details, data, opts) {
    clear(container);
    container.removeAttribute('data-rendered');
    if (!data.value) {
      delete container._chart;
      container.append(el('p', { class: 'hint', text: 'No samples match the filters.' }));
      container.dataset.rendered = '0';
      return;
    }
    const total = data.value;
    const fmt = opts.format || fmtTime;
    const label = (c) => {
      let text = c.name + ' — ' + fmt(c.value) + ' (' + pct(c.value, total) + ')';
      if (opts.diff) text += ', change ' + fmtSigned(c.delta || 0);
      if (c.file) text += ' — ' + c.file;
      return text;
    };
    const color = opts.diff ? (c) => diffColor(c.delta, c.value) : null;
    const legend = !opts.diff && opts.legend !== false ? categoryLegend(LEGEND) : null;
    drawChart(container, details, layoutTree(data), { inverted: !!opts.inverted, label, color, maxHeight: opts.maxHeight, legend });
  }

  // Red for more time than before, green for less, grey for no change.
  function diffColor(delta, value) {
    if (!delta) return 'rgb(215,215,215)';
    const v = Math.min(1, Math.abs(delta) / Math.max(Math.abs(value), Math.abs(delta), 1));
    const soft = Math.round(215 - 175 * v);
    return delta > 0 ? `rgb(235,${soft},${soft})` : `rgb(${soft},215,${soft})`;
  }

  // The VM-state part of a node's self weight as leaves of their own ([GVL blocked], [GVL
  // wait], [GC]), as in the call tree: the time a frame spent off the GVL is seen, and coloured.
  const stateLeaves = (weights) => (node) => {
    const v = weights.stateSelf.get(node);
    if (!v) return [];
    const out = [];
    ['blocked', 'wait', 'gc'].forEach((key, k) => {
      if (v[k] > 0) out.push({ name: STATE_LEAF[key][0], file: '', value: v[k], cat: STATE_LEAF[key][1] });
    });
    return out;
  };

  // The weight of the samples with a frame that matches the search (name or file; the VM-state
  // leaves too), of `weights`: the one place the search's share is summed, for every view.
  function searchWeight(p, weights, q) {
    if (!q) return null;
    const frameHit = Uint8Array.from(p.frames, ([name, file]) => (matches(q, name, file) ? 1 : 0));
    const leafHit = ['blocked', 'wait', 'gc'].map((key) => matches(q, STATE_LEAF[key][0], ''));
    const n = p.nodes.parent.length;
    const hit = new Uint8Array(n);
    let sum = 0;
    for (let i = 0; i < n; i++) { // parents come before their children
      const parent = p.nodes.parent[i];
      hit[i] = frameHit[p.nodes.frame[i]] || (parent >= 0 && hit[parent]) ? 1 : 0;
      if (hit[i]) { sum += weights.self[i]; continue; }
      const v = weights.stateSelf.get(i);
      if (v) for (let k = 0; k < 3; k++) if (leafHit[k]) sum += v[k];
    }
    return sum;
  }

  // --- top table ---------------------------------------------------------------------------
  // Each method's self and total time: the method table's entries (MethodTable, the model's one
  // count of each method once per stack), as the methods tab has them and sorts them.
  let topSeq = 0;
  async function drawTop(p) {
    const seq = ++topSeq;
    const query = filterQuery();
    const current = () => seq === topSeq && state.current === p && state.tab === 'top' && filterQuery() === query;
    const body = $('top-table').tBodies[0];
    let table;
    try { table = modelView(p, 'method_table'); } catch (e) {
      if (!current()) return;
      clear(body);
      $('top-table').dataset.rows = '0';
      $('top-note').textContent = 'Cannot load the methods: ' + e.message;
      return;
    }
    if (!current()) return; // the user moved on meanwhile
    const sum = table.total_ns;
    // The entries come in the table's order (total, then self, then name): by self, ties keep it.
    const rows = table.entries.map(([m, self, total], i) => ({ name: table.methods[m][0], file: table.methods[m][1], self, total, i }));
    if (state.topSort === 'self') rows.sort((a, b) => b.self - a.self || a.i - b.i);
    rows.splice(MAX_TABLE_ROWS);
    $('top-note').textContent = rows.length < table.method_count ? `${rows.length} of ${table.method_count} methods shown: methods below ` +
      `${table.min_percent}% of the total are left out (and beyond the ${Math.min(MAX_TABLE_ROWS, table.max_methods)} heaviest).` : '';
    clear(body);
    for (const r of rows) {
      body.append(el('tr', { class: matches(searchText(), r.name, r.file) ? 'match' : null, dataset: { name: r.name, selfNs: String(r.self), totalNs: String(r.total) } },
        el('td', { class: 'num', text: fmtTime(r.self) }), el('td', { class: 'num', text: pct(r.self, sum) }),
        el('td', { class: 'num', text: fmtTime(r.total) }), el('td', { class: 'num', text: pct(r.total, sum) }),
        el('td', { class: 'fn', text: r.name }), el('td', { class: 'file', text: r.file, title: r.file })));
    }
    $('top-table').dataset.rows = String(rows.length);
  }

  // --- call tree ---------------------------------------------------------------------------
  // Rperf::CallTree's nodes as the page model computes them (page/page_views.hh) of the rows
  // the filters keep. node: [parent, method, total_ns, self_ns, recursive]; node 0 is [root].
  function filterQuery() {
    const q = new URLSearchParams();
    labelQuery(q);
    if (state.threadFilter !== null) q.set('thread', String(state.threadFilter));
    if (hidingIdle(state.current)) q.set('idle', 'hide');
    if (state.range) { q.set('from', String(Math.floor(state.range[0]))); q.set('to', String(Math.ceil(state.range[1]))); }
    tagQuery(q);
    if (transformsQuery()) q.set('transforms', transformsKey());
    return q.toString();
  }
  function tagQuery(q) {
    if (tagFocusRegex()) q.set('tagfocus', state.tagFocus);
    if (state.tagIgnore.length) q.set('tagignore', JSON.stringify(state.tagIgnore));
  }

  // The source view, built by the server per filter and kept per query (the last few in `cache`).
  async function filteredView(p, view, cache, query) {
    if (!filteredFromServer) throw new Error('this ' + (embedded ? 'file' : 'data source') + ' has no ' + view.replace('_', ' '));
    if (!cache.has(query)) {
      const fetched = await fetchJSON(source.viewUrl(p.id, view, query));
      while (cache.size >= FILTERED_CACHE_SIZE) cache.delete(cache.keys().next().value); // the oldest
      cache.set(query, fetched);
    }
    return cache.get(query);
  }

  // Why `tab` cannot show the current filters, or null: the one place that says which views
  // honour which filter (every view is the page model's, of the filtered rows): allocation
  // samples have no time, so the time range does not apply to them.
  function unfilteredReason(tab) {
    if (tab === 'alloc' && state.range && state.current && state.current.allocations) {
      return 'The time range does not apply to allocations (their samples have no time); the label and thread filters do.';
    }
    if (tab === 'diff' && state.list.length < 2) return 'There is no other snapshot to compare with.';
    return null;
  }

  function clearFilters() {
    state.search = '';
    $('search').value = '';
    state.labelFilter = null;
    state.threadFilter = null;
    state.range = null;
    state.tagFocus = '';
    $('tag-focus').value = '';
    state.tagIgnore = [];
    state.tagRoot = [];
    state.tagLeaf = [];
    $('filter-label').value = '';
    $('filter-thread').value = '';
    render();
  }

  // The two trees drawn as lists: the call tree (root first) and the bottom-up tree (the
  // running functions first, each child a caller), both built natively by the server.
  const TREE_KINDS = {
    tree: { view: 'call_tree', box: 'tree', note: 'tree-note', what: 'call tree' },
    inverted: { view: 'inverted_tree', box: 'inverted', note: 'inverted-note', what: 'bottom-up tree', bottomUp: true },
  };

  function callTree(p, kind = TREE_KINDS.tree) {
    const tree = modelView(p, kind.view);
    if (!tree.children) {
      tree.children = tree.nodes.map(() => []);
      tree.nodes.forEach(([parent], i) => { if (parent >= 0) tree.children[parent].push(i); });
      tree.expanded = defaultExpansion(tree);
    }
    return tree;
  }

  // Trees arrive out of order (a label's tree is quick, a range's or a thread's slower): only
  // the answer to the latest request is drawn, never a previous filter's tree.
  let treeSeq = 0;
  async function drawTree(p, tab = 'tree') {
    const kind = TREE_KINDS[tab];
    const seq = ++treeSeq;
    const query = filterQuery();
    const current = () => seq === treeSeq && state.current === p && state.tab === tab && filterQuery() === query;
    const box = $(kind.box);
    let tree;
    try { tree = callTree(p, kind); } catch (e) {
      if (!current()) return;
      clear(box);
      $(kind.note).textContent = '';
      state.tree = null;
      box.append(el('p', { class: 'hint', text: 'Cannot load the ' + kind.what + ': ' + e.message }));
      return;
    }
    if (!current()) return; // the user moved on meanwhile
    state.tree = tree;
    clear(box);
    const sum = tree.total_ns;
    const note = `${tree.nodes.length} of ${tree.node_count} calls shown: calls below ${tree.min_percent}% of the total are left out (their time is in the "lighter calls" rows).` +
      (kind.bottomUp ? ' The functions that were running come first, each with its time; under each, who called it.' : '');
    $(kind.note).textContent = note;
    box.dataset.totalNs = String(sum);
    const row = (total, name, self, file, title) => el('div', { class: 'row' },
      el('span', { class: 'num', text: fmtTime(total) }), el('span', { class: 'num', text: pct(total, sum) }),
      el('span', { class: 'bar', style: `width:${Math.max(1, Math.round(80 * total / (sum || 1)))}px` }),
      el('span', { class: 'name', text: name }),
      self === null ? null : el('span', { class: 'num', text: 'self ' + fmtTime(self) }),
      el('span', { class: 'file', text: file, title }));
    // Time not in any child listed: calls too light to be sent, or (at the root) no Ruby frames.
    const rest = (i) => {
      const [, , total, self] = tree.nodes[i];
      const hidden = total - self - tree.children[i].reduce((a, c) => a + tree.nodes[c][2], 0);
      const out = [];
      const other = (ns, name) => el('li', { class: 'other', dataset: { totalNs: String(ns) } }, row(ns, name, null, '', ''));
      if (i === 0 && self > 0) out.push(other(self, '(no Ruby frames)'));
      if (hidden > 0) out.push(other(hidden, `(lighter calls < ${tree.min_percent}%)`));
      return out;
    };
    const list = (i) => el('ul', { role: 'group' }, tree.children[i].map(item), rest(i));
    const item = (i) => {
      const [, m, total, self, recursive] = tree.nodes[i];
      const [name, file] = tree.methods[m];
      const kids = tree.children[i].length > 0;
      const open = tree.expanded.has(i);
      const toggle = el('button', { class: 'toggle', type: 'button', text: kids ? (open ? '▾' : '▸') : '' });
      // Bottom-up, a node's self is the time of stacks that end there: not a function's self.
      const r = row(total, name + (recursive ? ' ↻' : ''), kind.bottomUp ? null : self, methodWhere(tree, m), file);
      r.prepend(toggle);
      if (matches(searchText(), name, file)) r.classList.add('match');
      const li = el('li', { role: 'treeitem', 'aria-expanded': kids ? String(open) : null, dataset: { node: String(i), totalNs: String(total) } }, r);
      if (open && kids) li.append(list(i));
      if (kids) {
        toggle.addEventListener('click', () => {
          const nowOpen = !tree.expanded.has(i);
          if (nowOpen) { tree.expanded.add(i); li.append(list(i)); } else {
            tree.expanded.delete(i);
            const sub = li.querySelector(':scope > ul');
            if (sub) sub.remove();
          }
          toggle.textContent = nowOpen ? '▾' : '▸';
          li.setAttribute('aria-expanded', String(nowOpen));
        });
      }
      return li;
    };
    if (!sum) { box.append(el('p', { class: 'hint', text: 'No samples match the filters.' })); return; }
    box.append(list(0));
  }

  // Opens the heaviest path (each step ≥ half of its parent) so the tree starts useful.
  function defaultExpansion(tree) {
    const open = new Set();
    let level = tree.children[0];
    let parentWeight = tree.total_ns;
    for (let depth = 0; depth < 12 && level.length; depth++) {
      const best = level[0]; // heaviest first
      if (tree.nodes[best][2] < parentWeight / 2) break;
      open.add(best);
      parentWeight = tree.nodes[best][2];
      level = tree.children[best];
    }
    return open;
  }

  function expandAtLeast(tree, share) {
    tree.nodes.forEach(([, , total], i) => { if (i > 0 && total >= share * tree.total_ns && tree.children[i].length) tree.expanded.add(i); });
  }

  // --- methods -----------------------------------------------------------------------------
  // Rperf::MethodTable as the page model computes it (page/page_views.hh), per filter as
  // the call tree. entry: [method, self_ns, total_ns, recursive, callers, callees,
  // caller_count, callee_count]; an arc: [method, ns], its share ns / the entry's total
  // (MethodTable::Arc#share). Nothing is summed here: every number is the table's.
  const methodKey = (table, m) => table.methods[m].join('\u0000');

  function methodWhere(table, m) {
    const [, file, line] = table.methods[m];
    return file ? shortPath(file) + (line > 0 ? ':' + line : '') : '';
  }

  let methodsSeq = 0;
  async function drawMethods(p) {
    const seq = ++methodsSeq;
    const query = filterQuery();
    const current = () => seq === methodsSeq && state.current === p && state.tab === 'methods' && filterQuery() === query;
    const body = $('methods-table').tBodies[0];
    $('methods-split').hidden = false;
    let table;
    try { table = modelView(p, 'method_table'); } catch (e) {
      if (!current()) return;
      clear(body);
      $('method-graph').hidden = true;
      $('methods-note').textContent = 'Cannot load the methods: ' + e.message;
      return;
    }
    if (!current()) return; // the user moved on meanwhile
    const note = `${table.entries.length} of ${table.method_count} methods shown: methods below ${table.min_percent}% of the total ` +
      `are left out (and beyond the ${table.max_methods} heaviest by total and by self), and so are callers and callees ` +
      `below it (at most ${table.max_arcs} of each per method).`;
    $('methods-note').textContent = note;
    const sum = table.total_ns;
    const order = table.entries.map((_, i) => i); // MethodTable's order: total, then self
    if (state.methodSort === 'self') order.sort((a, b) => table.entries[b][1] - table.entries[a][1] || a - b);
    const byKey = new Map(table.entries.map((e, i) => [methodKey(table, e[0]), i]));
    if (!byKey.has(state.method)) state.method = null;
    clear(body);
    const rows = order.map((i) => {
      const [m, self, total, recursive] = table.entries[i];
      const [name, file] = table.methods[m];
      const key = methodKey(table, m);
      const tr = el('tr', { class: 'clickable' + (key === state.method ? ' selected' : '') + (matches(searchText(), name, file) ? ' match' : ''), dataset: { name, selfNs: String(self), totalNs: String(total) } },
        el('td', { class: 'num', text: fmtTime(self) }), el('td', { class: 'num', text: pct(self, sum) }),
        el('td', { class: 'num', text: fmtTime(total) }), el('td', { class: 'num', text: pct(total, sum) }),
        el('td', { class: 'fn', text: name + (recursive ? ' ↻' : '') }),
        el('td', { class: 'file', text: methodWhere(table, m), title: file }));
      tr.addEventListener('click', () => selectMethod(key));
      return [key, tr];
    });
    const rowOf = new Map(rows);
    appendAll(body, rows.map(([, tr]) => tr));
    $('methods-table').dataset.rows = String(rows.length);
    $('methods-table').dataset.totalNs = String(sum);
    const selectMethod = (key) => {
      state.method = key;
      const entry = table.entries[byKey.get(key)];
      if (entry) state.sandwich = table.methods[entry[0]].slice(0, 2);
      for (const [k, tr] of rowOf) tr.classList.toggle('selected', k === key);
      drawMethodGraph(table, byKey, selectMethod);
    };
    drawMethodGraph(table, byKey, selectMethod);
  }

  // The selected method as `rperf report --graph` prints it: its callers above, its callees
  // below, each with the time of the samples in which that call happened and its share of the
  // method's total. A caller or callee in the table is a link to its own graph.
  function drawMethodGraph(table, byKey, selectMethod) {
    const graph = $('method-graph');
    const body = graph.tBodies[0];
    clear(body);
    const i = state.method === null ? undefined : byKey.get(state.method);
    graph.hidden = i === undefined;
    $('method-hint').hidden = i !== undefined;
    if (i === undefined) { delete graph.dataset.method; return; }
    const [m, self, total, recursive, callers, callees, callerCount, calleeCount] = table.entries[i];
    graph.dataset.method = table.methods[m][0];
    const arcRow = (kind) => ([other, ns]) => {
      const key = methodKey(table, other);
      const known = byKey.has(key);
      const tr = el('tr', { class: 'arc ' + kind + (known ? ' clickable' : ''), dataset: { kind, name: table.methods[other][0], ns: String(ns) } },
        el('td', { class: 'num', text: fmtTime(ns) }), el('td', { class: 'num', text: '' }),
        el('td', { class: 'num share', text: pct(ns, total) }),
        el('td', { class: 'fn', text: table.methods[other][0] }),
        el('td', { class: 'file', text: methodWhere(table, other), title: table.methods[other][1] }));
      if (known) tr.addEventListener('click', () => selectMethod(key));
      return tr;
    };
    const section = (text) => el('tr', { class: 'section' }, el('td', { colspan: '5', text }));
    const more = (shown, count, what) => (count > shown ? [section(`${count - shown} lighter ${what} not shown`)] : []);
    const sum = table.total_ns;
    appendAll(body, [
      section(callerCount ? 'called by' : 'called by: nothing (the top of its stacks)'),
      ...callers.map(arcRow('caller')), ...more(callers.length, callerCount, 'callers'),
      el('tr', { class: 'focus', dataset: { totalNs: String(total), selfNs: String(self) } },
        el('td', { class: 'num', text: fmtTime(total) }), el('td', { class: 'num', text: fmtTime(self) }),
        el('td', { class: 'num', text: pct(total, sum) + ' of all' }),
        el('td', { class: 'fn', text: table.methods[m][0] + (recursive ? ' ↻ (recursive)' : '') }),
        el('td', { class: 'file', text: methodWhere(table, m), title: table.methods[m][1] })),
      section(calleeCount ? 'calls' : 'calls: nothing (all its time is its own)'),
      ...callees.map(arcRow('callee')), ...more(callees.length, calleeCount, 'callees')]);
  }

  // --- allocations -------------------------------------------------------------------------
  // Allocation samples (allocations: N): [node, objects, thread, label_set, class, retained],
  // node being the allocating stack's leaf; a.retained null: not measured (retained: true was
  // not asked for), the rows' retained 0; the class is drawn as one more leaf under it, as
  // Rperf::Collapsed.encode(data, allocations: true) does. Objects are estimates (samples × N).
  const fmtCount = (n) => Math.round(n).toLocaleString('en-US');

  function drawAllocations(p) {
    const a = p.allocations;
    const container = $('alloc-flame');
    const body = $('alloc-table').tBodies[0];
    clear(body);
    $('alloc-table').hidden = !a;
    if (!a) {
      clear(container);
      container.dataset.rendered = '0';
      $('alloc-summary').textContent = 'This profile has no allocation samples. Record them with ' +
        '`rperf record --alloc ruby app.rb` (one allocation in 512; --alloc=64: one in 64) or Rperf.start(allocations: 64).';
      return;
    }
    const measured = a.retained !== null;
    const retainedButton = document.querySelector('#tab-alloc [data-field="retained"]');
    retainedButton.disabled = !measured;
    retainedButton.title = measured ? '' : 'not measured: record with retained: true (--retained)';
    const byRetained = measured && state.allocField === 'retained';
    // The kept rows' sums, from the page model: the tree's weights, each node's classes, the sites.
    const kept = model.select(p.handle, ROWS.allocations, { thread: state.threadFilter, hidden: hiddenThreads(p), sets: keptLabelSets(p) }); // allocations are never idle
    const { self, total, sum, allocated, retained, nodeClasses, sites } =
      model.allocationSums(p.handle, kept.rows, kept.weights, byRetained, MAX_TABLE_ROWS, p.nodes.parent.length);
    const perClass = new Map(); // node -> [[class, objects], ...]
    for (const [node, cls, objects] of nodeClasses) {
      if (!perClass.has(node)) perClass.set(node, []);
      perClass.get(node).push([cls, objects]);
    }
    const leavesOf = (node) => (perClass.get(node) || []).map(([cls, v]) => ({ name: a.classes[cls], file: '', value: v }));
    drawFlame(container, $('alloc-details'), hierarchy(p, { self, total, sum }, null, leavesOf),
      { format: (v) => fmtCount(v) + ' objects' });

    const summary = $('alloc-summary');
    const retainedText = measured ? `${fmtCount(retained)} still alive at the end (retained)`
      : 'retained not measured (record with retained: true or --retained)';
    summary.textContent = `${fmtCount(allocated)} objects allocated, ${retainedText}; ` +
      `estimates from one sampled allocation in ${a.interval}. ` + (unfilteredReason('alloc') || 'The label and thread filters apply.') +
      (a.pruned.samples ? ` ${a.pruned.samples} light stacks (${fmtCount(a.pruned.objects)} objects) are shown as [pruned].` : '');
    summary.dataset.allocated = String(allocated);
    summary.dataset.retained = measured ? String(retained) : '';
    const top = sites;
    for (const r of top) {
      const [fn, file] = p.frames[r.frame];
      body.append(el('tr', null,
        el('td', { class: 'num', text: fmtCount(r.allocated) }), el('td', { class: 'num', text: pct(r.allocated, allocated) }),
        el('td', { class: 'num', text: measured ? fmtCount(r.retained) : '–' }),
        el('td', { class: 'num', text: measured ? pct(r.retained, retained) : '' }),
        el('td', { class: 'fn', text: a.classes[r.cls] }), el('td', { class: 'fn', text: fn }),
        el('td', { class: 'file', text: file, title: file })));
    }
    $('alloc-table').dataset.rows = String(top.length);
  }

  // --- threads -----------------------------------------------------------------------------
  function drawThreads(p) {
    const body = $('threads-table').tBodies[0];
    clear(body);
    const rows = selectSamples(p, { thread: false, hide: false });
    const hidden = hiddenThreads(p);
    // Per thread, from the page model: total, running, GVL blocked, GVL wait, GC, idle (the
    // model's idle samples, summed), and the frame its rows spend most at.
    const perThread = new Map();
    for (const [th, total, running, blocked, wait, gc, idle, frame, frameWeight] of model.threadSums(p.handle, rows.kind, ...keptColumns(rows))) {
      perThread.set(th, { th, total, running, blocked, wait, gc, idle, leaf: frame >= 0 ? [p.frames[frame][0], frameWeight] : ['', 0] });
    }
    const sum = [...perThread.values()].reduce((a, t) => a + t.total, 0);
    for (const t of [...perThread.values()].sort((a, b) => a.th - b.th)) {
      const [fn, fw] = t.leaf;
      const idle = t.total > 0 ? t.idle / t.total : 0;
      const tr = el('tr', { class: 'clickable' + (state.threadFilter === t.th ? ' selected' : '') + (hidden && hidden.has(t.th) ? ' hidden-idle' : ''),
        dataset: { thread: String(t.th), idleShare: idle.toFixed(4), idleNs: String(Math.round(t.idle)) } },
        el('td', { text: threadText(p, t.th) + (t.idle > 0 && t.idle === t.total ? ' (idle)' : '') }),
        el('td', { class: 'num', text: fmtTime(t.total) + ' (' + pct(t.total, sum) + ')' }),
        el('td', { class: 'num', text: fmtTime(t.running) }), el('td', { class: 'num', text: fmtTime(t.blocked) }),
        el('td', { class: 'num', text: fmtTime(t.wait) }), el('td', { class: 'num', text: fmtTime(t.gc) }),
        el('td', { class: 'num idle', text: t.idle > 0 ? fmtTime(t.idle) + ' (' + pct(t.idle, t.total) + ')' : '–' }),
        el('td', { class: 'fn', text: fn + ' (' + fmtTime(fw) + ')' }));
      tr.addEventListener('click', () => {
        state.threadFilter = state.threadFilter === t.th ? null : t.th;
        $('filter-thread').value = state.threadFilter === null ? '' : String(t.th);
        render();
      });
      body.append(tr);
    }
    $('threads-table').dataset.rows = String(perThread.size);
  }

  // --- timeline ----------------------------------------------------------------------------
  // One row per thread; each column shows how much of that slice of time the thread spent
  // running, blocked off the GVL, waiting for it, or in GC. The slices are the model's
  // (Viewer::TimelinePayload): the payload's of every sample, or the server's for the label, tag
  // and hidden-thread filters. Only a file's page under those filters (or a data source without
  // views) bins the rows itself: a sample covers [t - weight, t].
  // A thread as every view spells it: its number, and its Thread#name when it had one.
  function threadText(p, th) {
    const name = p.threadNames && p.threadNames.get(th);
    return 'thread ' + th + (name ? ' (' + name + ')' : '');
  }

  async function drawTimeline(p) {
    const box = $('timeline');
    clear(box);
    box.removeAttribute('data-rendered');
    delete box.dataset.source;
    delete box.dataset.stateNs;
    delete box.dataset.threads;
    if (!p.timeline) {
      $('timeline-hint').textContent = 'This snapshot has no timestamps: profiles taken with aggregate: false have a timeline.';
      box.dataset.rendered = '0';
      return;
    }
    $('timeline-hint').textContent = 'Drag across the timeline to look at that time range only.' +
      (p.timeline.quantum_ns ? ` (samples merged into ${fmtTime(p.timeline.quantum_ns)} slots)` : '');
    const hiddenRows = hiddenThreads(p);
    const threads = p.threads.filter((th) => (state.threadFilter === null || th === state.threadFilter) && !(hiddenRows && hiddenRows.has(th)));
    const left = 90;
    const width = Math.max(400, (box.clientWidth || 960) - 2);
    const plot = width - left - 8;
    const binned = await timelineBins(p);
    if (!binned) await ensureTimeline(p);
    if (state.current !== p || state.tab !== 'timeline') return; // the user moved on meanwhile
    // Without the server's bins (a file's page, a source without views): the page model bins
    // the rows (threads are rows of their own: no thread filter, no time range).
    const shown = timelineOfBins(binned || model.timelineBins(p.handle, { hidden: hiddenThreads(p), sets: keptLabelSets(p), idle: hidingIdle(p) },
      Math.max(50, Math.min(600, Math.floor(plot / 2))), p.duration_ns || 0));
    box.dataset.source = binned ? 'bins' : 'rows';
    const { end, bins, binNs, occupancy } = shown;
    const rowH = 30;
    const height = threads.length * rowH + 24;
    const svg = svgEl('svg', { width, height });
    let drawn = 0;
    const stateNs = STATES.map(() => 0); // what the rows drawn hold, per state (data-state-ns)
    threads.forEach((th, row) => {
      const y0 = row * rowH;
      const label = svgEl('text', { x: 4, y: y0 + rowH / 2 + 4 });
      label.textContent = threadText(p, th);
      svg.append(label);
      const occ = occupancy.get(th);
      if (!occ) return;
      STATES.forEach((st, si) => { if (occ[si]) for (let b = 0; b < bins; b++) stateNs[si] += occ[si][b]; });
      for (let b = 0; b < bins; b++) {
        let stacked = 0;
        STATES.forEach((st, si) => {
          if (!occ[si]) return;
          const share = Math.min(1, occ[si][b] / binNs);
          if (share <= 0.001) return;
          const h = share * (rowH - 6);
          svg.append(svgEl('rect', {
            x: left + b * plot / bins, y: y0 + rowH - 3 - stacked - h, width: Math.max(1, plot / bins), height: h,
            fill: st.color, 'data-state': st.key,
          }));
          stacked += h;
          drawn++;
        });
      }
    });
    const axis = svgEl('text', { x: left, y: height - 6 });
    axis.textContent = '0';
    const axisEnd = svgEl('text', { x: width - 8, y: height - 6, 'text-anchor': 'end' });
    axisEnd.textContent = fmtTime(end);
    svg.append(axis, axisEnd);
    const brush = svgEl('rect', { class: 'brush', y: 0, height: height - 20, x: 0, width: 0, visibility: 'hidden' });
    svg.append(brush);
    if (state.range) {
      brush.setAttribute('x', left + state.range[0] / end * plot);
      brush.setAttribute('width', Math.max(1, (state.range[1] - state.range[0]) / end * plot));
      brush.setAttribute('visibility', 'visible');
    }
    const timeAt = (evt) => {
      const r = svg.getBoundingClientRect();
      return Math.min(end, Math.max(0, (evt.clientX - r.left - left) / plot * end));
    };
    let dragFrom = null;
    svg.addEventListener('mousedown', (evt) => { dragFrom = timeAt(evt); evt.preventDefault(); });
    svg.addEventListener('mousemove', (evt) => {
      const t = timeAt(evt);
      if (dragFrom !== null) {
        brush.setAttribute('x', left + Math.min(dragFrom, t) / end * plot);
        brush.setAttribute('width', Math.abs(t - dragFrom) / end * plot);
        brush.setAttribute('visibility', 'visible');
      }
      $('timeline-details').textContent = 'at ' + fmtTime(t) + ': ' + shown.describeAt(t);
    });
    svg.addEventListener('mouseup', (evt) => {
      if (dragFrom === null) return;
      const t = timeAt(evt);
      // Whole ns, as the address writes them: a link reopens the same range.
      const range = [Math.floor(Math.min(dragFrom, t)), Math.ceil(Math.max(dragFrom, t))];
      dragFrom = null;
      if (range[1] - range[0] < binNs) return;
      state.range = range;
      render();
    });
    box.append(svg, legend());
    box.dataset.threads = threads.join(',');
    box.dataset.stateNs = JSON.stringify(Object.fromEntries(STATES.map((st, si) => [st.key, Math.round(stateNs[si])])));
    box.dataset.rendered = String(drawn);
  }

  // The model's bins (TimelinePayload): per thread its states' ns per bin (null: none), and
  // per bin its heaviest leaf methods.
  function timelineOfBins(b) {
    const occupancy = new Map(b.threads.map(([th, states]) => [th, states]));
    const describeAt = (t) => {
      const top = b.top[Math.min(b.bins - 1, Math.max(0, Math.floor(t / b.bin_ns)))] || [];
      return top.length ? top.map((i) => b.leaf_names[i]).join(', ') : 'no samples';
    };
    return { end: b.end_ns, bins: b.bins, binNs: b.bin_ns, occupancy, describeAt };
  }

  // The Timeline's bins, as timelineOfBins reads them: the payload's (every sample), else the
  // server's for the current filters (kept per query); null when neither can be had.
  async function timelineBins(p) {
    const idle = hidingIdle(p);
    if (!state.labelFilter && !tagFiltered()) return (idle ? p.timeline.idle_hidden_bins : p.timeline.bins) || null;
    if (!filteredFromServer) return null;
    const q = new URLSearchParams();
    labelQuery(q);
    if (idle) q.set('idle', 'hide');
    tagQuery(q);
    if (transformsQuery()) q.set('transforms', transformsKey());
    const query = q.toString();
    if (!p.timelineBins) p.timelineBins = new Map();
    if (!p.timelineBins.has(query)) {
      const body = await fetchJSON(source.viewUrl(p.id, 'timeline_bins', query));
      while (p.timelineBins.size >= FILTERED_CACHE_SIZE) p.timelineBins.delete(p.timelineBins.keys().next().value);
      p.timelineBins.set(query, body);
    }
    return p.timelineBins.get(query);
  }

  function legend() {
    const names = { running: 'running', blocked: 'GVL blocked', wait: 'GVL wait', gc: 'GC' };
    return el('div', { class: 'legend' }, STATES.map((s) => el('span', null, el('i', { style: 'background:' + s.color }), names[s.key])));
  }

  // The end of the timeline: its last sample's time (no array of them: 500,000 rows).

  // --- stack chart -------------------------------------------------------------------------
  // One thread's samples in time order, each a column of its stack: the server merges them into
  // cells (Viewer::StackChartPayload: a frame that stays on the stack is one cell) and the page
  // only draws them. The same chart as the flame graph (zoom, pan, search, colours); x is time.
  function stackThreads(p) {
    const hidden = hiddenThreads(p);
    return p.threads.filter((th) => !(hidden && hidden.has(th)));
  }

  // The thread's cells under the label, tag and idle filters (a range is the chart's zoom, the
  // hidden threads its thread list), merged by the page model from the timeline's rows
  // (page/page_views.hh over profile/stack_chart); the last few kept.
  async function stackCells(p, th) {
    if (!p.timeline) throw new Error('the stack chart needs raw samples (a profile recorded with aggregate: false)');
    await ensureTimeline(p);
    const key = th + '\u0000' + filterQuery();
    if (!p.stackCharts) p.stackCharts = new Map();
    if (!p.stackCharts.has(key)) {
      const { f } = samplesFilter(p, { range: false, hide: false });
      f.thread = th;
      f.idle = hidingIdle(p);
      while (p.stackCharts.size >= FILTERED_CACHE_SIZE) p.stackCharts.delete(p.stackCharts.keys().next().value);
      p.stackCharts.set(key, model.view(p.handle, ROWS.timeline, f, 'stack_chart', null, { minEnd: p.duration_ns || 0 }));
    }
    return p.stackCharts.get(key);
  }

  // The chart's cells from the model's columns (page_views' stack_chart_json): each cell's parent is the
  // last cell before it one level up.
  function stackModel(body) {
    const n = body.dx.length;
    const cells = new Array(n);
    const lastAt = [];
    // Frame f >= 0 is body.frames[f]; f < 0 is the VM state -1 - f (TimelineState).
    const frameAt = (f) => (f >= 0 ? body.frames[f] : [STATE_LEAF[STATES[-1 - f].key][0], '', STATE_LEAF[STATES[-1 - f].key][1]]);
    const frames = new Map();
    const { dx, w, d: depths, f: fs, gap } = body;
    let x = 0;
    let depth = 0;
    for (let i = 0; i < n; i++) {
      x += dx[i];
      const d = depths[i];
      let frame = frames.get(fs[i]);
      if (!frame) { frame = frameAt(fs[i]); frames.set(fs[i], frame); }
      cells[i] = { x, w: w[i], d, name: frame[0], file: frame[1], cat: drawnCategory(frame[2], frame[0]), value: w[i] - gap[i], parent: d > 0 ? lastAt[d - 1] : -1 };
      lastAt[d] = i;
      if (d > depth) depth = d;
    }
    return { cells, start: 0, span: body.end_ns, depth };
  }

  let stackSeq = 0;
  async function drawStackChart(p) {
    const seq = ++stackSeq;
    const box = $('stack');
    const sel = $('stack-thread');
    const empty = (text) => {
      clear(box);
      delete box._chart;
      box.dataset.rendered = '0';
      delete box.dataset.totalNs;
      $('stack-details').textContent = text;
    };
    clear(sel);
    if (!p.timeline) { empty('This snapshot has no timestamps: profiles taken with aggregate: false have a stack chart.'); return; }
    const threads = state.threadFilter !== null ? [state.threadFilter] : stackThreads(p);
    const weightOf = p.totalNs;
    for (const th of threads) sel.append(el('option', { value: String(th), text: threadText(p, th) + ' (' + fmtTime(weightOf.get(th) || 0) + ')' }));
    // Default: the thread with the most time that is not idle (the model's thread_totals).
    if (!threads.includes(state.stackThread)) {
      const busyNs = (th) => (weightOf.get(th) || 0) - (p.idleNs.get(th) || 0);
      state.stackThread = threads.reduce((a, th) => (a === null || busyNs(th) > busyNs(a) ? th : a), null);
    }
    if (state.stackThread === null || state.stackThread === undefined) { empty('No thread to show.'); return; }
    sel.value = String(state.stackThread);
    const th = state.stackThread;
    let body;
    try { body = await stackCells(p, th); } catch (e) {
      if (seq === stackSeq) empty('Cannot load the stack chart of thread ' + th + ': ' + e.message);
      return;
    }
    if (seq !== stackSeq || state.current !== p || state.tab !== 'stack') return; // the user moved on meanwhile
    if (!body.dx.length) { empty('No samples of thread ' + th + ' match the filters.'); return; }
    const model = stackModel(body);
    const total = body.total_ns;
    box.dataset.totalNs = String(total);
    box.dataset.thread = String(th);
    box.dataset.cells = String(model.cells.length);
    $('stack-details').textContent = threadText(p, th) + ': ' + fmtTime(total) + ' in ' + body.samples + ' samples; hover a frame for its time.';
    const label = (c) => c.name + ' — ' + fmtTime(c.value) + ' (' + pct(c.value, total) + ') from ' + fmtTime(c.x) + ' to ' + fmtTime(c.x + c.w) + (c.file ? ' — ' + c.file : '');
    drawChart(box, $('stack-details'), model, { inverted: true, label, view: state.range, legend: categoryLegend(LEGEND), axis: fmtTime });
  }

  // --- sandwich ----------------------------------------------------------------------------
  // One method's callers (above it: a flame graph whose root is the method, each row up its
  // caller) and callees (below it: an icicle), as the server built them natively
  // (page/page_views.hh: the call tree's shape, per filter, as the call tree).
  function sandwichTree(tree) {
    const children = tree.nodes.map(() => []);
    tree.nodes.forEach(([parent], i) => { if (parent >= 0) children[parent].push(i); });
    const build = (i) => {
      const [, m, total] = tree.nodes[i];
      const [name, file] = tree.methods[m];
      const out = { name, file, value: total, cat: tree.categories ? drawnCategory(tree.categories[m], name) : 'app' };
      const kids = children[i].map(build);
      if (kids.length) out.children = kids;
      return out;
    };
    return children[0].length ? build(children[0][0]) : null; // node 0 is [root]; its one child the method
  }

  let sandwichSeq = 0;
  async function drawSandwich(p) {
    const seq = ++sandwichSeq;
    const boxes = [$('sandwich-callers'), $('sandwich-callees')];
    const note = $('sandwich-note');
    const reset = (text) => {
      for (const b of boxes) { clear(b); delete b._chart; b.dataset.rendered = '0'; }
      note.textContent = text;
      delete note.dataset.totalNs;
    };
    if (!state.sandwich) { reset('Pick a method: click it in the Methods tab, or pin a frame (Shift+click it in a flame graph or the stack chart) and press "sandwich" by the pin.'); return; }
    const [name, file] = state.sandwich;
    let body;
    try { body = modelView(p, 'sandwich', { fn: [name, file] }); } catch (e) {
      if (seq === sandwichSeq) reset('Cannot load the sandwich of ' + name + ': ' + e.message);
      return;
    }
    if (seq !== sandwichSeq || state.current !== p || state.tab !== 'sandwich') return; // the user moved on meanwhile
    const callers = sandwichTree(body.callers);
    const callees = sandwichTree(body.callees);
    if (!callers || !callees) { reset(`${name} has no samples under the filters.`); return; }
    const all = nodeWeights(p, selectSamples(p)).sum;
    note.textContent = `${name} (${file}): ${fmtTime(body.total_ns)}, ${pct(body.total_ns, all)} of the shown time; Shift+click a frame to make it the middle.`;
    note.dataset.totalNs = String(body.total_ns);
    drawFlame(boxes[0], $('sandwich-details'), callers, { maxHeight: 0.4, legend: false });
    drawFlame(boxes[1], $('sandwich-details'), callees, { inverted: true, maxHeight: 0.4 });
  }

  // --- source ------------------------------------------------------------------------------
  // A file of the profile with each line's time (recorded with lines: true), read by the
  // served viewer (Viewer::SourcePayload: only the profile's own files); a file page has none.
  let sourceSeq = 0;
  async function drawSource(p) {
    const seq = ++sourceSeq;
    const body = $('source-table').tBodies[0];
    const note = $('source-note');
    clear(body);
    delete $('source-table').dataset.path;
    if (!state.source) { note.textContent = 'Pin a frame (Shift+click it in a flame graph) and press "source" by the pin.'; return; }
    const [file, name] = state.source;
    if (!filteredFromServer) {
      note.textContent = `The source of ${file} is read by the served viewer (rperf report --port 0 PROFILE, or Rperf::Viewer), which reads the profile's own files: this ${embedded ? 'file' : 'data source'} holds no source.`;
      return;
    }
    const q = new URLSearchParams(filterQuery());
    q.set('path', file);
    if (!p.sources) p.sources = new Map();
    let src;
    try { src = await filteredView(p, 'source', p.sources, q.toString()); } catch (e) {
      if (seq === sourceSeq) note.textContent = 'Cannot show ' + file + ': ' + e.message;
      return;
    }
    if (seq !== sourceSeq || state.current !== p || state.tab !== 'source') return;
    const byLine = new Map(src.weights.map(([line, self, total]) => [line, [self, total]]));
    const sum = src.total_ns;
    // The line to show first: the file's hottest (by total).
    let focus = null;
    for (const [line, , total] of src.weights) if (focus === null || total > byLine.get(focus)[1]) focus = line;
    note.textContent = file + (name ? ' — ' + name : '') + ': ' + src.lines.length + ' lines' +
      (src.lines_recorded ? '; self and total per line, of ' + fmtTime(sum) + '.' : '. This profile was recorded without line numbers (lines: true records them): no time per line.');
    const rows = src.lines.map((text, i) => {
      const w = byLine.get(i + 1);
      return el('tr', { class: (w ? 'hot' : '') + (i + 1 === focus ? ' focus' : ''), dataset: { line: String(i + 1), selfNs: String(w ? w[0] : 0), totalNs: String(w ? w[1] : 0) } },
        el('td', { class: 'num', text: String(i + 1) }),
        el('td', { class: 'num', text: w && w[0] ? fmtTime(w[0]) + ' ' + pct(w[0], sum) : '' }),
        el('td', { class: 'num', text: w ? fmtTime(w[1]) + ' ' + pct(w[1], sum) : '' }),
        el('td', { class: 'code', text: text }));
    });
    appendAll(body, rows);
    $('source-table').dataset.path = file;
    const hot = body.querySelector('tr.focus');
    if (hot) hot.scrollIntoView({ block: 'center' });
  }

  // --- diff --------------------------------------------------------------------------------
  async function drawDiff(p, weights) {
    const body = $('diff-table').tBodies[0];
    const container = $('diff-flame');
    clear(body);
    clear($('diff-summary'));
    clear(container);
    container.removeAttribute('data-rendered');
    const baseId = state.baseId;
    if (baseId === null) {
      $('diff-summary').textContent = unfilteredReason('diff') || 'There is no other snapshot to compare with.';
      container.dataset.rendered = '0';
      return;
    }
    let base;
    try { base = await snapshot(baseId); } catch (e) {
      $('diff-summary').textContent = 'Cannot load snapshot #' + baseId + ': ' + e.message;
      container.dataset.rendered = '0';
      return;
    }
    if (state.current !== p || state.baseId !== baseId) return; // the user moved on meanwhile
    const bw = nodeWeights(base, selectSamples(base, { range: false }));
    const scale = $('diff-normalize').checked && bw.sum > 0 ? weights.sum / bw.sum : 1;
    // Map this snapshot's nodes onto the other's: the same frame (name, file) under the mapped
    // parent. Numeric keys: parent and frame in one number.
    const baseFrameOf = new Map(base.frames.map(([name, file], i) => [name + '\u0000' + file, i]));
    const frameMap = Int32Array.from(p.frames, ([name, file]) => baseFrameOf.get(name + '\u0000' + file) ?? -1);
    const span = base.frames.length + 1;
    const baseIndex = new Map();
    for (let i = 0; i < base.nodes.parent.length; i++) baseIndex.set((base.nodes.parent[i] + 1) * span + base.nodes.frame[i], i);
    const mapped = new Int32Array(p.nodes.parent.length).fill(-1);
    for (let i = 0; i < mapped.length; i++) {
      const parent = p.nodes.parent[i];
      const baseParent = parent < 0 ? -1 : mapped[parent];
      const baseFrame = frameMap[p.nodes.frame[i]];
      if ((parent >= 0 && baseParent < 0) || baseFrame < 0) continue;
      const hit = baseIndex.get((baseParent + 1) * span + baseFrame);
      if (hit !== undefined) mapped[i] = hit;
    }
    const deltaOf = (node) => weights.self[node] - (mapped[node] >= 0 ? bw.self[mapped[node]] * scale : 0);
    drawFlame(container, $('diff-details'), hierarchy(p, weights, deltaOf), { diff: true });

    // The table: each method's self and total time in both snapshots' method tables (the
    // model's), under the chart's filters (the other snapshot's without the time range: its
    // clock is its own). A method below a table's min_percent counts as 0 there.
    const summary = `#${base.id} (before) ${fmtTime(bw.sum * scale)}${scale !== 1 ? ' scaled' : ''} → ` +
      `#${p.id} (after) ${fmtTime(weights.sum)}: ${fmtSigned(weights.sum - bw.sum * scale)}`;
    let tables;
    try {
      // The base's rows are not of this snapshot's time: no range there.
      tables = [modelView(p, 'method_table'), modelView(base, 'method_table', { ranged: false })];
    } catch (e) { tables = 'cannot load the methods: ' + e.message; }
    if (state.current !== p || state.baseId !== baseId) return; // the user moved on meanwhile
    if (typeof tables === 'string') {
      $('diff-summary').textContent = summary + ' (' + tables + ')';
      $('diff-table').dataset.rows = '0';
      return;
    }
    // The two method tables side by side, ranked by change: the model's rows (`rperf diff`'s).
    const [after, before] = tables.map((table) => table.entries.map(([m, self, total]) => ({ name: table.methods[m][0], file: table.methods[m][1], self, total })));
    const rows = model.diffTotals(after, before, scale).map(([a, b, beforeSelf, afterSelf, beforeTotal, afterTotal]) => {
      const ref = a >= 0 ? after[a] : before[b];
      return { name: ref.name, file: ref.file, beforeSelf, afterSelf, beforeTotal, afterTotal, delta: afterSelf - beforeSelf };
    });
    for (const r of rows.slice(0, MAX_TABLE_ROWS)) {
      body.append(el('tr', { class: r.delta > 0 ? 'up' : r.delta < 0 ? 'down' : '' },
        el('td', { class: 'num', text: fmtTime(r.beforeSelf) }), el('td', { class: 'num', text: fmtTime(r.afterSelf) }),
        el('td', { class: 'num delta', text: fmtSigned(r.delta) }),
        el('td', { class: 'num', text: fmtTime(r.beforeTotal) }), el('td', { class: 'num', text: fmtTime(r.afterTotal) }),
        el('td', { class: 'fn', text: r.name }), el('td', { class: 'file', text: r.file, title: r.file })));
    }
    $('diff-summary').textContent = summary;
    $('diff-table').dataset.rows = String(Math.min(rows.length, MAX_TABLE_ROWS));
  }

  // --- filters -----------------------------------------------------------------------------
  function fillFilters(p) {
    const labelSel = $('filter-label');
    clear(labelSel);
    labelSel.append(el('option', { value: '', text: 'all samples' }));
    const perPair = new Map(); // key -> Map(value -> weight)
    const keyWeight = new Map();
    let total = 0;
    for (const [, w, , lsi] of p.samples) {
      total += w;
      for (const [k, v] of Object.entries(p.labelSets[lsi] || {})) {
        if (!perPair.has(k)) perPair.set(k, new Map());
        perPair.get(k).set(v, (perPair.get(k).get(v) || 0) + w);
        keyWeight.set(k, (keyWeight.get(k) || 0) + w);
      }
    }
    state.filterChoices = [];
    for (const key of [...perPair.keys()].sort()) {
      const group = el('optgroup', { label: key });
      const values = [...perPair.get(key).entries()].sort((a, b) => b[1] - a[1]);
      const choices = values.map(([v, w]) => [{ key, value: v }, `${key} = ${v} (${fmtTime(w)})`]);
      if (keyWeight.get(key) < total) choices.push([{ key, value: NOT_SET }, `${key} not set (${fmtTime(total - keyWeight.get(key))})`]);
      for (const [choice, text] of choices) {
        state.filterChoices.push(choice);
        group.append(el('option', { value: String(state.filterChoices.length - 1), text }));
      }
      labelSel.append(group);
    }
    // A filter keeps the values this snapshot has (NOT_SET: when the key is not always set).
    p.labelValues = new Map([...perPair].map(([k, values]) => [k, [...values.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .map(([v]) => v).concat(keyWeight.get(k) < total ? [NOT_SET] : [])]));
    const f = state.labelFilter;
    const values = f && p.labelValues.has(f.key) ? f.values.filter((v) => p.labelValues.get(f.key).includes(v)) : [];
    state.labelFilter = values.length ? { key: f.key, values } : null;
    drawLabelFilter(p);

    fillTagMenu(p, perPair);

    const threadSel = $('filter-thread');
    clear(threadSel);
    threadSel.append(el('option', { value: '', text: 'all threads' }));
    for (const th of p.threads) threadSel.append(el('option', { value: String(th), text: threadText(p, th) }));
    if (state.threadFilter !== null && p.threads.includes(state.threadFilter)) threadSel.value = String(state.threadFilter);
    else { state.threadFilter = null; threadSel.value = ''; }
  }

  // The label filter's controls, as the filter is: the select shows its one value (or that it
  // is a set), and the value menu ticks each value in the set. A value ticked in the menu joins
  // the set of its key (an endpoint set: GET /a or GET /b); a value of another key starts a new
  // set; the last one unticked clears the filter.
  function drawLabelFilter(p) {
    const f = state.labelFilter;
    const labelSel = $('filter-label');
    const old = labelSel.querySelector('option[value=set]');
    if (old) old.remove();
    if (!f) labelSel.value = '';
    else if (f.values.length === 1) {
      const i = state.filterChoices.findIndex((c) => c.key === f.key && c.value === f.values[0]);
      labelSel.value = String(i);
    } else {
      labelSel.firstChild.after(el('option', { value: 'set', text: `${f.key} = any of ${f.values.length}` })); // after "all samples"
      labelSel.value = 'set';
    }
    const box = $('label-set-options');
    clear(box);
    const values = p.labelValues || new Map();
    for (const [key, list] of [...values].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const set = el('fieldset', null, el('legend', { text: key }));
      for (const v of list) {
        const input = el('input', { type: 'checkbox', dataset: { key, value: v === NOT_SET ? '' : v, none: v === NOT_SET ? '1' : '0' } });
        input.checked = !!f && f.key === key && f.values.includes(v);
        input.addEventListener('change', () => {
          const cur = state.labelFilter;
          const rest = cur && cur.key === key ? cur.values.filter((x) => x !== v) : [];
          const next = input.checked ? rest.concat([v]) : rest;
          state.labelFilter = next.length ? { key, values: next } : null;
          render();
        });
        set.append(el('label', null, input, ' ' + (v === NOT_SET ? '(not set)' : v)));
      }
      box.append(set);
    }
    if (!values.size) box.append(el('p', { class: 'hint', text: 'This snapshot has no labels.' }));
    $('label-set-summary').textContent = f && f.values.length > 1 ? `values (${f.values.length})` : 'values';
  }

  // The tag menu: tagignore (each key = value, and key = (none)), tagroot and tagleaf (keys).
  // Choices this snapshot does not have are dropped.
  function fillTagMenu(p, perPair) {
    const box = $('tag-options');
    clear(box);
    const keys = [...perPair.keys()].sort();
    const has = (k, v) => perPair.has(k) && (v === null || perPair.get(k).has(v));
    state.tagIgnore = state.tagIgnore.filter(([k, v]) => has(k, v));
    state.tagRoot = state.tagRoot.filter((k) => perPair.has(k));
    state.tagLeaf = state.tagLeaf.filter((k) => perPair.has(k));
    const box1 = (kind, text, checked, onChange, data) => {
      const input = el('input', { type: 'checkbox', dataset: Object.assign({ kind }, data) });
      input.checked = checked;
      input.addEventListener('change', () => { onChange(input.checked); render(); });
      return el('label', null, input, ' ' + text);
    };
    const ignore = el('fieldset', null, el('legend', { text: 'tagignore' }));
    for (const k of keys) {
      const values = [null, ...[...perPair.get(k).keys()].sort()];
      for (const v of values) {
        const on = state.tagIgnore.some(([a, b]) => a === k && b === v);
        ignore.append(box1('ignore', k + ' = ' + (v === null ? '(none)' : v), on, (checked) => {
          state.tagIgnore = state.tagIgnore.filter(([a, b]) => !(a === k && b === v));
          if (checked) state.tagIgnore.push([k, v]);
        }, { key: k, value: v === null ? '' : v, none: v === null ? '1' : '0' }));
      }
    }
    const keyBoxes = (kind, list) => {
      const set = el('fieldset', null, el('legend', { text: 'tag' + kind }));
      for (const k of keys) {
        set.append(box1(kind, k, list().includes(k), (checked) => {
          const next = list().filter((x) => x !== k);
          if (checked) next.push(k);
          if (kind === 'root') state.tagRoot = next; else state.tagLeaf = next;
        }, { key: k }));
      }
      return set;
    };
    box.append(ignore, keyBoxes('root', () => state.tagRoot), keyBoxes('leaf', () => state.tagLeaf));
    if (!keys.length) box.append(el('p', { class: 'hint', text: 'This snapshot has no labels.' }));
    tagSummary();
  }
  function tagSummary() {
    for (const input of $('tag-options').querySelectorAll('input')) {
      const { kind, key, value, none } = input.dataset;
      if (kind === 'ignore') input.checked = state.tagIgnore.some(([k, v]) => k === key && (none === '1' ? v === null : v === value));
      else input.checked = (kind === 'root' ? state.tagRoot : state.tagLeaf).includes(key);
    }
    const n = state.tagIgnore.length + state.tagRoot.length + state.tagLeaf.length;
    $('tag-summary').textContent = n ? 'tags (' + n + ')' : 'tags';
    $('tag-focus').classList.toggle('invalid', !!state.tagFocus && !tagFocusRegex());
    $('tag-focus').title = state.tagFocus && !tagFocusRegex() ? 'Not a valid regular expression: tagfocus is skipped' : '';
  }

  // --- transforms --------------------------------------------------------------------------
  // Changing them reopens the snapshot: the server sends the transformed profile's payload.
  function setTransforms(list) {
    state.transforms = list;
    if (state.current) open(state.current.id); else render();
  }
  function drawTransforms() {
    const box = $('transforms');
    clear(box);
    const served = filteredFromServer;
    const why = 'Transforms are applied by the served viewer (rperf report --port 0 PROFILE, or Rperf::Viewer)';
    for (const b of document.querySelectorAll('.pin-transforms button, #collapse-recursion, #app-first')) {
      b.disabled = !served;
      if (!served) b.title = why;
    }
    const recursion = state.transforms.some((t) => t[0] === 'recursion');
    $('collapse-recursion').setAttribute('aria-pressed', String(recursion));
    $('app-first').setAttribute('aria-pressed', String(state.transforms.some((t) => t[0] === 'app')));
    state.transforms.forEach((t, i) => {
      const text = t[0] === 'recursion' ? 'recursion collapsed' : t[0] === 'app' ? 'app code first' : t[0] + ' ' + t[1];
      const chip = el('button', { type: 'button', class: 'transform', text: text + ' ✕', title: 'Undo this transform', dataset: { op: t[0] } });
      chip.addEventListener('click', () => setTransforms(state.transforms.filter((_, k) => k !== i)));
      box.append(chip);
    });
  }

  // --- the pinned method (Shift+click) -----------------------------------------------------
  // rperf 0.11.1's pin: the method is outlined in the charts, and its share of each snapshot
  // (its total in the snapshot's method table over the snapshot's total) is drawn as a line.
  function togglePin(frame) {
    state.pin = state.pin && frame && state.pin[0] === frame[0] && state.pin[1] === frame[1] ? null : frame;
    render();
  }
  const PIN_FETCHES = 4;
  const pinShares = new Map(); // "id\0name\0file\0transforms" -> share, or null when unknown
  // The method table of every sample of snapshot `id` under `transforms` (a transformsKey()):
  // asked of the server where it builds the views (not the whole snapshot), else the one in
  // the snapshot's payload (a file's).
  async function wholeMethodTable(id) {
    return modelView(state.current && state.current.id === id ? state.current : await snapshot(id), 'method_table', { all: true });
  }
  function shareOfTable(table, pin) {
    if (!table || !table.total_ns) return null;
    let ns = 0;
    for (const entry of table.entries) {
      const [name, file] = table.methods[entry[0]];
      if (name === pin[0] && file === pin[1]) ns += entry[2];
    }
    return ns / table.total_ns;
  }
  let pinSeq = 0;
  async function drawPin() {
    const panel = $('pin-panel');
    const pin = state.pin;
    panel.hidden = !pin;
    if (!pin) return;
    $('pin-name').textContent = 'pinned: ' + pin[0];
    $('pin-name').title = pin[0] + ' — ' + pin[1];
    const seq = ++pinSeq;
    const key = (id) => id + '\u0000' + pin[0] + '\u0000' + pin[1] + '\u0000' + transformsKey(); // shares of the transformed profiles
    const paint = () => {
      const svg = $('pin-trend');
      clear(svg);
      const w = Number(svg.getAttribute('width'));
      const h = Number(svg.getAttribute('height'));
      const values = state.list.map((s) => (pinShares.has(key(s.id)) ? pinShares.get(key(s.id)) : null));
      const max = maxOf(values.filter((v) => v !== null), 0.0001);
      const x = (i) => (values.length === 1 ? w / 2 : 6 + i * (w - 12) / (values.length - 1));
      const y = (v) => h - 5 - (v / max) * (h - 12);
      const points = [];
      values.forEach((v, i) => { if (v !== null) points.push(x(i) + ',' + y(v)); });
      svg.append(svgEl('polyline', { points: points.join(' '), fill: 'none', stroke: '#b4451f', 'stroke-width': 1.5 }));
      state.list.forEach((s, i) => {
        if (values[i] === null) return;
        const current = state.current && state.current.id === s.id;
        const dot = svgEl('circle', { cx: x(i), cy: y(values[i]), r: current ? 4 : 2.5, fill: current ? '#b4451f' : '#fff', stroke: '#b4451f', class: current ? 'current' : '', 'data-id': String(s.id), 'data-share': String(values[i]) });
        const title = svgEl('title');
        title.textContent = '#' + s.id + ': ' + (values[i] * 100).toFixed(1) + '%';
        dot.append(title);
        dot.addEventListener('click', () => open(s.id));
        svg.append(dot);
      });
      const cur = state.current && pinShares.get(key(state.current.id));
      $('pin-share').textContent = cur === undefined || cur === null ? '' : 'share ' + (cur * 100).toFixed(1) + '% @ #' + state.current.id;
      $('pin-share').dataset.share = cur === undefined || cur === null ? '' : String(cur);
    };
    // Each share is kept under the key of the profile it was asked for: the transforms may
    // change while a table is on its way.
    if (state.current && !pinShares.has(key(state.current.id))) {
      const asked = key(state.current.id);
      let share = null;
      try { share = shareOfTable(await wholeMethodTable(state.current.id, transformsKey()), pin); } catch (_) { /* left out */ }
      if (seq !== pinSeq || state.pin !== pin) return;
      pinShares.set(asked, share);
    }
    paint();
    // The other snapshots, PIN_FETCHES at a time; a newer pin stops them.
    const todo = state.list.filter((s) => !pinShares.has(key(s.id)) && !s.error && !isEmpty(s));
    let next = 0;
    const stale = () => seq !== pinSeq || state.pin !== pin;
    const fetcher = async () => {
      while (next < todo.length && !stale()) {
        const s = todo[next++];
        const asked = key(s.id);
        let share = null;
        try { share = shareOfTable(await wholeMethodTable(s.id, transformsKey()), pin); } catch (_) { /* left out */ }
        if (stale()) return;
        pinShares.set(asked, share);
        paint();
      }
    };
    await Promise.all(Array.from({ length: Math.min(PIN_FETCHES, todo.length) }, fetcher));
    if (!stale()) panel.dataset.loaded = '1';
  }

  // --- snapshot list and sparkline ---------------------------------------------------------
  // A file's entry (as rperf 0.11's) has its duration and sample count in its summary only.
  const summaryOf = (s) => (s.summary && typeof s.summary === 'object' ? s.summary : {});
  function durationNs(s) {
    if (s.duration_ns !== null && s.duration_ns !== undefined) return s.duration_ns;
    const ms = summaryOf(s).total_ms;
    return typeof ms === 'number' ? ms * 1e6 : null;
  }
  function sampleCount(s) {
    if (s.sampling_count !== null && s.sampling_count !== undefined) return s.sampling_count;
    const n = summaryOf(s).samples;
    return typeof n === 'number' ? n : null;
  }

  function drawList() {
    const body = $('snapshot-list').tBodies[0];
    clear(body);
    for (const s of state.list) {
      const meta = s.meta || {};
      const bits = [s.mode, meta.hostname && meta.pid ? meta.hostname + ':' + meta.pid : meta.pid];
      const git = meta.git || {};
      const commit = git.commit || git.sha;
      if (commit) bits.push(String(commit).slice(0, 10) + (git.branch ? ' ' + git.branch : '') + (git.dirty ? ' (dirty)' : ''));
      if (s.file) bits.push(s.file);
      if (s.error) bits.push('unreadable: ' + s.error);
      else if (!s.meta && s.file) bits.push('(no meta)');
      const when = new Date(s.taken_at);
      if (isEmpty(s)) bits.push('no samples');
      const tr = el('tr', { class: (state.current && state.current.id === s.id ? 'current' : '') + (s.error ? ' error' : '') + (isEmpty(s) ? ' empty' : ''), dataset: { id: String(s.id) } },
        el('td', { text: String(s.id) }),
        el('td', { text: when.toLocaleTimeString(), title: when.toString() }),
        el('td', { text: fmtTime(durationNs(s)) }),
        el('td', { text: sampleCount(s) === null ? '–' : String(sampleCount(s)) }),
        el('td', { class: 'meta', text: bits.filter(Boolean).join(' · ') }));
      tr.addEventListener('click', () => open(s.id));
      body.append(tr);
    }
    drawSparkline();
  }

  function drawSparkline() {
    const svg = $('sparkline');
    clear(svg);
    const w = Number(svg.getAttribute('width'));
    const h = Number(svg.getAttribute('height'));
    // Total sampled time; files written in rperf 0.11.1's format only know their duration.
    const values = state.list.map((s) => s.total_weight_ns ?? durationNs(s) ?? 0);
    if (!values.length) return;
    const max = maxOf(values, 1);
    const x = (i) => (values.length === 1 ? w / 2 : 6 + i * (w - 12) / (values.length - 1));
    const y = (v) => h - 6 - (v / max) * (h - 12);
    svg.append(svgEl('polyline', { points: values.map((v, i) => x(i) + ',' + y(v)).join(' '), fill: 'none', stroke: '#b4451f', 'stroke-width': 1.5 }));
    state.list.forEach((s, i) => {
      const dot = svgEl('circle', { cx: x(i), cy: y(values[i]), r: 3.5, fill: '#fff', stroke: '#b4451f', class: state.current && state.current.id === s.id ? 'current' : '' });
      const title = svgEl('title');
      title.textContent = '#' + s.id + ': ' + fmtTime(values[i]);
      dot.append(title);
      dot.addEventListener('click', () => open(s.id));
      svg.append(dot);
    });
  }

  function fillDiffBase() {
    const sel = $('diff-base');
    clear(sel);
    const others = state.list.filter((s) => !state.current || s.id !== state.current.id);
    for (const s of others) sel.append(el('option', { value: String(s.id), text: '#' + s.id + ' ' + new Date(s.taken_at).toLocaleTimeString() + (s.file ? ' ' + s.file : '') }));
    if (!others.some((s) => s.id === state.baseId)) {
      // Default: the snapshot just before this one, else the first other one.
      const idx = state.current ? state.list.findIndex((s) => s.id === state.current.id) : -1;
      const prev = idx > 0 ? state.list[idx - 1] : others[0];
      state.baseId = prev ? prev.id : null;
    }
    if (state.baseId !== null) sel.value = String(state.baseId);
  }

  // --- loading -----------------------------------------------------------------------------
  async function snapshot(id) {
    const key = id + '\u0000' + transformsKey();
    if (state.payloads.has(key)) return state.payloads.get(key);
    await loadPageModel();
    const p = prepare(await fetchSnapshot(id));
    state.payloads.set(key, p);
    while (state.payloads.size > 4) state.payloads.delete(state.payloads.keys().next().value);
    return p;
  }

  async function open(id) {
    setStatus('loading snapshot #' + id + '…', 'loading');
    try {
      await loadPageModel();
    } catch (e) { // not the snapshot's fault: the page cannot filter or sum any
      setStatus('cannot load the page model (page_model.wasm): ' + e.message, 'error');
      return;
    }
    let p;
    try {
      p = await snapshot(id);
    } catch (e) {
      setStatus('snapshot #' + id + ': ' + e.message, 'error');
      const entry = state.list.find((s) => s.id === id);
      if (entry && !entry.error) { entry.error = e.message; drawList(); }
      return;
    }
    state.current = p;
    state.range = null;
    if (pendingView && (pendingView.snap === null || pendingView.snap === id)) applyView(pendingView);
    pendingView = null;
    fillFilters(p);
    fillDiffBase();
    drawList();
    await render();
  }

  // A list entry known to hold no sample: no weight (a snapshot's GVL/GC intervals weigh
  // without a timer sample), else (files know only their sample count) no sample.
  const isEmpty = (s) => (s.total_weight_ns === null || s.total_weight_ns === undefined ? sampleCount(s) === 0 : s.total_weight_ns === 0);

  async function loadList() {
    setStatus('loading the snapshot list…', 'loading');
    try {
      state.list = await fetchList();
    } catch (e) {
      setStatus('cannot load the snapshot list: ' + e.message, 'error');
      return;
    }
    drawList();
    if (!state.list.length) {
      setStatus('No snapshots yet: "snapshot now" takes one of the running session; or use Rperf::Viewer, auto_snapshot: 60 ' +
        '(or call Rperf::Viewer.instance.take_snapshot!) while profiling, then reload; intervals without samples are not kept.', 'empty');
      return;
    }
    const linked = pendingView && pendingView.snap !== null && state.list.find((s) => s.id === pendingView.snap);
    const keep = linked || (state.current && state.list.find((s) => s.id === state.current.id));
    // The newest snapshot that is readable and has samples (an idle interval has none).
    const readable = state.list.filter((s) => !s.error);
    const useful = readable.filter((s) => !isEmpty(s));
    const pool = useful.length ? useful : readable.length ? readable : state.list;
    await open(keep ? keep.id : pool[pool.length - 1].id);
  }

  // --- rendering the current snapshot ------------------------------------------------------
  function drawSummary(p, weights) {
    const box = $('summary');
    clear(box);
    const meta = p.meta || {};
    $('snapshot-title').textContent = '#' + p.id + (p.file ? ' ' + p.file : '') + ' — ' + new Date(p.taken_at).toLocaleString();
    const parts = [
      (p.mode || '?') + ' mode', (p.frequency || '?') + ' Hz', 'duration ' + fmtTime(p.duration_ns),
      (p.sampling_count ?? '?') + ' samples', 'total ' + fmtTime(p.total_weight_ns),
    ];
    if (meta.ruby_version) parts.push('Ruby ' + meta.ruby_version);
    if (meta.command_line) parts.push(meta.command_line);
    box.append(el('span', { text: parts.join(' · ') }));
    if (window.RperfWorkEvents) window.RperfWorkEvents.draw($('work-events'), p.work_events);
    if (p.pruned && p.pruned.samples) {
      box.append(el('span', { class: 'pruned', text: ` · ${p.pruned.samples} light stacks (${pct(p.pruned.weight_ns, p.total_weight_ns)} of the time) shown as [pruned]` }));
    }
    const timelineRows = p.timeline ? p.timeline.rows ?? p.timeline.samples.length : 0;
    if (p.timeline && p.timeline.source_count > timelineRows) {
      box.append(el('span', { class: 'pruned', text: ` · timeline: ${p.timeline.source_count} samples merged into ${timelineRows}` }));
    }
    const all = nodeWeights(p, selectSamples(p, { label: false, thread: false, range: false, hide: false })).sum;
    const totals = $('totals');
    totals.textContent = 'shown: ' + fmtTime(weights.sum) + ' of ' + fmtTime(all) + ' (' + pct(weights.sum, all) + ')';
    totals.dataset.shownNs = String(Math.round(weights.sum));
    totals.dataset.totalNs = String(Math.round(all));
    const matched = searchWeight(p, weights, searchText());
    const info = $('search-info');
    if (matched === null) { info.textContent = ''; delete info.dataset.matchedNs; } else {
      info.textContent = 'matches ' + fmtTime(matched) + ' (' + pct(matched, weights.sum) + ' of shown)';
      info.dataset.matchedNs = String(Math.round(matched));
    }
    // The idle time the model found (thread_totals), and the threads that are all idle.
    const idleNs = (p.thread_totals || []).reduce((a, [, , idle]) => a + idle, 0);
    const hide = $('hide-idle');
    hide.textContent = state.hideIdle ? `show idle threads (${p.idleThreads.length} hidden, ${fmtTime(idleNs)} idle)` : `hide idle threads (${fmtTime(idleNs)} idle)`;
    hide.setAttribute('aria-pressed', String(state.hideIdle));
    hide.dataset.idleNs = String(idleNs);
    hide.disabled = !p.hasIdle && !state.hideIdle;
    // The threads that are all idle leave the thread filter's list too.
    const hidden = hiddenThreads(p);
    for (const o of $('filter-thread').options) o.hidden = !!(o.value && hidden && hidden.has(Number(o.value)));
    $('range-info').hidden = !state.range;
    $('clear-range').hidden = !state.range;
    if (state.range) $('range-info').textContent = 'time range ' + fmtTime(state.range[0]) + ' – ' + fmtTime(state.range[1]);
  }

  let renderSeq = 0;
  async function render() {
    const seq = ++renderSeq;
    document.body.dataset.state = 'drawing'; // 'ready' again when the last render is done
    try {
      await renderViews(seq);
    } catch (e) {
      setStatus('cannot draw ' + state.tab + ': ' + e.message, 'error');
      throw e;
    }
  }

  // A big timeline comes apart from the snapshot (Viewer.split_timeline): its rows are asked
  // for when a view first needs them, so the first view of a big profile does not wait.
  async function ensureTimeline(p) {
    if (!p.timeline || p.timeline.samples) return;
    if (!p.timelineLoad) {
      p.timelineLoad = fetchTimeline(p.id).then(({ rows, idle }) => { modelRows(p, ROWS.timeline, rows, idle); p.timeline.samples = rows; });
      p.timelineLoad.catch(() => { p.timelineLoad = null; });
    }
    setStatus('loading the timeline of snapshot #' + p.id + ' (' + p.timeline.rows + ' rows)…', 'drawing');
    await p.timelineLoad;
  }

  async function renderViews(seq) {
    const p = state.current;
    if (!p) { document.body.dataset.state = 'ready'; return; }
    if (p.timeline && state.range) await ensureTimeline(p); // the views of a time range cut its rows
    if (seq !== renderSeq || state.current !== p) return; // the user moved on meanwhile
    const rows = selectSamples(p);
    const weights = nodeWeights(p, rows);
    drawSummary(p, weights);
    drawLabelFilter(p);
    tagSummary();
    drawPin();
    drawTransforms();
    for (const b of $('tabs').querySelectorAll('button')) {
      b.classList.toggle('active', b.dataset.tab === state.tab);
      // A tab that cannot show the filters says so before it is opened.
      const reason = unfilteredReason(b.dataset.tab);
      b.classList.toggle('unfiltered', !!reason);
      if (reason) b.title = reason; else b.removeAttribute('title');
    }
    for (const s of document.querySelectorAll('.tab')) s.classList.toggle('active', s.id === 'tab-' + state.tab);
    switch (state.tab) {
      case 'flame': drawFlame($('flame'), $('flame-details'), flameHierarchy(p, rows, weights), {}); break;
      case 'icicle': drawFlame($('icicle'), $('icicle-details'), flameHierarchy(p, rows, weights), { inverted: true }); break;
      case 'stack': await drawStackChart(p); break;
      case 'sandwich': await drawSandwich(p); break;
      case 'top': await drawTop(p); break;
      case 'tree': await drawTree(p); break;
      case 'inverted': await drawTree(p, 'inverted'); break;
      case 'source': await drawSource(p); break;
      case 'methods': await drawMethods(p); break;
      case 'alloc': drawAllocations(p); break;
      case 'threads': drawThreads(p); break;
      case 'timeline': await drawTimeline(p); break;
      case 'diff': await drawDiff(p, weights); break;
      default: break;
    }
    if (seq === renderSeq) {
      state.zoom = null; // the address's zoom: taken by the chart, or there was none to take it
      writeHash();
      setStatus('snapshot #' + p.id + ': ' + state.tab, 'ready');
    }
  }

  // --- the view in the address -------------------------------------------------------------
  // #snap=2&tab=flame&q=...&label=K&value=V(&value=W...) (and/or &unset=1)&thread=N&from=T0&to=T1
  // &idle=hide&method=name%00file%00line&stack=N&zoom=X0_X1[_I]: a copied link opens the same
  // view. The zoom is the chart's (flame graph, icicle, stack chart...) range in its units, exact
  // (the same filters lay the chart out the same), and I the cell of the frame it was zoomed to.
  function viewHash() {
    const q = new URLSearchParams();
    if (state.current) q.set('snap', String(state.current.id));
    q.set('tab', state.tab);
    if (state.search) q.set('q', state.search);
    labelQuery(q);
    if (state.threadFilter !== null) q.set('thread', String(state.threadFilter));
    if (state.range) { q.set('from', String(Math.floor(state.range[0]))); q.set('to', String(Math.ceil(state.range[1]))); }
    if (state.hideIdle) q.set('idle', 'hide');
    if (state.method) q.set('method', state.method);
    if (state.sandwich) q.set('sandwich', state.sandwich.join('\u0000'));
    if (state.tab === 'stack' && state.stackThread !== null) q.set('stack', String(state.stackThread));
    if (state.tagFocus) q.set('tagfocus', state.tagFocus);
    if (state.tagIgnore.length) q.set('tagignore', JSON.stringify(state.tagIgnore));
    if (state.tagRoot.length) q.set('tagroot', JSON.stringify(state.tagRoot));
    if (state.tagLeaf.length) q.set('tagleaf', JSON.stringify(state.tagLeaf));
    if (state.pin) q.set('pin', state.pin.join('\u0000'));
    if (state.source) q.set('source', state.source.join('\u0000'));
    if (state.transforms.length) q.set('transforms', transformsKey());
    const zoom = state.zoom && state.zoom.tab === state.tab ? state.zoom : chartZoom(activeChart()); // not drawn yet: the address's
    if (zoom) q.set('zoom', zoom.view.join('_') + (zoom.focus >= 0 ? '_' + zoom.focus : '')); // _: not escaped
    return '#' + q.toString();
  }
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
    hashTimer = setTimeout(() => {
      hashTimer = null;
      if (document.body.dataset.state === 'ready') writeHash();
    }, Math.max(0, hashWrittenAt + 200 - performance.now()));
  }
  const TABS = () => [...$('tabs').querySelectorAll('button')].map((b) => b.dataset.tab);
  function readHash() {
    const q = new URLSearchParams(location.hash.slice(1));
    if (![...q.keys()].length) return null;
    const num = (k) => (q.has(k) && /^-?\d+$/.test(q.get(k)) ? Number(q.get(k)) : null);
    const out = { snap: num('snap'), search: q.get('q') || '', hideIdle: q.get('idle') === 'hide', thread: num('thread'),
      method: q.get('method'), stack: num('stack'), sandwich: q.has('sandwich') ? q.get('sandwich').split('\u0000').slice(0, 2) : null, tab: TABS().includes(q.get('tab')) ? q.get('tab') : null, label: null, range: null };
    if (q.has('label')) {
      const values = q.getAll('value');
      if (q.get('unset') === '1') values.push(NOT_SET);
      out.label = { key: q.get('label'), values: values.length ? values : [''] };
    }
    if (num('from') !== null && num('to') !== null) out.range = [num('from'), num('to')];
    const list = (k, ok) => {
      try { const v = JSON.parse(q.get(k) || '[]'); return Array.isArray(v) ? v.filter(ok) : []; } catch (_) { return []; }
    };
    out.tagFocus = q.get('tagfocus') || '';
    out.tagIgnore = list('tagignore', (e) => Array.isArray(e) && typeof e[0] === 'string' && (e[1] === null || typeof e[1] === 'string')).map((e) => [e[0], e[1]]);
    out.tagRoot = list('tagroot', (k) => typeof k === 'string');
    out.tagLeaf = list('tagleaf', (k) => typeof k === 'string');
    out.pin = q.has('pin') ? q.get('pin').split('\u0000').slice(0, 2) : null;
    out.source = q.has('source') ? q.get('source').split('\u0000').slice(0, 2) : null;
    out.transforms = list('transforms', (t) => Array.isArray(t) && (t.length === 3 || (t.length === 1 && (t[0] === 'recursion' || t[0] === 'app'))) && t.every((x) => typeof x === 'string'));
    const zoom = (q.get('zoom') || '').split('_').map((x) => (x === '' ? NaN : Number(x)));
    out.zoom = (zoom.length === 2 || (zoom.length === 3 && Number.isInteger(zoom[2]) && zoom[2] >= 0)) && zoom.every(Number.isFinite) && zoom[0] < zoom[1]
      ? { view: [zoom[0], zoom[1]], focus: zoom.length === 3 ? zoom[2] : -1 } : null;
    return out;
  }
  // Before fillFilters, which keeps the filters only when the snapshot has them.
  function applyView(v) {
    if (v.tab) state.tab = v.tab;
    state.search = v.search;
    $('search').value = v.search;
    state.hideIdle = v.hideIdle;
    state.labelFilter = v.label;
    state.threadFilter = v.thread;
    state.range = v.range;
    state.method = v.method;
    state.sandwich = v.sandwich;
    if (v.stack !== null) state.stackThread = v.stack;
    state.tagFocus = v.tagFocus;
    $('tag-focus').value = v.tagFocus;
    state.tagIgnore = v.tagIgnore;
    state.tagRoot = v.tagRoot;
    state.tagLeaf = v.tagLeaf;
    state.pin = v.pin && v.pin.length === 2 ? v.pin : null;
    state.source = v.source && v.source[0] ? v.source : null;
    state.transforms = v.transforms;
    state.zoom = v.zoom ? { tab: state.tab, ...v.zoom } : null;
  }
  let pendingView = null;

  // Segmented buttons: a click sets the state to the button's data-<attr>, marks it active and redraws.
  function bindToggle(selector, attr, set) {
    for (const b of document.querySelectorAll(selector)) {
      b.addEventListener('click', () => {
        set(b.dataset[attr]);
        for (const o of document.querySelectorAll(selector)) o.classList.toggle('active', o === b);
        render();
      });
    }
  }

  function wire() {
    for (const b of $('tabs').querySelectorAll('button')) {
      b.addEventListener('click', () => { state.tab = b.dataset.tab; render(); });
    }
    bindToggle('#tab-top [data-sort]', 'sort', (v) => { state.topSort = v; });
    $('filter-label').addEventListener('change', (e) => {
      if (e.target.value === 'set') return;
      const c = state.filterChoices[Number(e.target.value)];
      state.labelFilter = e.target.value === '' || !c ? null : { key: c.key, values: [c.value] };
      render();
    });
    $('filter-thread').addEventListener('change', (e) => {
      state.threadFilter = e.target.value === '' ? null : Number(e.target.value);
      render();
    });
    $('clear-range').addEventListener('click', () => { state.range = null; render(); });
    $('diff-base').addEventListener('change', (e) => { state.baseId = Number(e.target.value); render(); });
    $('diff-normalize').addEventListener('change', () => render());
    $('tree-expand').addEventListener('click', () => {
      if (!state.tree) return;
      expandAtLeast(state.tree, 0.01);
      render();
    });
    bindToggle('#tab-methods [data-sort]', 'sort', (v) => { state.methodSort = v; });
    $('tree-collapse').addEventListener('click', () => { if (state.tree) state.tree.expanded = new Set(); render(); });
    $('inverted-expand').addEventListener('click', () => { if (state.tree) { expandAtLeast(state.tree, 0.01); render(); } });
    $('inverted-collapse').addEventListener('click', () => { if (state.tree) state.tree.expanded = new Set(); render(); });
    bindToggle('#tab-alloc [data-field]', 'field', (v) => { state.allocField = v; });
    $('refresh').addEventListener('click', () => loadList());
    // A served page of this process's session (not a file, not a custom data source): the
    // server takes a snapshot now (POST <base>/snapshots) and the list reloads.
    $('snapshot-now').hidden = !!embedded || !!customSource;
    $('snapshot-now').addEventListener('click', async () => {
      const res = await fetch(BASE + '/snapshots', { method: 'POST', headers: { 'x-rperf-snapshot': '1', accept: 'application/json' } });
      let body = null;
      try { body = await res.json(); } catch (_) { /* not JSON */ }
      if (!res.ok) { setStatus('no snapshot taken: ' + ((body && body.error) || res.status + ' ' + res.statusText), 'error'); return; }
      await loadList();
      if (body && body.id) await open(body.id);
    });
    let searchTimer = null;
    $('search').addEventListener('input', (e) => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(() => { state.search = e.target.value; render(); }, 120);
    });
    $('hide-idle').addEventListener('click', () => { state.hideIdle = !state.hideIdle; render(); });
    let tagTimer = null;
    $('tag-focus').addEventListener('input', (e) => {
      clearTimeout(tagTimer);
      tagTimer = setTimeout(() => { state.tagFocus = e.target.value.trim(); render(); }, 120);
    });
    $('pin-close').addEventListener('click', () => togglePin(null));
    for (const b of document.querySelectorAll('.pin-transforms button')) {
      b.addEventListener('click', () => { if (state.pin) setTransforms([...state.transforms, [b.dataset.transform, state.pin[0], state.pin[1]]]); });
    }
    $('collapse-recursion').addEventListener('click', () => {
      const on = state.transforms.some((t) => t[0] === 'recursion');
      setTransforms(on ? state.transforms.filter((t) => t[0] !== 'recursion') : [...state.transforms, ['recursion']]);
    });
    // App code first (Viewer::Transforms' ['app']): the model makes each run of gem and stdlib
    // frames one [framework] frame.
    $('app-first').addEventListener('click', () => {
      const on = state.transforms.some((t) => t[0] === 'app');
      setTransforms(on ? state.transforms.filter((t) => t[0] !== 'app') : [...state.transforms, ['app']]);
    });
    $('pin-source').addEventListener('click', () => {
      if (!state.pin) return;
      state.source = [state.pin[1], state.pin[0]];
      state.tab = 'source';
      render();
    });
    $('pin-sandwich').addEventListener('click', () => {
      if (!state.pin) return;
      state.sandwich = state.pin.slice();
      state.tab = 'sandwich';
      render();
    });
    $('stack-thread').addEventListener('change', (e) => { state.stackThread = Number(e.target.value); render(); });
    $('help-button').addEventListener('click', () => { $('help').hidden = !$('help').hidden; });
    document.addEventListener('keydown', onKey);
    window.addEventListener('hashchange', () => {
      if (location.hash === viewHash()) return; // ours
      const v = readHash();
      if (!v) return;
      pendingView = v;
      state.transforms = v.transforms; // before the snapshot is asked for
      const id = v.snap !== null && state.list.some((s) => s.id === v.snap) ? v.snap : state.current && state.current.id;
      if (id !== null && id !== undefined) open(id);
    });
    let resizeTimer = null;
    window.addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        if (!['flame', 'icicle', 'stack', 'timeline', 'diff', 'alloc'].includes(state.tab)) return;
        const zoom = chartZoom(activeChart()); // the same chart, wider or narrower: the same zoom
        state.zoom = zoom && { tab: state.tab, ...zoom };
        render();
      }, 200);
    });
  }

  // The keys: each binding's evt.key values, its line in the ? overlay and its action. The
  // overlay is drawn from this table (drawHelp) and onKey reads only it, so the overlay lists
  // exactly the keys the page handles. run(key, chart, evt): chart is the tab's on screen.
  const DIGITS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '0'];
  const chartKey = (f) => (key, chart) => { if (chart) { f(key, chart); paintChart(chart); } };
  function stepSnapshot(dir) {
    if (!state.current) return;
    const i = state.list.findIndex((s) => s.id === state.current.id);
    const next = state.list[i + dir];
    if (next) open(next.id);
  }
  const KEYS = [
    { keys: ['/'], text: 'search frames', run: () => { $('search').focus(); $('search').select(); } },
    // In a field too: leaves it (the search stays as it is), or closes this list.
    { keys: ['Escape'], shown: ['Esc'], inFields: true, text: 'leave the search box / close this',
      run: (key, chart, evt) => { if (!$('help').hidden) $('help').hidden = true; else if (evt.target && evt.target.blur) evt.target.blur(); } },
    { keys: DIGITS, tabs: true, run: (key) => { const tab = TABS()[DIGITS.indexOf(key)]; if (tab) { state.tab = tab; render(); } } },
    { keys: ['j', 'k'], text: 'next / previous snapshot', run: (key) => stepSnapshot(key === 'j' ? 1 : -1) },
    { keys: ['+', '=', '-'], text: 'zoom the chart in (+ or =) / out (-), around its middle',
      run: chartKey((key, chart) => scaleChart(chart, key === '-' ? 2 : 0.5, (chart.x0 + chart.x1) / 2)) },
    { keys: ['ArrowLeft', 'ArrowRight'], shown: ['←', '→'], text: 'pan the chart by a fifth of its width',
      run: chartKey((key, chart) => panChart(chart, (key === 'ArrowLeft' ? -1 : 1) * 0.2 * (chart.x1 - chart.x0))) },
    { keys: ['z'], text: 'reset the zoom', run: (key, chart) => { if (chart) zoomChart(chart, -1); } },
    { keys: ['h'], text: 'hide / show idle threads', run: () => { state.hideIdle = !state.hideIdle; render(); } },
    { keys: ['c'], text: 'clear the filters and the search', run: () => clearFilters() },
    { keys: ['?'], text: 'this list', run: () => { $('help').hidden = !$('help').hidden; } },
  ];
  const KEY_BINDINGS = new Map(KEYS.flatMap((b) => b.keys.map((k) => [k, b])));

  // The ? overlay's table, from KEYS: each key a <kbd data-key>; the digits with the tabs they
  // open, in order (the tab bar has more tabs than there are digits: the rest are clicked).
  function drawHelp() {
    const table = $('help-keys');
    clear(table);
    const tabs = [...$('tabs').querySelectorAll('button')].map((t) => t.textContent);
    const kbd = (key, shown) => el('kbd', { dataset: { key }, text: shown });
    for (const b of KEYS) {
      const keys = [];
      b.keys.forEach((k, i) => {
        if (i) keys.push(b.tabs ? ' ' : ' / ');
        keys.push(kbd(k, b.shown ? b.shown[i] : k));
      });
      const reached = tabs.slice(0, DIGITS.length);
      const text = b.tabs
        ? `the first ${reached.length} of the ${tabs.length} tabs, in order: ${reached.join(', ')}` +
          (tabs.length > DIGITS.length ? ` (${tabs.slice(DIGITS.length).join(', ')}: click them)` : '')
        : b.text;
      table.append(el('tr', { dataset: { keys: b.keys.join(' ') } }, el('td', null, keys), el('td', { text })));
    }
    table.append(el('tr', null, el('td', null, el('kbd', { text: 'Shift' }), '+click'), el('td', { text: 'pin a method: outlined, its share in every snapshot' })));
  }

  // A key's binding (KEYS), except while typing in a field (Escape works there too).
  function onKey(evt) {
    if (evt.ctrlKey || evt.metaKey || evt.altKey) return;
    const typing = evt.target && (evt.target.tagName === 'INPUT' || evt.target.tagName === 'SELECT' || evt.target.tagName === 'TEXTAREA');
    const binding = KEY_BINDINGS.get(evt.key);
    if (!binding || (typing && !binding.inFields)) return;
    evt.preventDefault();
    binding.run(evt.key, activeChart(), evt);
  }

  window.rperfViewer = { state, open, render, reload: loadList, viewHash, keys: () => [...KEY_BINDINGS.keys()] };
  pendingView = readHash();
  if (pendingView) state.transforms = pendingView.transforms;
  if (embedded) $('refresh').hidden = true;
  drawHelp();
  wire();
  loadPageModel().catch(() => {}); // its error is shown when a snapshot opens
  loadList();
})();
