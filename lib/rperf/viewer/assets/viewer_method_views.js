// The views of methods: Top, the call trees, Methods and the Sandwich, each the page model's
// (page/page_views.hh) computed at once: no answer of an older filter can come late.
'use strict';

// --- method table: Top and Methods -------------------------------------------------------
// Rperf::MethodTable. entry: [method, self_ns, total_ns, recursive, callers, callees,
// caller_count, callee_count]; an arc: [method, ns], its share ns / the entry's total
// (MethodTable::Arc#share). Nothing is summed here: every number is the table's.
const methodKey = (table, m) => table.methods[m].join('\u0000');

function methodWhere(table, m) {
  const [, file, line] = table.methods[m];
  return file ? shortPath(file) + (line > 0 ? ':' + line : '') : '';
}

// The table's entries as rows of `tableId`, in the table's order (total, then self, then name)
// or by self (ties keep it), at most `limit`; pick(key): a row clicked. The rows by key.
function drawMethodRows(tableId, table, sort, limit, pick) {
  const sum = table.total_ns;
  const order = table.entries.map((_, i) => i);
  if (sort === 'self') order.sort((a, b) => table.entries[b][1] - table.entries[a][1] || a - b);
  order.splice(limit);
  const rows = new Map();
  fillTable(tableId, order.map((i) => {
    const [m, self, total, recursive] = table.entries[i];
    const [name, file] = table.methods[m];
    const key = methodKey(table, m);
    const tr = el('tr', { class: (pick ? 'clickable' : '') + (key === state.method && pick ? ' selected' : '') + (matches(searchText(), name, file) ? ' match' : ''),
      dataset: { name, selfNs: String(self), totalNs: String(total) }, onclick: pick ? () => pick(key) : null },
    td('num', fmtTime(self)), td('num', pct(self, sum)), td('num', fmtTime(total)), td('num', pct(total, sum)),
    td('fn', name + (recursive ? ' ↻' : '')), td('file', methodWhere(table, m), file));
    rows.set(key, tr);
    return tr;
  }));
  $(tableId).dataset.totalNs = String(sum);
  return rows;
}

// A view the model cannot compute (a names-only body): its table emptied, its note says why.
const methodTableOr = (p, tableId, note) => viewOr((error) => { fillTable(tableId, []); $(note).textContent = 'Cannot load the methods: ' + error; }, p, 'method_table');

function drawTop(p) {
  const table = methodTableOr(p, 'top-table', 'top-note');
  if (!table) return;
  const shown = drawMethodRows('top-table', table, state.topSort, MAX_TABLE_ROWS, null).size;
  $('top-note').textContent = shown < table.method_count ? `${shown} of ${table.method_count} methods shown: methods below ` +
    `${table.min_percent}% of the total are left out (and beyond the ${Math.min(MAX_TABLE_ROWS, table.max_methods)} heaviest).` : '';
}

function drawMethods(p) {
  $('method-graph').hidden = true;
  const table = methodTableOr(p, 'methods-table', 'methods-note');
  if (!table) return;
  $('methods-note').textContent = `${table.entries.length} of ${table.method_count} methods shown: methods below ${table.min_percent}% of the total ` +
    `are left out (and beyond the ${table.max_methods} heaviest by total and by self), and so are callers and callees ` +
    `below it (at most ${table.max_arcs} of each per method).`;
  const byKey = new Map(table.entries.map((e, i) => [methodKey(table, e[0]), i]));
  if (!byKey.has(state.method)) state.method = null;
  const pick = (key) => {
    state.method = key;
    const entry = table.entries[byKey.get(key)];
    if (entry) state.sandwich = table.methods[entry[0]].slice(0, 2);
    for (const [k, tr] of rows) tr.classList.toggle('selected', k === key);
    drawMethodGraph(table, byKey, pick);
  };
  const rows = drawMethodRows('methods-table', table, state.methodSort, Infinity, pick);
  drawMethodGraph(table, byKey, pick);
}

// The selected method as `rperf report --graph` prints it: its callers above, its callees below,
// each with the time of the samples that made that call; each one in the table links to its own.
function drawMethodGraph(table, byKey, pick) {
  const graph = $('method-graph');
  const i = state.method === null ? undefined : byKey.get(state.method);
  graph.hidden = i === undefined;
  $('method-hint').hidden = i !== undefined;
  if (i === undefined) { clear(graph.tBodies[0]); delete graph.dataset.method; return; }
  const [m, self, total, recursive, callers, callees, callerCount, calleeCount] = table.entries[i];
  graph.dataset.method = table.methods[m][0];
  const arcRow = (kind) => ([other, ns]) => {
    const key = methodKey(table, other);
    const known = byKey.has(key);
    return el('tr', { class: 'arc ' + kind + (known ? ' clickable' : ''), dataset: { kind, name: table.methods[other][0], ns: String(ns) }, onclick: known ? () => pick(key) : null },
      td('num', fmtTime(ns)), td('num', ''), td('num share', pct(ns, total)),
      td('fn', table.methods[other][0]), td('file', methodWhere(table, other), table.methods[other][1]));
  };
  const section = (text) => el('tr', { class: 'section' }, el('td', { colspan: '5', text }));
  const more = (shown, count, what) => (count > shown ? section(`${count - shown} lighter ${what} not shown`) : null);
  fill(graph.tBodies[0],
    section(callerCount ? 'called by' : 'called by: nothing (the top of its stacks)'),
    callers.map(arcRow('caller')), more(callers.length, callerCount, 'callers'),
    el('tr', { class: 'focus', dataset: { totalNs: String(total), selfNs: String(self) } },
      td('num', fmtTime(total)), td('num', fmtTime(self)), td('num', pct(total, table.total_ns) + ' of all'),
      td('fn', table.methods[m][0] + (recursive ? ' ↻ (recursive)' : '')), td('file', methodWhere(table, m), table.methods[m][1])),
    section(calleeCount ? 'calls' : 'calls: nothing (all its time is its own)'),
    callees.map(arcRow('callee')), more(callees.length, calleeCount, 'callees'));
}

// --- call tree and bottom-up tree --------------------------------------------------------
// Rperf::CallTree's nodes: [parent, method, total_ns, self_ns, recursive]; node 0 is [root]. The
// bottom-up tree has the running functions first, each child a caller.
const childrenOf = (nodes) => {
  const children = nodes.map(() => []);
  nodes.forEach(([parent], i) => { if (parent >= 0) children[parent].push(i); });
  return children;
};

function drawTree(p, tab) {
  const bottomUp = tab === 'inverted';
  const box = $(tab);
  const note = $(tab + '-note');
  clear(box);
  state.tree = null;
  const tree = viewOr((error) => { note.textContent = ''; box.append(el('p', { class: 'hint', text: 'Cannot load the ' + (bottomUp ? 'bottom-up tree' : 'call tree') + ': ' + error })); },
    p, bottomUp ? 'inverted_tree' : 'call_tree');
  if (!tree) return;
  if (!tree.children) {
    tree.children = childrenOf(tree.nodes);
    tree.expanded = defaultExpansion(tree);
  }
  state.tree = tree;
  const sum = tree.total_ns;
  note.textContent = `${tree.nodes.length} of ${tree.node_count} calls shown: calls below ${tree.min_percent}% of the total are left out (their time is in the "lighter calls" rows).` +
    (bottomUp ? ' The functions that were running come first, each with its time; under each, who called it.' : '');
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
    const other = (ns, name) => el('li', { class: 'other', dataset: { totalNs: String(ns) } }, row(ns, name, null, '', ''));
    return [i === 0 && self > 0 ? other(self, '(no Ruby frames)') : null, hidden > 0 ? other(hidden, `(lighter calls < ${tree.min_percent}%)`) : null];
  };
  const list = (i) => el('ul', { role: 'group' }, tree.children[i].map(item), rest(i));
  const item = (i) => {
    const [, m, total, self, recursive] = tree.nodes[i];
    const [name, file] = tree.methods[m];
    const kids = tree.children[i].length > 0;
    const open = tree.expanded.has(i);
    const toggle = el('button', { class: 'toggle', type: 'button', text: kids ? (open ? '▾' : '▸') : '', onclick: kids ? () => {
      const nowOpen = !tree.expanded.has(i);
      if (nowOpen) { tree.expanded.add(i); li.append(list(i)); } else { tree.expanded.delete(i); li.querySelector(':scope > ul').remove(); }
      toggle.textContent = nowOpen ? '▾' : '▸';
      li.setAttribute('aria-expanded', String(nowOpen));
    } : null });
    // Bottom-up, a node's self is the time of stacks that end there: not a function's self.
    const r = row(total, name + (recursive ? ' ↻' : ''), bottomUp ? null : self, methodWhere(tree, m), file);
    r.prepend(toggle);
    if (matches(searchText(), name, file)) r.classList.add('match');
    const li = el('li', { role: 'treeitem', 'aria-expanded': kids ? String(open) : null, dataset: { node: String(i), totalNs: String(total) } }, r);
    if (open && kids) li.append(list(i));
    return li;
  };
  box.append(sum ? list(0) : el('p', { class: 'hint', text: 'No samples match the filters.' }));
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

// --- sandwich ----------------------------------------------------------------------------
// One method's callers (above it: a flame graph whose root is the method, each row up its
// caller) and callees (below it: an icicle), each the call tree's shape.
function sandwichTree(tree) {
  const children = childrenOf(tree.nodes);
  const build = (i) => {
    const [, m, total] = tree.nodes[i];
    const [name, file] = tree.methods[m];
    const out = { name, file, value: total, cat: tree.categories ? drawnCategory(tree.categories[m], name) : 'app' };
    if (children[i].length) out.children = children[i].map(build);
    return out;
  };
  return children[0].length ? build(children[0][0]) : null; // node 0 is [root]; its one child the method
}

function drawSandwich(p, rows, weights) {
  const boxes = [$('sandwich-callers'), $('sandwich-callees')];
  const note = $('sandwich-note');
  const reset = (text) => {
    for (const b of boxes) emptyBox(b);
    note.textContent = text;
    delete note.dataset.totalNs;
  };
  if (!state.sandwich) { reset('Pick a method: click it in the Methods tab, or pin a frame (Shift+click it in a flame graph or the stack chart) and press "sandwich" by the pin.'); return; }
  const [name, file] = state.sandwich;
  const body = viewOr((error) => reset('Cannot load the sandwich of ' + name + ': ' + error), p, 'sandwich', { fn: [name, file] });
  if (!body) return;
  const [callers, callees] = [body.callers, body.callees].map(sandwichTree);
  if (!callers || !callees) { reset(`${name} has no samples under the filters.`); return; }
  note.textContent = `${name} (${file}): ${fmtTime(body.total_ns)}, ${pct(body.total_ns, weights.sum)} of the shown time; Shift+click a frame to make it the middle.`;
  note.dataset.totalNs = String(body.total_ns);
  drawFlame(boxes[0], $('sandwich-details'), callers, { maxHeight: 0.4, legend: false });
  drawFlame(boxes[1], $('sandwich-details'), callees, { inverted: true, maxHeight: 0.4 });
}
