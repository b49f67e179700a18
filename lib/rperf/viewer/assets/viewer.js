// rperf viewer: loads the snapshot list, opens a snapshot (Rperf::Viewer::Payload) and draws
// its views, each computed by the page model. Profile text (frame names, files, label values)
// is user data: it only reaches the page as textContent or attribute values, never as HTML.
// The viewer_*.js scripts before this one share the page's script scope with it.
'use strict';

// --- loading -----------------------------------------------------------------------------
// Snapshot `id` under the transforms (the page's, by default).
async function snapshot(id, transforms = state.transforms) {
  const key = id + '\u0000' + (transforms.length ? JSON.stringify(transforms) : '');
  if (state.payloads.has(key)) return state.payloads.get(key);
  await loadPageModel();
  const p = transforms.length ? transformed(await snapshot(id, []), transforms) : prepare(await fetchSnapshot(id));
  state.payloads.set(key, p);
  while (state.payloads.size > 4) state.payloads.delete(state.payloads.keys().next().value);
  return p;
}

async function openSnapshot(id) {
  setStatus('loading snapshot #' + id + '…', 'loading');
  try { await loadPageModel(); } catch (e) { // not the snapshot's fault: the page cannot filter or sum any
    setStatus('cannot load the page model (page_model.wasm): ' + e.message, 'error');
    return;
  }
  let p;
  try { p = await snapshot(id); } catch (e) {
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

async function loadList() {
  setStatus('loading the snapshot list…', 'loading');
  try { state.list = await fetchList(); } catch (e) {
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
  await openSnapshot(keep ? keep.id : pool[pool.length - 1].id);
}

// --- rendering the current snapshot ------------------------------------------------------
function drawSummary(p, weights) {
  const meta = p.meta || {};
  $('snapshot-title').textContent = '#' + p.id + (p.file ? ' ' + p.file : '') + ' — ' + new Date(p.taken_at).toLocaleString();
  const parts = [(p.mode || '?') + ' mode', (p.frequency || '?') + ' Hz', 'duration ' + fmtTime(p.duration_ns), (p.sampling_count ?? '?') + ' samples',
    'total ' + fmtTime(p.total_weight_ns), meta.ruby_version && 'Ruby ' + meta.ruby_version, meta.command_line];
  // An inline timeline's rows: a transformed snapshot holds the moved ones as columns.
  const rowCount = p.timeline ? p.timeline.rows ?? (p.timeline.samples || p.timeline.columns[0]).length : 0;
  const pruned = (text) => el('span', { class: 'pruned', text });
  fill($('summary'), el('span', { text: parts.filter(Boolean).join(' · ') }),
    p.pruned && p.pruned.samples ? pruned(` · ${p.pruned.samples} light stacks (${pct(p.pruned.weight_ns, p.total_weight_ns)} of the time) shown as [pruned]`) : null,
    p.timeline && p.timeline.source_count > rowCount ? pruned(` · timeline: ${p.timeline.source_count} samples merged into ${rowCount}`) : null);
  drawWorkEvents($('work-events'), p.work_events);
  const all = nodeWeights(p, selectSamples(p, UNFILTERED)).sum;
  $('totals').textContent = 'shown: ' + fmtTime(weights.sum) + ' of ' + fmtTime(all) + ' (' + pct(weights.sum, all) + ')';
  Object.assign($('totals').dataset, { shownNs: String(Math.round(weights.sum)), totalNs: String(Math.round(all)) });
  const matched = searchWeight(p, weights, searchText());
  $('search-info').textContent = matched === null ? '' : 'matches ' + fmtTime(matched) + ' (' + pct(matched, weights.sum) + ' of shown)';
  if (matched === null) delete $('search-info').dataset.matchedNs; else $('search-info').dataset.matchedNs = String(Math.round(matched));
  const idleNs = (p.thread_totals || []).reduce((a, [, , idle]) => a + idle, 0);
  Object.assign($('hide-idle'), { disabled: !p.hasIdle && !state.hideIdle,
    textContent: state.hideIdle ? `show idle threads (${p.idleThreads.length} hidden, ${fmtTime(idleNs)} idle)` : `hide idle threads (${fmtTime(idleNs)} idle)` });
  $('hide-idle').setAttribute('aria-pressed', String(state.hideIdle));
  $('hide-idle').dataset.idleNs = String(idleNs);
  // The threads that are all idle leave the thread filter's list too.
  const hidden = hiddenThreads(p);
  for (const o of $('filter-thread').options) o.hidden = !!(o.value && hidden && hidden.has(Number(o.value)));
  $('range-info').hidden = $('clear-range').hidden = !state.range;
  if (state.range) $('range-info').textContent = 'time range ' + fmtTime(state.range[0]) + ' – ' + fmtTime(state.range[1]);
}

let renderSeq = 0;
async function render() {
  const seq = ++renderSeq;
  document.body.dataset.state = 'drawing'; // 'ready' again when the last render is done
  try { await renderViews(seq); } catch (e) {
    setStatus('cannot draw ' + state.tab + ': ' + e.message, 'error');
    throw e;
  }
}

// A big timeline comes apart (Viewer.split_timeline): its rows are read in idle time after the
// first view (prefetchTimeline), or when a view needs them first.
async function ensureTimeline(p) {
  if (!p.timeline || timelineLoaded(p)) return;
  setStatus('loading the timeline of snapshot #' + p.id + ' (' + p.timeline.rows + ' rows)…', 'drawing');
  await loadTimeline(p);
}

function loadTimeline(p) {
  if (!p.timelineLoad) {
    p.timelineLoad = p.base ? loadTimeline(p.base).then(() => transformTimeline(p)) : fetchTimeline(p.id).then(({ columns, idle }) => {
      model.columns(p.handle, ROWS.timeline, columns, idle);
      p.timeline.columns = columns;
    });
    p.timelineLoad.catch(() => { p.timelineLoad = null; });
  }
  return p.timelineLoad;
}

// A failure here is reported when a view asks for the rows.
function prefetchTimeline(p) {
  if (!p.timeline || timelineLoaded(p) || p.timelineLoad) return;
  (window.requestIdleCallback || setTimeout)(() => { if (state.current === p) loadTimeline(p).catch(() => {}); });
}

// Each tab's view of the snapshot, the rows the filters keep, their weights and live(): false once
// the user moved on (another render began) while the view waited for data.
const VIEWS = {
  flame: (p, rows, weights) => drawFlame($('flame'), $('flame-details'), flameHierarchy(p, rows, weights), {}),
  icicle: (p, rows, weights) => drawFlame($('icicle'), $('icicle-details'), flameHierarchy(p, rows, weights), { inverted: true }),
  stack: drawStackChart, sandwich: drawSandwich, top: drawTop, tree: (p) => drawTree(p, 'tree'), inverted: (p) => drawTree(p, 'inverted'),
  source: drawSource, methods: drawMethods, alloc: drawAllocations, threads: drawThreads, timeline: drawTimeline, diff: (p, rows, weights, live) => drawDiff(p, weights, live),
};

async function renderViews(seq) {
  const p = state.current;
  if (!p) { document.body.dataset.state = 'ready'; return; }
  const live = () => seq === renderSeq && state.current === p;
  if (p.timeline && state.range) await ensureTimeline(p); // the views of a time range cut its rows
  if (!live()) return; // the user moved on meanwhile
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
  await VIEWS[state.tab](p, rows, weights, live);
  if (seq === renderSeq) {
    state.zoom = null; // the address's zoom: taken by the chart, or there was none to take it
    writeHash();
    setStatus('snapshot #' + p.id + ': ' + state.tab, 'ready');
    prefetchTimeline(p);
  }
}

window.rperfViewer = { state, open: openSnapshot, render, reload: loadList, viewHash, keys: () => [...KEY_BINDINGS.keys()] };
pendingView = readHash();
if (pendingView) state.transforms = pendingView.transforms;
if (embedded) $('refresh').hidden = true;
drawHelp();
wire();
loadPageModel().catch(() => {}); // its error is shown when a snapshot opens
loadList();
