// The events per unit of work of a snapshot (its work_events: Rperf::WorkEvents), as a table
// of one row per endpoint or job: how many ran, and per event (SQL queries, renders, actions)
// the count per unit, the most in one unit, and the time. An N+1 shows as its query count.
// Apart from viewer.js, which calls RperfWorkEvents.draw(box, rows) for each snapshot shown.
'use strict';
window.RperfWorkEvents = (() => {
  const cell = (tag, text, title) => {
    const node = document.createElement(tag);
    node.textContent = text;
    if (title) node.title = title;
    return node;
  };
  const ms = (ns) => (ns / 1e6).toFixed(ns < 1e7 ? 2 : 1) + ' ms';
  const short = (name) => name.split('.')[0];
  const labelText = (labels) => Object.entries(labels || {}).map(([k, v]) => (k === 'endpoint' || k === 'job' ? v : `${k}=${v}`)).join(', ');

  function draw(box, rows) {
    while (box.firstChild) box.removeChild(box.firstChild);
    box.hidden = !Array.isArray(rows) || rows.length === 0;
    if (box.hidden) return;
    const names = [...new Set(rows.flatMap((r) => Object.keys(r.events || {})))].sort();
    const sql = (r) => ((r.events || {})['sql.active_record'] || { count: 0 }).count;
    const sorted = [...rows].sort((a, b) => sql(b) / Math.max(b.units, 1) - sql(a) / Math.max(a.units, 1) || b.units - a.units);
    const units = rows.reduce((a, r) => a + r.units, 0);
    box.append(cell('summary', `Events per request or job: ${units} in ${rows.length} endpoints and jobs`));
    const table = document.createElement('table');
    table.className = 'data';
    table.id = 'work-events-table';
    const head = document.createElement('tr');
    head.append(cell('th', 'endpoint / job'), cell('th', 'runs'));
    for (const name of names) head.append(cell('th', short(name) + ' / run', name + ': count per run (most in one run) and time per run'));
    table.append(head);
    for (const r of sorted) {
      const tr = document.createElement('tr');
      tr.dataset.labels = JSON.stringify(r.labels || {});
      tr.append(cell('td', labelText(r.labels)), cell('td', String(r.units)));
      for (const name of names) {
        const e = (r.events || {})[name];
        const td = e ? cell('td', `${(e.count / Math.max(r.units, 1)).toFixed(1)} (max ${e.max_per_unit}) · ${ms(e.duration_ns / Math.max(r.units, 1))}`,
          `${e.count} in ${r.units} runs, ${ms(e.duration_ns)} in all`) : cell('td', '');
        if (e) { td.dataset.event = name; td.dataset.count = String(e.count); td.dataset.max = String(e.max_per_unit); }
        tr.append(td);
      }
      table.append(tr);
    }
    box.append(table);
  }
  return { draw };
})();
