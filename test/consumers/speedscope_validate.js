// Validates a speedscope file against the schema shipped in speedscope's own npm package.
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const schemaPath = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist/release/file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const ajv = new Ajv({ strict: false, allErrors: true });
const validate = ajv.compile(schema);
const doc = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
if (!validate(doc)) {
  console.error(JSON.stringify(validate.errors, null, 2));
  process.exit(1);
}
// The sampled profiles' weights must add up to their declared span.
for (const p of doc.profiles) {
  const sum = p.weights.reduce((a, b) => a + b, 0);
  if (p.samples.length !== p.weights.length || sum !== p.endValue - p.startValue) {
    console.error(`profile ${p.name}: ${p.samples.length} samples, ${p.weights.length} weights, sum ${sum}`);
    process.exit(1);
  }
}
console.log(JSON.stringify({ ok: true, profiles: doc.profiles.length, frames: doc.shared.frames.length }));
