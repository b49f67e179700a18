#include "views/summary.hh"

#include <cmath>

#include "views/functions.hh"

namespace rperf {

namespace {
double round1(double v) { return std::round(v * 10.0) / 10.0; }
}  // namespace

JsonValue summarize(const Profile& p) {
  const ProfileHeader& h = p.header;
  JsonValue s = JsonValue::object();
  if (h.duration_ns) s.set("total_ms", JsonValue::real(round1(*h.duration_ns / 1e6)));
  if (h.user_ns || h.sys_ns) s.set("cpu_ms", JsonValue::real(round1((static_cast<double>(h.user_ns.value_or(0)) + static_cast<double>(h.sys_ns.value_or(0))) / 1e6)));
  if (h.gc_stats) {
    const JsonValue& gc = *h.gc_stats;
    const std::pair<const char*, const char*> counts[] = {{"minor_count", "gc_count_minor"}, {"major_count", "gc_count_major"}};
    for (const auto& [from, to] : counts) {
      if (gc.get(from)) s.set(to, JsonValue::integer(gc.int_or(from, 0)));
    }
    if (const JsonValue* ms = gc.get("time_ms")) s.set("gc_ms", JsonValue::real(round1(ms->as_double())));
    for (const char* key : {"allocated_objects", "freed_objects"}) {
      if (gc.get(key)) s.set(key, JsonValue::integer(gc.int_or(key, 0)));
    }
  }
  if (h.maxrss_mb && h.maxrss_mb->has_value()) s.set("maxrss_mb", JsonValue::integer(**h.maxrss_mb));
  if (h.sampling_count) s.set("samples", JsonValue::integer(*h.sampling_count));
  if (p.has_allocations()) {  // ours: estimated objects allocated and still alive (allocations: N; retained: true)
    int64_t allocated = 0, retained = 0;
    for (const AllocationSample& x : p.allocations) {
      allocated += x.count;
      retained += x.retained;
    }
    s.set("allocation_estimate", JsonValue::integer(allocated));
    if (p.retained_measured) s.set("retained_estimate", JsonValue::integer(retained));
  }

  JsonValue top = JsonValue::array();
  FunctionTotals t = function_totals(p, true);
  if (t.grand_total_ns > 0) {
    for (uint32_t fn : top_functions(p, t, t.self_ns, kSummaryTopMethods)) {
      JsonValue m = JsonValue::object();
      m.set("name", JsonValue::string(p.frames[t.first_frame[fn]].label));
      m.set("self_pct", JsonValue::real(round1(t.self_ns[fn] * 100.0 / t.grand_total_ns)));
      m.set("total_pct", JsonValue::real(round1(t.total_ns[fn] * 100.0 / t.grand_total_ns)));
      top.push(std::move(m));
    }
  }
  s.set("top_methods", std::move(top));
  return s;
}

}  // namespace rperf
