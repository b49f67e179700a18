// The controls: the filters, the tag menu, transforms, the pinned method, the snapshot list and
// sparkline, the buttons and the keys.
'use strict';

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
// Changing them reopens the snapshot: the page model transforms its tree (transformed).
function setTransforms(list) {
  state.transforms = list;
  if (state.current) openSnapshot(state.current.id); else render();
}
function drawTransforms() {
  const box = $('transforms');
  clear(box);
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
// The method table of every sample of snapshot `id` under the page's transforms.
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
  const key = (id) => id + '\u0000' + pin[0] + '\u0000' + pin[1] + '\u0000' + JSON.stringify(state.transforms); // shares of the transformed profiles
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
      dot.addEventListener('click', () => openSnapshot(s.id));
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
    try { share = shareOfTable(await wholeMethodTable(state.current.id), pin); } catch (_) { /* left out */ }
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
      try { share = shareOfTable(await wholeMethodTable(s.id), pin); } catch (_) { /* left out */ }
      if (stale()) return;
      pinShares.set(asked, share);
      paint();
    }
  };
  await Promise.all(Array.from({ length: Math.min(PIN_FETCHES, todo.length) }, fetcher));
  if (!stale()) panel.dataset.loaded = '1';
}

// --- snapshot list and sparkline ---------------------------------------------------------
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
    tr.addEventListener('click', () => openSnapshot(s.id));
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
    dot.addEventListener('click', () => openSnapshot(s.id));
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
    if (body && body.id) await openSnapshot(body.id);
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
    if (id !== null && id !== undefined) openSnapshot(id);
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
  if (next) openSnapshot(next.id);
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
