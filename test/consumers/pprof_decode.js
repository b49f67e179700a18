// Decodes a .pb.gz with the independent `pprof-format` decoder and prints a JSON summary.
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require('pprof-format');

const profile = Profile.decode(zlib.gunzipSync(fs.readFileSync(process.argv[2])));
const str = (i) => profile.stringTable.strings[Number(i)];
let total = 0n;
const labelKeys = new Set();
for (const s of profile.sample) {
  for (const v of s.value) total += BigInt(v);
  for (const l of s.label) labelKeys.add(str(l.key));
}
const lines = [];
for (const loc of profile.location) for (const line of loc.line) lines.push(Number(line.line));
console.log(JSON.stringify({
  samples: profile.sample.length,
  total: total.toString(),
  sampleType: profile.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`),
  period: Number(profile.period),
  firstString: str(0),
  functions: profile.function.map((f) => str(f.name)),
  startLines: Object.fromEntries(profile.function.map((f) => [str(f.name), Number(f.startLine)])),
  maxLine: Math.max(0, ...lines),
  labelKeys: [...labelKeys].sort(),
}));
