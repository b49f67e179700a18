// The page model's JavaScript side: page_model.wasm (ext/rperf/page, the profile model compiled
// to WebAssembly) and the only code that calls it, by its one call (PageModel.call): an
// operation's name and named values in, named results out, all declared once in C++
// (page/wasm_exports.cc). No DOM, no page state: the page and the node tests use it alike.
(function (root) {
  'use strict';
  const ROWS = { samples: 0, timeline: 1, allocations: 2 };
  const STATE_COUNT = 4; // TimelineState (profile/vm_state.hh): per node in the state sums
  const VIEWS = { call_tree: 0, inverted_tree: 1, method_table: 2, sandwich: 3, stack_chart: 4, label_values: 5 };
  // The value types, in wasm_exports.cc's order (its Type): columns, then NUMBER, TEXTS, ROWS.
  const TYPES = [Uint8Array, Int32Array, Uint32Array, Float64Array];
  const [NUMBER, TEXTS, ROWS_OF_NUMBERS] = [4, 5, 6];
  const utf8 = new TextEncoder();
  const decoder = new TextDecoder();
  const bytesOf = (c) => new Uint8Array(c.buffer, c.byteOffset, c.byteLength);
  const u32 = (n) => bytesOf(Uint32Array.of(n)); // little-endian, as wasm

  // Texts for the module: each a uint32 length and its UTF-8.
  function textBlob(texts) {
    const encoded = texts.map((t) => utf8.encode(String(t)));
    const blob = new Uint8Array(encoded.reduce((a, b) => a + 4 + b.length, 0));
    const lengths = new DataView(blob.buffer);
    let at = 0;
    for (const b of encoded) { lengths.setUint32(at, b.length, true); blob.set(b, at + 4); at += 4 + b.length; }
    return blob;
  }

  function readTexts(blob, count = Infinity) {
    const lengths = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    const out = [];
    for (let at = 0, i = 0; i < count && at + 4 <= blob.length; i++) {
      const n = lengths.getUint32(at, true);
      out.push(decoder.decode(blob.subarray(at + 4, at + 4 + n)));
      at += 4 + n;
    }
    return out;
  }

  // A value as [type, bytes]: a number or boolean one number, a text or a list with a text in
  // it texts, a typed array of the module's types as it is, any other list doubles.
  function encode(v) {
    if (typeof v === 'number' || typeof v === 'boolean') return [NUMBER, bytesOf(Float64Array.of(Number(v)))];
    if (typeof v === 'string') return [TEXTS, textBlob([v])];
    const type = TYPES.indexOf(v.constructor);
    if (type >= 0) return [type, bytesOf(v)];
    if (Array.isArray(v) && v.some((x) => typeof x === 'string')) return [TEXTS, textBlob(v)];
    return [TYPES.indexOf(Float64Array), bytesOf(Float64Array.from(v))];
  }

  function decode(type, bytes) {
    if (type === NUMBER) return new Float64Array(bytes.buffer)[0];
    if (type === TEXTS) return readTexts(bytes);
    if (type !== ROWS_OF_NUMBERS) return new TYPES[type](bytes.buffer);
    const [width, numbers] = [new Uint32Array(bytes.buffer, 0, 1)[0], new Float64Array(bytes.buffer.slice(4))];
    return Array.from({ length: numbers.length / width }, (_, k) => Array.from(numbers.subarray(k * width, (k + 1) * width)));
  }

  // The model's filter values (wasm_exports.cc's filter_of) of the page's filter f: thread (or
  // null), hidden (a Set), sets (kept label set ids), range [t0, t1], idle.
  const filterValues = (f) => ({ thread: f.thread, hidden_threads: f.hidden && [...f.hidden], label_sets: f.sets, range: f.range, hide_idle: !!f.idle });
  // A tree the model answers (labels, paths, parents, node_frames) as the page keeps one.
  const treeOf = (t) => ({ frames: t.labels.map((l, i) => [l, t.paths[i]]), parents: Array.from(t.parents), nodeFrames: Array.from(t.node_frames) });

  class PageModel {
    constructor(exports) {
      this.w = exports;
      // A snapshot dropped by the page frees its rows in the module.
      this.handles = new FinalizationRegistry((handle) => this.call('delete', { handle }));
    }

    // Runs the model's operation `op` (wasm_exports.cc's kOperations) on named values (numbers,
    // booleans, texts, lists and typed arrays; null and undefined are left out): its named
    // results (numbers, typed arrays, lists of texts, rows of numbers). Throws the model's error.
    call(op, values = {}) {
      const parts = [textBlob([op])];
      for (const [name, v] of Object.entries(values)) {
        if (v === null || v === undefined) continue;
        const [type, bytes] = encode(v);
        parts.push(textBlob([name]), u32(type), u32(bytes.length), bytes);
      }
      let at = this.w.rperf_page_request(parts.reduce((a, p) => a + p.length, 0));
      const request = new Uint8Array(this.w.memory.buffer); // after the call: the memory may have grown
      for (const p of parts) { request.set(p, at); at += p.length; }
      at = this.w.rperf_page_call();
      const memory = new DataView(this.w.memory.buffer);
      const end = at + 4 + memory.getUint32(at, true);
      const out = {};
      for (at += 4; at < end;) { // each value: its name (a text), type, byte length, bytes
        const [name] = readTexts(new Uint8Array(memory.buffer, at, end - at), 1);
        at += 4 + memory.getUint32(at, true);
        const size = memory.getUint32(at + 4, true);
        out[name] = decode(memory.getUint32(at, true), new Uint8Array(memory.buffer, at + 8, size).slice());
        at += 8 + size;
      }
      if (out.error) throw new Error(out.error[0]);
      return out;
    }

    // A snapshot's tree (parents before children), its frames ([name, path]) with their method
    // lines, its label sets ({key: value} as the page spells them) and, for a profile with
    // lines, its line tree ({parent, frame, line}: the Source tab's): a handle, freed with
    // `owner` when given.
    snapshot({ parents, nodeFrames, frames, frameLines, labelSets, lineTree }, owner) {
      const entries = labelSets.map((ls) => Object.entries(ls || {}));
      const { handle } = this.call('new', {
        parents, frames: nodeFrames, labels: frames.map((f) => String(f[0])), paths: frames.map((f) => String(f[1] || '')),
        lines: Int32Array.from(frames, (_, i) => (frameLines && frameLines[i]) || 0), pairs: entries.map((e) => e.length),
        texts: entries.flat(2).map(String), line_parents: lineTree && lineTree.parent, line_frames: lineTree && lineTree.frame,
        line_lines: lineTree && lineTree.line,
      });
      if (owner) this.handles.register(owner, handle);
      return handle;
    }

    // Rows [node, weight, thread, label set, time?] of `kind` (allocation rows: [node, objects,
    // thread, label set, class, retained]), each with its line-level leaf last when `lines`;
    // idleIndexes: the payload's idle marks. Returns the marks as a Uint8Array per row, or null.
    rows(handle, kind, rows, idleIndexes, lines = false) {
      const width = (kind === ROWS.samples ? 4 : kind === ROWS.timeline ? 5 : 6) + (lines && kind !== ROWS.allocations ? 1 : 0);
      return this.columns(handle, kind, Array.from({ length: width }, (_, k) => rows.map((r) => r[k])), idleIndexes);
    }

    // The same rows as columns (the rows' elements in order, each an array or a typed array): a
    // timeline sent as columns goes to the module without a row made of it.
    columns(handle, kind, columns, idleIndexes) {
      const [node, weight, thread_seq, label_set] = columns;
      const idle = idleIndexes && idleIndexes.length ? new Uint8Array(node.length) : null;
      for (const i of idle ? idleIndexes : []) if (i < node.length) idle[i] = 1;
      const rest = kind === ROWS.allocations ? { class_index: columns[4], retained: columns[5] }
        : kind === ROWS.timeline ? { time_ns: columns[4], line_node: columns[5] } : { line_node: columns[4] };
      this.call('set_rows', { handle, kind, node, weight, thread_seq, label_set, idle, ...rest });
      return idle;
    }

    // The rows of `kind` the filter f (filterValues) keeps: {rows, weights}.
    select(handle, kind, f) { return this.call('select', { handle, kind, ...filterValues(f) }); }

    // The label sets a label filter (key, values, unset), tagfocus's matched values (focused, or
    // null for none) and tagignore's pairs ([key, value or null]) keep: sorted ids.
    matchLabelSets(handle, { key, values, unset, focused, ignore }) {
      return this.call('match_label_sets', {
        handle, key: key === null ? [] : [String(key)], values: values.map(String), unset, focus: focused && focused.map(String),
        ignore_keys: ignore.map(([k]) => String(k)), ignore_values: ignore.map(([, v]) => (v === null ? '' : String(v))),
        has_value: ignore.map(([, v]) => Number(v !== null)),
      }).sets;
    }

    // The model's label_values, tree_weights and thread_sums of rows (indexes, kept weights).
    labelValues(handle) { return this.call('label_values', { handle }).values; }
    treeWeights(handle, kind, rows, weights) { return this.call('tree_weights', { handle, kind, rows, weights }); }
    threadSums(handle, kind, rows, weights) { return this.call('thread_sums', { handle, kind, rows, weights }).threads; }

    // The flame graph's tag groups of rows (indexes, kept weights) under the tagroot keys, each
    // node's self time under the tagleaf keys: {rootFrames, groups}, each frame {parent, name,
    // value} (a leaf's with its node; parent -1: at the root or its node), each group {sum,
    // under, rootFramesEnd, nodes, totals, states, leaves}: page_rows.hh's TagGroups, its
    // columns cut per group.
    tagGroups(handle, kind, rows, weights, rootKeys, leafKeys) {
      const t = this.call('tag_groups', { handle, kind, rows, weights, root_keys: rootKeys.map(String), leaf_keys: leafKeys.map(String) });
      const frame = (parents, names, values, k) => ({ parent: parents[k], name: names[k], value: values[k] });
      let node = 0, leaf = 0;
      const groups = Array.from(t.sums, (sum, g) => {
        const [n, l] = [t.node_counts[g], t.leaf_counts[g]];
        const group = {
          sum, under: t.under[g], rootFramesEnd: t.root_frames_end[g], nodes: t.nodes.subarray(node, node + n), totals: t.totals.subarray(node, node + n),
          states: t.states.subarray(node * STATE_COUNT, (node + n) * STATE_COUNT),
          leaves: Array.from({ length: l }, (_, k) => ({ node: t.leaf_nodes[leaf + k], ...frame(t.leaf_parents, t.leaf_names, t.leaf_values, leaf + k) })),
        };
        [node, leaf] = [node + n, leaf + l];
        return group;
      });
      return { rootFrames: t.root_names.map((_, k) => frame(t.root_parents, t.root_names, t.root_values, k)), groups };
    }

    // The Allocations tab's sums of allocation rows, each site an object.
    allocationSums(handle, rows, weights, byRetained, maxSites) {
      const s = this.call('allocation_sums', { handle, rows, weights, by_retained: byRetained, max_sites: maxSites });
      return { ...s, nodeClasses: s.node_classes, sites: s.sites.map(([frame, cls, allocated, retained]) => ({ frame, cls, allocated, retained })) };
    }

    // The Timeline's bins of the timeline rows the filter keeps, in the server's shape (TimelinePayload).
    timelineBins(handle, f, bins, minEnd) {
      const b = this.call('timeline_bins', { handle, bins, min_end_ns: minEnd, ...filterValues(f) });
      return {
        end_ns: b.end_ns, bins, bin_ns: b.bin_ns, kept_ns: b.kept_ns, leaf_names: b.leaf_names, top: b.top.map((top) => top.filter((n) => n >= 0)),
        threads: Array.from(b.threads, (th, t) => [th, Array.from({ length: STATE_COUNT }, (_, si) => {
          const row = b.occupancy.subarray((t * STATE_COUNT + si) * bins, (t * STATE_COUNT + si + 1) * bins);
          return row.some((v) => v > 0) ? row : null;
        })]),
      };
    }

    // A view (VIEWS) of the rows of `kind` the filter keeps, parsed; the sandwich's of fn ([name,
    // path]), the stack chart's with its columns x, w, gap (Float64Arrays), d (Uint32Array) and f
    // (Int32Array), label_values' [[key, [[value, weight], ...] heaviest first, weight without the
    // key], ...]; limits:
    // {maxNodes, maxMethods, maxArcs, minEnd} (the model's defaults when left out).
    view(handle, kind, f, view, fn, limits = {}) {
      const r = this.call('view', {
        handle, kind, view: VIEWS[view], function: fn && fn.map(String), max_nodes: limits.maxNodes, max_methods: limits.maxMethods,
        max_arcs: limits.maxArcs, min_end_ns: limits.minEnd, ...filterValues(f),
      });
      const out = JSON.parse(r.json[0]);
      if (view !== 'stack_chart') return out;
      // The stack chart's cell columns come as numbers rather than JSON text.
      return { ...out, x: r.x, w: r.w, d: r.d, f: r.f, gap: r.gap };
    }

    // The Diff tab's flame graph: the rows of `kind` f keeps against those of baseKind baseF keeps
    // in the snapshot baseHandle, normalize: the base scaled to this one's sum. {sum, baseSum,
    // baseScale, selfChange: per node}.
    treeDiff(handle, kind, f, baseHandle, baseKind, baseF, normalize) {
      const base = Object.fromEntries(Object.entries(filterValues(baseF)).map(([name, v]) => ['base_' + name, v]));
      const d = this.call('tree_diff', { handle, kind, ...filterValues(f), base_handle: baseHandle, base_kind: baseKind, ...base, normalize: !!normalize });
      return { sum: d.sum, baseSum: d.base_sum, baseScale: d.base_scale, selfChange: d.self_change };
    }

    // The snapshot through the Viewer's transforms ([op, name, path] or [op], in order) as a
    // snapshot of its own, every row moved to its new node by the model (freed with `owner` when
    // given): {handle, frames, frameLines, frameCategories, parents, nodeFrames, totalWeight}.
    transform(handle, list, owner) {
      const t = this.call('transform', { handle, transforms: list.flat().map(String) });
      if (owner) this.handles.register(owner, t.handle);
      return { ...treeOf(t), handle: t.handle, frameLines: Array.from(t.frame_lines), frameCategories: Array.from(t.frame_categories), totalWeight: t.total_weight };
    }

    // The rows of `kind` of the snapshot baseHandle moved into `handle`, a transform of it (a
    // timeline loaded after the transform).
    moveRows(handle, baseHandle, kind) { this.call('move_rows', { handle, base_handle: baseHandle, kind }); }

    // The snapshot's rows of `kind` as the model keeps them, in the columns' order rows() and
    // columns() take (each line-level leaf last when the rows have them): {columns, idle: the
    // marks as a Uint8Array per row, or null}.
    rowColumns(handle, kind) {
      const r = this.call('rows', { handle, kind });
      const rest = kind === ROWS.allocations ? [r.class_index, r.retained] : kind === ROWS.timeline ? [r.time_ns] : [];
      const columns = [r.node, r.weight, r.thread_seq, r.label_set, ...rest, ...(r.line_node.length ? [r.line_node] : [])];
      return { columns, idle: r.idle.length ? r.idle : null };
    }

    // The Source tab's time per line of the file `path` in rows of `kind`: {lines, keptNs}.
    sourceLines(handle, kind, rows, weights, path) {
      const s = this.call('source_lines', { handle, kind, rows, weights, path: String(path) });
      return { lines: s.lines, keptNs: s.kept_ns };
    }

    // The Diff table's rows of two method tables' entries ({name, file, self, total}).
    diffTotals(after, before, scale) {
      const side = (entries, name) => ({ [name + '_self']: entries.map((e) => e.self), [name + '_total']: entries.map((e) => e.total),
        [name + '_names']: entries.flatMap((e) => [String(e.name), String(e.file)]) });
      return this.call('diff_totals', { ...side(after, 'after'), ...side(before, 'before'), before_scale: scale }).rows;
    }

    // rperf 0.11's names-only samples ({stack: [name, ...], weight, label_set_id}) as the
    // model's stack tree: {frames, parents, nodeFrames, rows}.
    namesTree(samples) {
      const stacks = samples.map((s) => (Array.isArray(s.stack) ? s.stack.map(String) : []));
      const t = this.call('names_tree', {
        depths: stacks.map((st) => st.length), weights: samples.map((s) => Number(s.weight) || 0),
        sets: samples.map((s) => s.label_set_id || 0), names: stacks.flat(),
      });
      return { ...treeOf(t), rows: Array.from(t.row_nodes, (node, i) => [node, t.row_weights[i], 0, t.row_sets[i]]) };
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
