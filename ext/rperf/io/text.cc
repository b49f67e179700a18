// The text report: totals, then flat (self) and cumulative tables of the top functions.
#include <cstdio>

#include "io/encoders.hh"
#include "profile/functions.hh"

namespace rperf {

namespace {
std::string format_rows(const Profile& p, const FunctionTotals& t, const std::vector<int64_t>& weights, int top_n) {
  std::string out;
  char buf[64];
  for (uint32_t fn : top_functions(p, t, weights, static_cast<size_t>(top_n))) {
    const Frame& f = p.frames[t.first_frame[fn]];
    double pct = t.grand_total_ns > 0 ? weights[fn] * 100.0 / t.grand_total_ns : 0.0;
    std::snprintf(buf, sizeof(buf), "  %10.1fms %5.1f%%  ", weights[fn] / 1e6, pct);
    out += buf;
    out += valid_utf8(f.label);
    if (!f.path.empty()) out += " (" + valid_utf8(f.path) + ")";
    out += '\n';
  }
  return out;
}
}  // namespace

std::string encode_text(const Profile& p, int top_n) {
  FunctionTotals t = function_totals(p);
  int64_t samples = p.attributes.int_or("sampling_count", static_cast<int64_t>(p.samples.size()));
  char buf[160];
  std::snprintf(buf, sizeof(buf), "Total: %.1fms (%s)\nSamples: %lld, Frequency: %dHz\n", t.grand_total_ns / 1e6,
                p.mode().c_str(), static_cast<long long>(samples), p.frequency());
  std::string out = buf;
  out += "\nFlat:\n" + format_rows(p, t, t.self_ns, top_n);
  out += "\nCumulative:\n" + format_rows(p, t, t.total_ns, top_n);
  return out;
}

}  // namespace rperf
