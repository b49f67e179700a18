// The views of methods: the top table, the call tree and bottom-up tree, the method table with
// its callers and callees, and the sandwich.
'use strict';

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
// The two trees drawn as lists: the call tree (root first) and the bottom-up tree (the
// running functions first, each child a caller), both computed by the page model.
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

// --- sandwich ----------------------------------------------------------------------------
// One method's callers (above it: a flame graph whose root is the method, each row up its
// caller) and callees (below it: an icicle), as the page model computes them
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
