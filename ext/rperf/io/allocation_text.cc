// The allocation report (`rperf report --alloc`, `rperf stat --alloc`): estimated objects
// allocated and retained, the top allocating sites (self: the frame that allocated; total:
// with its callees) and the top classes.
#include <cstdio>

#include "io/encoders.hh"
#include "views/functions.hh"

namespace rperf {

namespace {

std::string grouped(int64_t n) { return grouped_thousands(std::to_string(n)); }

std::string row(int64_t objects, int64_t total, const std::string& name) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "  %14s %5.1f%%  ", grouped(objects).c_str(), total > 0 ? objects * 100.0 / total : 0.0);
  return buf + valid_utf8(name) + "\n";
}

std::string function_rows(const Profile& p, const FunctionTotals& t, const std::vector<int64_t>& weights, int top_n) {
  std::string out;
  for (uint32_t fn : top_functions(p, t, weights, static_cast<size_t>(top_n))) {
    const Frame& f = p.frames[t.first_frame[fn]];
    out += row(weights[fn], t.grand_total_ns, f.path.empty() ? f.label : f.label + " (" + f.path + ")");
  }
  return out;
}

}  // namespace

std::string encode_allocation_text(const Profile& p, int top_n, bool interval_guessed) {
  if (!p.has_allocations()) return "No allocation samples (profile without allocations: N).\n";
  FunctionTotals allocated = allocation_totals(p);
  FunctionTotals retained = allocation_totals(p, true);
  std::string out = "Allocations: " + grouped(allocated.grand_total_ns) + " objects (estimated, one in " +
                    grouped(p.header.allocation_interval.value_or(0)) + " sampled" +
                    (interval_guessed ? "; the interval estimated from the counts: the file does not name it" : "") + "), " +
                    (p.retained_measured ? grouped(retained.grand_total_ns) + " retained\n" : "retained not measured (retained: true)\n");
  out += "\n Allocated by site (self):\n" + function_rows(p, allocated, allocated.self_ns, top_n);
  out += "\n Allocated by site (total):\n" + function_rows(p, allocated, allocated.total_ns, top_n);
  out += "\n Allocated by class:\n";
  int n = 0;
  for (const auto& [cls, objects] : class_totals(p)) {
    if (n++ == top_n) break;
    out += row(objects, allocated.grand_total_ns, p.class_names[cls]);
  }
  if (retained.grand_total_ns > 0) {
    out += "\n Retained by site (self):\n" + function_rows(p, retained, retained.self_ns, top_n);
    out += "\n Retained by class:\n";
    n = 0;
    for (const auto& [cls, objects] : class_totals(p, true)) {
      if (n++ == top_n) break;
      out += row(objects, retained.grand_total_ns, p.class_names[cls]);
    }
  }
  return out;
}

}  // namespace rperf
