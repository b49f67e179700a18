// The Allocations, Source and Diff tabs, and the events per unit of work.
'use strict';

// --- allocations -------------------------------------------------------------------------
// The allocating stacks, each class one more leaf (as Rperf::Collapsed.encode(data, allocations:
// true)); a.retained null: not measured. Objects are estimates (samples × N).

function drawAllocations(p) {
  const a = p.allocations;
  const container = $('alloc-flame');
  fillTable('alloc-table', []);
  $('alloc-table').hidden = !a;
  if (!a) {
    emptyBox(container);
    $('alloc-summary').textContent = 'This profile has no allocation samples. Record them with ' +
      '`rperf record --alloc ruby app.rb` (one allocation in 512; --alloc=64: one in 64) or Rperf.start(allocations: 64).';
    return;
  }
  const measured = a.retained !== null;
  Object.assign(document.querySelector('#tab-alloc [data-field="retained"]'), { disabled: !measured, title: measured ? '' : 'not measured: record with retained: true (--retained)' });
  const byRetained = measured && state.allocField === 'retained';
  const kept = model.select(p.handle, ROWS.allocations, { thread: state.threadFilter, hidden: hiddenThreads(p), sets: keptLabelSets(p) }); // allocations are never idle
  const { self, total, sum, allocated, retained, nodeClasses, sites } =
    model.allocationSums(p.handle, kept.rows, kept.weights, byRetained, MAX_TABLE_ROWS);
  const leaves = new Map(); // node -> its classes, as leaves
  for (const [node, cls, objects] of nodeClasses) pushTo(leaves, node, { name: a.classes[cls], file: '', value: objects });
  drawFlame(container, $('alloc-details'), hierarchy(p, { self, total, sum }, null, (node) => leaves.get(node) || []), { format: (v) => fmtCount(v) + ' objects' });

  const summary = $('alloc-summary');
  summary.textContent = `${fmtCount(allocated)} objects allocated, ` +
    (measured ? `${fmtCount(retained)} still alive at the end (retained); ` : 'retained not measured (record with retained: true or --retained); ') +
    `estimates from one sampled allocation in ${a.interval}. ` + (unfilteredReason('alloc') || 'The label and thread filters apply.') +
    (a.pruned.samples ? ` ${a.pruned.samples} light stacks (${fmtCount(a.pruned.objects)} objects) are shown as [pruned].` : '');
  summary.dataset.allocated = String(allocated);
  summary.dataset.retained = measured ? String(retained) : '';
  fillTable('alloc-table', sites.map((r) => {
    const [fn, file] = p.frames[r.frame];
    return el('tr', null, td('num', fmtCount(r.allocated)), td('num', pct(r.allocated, allocated)),
      td('num', measured ? fmtCount(r.retained) : '–'), td('num', measured ? pct(r.retained, retained) : ''),
      td('fn', a.classes[r.cls]), td('fn', fn), td('file', file, file));
  }));
}

// --- source ------------------------------------------------------------------------------
// A file of the profile with each line's time (recorded with lines: true; the page model's
// source_lines); the text is the served viewer's (Viewer::SourcePayload): a file page or a data
// source lists the lines that have time.
async function drawSource(p, rows, weights, live) {
  const body = $('source-table').tBodies[0];
  const note = $('source-note');
  clear(body);
  delete $('source-table').dataset.path;
  if (!state.source) { note.textContent = 'Pin a frame (Shift+click it in a flame graph) and press "source" by the pin.'; return; }
  const [file, name] = state.source;
  let text = null;
  if (textFromServer) {
    try { text = (await sourceText(p, file)).lines; } catch (e) {
      if (live()) note.textContent = 'Cannot show ' + file + ': ' + e.message;
      return;
    }
  }
  if (!live()) return;
  const src = sourceWeights(p, file);
  const byLine = new Map(src.lines.map(([line, self, total]) => [line, [self, total]]));
  const sum = src.keptNs;
  const recorded = !!(p.base || p).line_tree;
  const focus = (src.lines.reduce((a, l) => (a === null || l[2] > a[2] ? l : a), null) || [null])[0]; // the hottest line, by total
  const numbers = text ? text.map((_, i) => i + 1) : src.lines.map(([line]) => line);
  note.textContent = file + (name ? ' — ' + name : '') + ': ' + (text ? text.length + ' lines' : `its text is read by the served viewer (rperf report --port 0 PROFILE, or Rperf::Viewer): this ${embedded ? 'file' : 'data source'} lists the lines with time`) +
    (recorded ? '; self and total per line, of ' + fmtTime(sum) + '.' : '. This profile was recorded without line numbers (lines: true records them): no time per line.');
  appendAll(body, numbers.map((line) => {
    const w = byLine.get(line);
    return el('tr', { class: (w ? 'hot' : '') + (line === focus ? ' focus' : ''), dataset: { line: String(line), selfNs: String(w ? w[0] : 0), totalNs: String(w ? w[1] : 0) } },
      td('num', String(line)), td('num', w && w[0] ? fmtTime(w[0]) + ' ' + pct(w[0], sum) : ''),
      td('num', w ? fmtTime(w[1]) + ' ' + pct(w[1], sum) : ''), td('code', text ? text[line - 1] : ''));
  }));
  $('source-table').dataset.path = file;
  const hot = body.querySelector('tr.focus');
  if (hot) hot.scrollIntoView({ block: 'center' });
}

// The served file's text, the last few kept (a failure is asked for again).
const sourceTexts = new Map();
function sourceText(p, file) {
  const key = p.id + '\u0000' + file;
  return cached(sourceTexts, key, () => fetchJSON(source.viewUrl(p.id, 'source', 'path=' + encodeURIComponent(file))).catch((e) => { sourceTexts.delete(key); throw e; }));
}

// The time per line of `file` in the kept rows (a transformed snapshot's rows keep their
// recorded line-level stacks in the model).
function sourceWeights(p, file) {
  const { kind, kept } = selectSamples(p);
  return model.sourceLines(p.handle, kind, kept.rows, kept.weights, file);
}

// --- diff --------------------------------------------------------------------------------
async function drawDiff(p, weights, live) {
  const container = $('diff-flame');
  const summary = $('diff-summary');
  fill($('diff-table').tBodies[0]);
  clear(container);
  container.removeAttribute('data-rendered');
  summary.textContent = '';
  const fail = (text) => { summary.textContent = text; emptyBox(container); };
  const baseId = state.baseId;
  if (baseId === null) { fail(unfilteredReason('diff') || 'There is no other snapshot to compare with.'); return; }
  let base;
  try { base = await snapshot(baseId); } catch (e) { fail('Cannot load snapshot #' + baseId + ': ' + e.message); return; }
  if (!live()) return; // the user moved on meanwhile
  // Each node's self change against the same stack in the other snapshot (the model's), whose
  // rows are kept without the time range: its clock is its own.
  const [mine, theirs] = [samplesFilter(p), samplesFilter(base, { range: false })];
  const d = model.treeDiff(p.handle, mine.kind, mine.f, base.handle, theirs.kind, theirs.f, $('diff-normalize').checked);
  const scale = d.baseScale;
  drawFlame(container, $('diff-details'), hierarchy(p, weights, (node) => d.selfChange[node]), { diff: true });
  summary.textContent = `#${base.id} (before) ${fmtTime(d.baseSum * scale)}${scale !== 1 ? ' scaled' : ''} → ` +
    `#${p.id} (after) ${fmtTime(d.sum)}: ${fmtSigned(d.sum - d.baseSum * scale)}`;
  // The table: each method's self and total time in both snapshots' method tables, ranked by
  // change by the model (`rperf diff`'s rows), under the chart's filters (the other snapshot's
  // without the time range: its clock is its own). A method below a table's min_percent counts as 0.
  let tables;
  try { tables = [modelView(p, 'method_table'), modelView(base, 'method_table', { ranged: false })]; } catch (e) {
    summary.textContent += ' (cannot load the methods: ' + e.message + ')';
    return fillTable('diff-table', []);
  }
  const [after, before] = tables.map((table) => table.entries.map(([m, self, total]) => ({ name: table.methods[m][0], file: table.methods[m][1], self, total })));
  const rows = model.diffTotals(after, before, scale).slice(0, MAX_TABLE_ROWS);
  fillTable('diff-table', rows.map(([a, b, beforeSelf, afterSelf, beforeTotal, afterTotal]) => {
    const { name, file } = a >= 0 ? after[a] : before[b];
    const delta = afterSelf - beforeSelf;
    return el('tr', { class: delta > 0 ? 'up' : delta < 0 ? 'down' : '' },
      td('num', fmtTime(beforeSelf)), td('num', fmtTime(afterSelf)), td('num delta', fmtSigned(delta)),
      td('num', fmtTime(beforeTotal)), td('num', fmtTime(afterTotal)), td('fn', name), td('file', file, file));
  }));
}

// --- events per unit of work -------------------------------------------------------------
// A snapshot's work_events (Rperf::WorkEvents): per endpoint or job, how many ran, and per event
// (SQL queries, renders) the count per unit, the most in one, and the time: an N+1 shows.
function drawWorkEvents(box, rows) {
  clear(box);
  box.hidden = !Array.isArray(rows) || rows.length === 0;
  if (box.hidden) return;
  const ms = (ns) => (ns / 1e6).toFixed(ns < 1e7 ? 2 : 1) + ' ms';
  const perUnit = (r, n) => n / Math.max(r.units, 1);
  const names = [...new Set(rows.flatMap((r) => Object.keys(r.events || {})))].sort();
  const sql = (r) => ((r.events || {})['sql.active_record'] || { count: 0 }).count;
  const sorted = [...rows].sort((a, b) => perUnit(b, sql(b)) - perUnit(a, sql(a)) || b.units - a.units);
  const labelText = (labels) => Object.entries(labels || {}).map(([k, v]) => (k === 'endpoint' || k === 'job' ? v : `${k}=${v}`)).join(', ');
  box.append(el('summary', { text: `Events per request or job: ${rows.reduce((a, r) => a + r.units, 0)} in ${rows.length} endpoints and jobs` }),
    el('table', { class: 'data', id: 'work-events-table' },
      el('tr', null, el('th', { text: 'endpoint / job' }), el('th', { text: 'runs' }),
        names.map((name) => el('th', { text: name.split('.')[0] + ' / run', title: name + ': count per run (most in one run) and time per run' }))),
      sorted.map((r) => el('tr', { dataset: { labels: JSON.stringify(r.labels || {}) } }, td(null, labelText(r.labels)), td(null, String(r.units)),
        names.map((name) => {
          const e = (r.events || {})[name];
          return e ? el('td', { text: `${perUnit(r, e.count).toFixed(1)} (max ${e.max_per_unit}) · ${ms(perUnit(r, e.duration_ns))}`,
            title: `${e.count} in ${r.units} runs, ${ms(e.duration_ns)} in all`, dataset: { event: name, count: String(e.count), max: String(e.max_per_unit) } }) : td(null, '');
        })))));
}
