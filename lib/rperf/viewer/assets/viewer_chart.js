// The flame-chart renderer every chart uses (flame graph, icicle, stack chart, allocations,
// diff, sandwich): layout, paint, zoom, pan.
'use strict';

// --- flame charts ------------------------------------------------------------------------
// One renderer for the flame graph, the icicle, the stack chart, the allocations and the
// diff: `count` cells laid out in the chart's units (weight, objects or time) from `start` over
// `span`, their x, w and d (depth) as columns, and cell(i): the whole cell {x, w, d, name, file,
// cat, value, parent}, asked for only of the cells drawn or pointed at (a thread's stack chart
// has a cell per sample: its columns are the page model's, not an object each). The chart fits the window (it scrolls inside its
// own box, so the root and the hover details stay in view), zooms with the wheel around the
// pointer, pans by dragging, and zooms to a frame on click, with a breadcrumb back out.
// Presentation only: the weights are those the view computed.
const CELL_H = 18;
const LEGEND = Object.keys(CATEGORY_STYLE);

const categoryOf = (p, node) => (p.categories && p.frame_categories ? drawnCategory(p.categories[p.frame_categories[p.nodes.frame[node]]], frameOf(p, node)[0]) : 'app');

function categoryLegend(cats) {
  return el('div', { class: 'legend categories' }, cats.map((c) =>
    el('span', { dataset: { category: c } }, el('i', { style: 'background:' + categoryColor(c, '') }), (CATEGORY_STYLE[c] || { text: c }).text)));
}

const searchText = () => (state.search || '').trim().toLowerCase();
const matches = (q, name, file) => !!q && (String(name).toLowerCase().includes(q) || String(file || '').toLowerCase().includes(q));

// Draws `model` into `container` (a new chart: the zoom starts at `view` or the whole span).
function drawChart(container, details, model, opts) {
  const crumbs = el('div', { class: 'crumbs' });
  const viewport = el('div', { class: 'viewport' });
  fill(container, crumbs, opts.legend, viewport); // the legend above the chart: in view with it
  container.removeAttribute('data-rendered');
  container.classList.add('chart-host');
  const chart = { container, details, model, opts, crumbs, viewport, x0: model.start, x1: model.start + model.span, focus: -1, first: true };
  const zoomTo = ([v0, v1], focus = -1) => {
    const x0 = Math.max(model.start, v0), x1 = Math.min(model.start + model.span, v1);
    if (x1 > x0) Object.assign(chart, { x0, x1, focus: focus < model.count ? focus : -1 });
  };
  if (opts.view) zoomTo(opts.view);
  // The address's zoom goes to the chart the keys and the address follow (the tab's first).
  const z = state.zoom;
  if (z && z.tab === state.tab && container === document.querySelector('.tab.active .chart-host')) {
    state.zoom = null;
    zoomTo(z.view, z.focus);
  }
  container._chart = chart;
  wireChart(chart);
  paintChart(chart);
  return chart;
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
  const { x, w, d } = model;
  for (let i = 0; i < model.count; i++) {
    if (x[i] + w[i] <= chart.x0 || x[i] >= chart.x1) continue;
    let px = (x[i] - chart.x0) * scale;
    let pw = w[i] * scale;
    if (pw < 1) continue;
    if (px < 0) { pw += px; px = 0; }
    if (px + pw > width) pw = width - px;
    const c = model.cell(i);
    const y = axisH + (opts.inverted ? d[i] * CELL_H : (model.depth - d[i]) * CELL_H);
    const hit = matches(q, c.name, c.file);
    const pinned = state.pin && c.name === state.pin[0] && c.file === state.pin[1];
    const label = fitText(c.name, pw);
    frag.append(svgEl('g', { class: 'frame' + (q ? (hit ? ' match' : ' dim') : '') + (pinned ? ' pinned' : ''), name: c.name, 'data-i': i, 'data-cat': c.cat, transform: `translate(${px.toFixed(1)},${y})` },
      svgEl('rect', { width: Math.max(0.5, pw - 0.5).toFixed(1), height: CELL_H - 1, fill: opts.color ? opts.color(c) : categoryColor(c.cat, c.name) }),
      label ? svgEl('text', { x: 3, y: 13 }, label) : null));
    drawn++;
  }
  if (opts.axis) {
    const ticks = Math.max(2, Math.floor(width / 140));
    for (let k = 0; k <= ticks; k++) {
      frag.append(svgEl('text', { class: 'axis', x: k * width / ticks, y: 12, 'text-anchor': k === 0 ? 'start' : k === ticks ? 'end' : 'middle' },
        opts.axis(chart.x0 + k * (chart.x1 - chart.x0) / ticks)));
    }
  }
  svg.append(frag);
  const keepScroll = viewport.scrollTop;
  fill(viewport, svg);
  // A flame graph's root is at the bottom: start there.
  if (chart.first) { viewport.scrollTop = opts.inverted ? 0 : viewport.scrollHeight; chart.first = false; } else viewport.scrollTop = keepScroll;
  container.dataset.rendered = String(drawn);
  container.dataset.view = Math.round(chart.x0) + ',' + Math.round(chart.x1);
  container.dataset.zoom = chart.focus >= 0 ? model.cell(chart.focus).name : '';
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
  const path = [];
  for (let i = chart.focus; i >= 0; i = model.cell(i).parent) path.unshift(i);
  const zoomed = chart.x0 > model.start || chart.x1 < model.start + model.span;
  fill(crumbs, el('button', { type: 'button', class: 'reset-zoom', text: 'reset zoom', title: 'Show everything (0)', disabled: zoomed ? null : '', onclick: () => zoomChart(chart, -1) }),
    path.map((i) => [el('span', { class: 'sep', text: '›' }),
      el('button', { type: 'button', class: 'crumb', text: model.cell(i).name, title: model.cell(i).file, onclick: () => zoomChart(chart, i) })]),
    el('span', { class: 'hint', text: zoomed ? '' : ' wheel: zoom · drag: pan · click a frame: zoom to it' }));
}

// Zooms to cell i (-1: everything).
function zoomChart(chart, i) {
  const { model } = chart;
  const whole = i < 0 || (model.d[i] === 0 && model.w[i] >= model.span); // the root: everything
  Object.assign(chart, whole ? { focus: -1, x0: model.start, x1: model.start + model.span } : { focus: i, x0: model.x[i], x1: model.x[i] + model.w[i] });
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
  const cellAt = (evt) => { // the index of the cell under the pointer, or -1
    const g = evt.target.closest && evt.target.closest('g.frame');
    return g ? Number(g.dataset.i) : -1;
  };
  const coordAt = (evt) => {
    const r = viewport.getBoundingClientRect();
    return chart.x0 + (evt.clientX - r.left) / Math.max(1, r.width) * (chart.x1 - chart.x0);
  };
  viewport.addEventListener('mousemove', (evt) => {
    const i = cellAt(evt);
    if (i >= 0 && details) details.textContent = opts.label(model.cell(i));
  });
  viewport.addEventListener('wheel', (evt) => {
    evt.preventDefault();
    if (evt.shiftKey || Math.abs(evt.deltaX) > Math.abs(evt.deltaY)) {
      const d = evt.shiftKey ? evt.deltaY || evt.deltaX : evt.deltaX;
      panChart(chart, d / Math.max(1, viewport.clientWidth) * (chart.x1 - chart.x0));
    } else {
      scaleChart(chart, Math.exp(evt.deltaY * 0.002), coordAt(evt));
    }
    repaint(); // showing the whole span, the chart has no frame in focus (clampChart)
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
    const i = cellAt(evt);
    if (!drag || drag.chart !== chart || drag.moved || i < 0) return;
    const c = model.cell(i);
    // Shift+click: pins the function (0.11.1's pin: outlined, its share per snapshot); in
    // the sandwich, makes it the middle.
    if (evt.shiftKey && c.file && !opts.color) {
      if (state.tab === 'sandwich') { state.sandwich = [c.name, c.file]; render(); } else togglePin([c.name, c.file]);
      return;
    }
    zoomChart(chart, i);
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
  if (!data.value) { emptyBox(container, 'No samples match the filters.'); return; }
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

// The VM-state part of a node's self weight as leaves of their own ([GVL blocked], [GVL
// wait], [GC]), as in the call tree: the time a frame spent off the GVL is seen, and coloured.
const stateLeaves = (weights) => (node) => {
  const v = weights.stateSelf.get(node) || [];
  return Object.values(STATE_LEAF).flatMap(([name, cat], k) => (v[k] > 0 ? [{ name, file: '', value: v[k], cat }] : []));
};

// The weight of the samples with a frame that matches the search (name or file; the VM-state
// leaves too), of `weights`: the one place the search's share is summed, for every view.
function searchWeight(p, weights, q) {
  if (!q) return null;
  const frameHit = Uint8Array.from(p.frames, ([name, file]) => (matches(q, name, file) ? 1 : 0));
  const leafHit = Object.values(STATE_LEAF).map(([name]) => matches(q, name, ''));
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
