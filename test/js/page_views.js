// Runs the page model (lib/rperf/viewer/assets/page_model.js over page_model.wasm) under node on
// a snapshot's payload (Viewer::Payload) as the page does, for the Ruby tests: reads
// {payload, duration_ns, queries: [{view, filter: {thread, hide, range, idle, label: {key, values, unset},
// ignore: [[key, value or null], ...]},
// fn, limits: {maxNodes, maxMethods, maxArcs}}]} as JSON on stdin and prints the views as a JSON list
// (view 'source' with path: the Source tab's {lines: [[line, self, total], ...], keptNs};
// 'timeline_bins': the Timeline's bins of the timeline rows, bins: how many).
'use strict';
const fs = require('fs');
const path = require('path');
const assets = path.join(__dirname, '../../lib/rperf/viewer/assets');
const { ROWS, instantiate } = require(path.join(assets, 'page_model.js'));

(async () => {
  const { payload: p, queries, duration_ns: duration } = JSON.parse(fs.readFileSync(0, 'utf8'));
  const model = await instantiate(fs.readFileSync(path.join(assets, 'page_model.wasm')));
  const handle = model.snapshot({ parents: p.nodes.parent, nodeFrames: p.nodes.frame, frames: p.frames, frameLines: p.frame_lines, labelSets: p.label_sets, lineTree: p.line_tree });
  model.rows(handle, ROWS.samples, p.samples, p.idle_samples, !!p.line_tree);
  if (p.timeline && p.timeline.samples) model.rows(handle, ROWS.timeline, p.timeline.samples, p.timeline.idle, !!p.line_tree);
  const out = queries.map(({ view, filter = {}, fn = null, limits = {}, path: file = null, bins = 600 }) => {
    const label = filter.label;
    const f = {
      thread: filter.thread === undefined ? null : filter.thread,
      hidden: filter.hide ? new Set(filter.hide) : null,
      sets: label || filter.ignore ? model.matchLabelSets(handle, { key: label ? label.key : null, values: (label && label.values) || [],
        unset: !!(label && label.unset), focused: null, ignore: filter.ignore || [] }) : null,
      range: filter.range || null,
      idle: !!filter.idle,
    };
    const timeline = f.range || view === 'stack_chart';
    if (view === 'timeline_bins') {
      const b = model.timelineBins(handle, f, bins, duration || 0);
      return Object.assign(b, { threads: b.threads.map(([th, states]) => [th, states.map((s) => s && Array.from(s))]) });
    }
    if (view === 'source') {
      const kind = timeline ? ROWS.timeline : ROWS.samples;
      const kept = model.select(handle, kind, f);
      return model.sourceLines(handle, kind, kept.rows, kept.weights, file);
    }
    const v = model.view(handle, timeline ? ROWS.timeline : ROWS.samples, f, view, fn, Object.assign({ minEnd: duration || 0 }, limits));
    if (view === 'stack_chart') for (const column of ['x', 'w', 'd', 'f', 'gap']) v[column] = Array.from(v[column]);
    return v;
  });
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { process.stderr.write(String(e.stack || e)); process.exit(1); });
