// The text report (rperf 0.11's layout, which scripts parse): totals, then flat (self) and
// cumulative tables of the top functions, "  %14s ms %5.1f%%  label (path)" with the
// milliseconds grouped by thousands.
#include <cstdio>

#include "io/encoders.hh"
#include "views/functions.hh"

namespace rperf {

namespace {
std::string grouped_ms(int64_t ns) {
  char digits[48];
  std::snprintf(digits, sizeof(digits), "%.1f", ns / 1e6);
  return grouped_thousands(digits);
}

std::string format_rows(const Profile& p, const FunctionTotals& t, const std::vector<int64_t>& weights, int top_n) {
  std::string out;
  char buf[64];
  for (uint32_t fn : top_functions(p, t, weights, static_cast<size_t>(top_n))) {
    const Frame& f = p.frames[t.first_frame[fn]];
    double pct = t.grand_total_ns > 0 ? weights[fn] * 100.0 / t.grand_total_ns : 0.0;
    std::snprintf(buf, sizeof(buf), "  %14s ms %5.1f%%  ", grouped_ms(weights[fn]).c_str(), pct);
    out += buf;
    out += valid_utf8(f.label);
    if (!f.path.empty()) out += " (" + valid_utf8(f.path) + ")";
    out += '\n';
  }
  return out;
}
}  // namespace

std::string grouped_thousands(std::string number) {
  const size_t start = !number.empty() && number[0] == '-' ? 1 : 0;
  size_t end = number.find('.');
  if (end == std::string::npos) end = number.size();
  for (size_t i = end; i > start + 3; i -= 3) number.insert(i - 3, ",");
  return number;
}

std::string encode_text(const Profile& p, int top_n, bool header) {
  if (p.samples.empty()) return "No samples recorded.\n";
  FunctionTotals t = function_totals(p);
  int64_t samples = p.header.sampling_count.value_or(static_cast<int64_t>(p.samples.size()));
  char buf[160];
  std::snprintf(buf, sizeof(buf), "Total: %.1fms (%s)\nSamples: %lld, Frequency: %dHz\n", t.grand_total_ns / 1e6,
                p.mode().c_str(), static_cast<long long>(samples), p.frequency());
  std::string out = header ? std::string(buf) + "\n" : std::string();
  out += " Flat:\n" + format_rows(p, t, t.self_ns, top_n);
  out += "\n Cumulative:\n" + format_rows(p, t, t.total_ns, top_n);
  return out;
}

}  // namespace rperf
