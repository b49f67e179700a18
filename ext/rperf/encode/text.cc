// The text report: totals, then flat (leaf) and cumulative tables of the top functions. A
// function counts once per sample in the cumulative table, however often it recurses.
#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "profile.hh"

namespace rperf {

namespace {
struct Row {
  const ProfileFrame* frame;
  int64_t weight;
};

std::string format_rows(std::vector<Row> rows, int64_t total, int top_n) {
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.weight != b.weight) return a.weight > b.weight;
    if (a.frame->label != b.frame->label) return a.frame->label < b.frame->label;
    return a.frame->path < b.frame->path;
  });
  if (static_cast<int>(rows.size()) > top_n) rows.resize(top_n);
  std::string out;
  char buf[64];
  for (const Row& r : rows) {
    double pct = total > 0 ? r.weight * 100.0 / total : 0.0;
    std::snprintf(buf, sizeof(buf), "  %10.1fms %5.1f%%  ", r.weight / 1e6, pct);
    out += buf;
    out += valid_utf8(r.frame->label);
    if (!r.frame->path.empty()) out += " (" + valid_utf8(r.frame->path) + ")";
    out += '\n';
  }
  return out;
}
}  // namespace

std::string encode_text(const Profile& p, int top_n) {
  // Functions are (label, path); frames with other lines fold into the first one seen.
  std::unordered_map<std::string, uint32_t> function_of_key;
  std::vector<uint32_t> function_of_frame(p.frames.size());
  std::vector<const ProfileFrame*> functions;
  for (size_t i = 0; i < p.frames.size(); i++) {
    std::string key = p.frames[i].label + '\0' + p.frames[i].path;
    auto [it, inserted] = function_of_key.emplace(key, static_cast<uint32_t>(functions.size()));
    if (inserted) functions.push_back(&p.frames[i]);
    function_of_frame[i] = it->second;
  }
  std::vector<int64_t> flat(functions.size()), cum(functions.size());
  std::vector<uint64_t> seen_in_sample(functions.size(), 0);
  uint64_t sample_no = 0;
  int64_t total = 0;
  for (const ProfileSample& s : p.samples) {
    total += s.weight_ns;
    if (s.frames.empty()) continue;
    sample_no++;
    flat[function_of_frame[s.frames[0]]] += s.weight_ns;
    for (uint32_t f : s.frames) {
      uint32_t fn = function_of_frame[f];
      if (seen_in_sample[fn] == sample_no) continue;
      seen_in_sample[fn] = sample_no;
      cum[fn] += s.weight_ns;
    }
  }
  std::vector<Row> flat_rows, cum_rows;
  for (size_t i = 0; i < functions.size(); i++) {
    if (flat[i]) flat_rows.push_back({functions[i], flat[i]});
    if (cum[i]) cum_rows.push_back({functions[i], cum[i]});
  }
  char buf[160];
  std::snprintf(buf, sizeof(buf), "Total: %.1fms (%s)\nSamples: %zu, Frequency: %dHz\n", total / 1e6, p.mode.c_str(),
                static_cast<size_t>(p.sampling_count >= 0 ? p.sampling_count : static_cast<int64_t>(p.samples.size())),
                p.frequency);
  std::string out = buf;
  out += "\nFlat:\n" + format_rows(flat_rows, total, top_n);
  out += "\nCumulative:\n" + format_rows(cum_rows, total, top_n);
  return out;
}

}  // namespace rperf
