// Validates a Firefox Profiler processed profile (rperf's .firefox.json / .firefox.json.gz)
// against firefox_processed_v55.schema.json with ajv, then checks what a schema cannot say:
// every column of a table has the table's length, every index points into its table (string,
// func, frame, stack, category, subcategory), prefixes point backwards, sample times are sorted.
// Usage: node firefox_validate.js FILE; prints {"ok":true,...} or the problems, exit 1.
const fs = require('fs');
const zlib = require('zlib');
const Ajv = require('ajv');

const raw = fs.readFileSync(process.argv[2]);
const doc = JSON.parse((raw[0] === 0x1f && raw[1] === 0x8b ? zlib.gunzipSync(raw) : raw).toString('utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(JSON.parse(fs.readFileSync(`${__dirname}/firefox_processed_v55.schema.json`, 'utf8')));
const problems = [];
if (!validate(doc)) problems.push(...validate.errors.map((e) => `${e.instancePath} ${e.message}`));

const cats = doc.meta.categories || [];
(doc.threads || []).forEach((t, ti) => {
  const where = (s) => `thread ${ti} (${t.name}): ${s}`;
  for (const name of ['samples', 'markers', 'stackTable', 'frameTable', 'funcTable', 'resourceTable', 'nativeSymbols']) {
    const table = t[name] || {};
    for (const [key, col] of Object.entries(table)) {
      if (Array.isArray(col) && col.length !== table.length) problems.push(where(`${name}.${key} has ${col.length} entries, length ${table.length}`));
    }
  }
  const strings = t.stringArray.length;
  const inRange = (v, n, what) => { if (!(Number.isInteger(v) && v >= 0 && v < n)) problems.push(where(`${what} ${v} out of 0...${n}`)); };
  t.funcTable.name.forEach((v) => inRange(v, strings, 'func name'));
  t.funcTable.fileName.forEach((v) => v === null || inRange(v, strings, 'func file'));
  t.frameTable.func.forEach((v) => inRange(v, t.funcTable.length, 'frame func'));
  t.frameTable.category.forEach((c, i) => {
    inRange(c, cats.length, 'frame category');
    if (cats[c]) inRange(t.frameTable.subcategory[i], cats[c].subcategories.length, 'frame subcategory');
  });
  t.stackTable.frame.forEach((v) => inRange(v, t.frameTable.length, 'stack frame'));
  t.stackTable.prefix.forEach((v, i) => v === null || (v < i ? null : problems.push(where(`stack ${i} prefix ${v} not before it`))));
  t.samples.stack.forEach((v) => v === null || inRange(v, t.stackTable.length, 'sample stack'));
  t.samples.time.forEach((v, i) => { if (i && v < t.samples.time[i - 1]) problems.push(where(`sample ${i} time goes back`)); });
  t.markers.name.forEach((v) => inRange(v, strings, 'marker name'));
  t.markers.category.forEach((v) => inRange(v, cats.length, 'marker category'));
  const schemas = new Set(doc.meta.markerSchema.map((s) => s.name));
  t.markers.data.forEach((d) => { if (d && !schemas.has(d.type)) problems.push(where(`marker type ${d.type} has no schema`)); });
});
console.log(JSON.stringify({ ok: problems.length === 0, problems: problems.slice(0, 50), threads: (doc.threads || []).length }));
process.exit(problems.length ? 1 : 0);
