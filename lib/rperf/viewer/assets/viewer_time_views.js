// The views over time and threads: the Threads tab, the Timeline and the stack chart.
'use strict';

// --- threads -----------------------------------------------------------------------------
// A thread as every view spells it: its number, its last Thread#name, its Ractor if another.
function threadText(p, th) {
  const [, , , name, ractor] = p.threadTotals.get(th) || [];
  const detail = [name, ractor !== undefined ? 'Ractor #' + ractor : null].filter(Boolean).join(', ');
  return 'thread ' + th + (detail ? ' (' + detail + ')' : '');
}

function drawThreads(p) {
  const rows = selectSamples(p, { thread: false, hide: false });
  const hidden = hiddenThreads(p);
  // Per thread, the page model's total, running, GVL blocked, GVL wait, GC, idle, heaviest frame.
  const sums = model.threadSums(p.handle, rows.kind, rows.kept.rows, rows.kept.weights).sort((a, b) => a[0] - b[0]);
  const sum = sums.reduce((a, t) => a + t[1], 0);
  fillTable('threads-table', sums.map(([th, total, running, blocked, wait, gc, idle, frame, frameWeight]) =>
    el('tr', { class: 'clickable' + (state.threadFilter === th ? ' selected' : '') + (hidden && hidden.has(th) ? ' hidden-idle' : ''),
      dataset: { thread: String(th), idleShare: (total > 0 ? idle / total : 0).toFixed(4), idleNs: String(Math.round(idle)) },
      onclick: () => { state.threadFilter = state.threadFilter === th ? null : th; $('filter-thread').value = state.threadFilter ?? ''; render(); } },
    td(null, threadText(p, th) + (idle > 0 && idle === total ? ' (idle)' : '')), td('num', fmtTime(total) + ' (' + pct(total, sum) + ')'),
    td('num', fmtTime(running)), td('num', fmtTime(blocked)), td('num', fmtTime(wait)), td('num', fmtTime(gc)),
    td('num idle', idle > 0 ? fmtTime(idle) + ' (' + pct(idle, total) + ')' : '–'),
    td('fn', frame >= 0 ? p.frames[frame][0] + ' (' + fmtTime(frameWeight) + ')' : ' (' + fmtTime(0) + ')'))));
}

// --- timeline ----------------------------------------------------------------------------
// One row per thread; each column the share of that slice the thread spent in each state. The
// bins are the model's (views/timeline_bins): the payload's of every sample (the tab opens
// without a big timeline's rows), else the page model's of the rows the filters keep.
async function drawTimeline(p, rows, weights, live) {
  const box = $('timeline');
  clear(box);
  for (const k of ['rendered', 'source', 'stateNs', 'threads']) delete box.dataset[k];
  if (!p.timeline) {
    $('timeline-hint').textContent = 'This snapshot has no timestamps: profiles taken with aggregate: false have a timeline.';
    return emptyBox(box);
  }
  $('timeline-hint').textContent = 'Drag across the timeline to look at that time range only.' +
    (p.timeline.quantum_ns ? ` (samples merged into ${fmtTime(p.timeline.quantum_ns)} slots)` : '');
  const threads = shownThreads(p).filter((th) => state.threadFilter === null || th === state.threadFilter);
  const left = 90;
  const width = Math.max(400, (box.clientWidth || 960) - 2);
  const plot = width - left - 8;
  // The payload's bins of every sample (or of those not idle), unless a label or tag filter is set.
  const binned = state.labelFilter || tagFiltered() ? null : (hidingIdle(p) ? p.timeline.idle_hidden_bins : p.timeline.bins) || null;
  if (!binned) await ensureTimeline(p);
  if (!live()) return; // the user moved on meanwhile
  // Else the page model bins the rows (threads are rows of their own: no thread filter, no time range).
  // Per thread its states' ns per bin (null: none); per bin its heaviest leaves.
  const b = binned || model.timelineBins(p.handle, { hidden: hiddenThreads(p), sets: keptLabelSets(p), idle: hidingIdle(p) },
    Math.max(50, Math.min(600, Math.floor(plot / 2))), p.duration_ns || 0);
  box.dataset.source = binned ? 'bins' : 'rows';
  const { end_ns: end, bins, bin_ns: binNs } = b;
  const occupancy = new Map(b.threads);
  const rowH = 30;
  const height = threads.length * rowH + 24;
  const svg = svgEl('svg', { width, height });
  let drawn = 0;
  const stateNs = STATES.map(() => 0); // what the rows drawn hold, per state (data-state-ns)
  threads.forEach((th, row) => {
    const y0 = row * rowH;
    svg.append(svgEl('text', { x: 4, y: y0 + rowH / 2 + 4 }, threadText(p, th)));
    const occ = occupancy.get(th);
    if (!occ) return;
    for (let b = 0; b < bins; b++) {
      let stacked = 0;
      STATES.forEach((st, si) => {
        if (!occ[si]) return;
        stateNs[si] += occ[si][b];
        const h = Math.min(1, occ[si][b] / binNs) * (rowH - 6);
        if (h <= 0.001 * (rowH - 6)) return;
        svg.append(svgEl('rect', { x: left + b * plot / bins, y: y0 + rowH - 3 - stacked - h, width: Math.max(1, plot / bins), height: h, fill: st.color, 'data-state': st.key }));
        stacked += h;
        drawn++;
      });
    }
  });
  const brush = svgEl('rect', { class: 'brush', y: 0, height: height - 20, x: 0, width: 0, visibility: 'hidden' });
  svg.append(svgEl('text', { x: left, y: height - 6 }, '0'), svgEl('text', { x: width - 8, y: height - 6, 'text-anchor': 'end' }, fmtTime(end)), brush);
  const brushOver = (from, to) => {
    brush.setAttribute('x', left + from / end * plot);
    brush.setAttribute('width', Math.max(1, (to - from) / end * plot));
    brush.setAttribute('visibility', 'visible');
  };
  if (state.range) brushOver(state.range[0], state.range[1]);
  const timeAt = (evt) => {
    const r = svg.getBoundingClientRect();
    return Math.min(end, Math.max(0, (evt.clientX - r.left - left) / plot * end));
  };
  let dragFrom = null;
  svg.addEventListener('mousedown', (evt) => { dragFrom = timeAt(evt); evt.preventDefault(); });
  svg.addEventListener('mousemove', (evt) => {
    const t = timeAt(evt);
    if (dragFrom !== null) brushOver(Math.min(dragFrom, t), Math.max(dragFrom, t));
    const top = b.top[Math.min(bins - 1, Math.max(0, Math.floor(t / binNs)))] || [];
    $('timeline-details').textContent = 'at ' + fmtTime(t) + ': ' + (top.length ? top.map((i) => b.leaf_names[i]).join(', ') : 'no samples');
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
  box.append(svg, el('div', { class: 'legend' }, STATES.map((st) => el('span', null, el('i', { style: 'background:' + st.color }), st.text))));
  box.dataset.threads = threads.join(',');
  box.dataset.stateNs = JSON.stringify(Object.fromEntries(STATES.map((st, si) => [st.key, Math.round(stateNs[si])])));
  box.dataset.rendered = String(drawn);
}

// --- stack chart -------------------------------------------------------------------------
// One thread's samples in time order, each a column of its stack: the page model merges them
// into cells (a frame that stays on the stack is one cell) and the chart only draws them. The same chart as the flame graph (zoom, pan, search, colours); x is time.
// The thread's cells under the label, tag and idle filters (a range is the chart's zoom, the
// hidden threads its thread list), merged by the page model from the timeline's rows
// (page/page_views.hh over views/stack_chart); the last few kept.
async function stackCells(p, th) { // p has a timeline (drawStackChart)
  await ensureTimeline(p);
  return cached(p.views, ['stack_chart', th, filterKey()].join('\u0000'), () => {
    const { f } = samplesFilter(p, { range: false, hide: false });
    return model.view(p.handle, ROWS.timeline, { ...f, thread: th, idle: hidingIdle(p) }, 'stack_chart', null, { minEnd: p.duration_ns || 0 });
  });
}

// The chart of the model's cell columns (page_views' stack_chart_view), drawn from them: a
// cell's object is made only when it is drawn or pointed at. A cell's parent is the last cell
// before it one level up.
function stackModel(body) {
  const { x, w, d, f, gap } = body;
  // Frame f >= 0 is body.frames[f]; f < 0 is the VM state -1 - f (TimelineState): each named once.
  const named = body.frames.map(([name, file, cat]) => ({ name, file, cat: drawnCategory(cat, name) }));
  const states = STATES.map((s) => STATE_LEAF[s.key] && { name: STATE_LEAF[s.key][0], file: '', cat: STATE_LEAF[s.key][1] });
  const parent = (i) => {
    for (let j = i - 1; d[i] > 0 && j >= 0; j--) if (d[j] === d[i] - 1) return j;
    return -1;
  };
  const cell = (i) => ({ x: x[i], w: w[i], d: d[i], ...(f[i] >= 0 ? named[f[i]] : states[-1 - f[i]]), value: w[i] - gap[i], parent: parent(i) });
  return { count: x.length, x, w, d, cell, start: 0, span: body.end_ns, depth: maxOf(d, 0) };
}

async function drawStackChart(p, rows, weights, live) {
  const box = $('stack');
  const sel = $('stack-thread');
  const empty = (text) => {
    emptyBox(box);
    delete box.dataset.totalNs;
    $('stack-details').textContent = text;
  };
  clear(sel);
  if (!p.timeline) { empty('This snapshot has no timestamps: profiles taken with aggregate: false have a stack chart.'); return; }
  const threads = state.threadFilter !== null ? [state.threadFilter] : shownThreads(p);
  const ns = (th, k) => (p.threadTotals.get(th) || [])[k] || 0; // k: 1 its total, 2 its idle time (the model's thread_totals)
  for (const th of threads) sel.append(el('option', { value: String(th), text: threadText(p, th) + ' (' + fmtTime(ns(th, 1)) + ')' }));
  // Default: the thread with the most time that is not idle.
  if (!threads.includes(state.stackThread)) {
    const busyNs = (th) => ns(th, 1) - ns(th, 2);
    state.stackThread = threads.reduce((a, th) => (a === null || busyNs(th) > busyNs(a) ? th : a), null);
  }
  if (state.stackThread === null || state.stackThread === undefined) { empty('No thread to show.'); return; }
  sel.value = String(state.stackThread);
  const th = state.stackThread;
  let body;
  try { body = await stackCells(p, th); } catch (e) {
    if (live()) empty('Cannot load the stack chart of thread ' + th + ': ' + e.message);
    return;
  }
  if (!live()) return; // the user moved on meanwhile
  if (!body.x.length) { empty('No samples of thread ' + th + ' match the filters.'); return; }
  const model = stackModel(body);
  const total = body.total_ns;
  Object.assign(box.dataset, { totalNs: String(total), thread: String(th), cells: String(model.count) });
  $('stack-details').textContent = threadText(p, th) + ': ' + fmtTime(total) + ' in ' + body.samples + ' samples; hover a frame for its time.';
  const label = (c) => c.name + ' — ' + fmtTime(c.value) + ' (' + pct(c.value, total) + ') from ' + fmtTime(c.x) + ' to ' + fmtTime(c.x + c.w) + (c.file ? ' — ' + c.file : '');
  drawChart(box, $('stack-details'), model, { inverted: true, label, view: state.range, legend: categoryLegend(LEGEND), axis: fmtTime });
}
