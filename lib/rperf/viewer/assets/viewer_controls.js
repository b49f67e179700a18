// The controls: filters, tags, transforms, the pin, the snapshot list, the buttons and the keys.
'use strict';

// --- filters -----------------------------------------------------------------------------
function fillFilters(p) {
  // Each key's values, heaviest first, then NOT_SET when the key is not always set (the model's sums).
  const keys = model.view(p.handle, ROWS.samples, {}, 'label_values');
  state.filterChoices = [];
  p.labelValues = new Map();
  fill($('filter-label'), el('option', { value: '', text: 'all samples' }), keys.map(([key, weights, unset]) => {
    const values = unset > 0 ? weights.concat([[NOT_SET, unset]]) : weights;
    p.labelValues.set(key, values.map(([v]) => v));
    return el('optgroup', { label: key }, values.map(([value, w]) => {
      state.filterChoices.push({ key, value });
      return el('option', { value: String(state.filterChoices.length - 1), text: value === NOT_SET ? `${key} not set (${fmtTime(w)})` : `${key} = ${value} (${fmtTime(w)})` });
    }));
  }));
  const f = state.labelFilter;
  const values = f && p.labelValues.has(f.key) ? f.values.filter((v) => p.labelValues.get(f.key).includes(v)) : [];
  state.labelFilter = values.length ? { key: f.key, values } : null;
  drawLabelFilter(p);

  fillTagMenu(keys);

  fill($('filter-thread'), el('option', { value: '', text: 'all threads' }), p.threads.map((th) => el('option', { value: String(th), text: threadText(p, th) })));
  if (!p.threads.includes(state.threadFilter)) state.threadFilter = null;
  $('filter-thread').value = state.threadFilter ?? '';
}

// Why `tab` cannot show the current filters, or null: allocation samples have no time.
function unfilteredReason(tab) {
  if (tab === 'alloc' && state.range && state.current && state.current.allocations) return 'The time range does not apply to allocations (their samples have no time); the label and thread filters do.';
  if (tab === 'diff' && state.list.length < 2) return 'There is no other snapshot to compare with.';
  return null;
}

function clearFilters() {
  Object.assign(state, { search: '', labelFilter: null, threadFilter: null, range: null, tagFocus: '', tagIgnore: [], tagRoot: [], tagLeaf: [] });
  for (const id of ['search', 'tag-focus', 'filter-label', 'filter-thread']) $(id).value = '';
  for (const input of $('tag-options').querySelectorAll('input')) input.checked = false; // the menu's boxes tick the state's tags
  render();
}

// The label filter's controls: the select shows its one value (or that it is a set), the menu
// ticks each value of the set (an endpoint set: GET /a or GET /b; another key starts a new one).
function drawLabelFilter(p) {
  const f = state.labelFilter;
  const labelSel = $('filter-label');
  labelSel.querySelector('option[value=set]')?.remove();
  if (f && f.values.length > 1) labelSel.firstChild.after(el('option', { value: 'set', text: `${f.key} = any of ${f.values.length}` })); // after "all samples"
  labelSel.value = !f ? '' : f.values.length > 1 ? 'set' : String(state.filterChoices.findIndex((c) => c.key === f.key && c.value === f.values[0]));
  const values = p.labelValues || new Map();
  fill($('label-set-options'), [...values].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([key, list]) =>
    el('fieldset', null, el('legend', { text: key }), list.map((v) => checkbox(v === NOT_SET ? '(not set)' : v,
      !!f && f.key === key && f.values.includes(v), { key, value: v === NOT_SET ? '' : v, none: v === NOT_SET ? '1' : '0' }, (checked) => {
        const cur = state.labelFilter;
        const rest = cur && cur.key === key ? cur.values.filter((x) => x !== v) : [];
        const next = checked ? rest.concat([v]) : rest;
        state.labelFilter = next.length ? { key, values: next } : null;
      })))), values.size ? null : NO_LABELS());
  $('label-set-summary').textContent = f && f.values.length > 1 ? `values (${f.values.length})` : 'values';
}

// The tag menu: tagignore (key = value, key = (none)), tagroot and tagleaf (keys), of this snapshot.
function fillTagMenu(labelKeys) {
  const valuesOf = new Map(labelKeys.map(([key, weights]) => [key, weights.map(([v]) => v)]));
  const keys = [...valuesOf.keys()];
  const has = (k, v) => valuesOf.has(k) && (v === null || valuesOf.get(k).includes(v));
  state.tagIgnore = state.tagIgnore.filter(([k, v]) => has(k, v));
  state.tagRoot = state.tagRoot.filter((k) => valuesOf.has(k));
  state.tagLeaf = state.tagLeaf.filter((k) => valuesOf.has(k));
  const ignore = keys.flatMap((k) => [null, ...valuesOf.get(k)].map((v) =>
    checkbox(k + ' = ' + (v === null ? '(none)' : v), state.tagIgnore.some(([a, b]) => a === k && b === v), { kind: 'ignore', key: k, value: v === null ? '' : v, none: v === null ? '1' : '0' }, (checked) => {
      state.tagIgnore = state.tagIgnore.filter(([a, b]) => !(a === k && b === v));
      if (checked) state.tagIgnore.push([k, v]);
    })));
  const keyBoxes = (kind, field) => el('fieldset', null, el('legend', { text: 'tag' + kind }), keys.map((k) =>
    checkbox(k, state[field].includes(k), { kind, key: k }, (checked) => { state[field] = state[field].filter((x) => x !== k).concat(checked ? [k] : []); })));
  fill($('tag-options'), el('fieldset', null, el('legend', { text: 'tagignore' }), ignore), keyBoxes('root', 'tagRoot'), keyBoxes('leaf', 'tagLeaf'),
    keys.length ? null : NO_LABELS());
  tagSummary();
}
const NO_LABELS = () => el('p', { class: 'hint', text: 'This snapshot has no labels.' });
// A labelled checkbox of the label and tag menus: set(checked) changes the state, then the page redraws.
const checkbox = (text, checked, dataset, set) => el('label', null,
  el('input', { type: 'checkbox', dataset, checked: checked ? '' : null, onchange: (e) => { set(e.target.checked); render(); } }), ' ' + text);
function tagSummary() {
  const n = state.tagIgnore.length + state.tagRoot.length + state.tagLeaf.length;
  $('tag-summary').textContent = n ? 'tags (' + n + ')' : 'tags';
  $('tag-focus').classList.toggle('invalid', !!state.tagFocus && !tagFocusRegex());
  $('tag-focus').title = state.tagFocus && !tagFocusRegex() ? 'Not a valid regular expression: tagfocus is skipped' : '';
}

// --- transforms --------------------------------------------------------------------------
function setTransforms(list) {
  state.transforms = list;
  if (state.current) openSnapshot(state.current.id); else render();
}
// The buttons of the transforms of the whole profile: collapse recursion, app code first (each run
// of gem and stdlib frames one [framework] frame).
const WHOLE_TRANSFORMS = [['collapse-recursion', 'recursion'], ['app-first', 'app']];
function drawTransforms() {
  for (const [id, op] of WHOLE_TRANSFORMS) $(id).setAttribute('aria-pressed', String(state.transforms.some((t) => t[0] === op)));
  fill($('transforms'), state.transforms.map((t, i) => el('button', { type: 'button', class: 'transform', title: 'Undo this transform', dataset: { op: t[0] },
    text: (t[0] === 'recursion' ? 'recursion collapsed' : t[0] === 'app' ? 'app code first' : t[0] + ' ' + t[1]) + ' ✕',
    onclick: () => setTransforms(state.transforms.filter((_, k) => k !== i)) })));
}

// --- the pinned method (Shift+click) -----------------------------------------------------
// rperf 0.11.1's pin: the method outlined in the charts, its share of each snapshot drawn as a line.
function togglePin(frame) {
  state.pin = state.pin && frame && state.pin[0] === frame[0] && state.pin[1] === frame[1] ? null : frame;
  render();
}
const PIN_FETCHES = 4;
const pinShares = new Map(); // "id\0name\0file\0transforms" -> share, or null when unknown
// The pinned method's share of snapshot `id`: its total in the method table of every sample.
async function pinShare(id, pin) {
  const table = modelView(state.current && state.current.id === id ? state.current : await snapshot(id), 'method_table', { all: true });
  const ns = table.entries.reduce((a, [m, , total]) => a + (table.methods[m][0] === pin[0] && table.methods[m][1] === pin[1] ? total : 0), 0);
  return table.total_ns ? ns / table.total_ns : null;
}
let pinSeq = 0;
async function drawPin() {
  const panel = $('pin-panel');
  const pin = state.pin;
  panel.hidden = !pin;
  if (!pin) return;
  Object.assign($('pin-name'), { textContent: 'pinned: ' + pin[0], title: pin[0] + ' — ' + pin[1] });
  const seq = ++pinSeq;
  // Kept under the key of the profile asked for: the transforms may change meanwhile.
  const key = (id) => id + '\u0000' + pin[0] + '\u0000' + pin[1] + '\u0000' + JSON.stringify(state.transforms);
  const stale = () => seq !== pinSeq || state.pin !== pin;
  const paint = () => {
    const values = state.list.map((s) => pinShares.get(key(s.id)) ?? null);
    drawTrend($('pin-trend'), values, maxOf(values.filter((v) => v !== null), 0.0001), (s, v, current) =>
      ({ r: current ? 4 : 2.5, fill: current ? '#b4451f' : '#fff', 'data-id': String(s.id), 'data-share': String(v), title: '#' + s.id + ': ' + (v * 100).toFixed(1) + '%' }));
    const cur = state.current ? pinShares.get(key(state.current.id)) ?? null : null;
    $('pin-share').textContent = cur === null ? '' : 'share ' + (cur * 100).toFixed(1) + '% @ #' + state.current.id;
    $('pin-share').dataset.share = cur === null ? '' : String(cur);
  };
  const fetchShare = async (id) => {
    const asked = key(id);
    let share = null;
    try { share = await pinShare(id, pin); } catch (_) { /* left out */ }
    if (!stale()) { pinShares.set(asked, share); paint(); }
  };
  if (state.current && !pinShares.has(key(state.current.id))) await fetchShare(state.current.id);
  if (stale()) return;
  paint();
  // The other snapshots, PIN_FETCHES at a time; a newer pin stops them.
  const todo = state.list.filter((s) => !pinShares.has(key(s.id)) && !s.error && !isEmpty(s));
  const fetcher = async () => { while (todo.length && !stale()) await fetchShare(todo.shift().id); };
  await Promise.all(Array.from({ length: Math.min(PIN_FETCHES, todo.length) }, fetcher));
  if (!stale()) panel.dataset.loaded = '1';
}

// A line through `values` (null: none), a dot per snapshot that opens it; dot(): its attributes, title.
function drawTrend(svg, values, max, dot) {
  const w = Number(svg.getAttribute('width'));
  const h = Number(svg.getAttribute('height'));
  const x = (i) => (values.length === 1 ? w / 2 : 6 + i * (w - 12) / (values.length - 1));
  const y = (v) => h - 6 - (v / max) * (h - 12);
  const points = values.map((v, i) => (v === null ? null : x(i) + ',' + y(v))).filter(Boolean);
  fill(svg, svgEl('polyline', { points: points.join(' '), fill: 'none', stroke: '#b4451f', 'stroke-width': 1.5 }), state.list.map((s, i) => {
    if (values[i] === null) return null;
    const current = !!state.current && state.current.id === s.id;
    const { title, ...attrs } = dot(s, values[i], current);
    return svgEl('circle', { cx: x(i), cy: y(values[i]), fill: '#fff', stroke: '#b4451f', class: current ? 'current' : '', ...attrs, onclick: () => openSnapshot(s.id) },
      svgEl('title', null, title));
  }));
}

// --- snapshot list and sparkline ---------------------------------------------------------
function drawList() {
  fill($('snapshot-list').tBodies[0], state.list.map((s) => {
    const meta = s.meta || {};
    const git = meta.git || {};
    const commit = git.commit || git.sha;
    const bits = [s.mode, meta.hostname && meta.pid ? meta.hostname + ':' + meta.pid : meta.pid,
      commit && String(commit).slice(0, 10) + (git.branch ? ' ' + git.branch : '') + (git.dirty ? ' (dirty)' : ''), s.file,
      s.error ? 'unreadable: ' + s.error : !s.meta && s.file ? '(no meta)' : null, isEmpty(s) ? 'no samples' : null];
    const when = new Date(s.taken_at);
    return el('tr', { class: (state.current && state.current.id === s.id ? 'current' : '') + (s.error ? ' error' : '') + (isEmpty(s) ? ' empty' : ''),
      dataset: { id: String(s.id) }, onclick: () => openSnapshot(s.id) },
    td(null, String(s.id)), td(null, when.toLocaleTimeString(), when.toString()), td(null, fmtTime(durationNs(s))),
    td(null, sampleCount(s) === null ? '–' : String(sampleCount(s))), td('meta', bits.filter(Boolean).join(' · ')));
  }));
  // Total sampled time; files written in rperf 0.11.1's format only know their duration.
  const values = state.list.map((s) => s.total_weight_ns ?? durationNs(s) ?? 0);
  drawTrend($('sparkline'), values, maxOf(values, 1), (s, v) => ({ r: 3.5, title: '#' + s.id + ': ' + fmtTime(v) }));
}

function fillDiffBase() {
  const sel = $('diff-base');
  const others = state.list.filter((s) => !state.current || s.id !== state.current.id);
  fill(sel, others.map((s) => el('option', { value: String(s.id), text: '#' + s.id + ' ' + new Date(s.taken_at).toLocaleTimeString() + (s.file ? ' ' + s.file : '') })));
  if (!others.some((s) => s.id === state.baseId)) {
    // Default: the snapshot just before this one, else the first other one.
    const idx = state.current ? state.list.findIndex((s) => s.id === state.current.id) : -1;
    const prev = idx > 0 ? state.list[idx - 1] : others[0];
    state.baseId = prev ? prev.id : null;
  }
  if (state.baseId !== null) sel.value = String(state.baseId);
}

// f called once `ms` after the last of a burst of calls.
function debounce(f, ms) {
  let timer = null;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => f(...args), ms); };
}

// Segmented buttons: a click sets the state to the button's data-<attr>, marks it active and redraws.
function bindToggle(selector, attr, set) {
  const buttons = document.querySelectorAll(selector);
  for (const b of buttons) b.addEventListener('click', () => { set(b.dataset[attr]); for (const o of buttons) o.classList.toggle('active', o === b); render(); });
}

function wire() {
  bindToggle('#tab-top [data-sort]', 'sort', (v) => { state.topSort = v; });
  $('filter-label').addEventListener('change', (e) => {
    if (e.target.value === 'set') return;
    const c = state.filterChoices[Number(e.target.value)];
    state.labelFilter = e.target.value === '' || !c ? null : { key: c.key, values: [c.value] };
    render();
  });
  $('filter-thread').addEventListener('change', (e) => { state.threadFilter = e.target.value === '' ? null : Number(e.target.value); render(); });
  $('clear-range').addEventListener('click', () => { state.range = null; render(); });
  $('diff-base').addEventListener('change', (e) => { state.baseId = Number(e.target.value); render(); });
  $('diff-normalize').addEventListener('change', () => render());
  for (const tree of ['tree', 'inverted']) {
    $(tree + '-expand').addEventListener('click', () => { if (state.tree) { expandAtLeast(state.tree, 0.01); render(); } });
    $(tree + '-collapse').addEventListener('click', () => { if (state.tree) state.tree.expanded = new Set(); render(); });
  }
  bindToggle('#tab-methods [data-sort]', 'sort', (v) => { state.methodSort = v; });
  bindToggle('#tab-alloc [data-field]', 'field', (v) => { state.allocField = v; });
  $('refresh').addEventListener('click', () => loadList());
  // Only a served page of this process's session (POST <base>/snapshots).
  $('snapshot-now').hidden = !!embedded || !!customSource;
  $('snapshot-now').addEventListener('click', async () => {
    let body;
    try { body = await (await request(BASE + '/snapshots', { method: 'POST', headers: { 'x-rperf-snapshot': '1', accept: 'application/json' } })).json(); } catch (e) {
      setStatus('no snapshot taken: ' + e.message, 'error');
      return;
    }
    await loadList();
    if (body && body.id) await openSnapshot(body.id);
  });
  for (const [id, set] of [['search', (v) => { state.search = v; }], ['tag-focus', (v) => { state.tagFocus = v.trim(); }]]) {
    $(id).addEventListener('input', debounce((e) => { set(e.target.value); render(); }, 120));
  }
  $('hide-idle').addEventListener('click', () => { state.hideIdle = !state.hideIdle; render(); });
  $('pin-close').addEventListener('click', () => togglePin(null));
  for (const b of document.querySelectorAll('.pin-transforms button')) b.addEventListener('click', () => { if (state.pin) setTransforms([...state.transforms, [b.dataset.transform, ...state.pin]]); });
  for (const [id, op] of WHOLE_TRANSFORMS) {
    $(id).addEventListener('click', () => {
      const on = state.transforms.some((t) => t[0] === op);
      setTransforms(on ? state.transforms.filter((t) => t[0] !== op) : [...state.transforms, [op]]);
    });
  }
  // The pinned method's sandwich or source.
  for (const tab of ['sandwich', 'source']) {
    $('pin-' + tab).addEventListener('click', () => {
      if (!state.pin) return;
      state[tab] = tab === 'source' ? [state.pin[1], state.pin[0]] : state.pin.slice();
      state.tab = tab;
      render();
    });
  }
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
  window.addEventListener('resize', debounce(() => {
    if (!['flame', 'icicle', 'stack', 'timeline', 'diff', 'alloc'].includes(state.tab)) return;
    const zoom = chartZoom(activeChart()); // the same chart, wider or narrower: the same zoom
    state.zoom = zoom && { tab: state.tab, ...zoom };
    render();
  }, 200));
}

// The keys: the ? overlay and onKey read only this table, so the overlay lists exactly the keys
// the page handles. run(key, chart, evt): chart is the tab's on screen.
const DIGITS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '0'];
const chartKey = (f) => (key, chart) => { if (chart) { f(key, chart); paintChart(chart); } };
function stepSnapshot(dir) {
  const next = state.current && state.list[state.list.findIndex((s) => s.id === state.current.id) + dir];
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

// The ? overlay's table: each key a <kbd data-key>; the digits with the tabs they open.
function drawHelp() {
  const tabs = [...$('tabs').querySelectorAll('button')].map((t) => t.textContent);
  const kbd = (key, shown) => el('kbd', { dataset: { key }, text: shown });
  const reached = tabs.slice(0, DIGITS.length);
  const tabsText = `the first ${reached.length} of the ${tabs.length} tabs, in order: ${reached.join(', ')}` +
    (tabs.length > DIGITS.length ? ` (${tabs.slice(DIGITS.length).join(', ')}: click them)` : '');
  fill($('help-keys'), KEYS.map((b) => el('tr', { dataset: { keys: b.keys.join(' ') } },
    el('td', null, b.keys.flatMap((k, i) => [i ? (b.tabs ? ' ' : ' / ') : null, kbd(k, b.shown ? b.shown[i] : k)])), el('td', { text: b.tabs ? tabsText : b.text }))),
  el('tr', null, el('td', null, el('kbd', { text: 'Shift' }), '+click'), el('td', { text: 'pin a method: outlined, its share in every snapshot' })));
}

// A key's binding (KEYS), except while typing in a field (Escape works there too).
function onKey(evt) {
  if (evt.ctrlKey || evt.metaKey || evt.altKey) return;
  const typing = ['INPUT', 'SELECT', 'TEXTAREA'].includes(evt.target && evt.target.tagName);
  const binding = KEY_BINDINGS.get(evt.key);
  if (!binding || (typing && !binding.inFields)) return;
  evt.preventDefault();
  binding.run(evt.key, activeChart(), evt);
}
