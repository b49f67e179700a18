// The page model's JavaScript side: page_model.wasm (ext/rperf/page, the profile model compiled
// to WebAssembly) and the only code that calls it, through the table generated from its C
// interface (page_model_exports.js, from page/wasm_exports.cc): columns written into its scratch
// area, results read from its memory. No DOM, no page state: the page (viewer_data.js) and the node
// tests (test/js) use it alike.
(function (root) {
  'use strict';
  const EXPORTS = typeof module === 'object' && module.exports ? require('./page_model_exports.js') : root.RperfPageModelExports;

  const ROWS = { samples: 0, timeline: 1, allocations: 2 };
  const STATE_COUNT = 4; // TimelineState (profile/vm_state.hh): per node in the state sums
  const VIEWS = { call_tree: 0, inverted_tree: 1, method_table: 2, sandwich: 3, stack_chart: 4, label_values: 5 };
  const utf8 = new TextEncoder();
  const decoder = new TextDecoder();

  // Texts for the module (read_texts): each a uint32 length and its UTF-8.
  function textBlob(texts) {
    const encoded = texts.map((t) => utf8.encode(String(t)));
    const blob = new Uint8Array(encoded.reduce((a, b) => a + 4 + b.length, 0));
    const lengths = new DataView(blob.buffer);
    let at = 0;
    for (const b of encoded) { lengths.setUint32(at, b.length, true); blob.set(b, at + 4); at += 4 + b.length; }
    return blob;
  }

  function readTexts(blob, count) {
    const lengths = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    const out = [];
    for (let at = 0, i = 0; i < count && at + 4 <= blob.length; i++) {
      const n = lengths.getUint32(at, true);
      out.push(decoder.decode(blob.subarray(at + 4, at + 4 + n)));
      at += 4 + n;
    }
    return out;
  }

  const TYPES = { i32: Int32Array, u32: Uint32Array, u8: Uint8Array, f64: Float64Array };

  class PageModel {
    constructor(exports) {
      this.w = exports;
      // A snapshot dropped by the page frees its rows in the module.
      this.handles = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((h) => exports.rperf_page_delete(h)) : null;
    }

    // Calls rperf_page_NAME as page_model_exports.js (generated from wasm_exports.cc) declares
    // it: its arguments by name (a count its columns give may be left out; true/false as 1/0),
    // its scratch columns by name, written in the order and types the module reads them.
    call(name, args = {}, columns = {}) {
      const spec = EXPORTS[name];
      if (!spec) throw new Error('the page model has no ' + name);
      const a = Object.assign({}, args);
      const typed = [];
      for (const [column, type, count, flag] of spec.columns) {
        if (flag && !a[flag]) continue;
        const values = columns[column];
        if (!values) throw new Error(name + ': no column ' + column);
        const Type = TYPES[type];
        const c = values instanceof Type ? values : Type.from(values);
        if (a[count] === undefined) a[count] = c.length;
        typed.push(c);
      }
      if (typed.length) this.put(typed);
      return this.w['rperf_page_' + name](...spec.args.map((arg) => {
        if (a[arg] === undefined) throw new Error(name + ': no argument ' + arg);
        return typeof a[arg] === 'boolean' ? Number(a[arg]) : a[arg];
      }));
    }

    // A copy of the `n` elements rperf_page_NAME points at, of the type it declares.
    array(name, args, n) { return this.read(TYPES[EXPORTS[name].array], this.call(name, args), n); }

    // Writes typed-array columns into the scratch area, each at a multiple of 8 bytes.
    put(columns) {
      const padded = (c) => Math.ceil(c.byteLength / 8) * 8;
      const ptr = this.w.rperf_page_scratch(columns.reduce((a, c) => a + padded(c), 0));
      const memory = new Uint8Array(this.w.memory.buffer); // after the call: the memory may have grown
      let at = ptr;
      for (const c of columns) {
        memory.set(new Uint8Array(c.buffer, c.byteOffset, c.byteLength), at);
        at += padded(c);
      }
    }

    read(Type, ptr, n) { return n ? new Type(this.w.memory.buffer, ptr, n).slice() : new Type(0); }

    // A snapshot's tree (parents before children), its frames ([name, path]) with their method
    // lines, its label sets ({key: value} as the page spells them) and, for a profile with
    // lines, its line tree ({parent, frame, line}: the Source tab's): a handle, freed with
    // `owner` when given.
    snapshot({ parents, nodeFrames, frames, frameLines, labelSets, lineTree }, owner) {
      const handle = this.call('new');
      if (owner && this.handles) this.handles.register(owner, handle);
      const blob = textBlob(frames.flatMap((f) => [f[0], f[1] || '']));
      const lines = Int32Array.from(frames, (_, i) => (frameLines && frameLines[i]) || 0);
      if (!this.call('set_tree', { handle }, { parents, frames: nodeFrames, lines, blob })) throw new Error('the snapshot\'s tree is not a prefix tree');
      const pairs = labelSets.map((ls) => Object.entries(ls || {}));
      if (!this.call('set_label_sets', { handle }, { pairs: pairs.map((e) => e.length), blob: textBlob(pairs.flat(2)) })) {
        throw new Error('the snapshot\'s label sets cannot be read');
      }
      if (lineTree && !this.call('set_line_tree', { handle }, { parents: lineTree.parent, frames: lineTree.frame, lines: lineTree.line })) {
        throw new Error('the snapshot\'s line tree is not a prefix tree of its frames');
      }
      return handle;
    }

    // Rows [node, weight, thread, label set, time?] of `kind` (allocation rows: [node, objects,
    // thread, label set, class, retained]), each with its line-level leaf last when `lines` (a
    // time or timeline row of a profile with lines); idleIndexes: the payload's idle marks.
    // Returns the marks as a Uint8Array per row, or null.
    rows(handle, kind, rows, idleIndexes, lines = false) {
      const at = (k) => rows.map((r) => r[k]);
      const timed = kind === ROWS.timeline;
      const allocations = kind === ROWS.allocations;
      const columns = [0, 1, 2, 3].map(at);
      if (timed || allocations) columns.push(at(4));
      if (allocations) columns.push(at(5));
      if (lines && !allocations) columns.push(at(timed ? 5 : 4));
      return this.columns(handle, kind, columns, idleIndexes);
    }

    // The same rows as columns (the rows' elements in order, each an array or a typed array): a
    // timeline sent as columns goes to the module without a row made of it.
    columns(handle, kind, columns, idleIndexes) {
      const [node, weight, thread, set] = columns;
      const n = node.length;
      const timed = kind === ROWS.timeline;
      const allocations = kind === ROWS.allocations;
      let idle = null;
      if (idleIndexes && idleIndexes.length) {
        idle = new Uint8Array(n);
        for (const i of idleIndexes) if (i < n) idle[i] = 1;
      }
      const named = { node, thread_seq: thread, label_set: set, weight, time_ns: timed ? columns[4] : null, idle };
      if (allocations) Object.assign(named, { class_index: columns[4], retained: columns[5] });
      const line = allocations ? null : columns[timed ? 5 : 4];
      if (line) named.line_node = line;
      if (!this.call('set_rows', { handle, kind, has_time: timed, has_idle: !!idle, has_classes: allocations, has_lines: !!line }, named)) {
        throw new Error('the snapshot\'s rows are not on its tree');
      }
      return idle;
    }

    // The filter of the next selection (SampleFilter's row part). f: thread (or null), hidden
    // (a Set), sets (kept label set ids, sorted), range [t0, t1], idle.
    filter(handle, f) {
      const byThread = f.thread !== null && f.thread !== undefined;
      this.call('filter', {
        handle, by_thread: byThread, thread: byThread ? f.thread : 0, by_sets: !!f.sets,
        by_range: !!f.range, from_ns: f.range ? f.range[0] : 0, to_ns: f.range ? f.range[1] : 0, hide_idle: !!f.idle,
      }, { hidden_threads: f.hidden ? [...f.hidden].sort((a, b) => a - b) : [], label_sets: f.sets || [] });
    }

    // The rows of `kind` the filter keeps: {rows: indexes, weights: kept weights}.
    select(handle, kind, f) {
      this.filter(handle, f);
      const n = this.call('select', { handle, kind });
      return { rows: this.array('kept_rows', { handle }, n), weights: this.array('kept_weights', { handle }, n) };
    }

    // The label sets a label filter (key, values, unset), tagfocus's matched values (focused, or
    // null for none) and tagignore's pairs ([key, value or null]) keep: sorted ids.
    matchLabelSets(handle, { key, values, unset, focused, ignore }) {
      const blob = textBlob([...(key !== null ? [key] : []), ...values, ...(focused || []), ...ignore.flatMap(([k, v]) => [k, v === null ? '' : v])]);
      const n = this.call('match_label_sets', {
        handle, by_label: key !== null, unset: !!unset, value_count: values.length, by_focus: !!focused, focus_count: focused ? focused.length : 0,
      }, { has_value: ignore.map(([, v]) => (v === null ? 0 : 1)), blob });
      return this.array('matched_sets', { handle }, n);
    }

    // Every label value of the snapshot, sorted, each once.
    labelValues(handle) {
      const n = this.call('label_values', { handle });
      return readTexts(this.array('label_values_blob', { handle }, this.call('label_values_bytes', { handle })), n);
    }

    // The weights of rows of `kind` (indexes, weights) on a tree of nodeCount nodes: self and
    // total per node, the sum, and each node's self weight per state (STATE_COUNT per node).
    treeWeights(handle, kind, indexes, weights, nodeCount) {
      const sum = this.call('tree_weights', { handle, kind }, { rows: indexes, weights });
      return {
        sum,
        self: this.array('self', { handle }, nodeCount),
        total: this.array('total', { handle }, nodeCount),
        states: this.array('state_self', { handle }, nodeCount * STATE_COUNT),
      };
    }

    // Per thread of the rows: [thread, total, running, blocked, wait, gc, idle, top frame, its weight].
    threadSums(handle, kind, indexes, weights) {
      const count = this.call('thread_sums', { handle, kind }, { rows: indexes, weights });
      const table = this.array('thread_table', { handle }, count * 9);
      return Array.from({ length: count }, (_, k) => Array.from(table.subarray(k * 9, k * 9 + 9)));
    }

    // The Allocations tab's sums of allocation rows.
    allocationSums(handle, indexes, weights, byRetained, maxSites, nodeCount) {
      const sum = this.call('allocation_sums', { handle, by_retained: byRetained, max_sites: maxSites }, { rows: indexes, weights });
      const [allocated, retained, classCount, siteCount] = this.array('allocation_header', { handle }, 4);
      const classes = this.array('node_classes', { handle }, classCount * 3);
      const sites = this.array('allocation_sites', { handle }, siteCount * 4);
      return {
        sum, allocated, retained,
        self: this.array('self', { handle }, nodeCount),
        total: this.array('total', { handle }, nodeCount),
        nodeClasses: Array.from({ length: classCount }, (_, k) => [classes[3 * k], classes[3 * k + 1], classes[3 * k + 2]]),
        sites: Array.from({ length: siteCount }, (_, k) => ({ frame: sites[4 * k], cls: sites[4 * k + 1], allocated: sites[4 * k + 2], retained: sites[4 * k + 3] })),
      };
    }

    // The Timeline's bins of the timeline rows the filter keeps, in the server's shape
    // (TimelinePayload).
    timelineBins(handle, f, bins, minEnd) {
      this.filter(handle, f);
      const count = this.call('timeline_bins', { handle, bins, min_end_ns: minEnd });
      const [end, binNs, kept, names] = this.array('bins_header', { handle }, 4);
      const threads = this.array('bins_threads', { handle }, count);
      const occupancy = this.array('bins_occupancy', { handle }, count * STATE_COUNT * bins);
      const top = this.array('bins_top', { handle }, bins * 3);
      const leafNames = readTexts(this.array('bins_names_blob', { handle }, this.call('bins_names_bytes', { handle })), names);
      const perBin = [];
      for (let b = 0; b < bins; b++) perBin.push([...top.subarray(b * 3, b * 3 + 3)].filter((n) => n !== 0xffffffff));
      return {
        end_ns: end, bins, bin_ns: binNs, kept_ns: kept, leaf_names: leafNames, top: perBin,
        threads: Array.from(threads, (th, t) => [th, Array.from({ length: STATE_COUNT }, (_, si) => {
          const row = occupancy.subarray((t * STATE_COUNT + si) * bins, (t * STATE_COUNT + si + 1) * bins);
          return row.some((v) => v > 0) ? row : null;
        })]),
      };
    }

    // A view of the rows of `kind` the filter keeps (page/page_views.hh), parsed: 'call_tree',
    // 'inverted_tree', 'method_table', 'sandwich' of fn ([name, path]), 'label_values' ([[key,
    // [[value, weight], ...] heaviest first, weight without the key], ...]), or 'stack_chart' (of
    // f.thread's timeline rows; its columns dx, w, d, f, gap as Float64Arrays); limits: {maxNodes, maxMethods, maxArcs} (the model's defaults
    // when left out), minEnd: the stack chart's least axis end.
    view(handle, kind, f, view, fn, limits = {}) {
      this.filter(handle, f);
      const n = this.call('view', {
        handle, kind, view: VIEWS[view], max_nodes: limits.maxNodes || 0, max_methods: limits.maxMethods || 0, max_arcs: limits.maxArcs || 0,
        min_end_ns: limits.minEnd || 0,
      }, { blob: textBlob(fn || []) });
      if (!n) throw new Error('the page model cannot build the ' + view.replace('_', ' '));
      const out = JSON.parse(decoder.decode(this.array('view_json', { handle }, n)));
      if (view === 'stack_chart') {
        // Its cells' columns (dx, w, d, f, gap) as numbers, not JSON text.
        const cells = this.array('chart_cells', { handle }, 5 * out.cells);
        ['dx', 'w', 'd', 'f', 'gap'].forEach((name, k) => { out[name] = cells.subarray(k * out.cells, (k + 1) * out.cells); });
      }
      return out;
    }

    // The Diff tab's flame graph (page_rows.hh's tree_diff): the rows of `kind` f keeps against
    // those of baseKind baseF keeps in the base snapshot, normalize: the base scaled to this one's
    // sum. {sum, baseSum, baseScale, selfChange: per node}.
    treeDiff(handle, kind, f, baseHandle, baseKind, baseF, normalize) {
      this.filter(handle, f);
      this.filter(baseHandle, baseF);
      const n = this.call('tree_diff', { handle, kind, base_handle: baseHandle, base_kind: baseKind, normalize: !!normalize });
      if (n < 0) throw new Error('the page model cannot compare these snapshots');
      const t = this.array('tree_diff_table', { handle }, 3 + n);
      return { sum: t[0], baseSum: t[1], baseScale: t[2], selfChange: t.subarray(3) };
    }

    // The snapshot's tree through the Viewer's transforms ([op, name, path] or [op], in order:
    // page/transformed_tree.hh) of nodeCount nodes: {frames, frameLines, frameCategories, parents, nodeFrames,
    // nodeMap (per old node its new node, -1: gone)}.
    transform(handle, list, nodeCount) {
      const nodes = this.call('transform', { handle, count: list.length }, { blob: textBlob(list.flat()) });
      if (nodes < 0) throw new Error('the page model cannot apply the transforms ' + JSON.stringify(list));
      const count = this.call('transformed_frame_count', { handle });
      const texts = readTexts(this.array('transformed_frames_blob', { handle }, this.call('transformed_frames_bytes', { handle })), 2 * count);
      const frames = [];
      for (let i = 0; i < texts.length; i += 2) frames.push([texts[i], texts[i + 1]]);
      return {
        frames,
        frameLines: Array.from(this.array('transformed_frame_lines', { handle }, count)),
        frameCategories: Array.from(this.array('transformed_frame_categories', { handle }, count)),
        parents: Array.from(this.array('transformed_parents', { handle }, nodes)),
        nodeFrames: Array.from(this.array('transformed_node_frames', { handle }, nodes)),
        nodeMap: this.array('transformed_node_map', { handle }, nodeCount),
      };
    }

    // The Source tab's time per line of the file `path` in rows of `kind` (indexes, their kept
    // weights), by the model's source_lines over the line tree: {lines: [[line, self, total],
    // ...] by line, keptNs}.
    sourceLines(handle, kind, indexes, weights, path) {
      const n = this.call('source_lines', { handle, kind }, { rows: indexes, weights, blob: utf8.encode(path) });
      const table = this.array('source_table', { handle }, Math.max(n, 0) * 3);
      const lines = Array.from({ length: Math.max(n, 0) }, (_, k) => [table[3 * k], table[3 * k + 1], table[3 * k + 2]]);
      return { lines, keptNs: this.call('source_kept_ns', { handle }) };
    }

    // Two method tables' entries ({name, file, self, total}) ranked by change (`rperf diff`'s
    // rows): [after index (-1: none), before index, before self, after self, before total, after total].
    diffTotals(after, before, scale) {
      const count = Math.max(this.call('diff_totals', { before_scale: scale }, {
        after_self: after.map((e) => e.self), after_total: after.map((e) => e.total),
        before_self: before.map((e) => e.self), before_total: before.map((e) => e.total),
        blob: textBlob([...after, ...before].flatMap((e) => [e.name, e.file])),
      }), 0);
      const ranked = this.array('diff_rows', {}, count * 6);
      return Array.from({ length: count }, (_, k) => Array.from(ranked.subarray(k * 6, k * 6 + 6)));
    }

    // rperf 0.11's names-only samples ({stack: [name, ...], weight, label_set_id}) as the
    // model's stack tree (page/names_tree.hh): {frames, parents, nodeFrames, rows}.
    namesTree(samples) {
      const stacks = samples.map((s) => (Array.isArray(s.stack) ? s.stack.map(String) : []));
      const nodes = this.call('names_tree', {}, {
        depths: stacks.map((st) => st.length), weights: samples.map((s) => Number(s.weight) || 0),
        sets: samples.map((s) => s.label_set_id || 0), blob: textBlob(stacks.flat()),
      });
      if (nodes < 0) throw new Error('the snapshot\'s stacks cannot be read');
      const frameTexts = readTexts(this.array('names_frames_blob', {}, this.call('names_frames_bytes')), 2 * this.call('names_frames_count'));
      const frames = [];
      for (let i = 0; i < frameTexts.length; i += 2) frames.push([frameTexts[i], frameTexts[i + 1]]);
      const rowNodes = this.array('names_row_nodes', {}, samples.length);
      const rowWeights = this.array('names_row_weights', {}, samples.length);
      const rowSets = this.array('names_row_sets', {}, samples.length);
      return {
        frames,
        parents: Array.from(this.array('names_parents', {}, nodes)),
        nodeFrames: Array.from(this.array('names_node_frames', {}, nodes)),
        rows: Array.from(rowNodes, (node, i) => [node, rowWeights[i], 0, rowSets[i]]),
      };
    }
  }

  // The module compiled and started from its bytes: a PageModel.
  async function instantiate(bytes) {
    const imports = {
      env: { emscripten_notify_memory_growth: () => {} },
      wasi_snapshot_preview1: { proc_exit: (code) => { throw new Error('the page model stopped (' + code + ')'); } },
    };
    const { instance } = await WebAssembly.instantiate(bytes, imports);
    instance.exports._initialize();
    return new PageModel(instance.exports);
  }

  const api = { ROWS, STATE_COUNT, instantiate, textBlob, readTexts };
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.RperfPageModel = api;
})(typeof globalThis === 'object' ? globalThis : this);
