#include "views/method_table.hh"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "views/functions.hh"

namespace rperf {

namespace {
// True when the call path[d - 1] -> path[d] happens higher up on the path too: that outer call
// counted this sample already. Only paths that repeat a method can repeat a call.
bool outer_call_counted(const uint32_t* path, size_t d) {
  for (size_t up = 1; up < d; up++) {
    if (path[up] == path[d] && path[up - 1] == path[d - 1]) return true;
  }
  return false;
}
}  // namespace

MethodTable::MethodTable(std::shared_ptr<const MethodPaths> paths) : paths_(std::move(paths)) {
  entries_.assign(paths_->methods().size(), Entry{});
  add_samples();
}

size_t MethodTable::bytes() const {
  size_t size = (entries_.capacity() * sizeof(Entry)) + (calls_per_caller_.capacity() + calls_per_callee_.capacity()) * sizeof(uint32_t) +
                path_repeats_.capacity();
  if (arcs_ready_) {
    size += all_arcs_.capacity() * sizeof(MethodArcs);
    for (const MethodArcs& a : all_arcs_) size += (a.callers.capacity() + a.callees.capacity()) * sizeof(Arcs::value_type);
  }
  return size;
}

// Entries, and how many calls each method made and took (counted once per sample), in one
// pass over the paths. A path's calls are counted at [method + 1]: arcs_of sums them into
// bucket starts.
void MethodTable::add_samples() {
  const MethodPaths& paths = *paths_;
  std::vector<uint32_t>& calls_per_caller = calls_per_caller_;
  std::vector<uint32_t>& calls_per_callee = calls_per_callee_;
  calls_per_caller.assign(entries_.size() + 1, 0);
  calls_per_callee.assign(entries_.size() + 1, 0);
  SelfTotals totals(entries_.size());
  path_repeats_.assign(paths.count(), 0);
  for (uint32_t i = 0; i < paths.count(); i++) {
    const uint32_t* path = paths.begin(i);
    size_t n = paths.size(i);
    if (n == 0) continue;  // its time is the root's self: no method's
    bool repeats = totals.add(path[n - 1], paths.weight(i), [&](auto&& visit) {
      for (size_t d = 0; d < n; d++) visit(path[d]);
    });
    path_repeats_[i] = repeats;
    for (size_t d = 1; d < n; d++) {
      if (!repeats || !outer_call_counted(path, d)) {
        calls_per_caller[path[d - 1] + 1]++;
        calls_per_callee[path[d] + 1]++;
      }
    }
  }
  for (size_t m = 0; m < entries_.size(); m++) entries_[m] = Entry{totals.self_ns[m], totals.total_ns[m], totals.recursive[m] != 0};
}

std::vector<uint32_t> MethodTable::order(const std::vector<Method>& methods) const {
  std::vector<uint32_t> ids;
  for (uint32_t m = 0; m < entries_.size(); m++) {
    const Entry& e = entries_[m];
    if (m != kRootMethod && (e.total_ns != 0 || e.self_ns != 0)) ids.push_back(m);
  }
  std::sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) {
    const Entry &x = entries_[a], &y = entries_[b];
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    if (x.self_ns != y.self_ns) return x.self_ns > y.self_ns;
    int c = methods[a].label.compare(methods[b].label);
    if (c != 0) return c < 0;
    return methods[a].path < methods[b].path;
  });
  return ids;
}

std::vector<uint32_t> MethodTable::heaviest(const std::vector<uint32_t>& ordered, int64_t min_ns, size_t max_methods) const {
  size_t heavy = 0;  // `ordered` is by total, descending
  while (heavy < ordered.size() && entries_[ordered[heavy]].total_ns >= min_ns) heavy++;
  std::vector<uint8_t> sent(heavy, 0);
  for (size_t k = 0; k < std::min(heavy, max_methods); k++) sent[k] = 1;
  std::vector<uint32_t> by_self(heavy);
  for (uint32_t k = 0; k < heavy; k++) by_self[k] = k;
  size_t take = std::min(heavy, max_methods);
  std::partial_sort(by_self.begin(), by_self.begin() + static_cast<std::ptrdiff_t>(take), by_self.end(), [&](uint32_t a, uint32_t b) {
    int64_t x = entries_[ordered[a]].self_ns, y = entries_[ordered[b]].self_ns;
    return x != y ? x > y : a < b;
  });
  for (size_t k = 0; k < take; k++) sent[by_self[k]] = 1;
  std::vector<uint32_t> out;
  for (size_t k = 0; k < heavy; k++) {
    if (sent[k]) out.push_back(ordered[k]);
  }
  return out;
}

// The calls into or out of `methods` are bucketed by the chosen method (caller for its callees,
// callee for its callers), then added up per other method through a per-method slot: writes go
// to one bucket end per chosen method, and the slots fit in cache. (A hash table of (caller,
// callee) pairs took 0.63-0.89 s CPU on the benchmark profile: a cache miss per call.)
std::vector<MethodTable::MethodArcs> MethodTable::arcs_of(const std::vector<uint32_t>& methods, size_t limit) const {
  const MethodPaths& paths = *paths_;
  const size_t method_count = entries_.size();
  std::vector<int32_t> chosen(method_count, -1);  // per method: its (first) index in `methods`, or -1
  for (size_t k = 0; k < methods.size(); k++) {
    if (methods[k] < method_count && chosen[methods[k]] < 0) chosen[methods[k]] = static_cast<int32_t>(k);
  }
  struct Call {
    uint32_t other;  // the callee of a chosen caller, or the caller of a chosen callee
    uint32_t path;   // its sample's weight is the path's
    uint64_t order;  // where the call is in the paths' sorted order: (the path's rank, depth)
  };
  // The paths are read in their stored order, which is sequential in memory (the sorted order
  // jumps across all of them: on the 100k-stack benchmark profile that made each pass wait on
  // cache misses); `order` keeps the sorted order's ties.
  std::vector<uint32_t> rank(paths.count());
  for (uint32_t r = 0; r < paths.sorted().size(); r++) rank[paths.sorted()[r]] = r;
  // Each bucket's size is the method's count of calls made or taken (add_samples): one pass
  // over the paths fills them (a counting pass was a third of this function on that profile).
  std::vector<uint32_t> out_start(methods.size() + 1, 0), in_start(methods.size() + 1, 0);
  for (size_t k = 0; k < methods.size(); k++) {
    const bool first = methods[k] < method_count && chosen[methods[k]] == static_cast<int32_t>(k);
    out_start[k + 1] = out_start[k] + (first ? calls_per_caller_[methods[k] + 1] : 0);
    in_start[k + 1] = in_start[k] + (first ? calls_per_callee_[methods[k] + 1] : 0);
  }
  std::vector<Call> out_calls(out_start.back()), in_calls(in_start.back());
  std::vector<uint32_t> out_next(out_start.begin(), out_start.end() - 1), in_next(in_start.begin(), in_start.end() - 1);
  for (uint32_t i = 0; i < paths.count(); i++) {
    const uint32_t* path = paths.begin(i);
    size_t n = paths.size(i);
    const bool repeats = path_repeats_[i];  // only a path with a method twice can repeat a call
    int32_t callee = n ? chosen[path[0]] : -1;
    for (size_t d = 1; d < n; d++) {
      int32_t caller = callee;
      callee = chosen[path[d]];
      if (caller < 0 && callee < 0) continue;
      if (repeats && outer_call_counted(path, d)) continue;
      uint64_t order = (static_cast<uint64_t>(rank[i]) << 32) | d;
      if (caller >= 0) out_calls[out_next[caller]++] = Call{path[d], i, order};
      if (callee >= 0) in_calls[in_next[callee]++] = Call{path[d - 1], i, order};
    }
  }

  std::vector<MethodArcs> out(methods.size());
  std::vector<uint32_t> arc_of(method_count, 0);
  std::vector<uint32_t> owner_of(method_count, UINT32_MAX);  // the bucket `arc_of[m]` belongs to
  struct Summed {
    uint32_t other;
    int64_t ns;
    uint64_t first;  // the first call's order
  };
  std::vector<Summed> summed;
  // Each bucket's calls added up per other method, heaviest first; ties: callers by id, callees
  // by first appearance in the sorted paths.
  auto add_up = [&](const std::vector<Call>& calls, const std::vector<uint32_t>& start, uint32_t bucket, uint32_t tag, bool callers, Arcs& arcs) {
    summed.clear();
    for (uint32_t k = start[bucket]; k < start[bucket + 1]; k++) {
      const Call& c = calls[k];
      if (owner_of[c.other] != tag) {
        owner_of[c.other] = tag;
        arc_of[c.other] = static_cast<uint32_t>(summed.size());
        summed.push_back(Summed{c.other, 0, c.order});
      }
      Summed& arc = summed[arc_of[c.other]];
      arc.ns += paths.weight(c.path);
      arc.first = std::min(arc.first, c.order);
    }
    auto heavier = [callers](const Summed& x, const Summed& y) {
      if (x.ns != y.ns) return x.ns > y.ns;
      return callers ? x.other < y.other : x.first < y.first;
    };
    const size_t kept = std::min(limit, summed.size());
    std::partial_sort(summed.begin(), summed.begin() + static_cast<std::ptrdiff_t>(kept), summed.end(), heavier);
    arcs.reserve(kept);
    for (size_t k = 0; k < kept; k++) arcs.emplace_back(summed[k].other, summed[k].ns);
    return summed.size();
  };
  for (uint32_t k = 0; k < methods.size(); k++) {
    if (methods[k] >= method_count) continue;
    if (chosen[methods[k]] != static_cast<int32_t>(k)) {  // named twice: the same arcs
      out[k] = out[static_cast<size_t>(chosen[methods[k]])];
      continue;
    }
    out[k].callee_count = add_up(out_calls, out_start, k, 2 * k, false, out[k].callees);
    out[k].caller_count = add_up(in_calls, in_start, k, 2 * k + 1, true, out[k].callers);
  }
  return out;
}

MethodTable::View MethodTable::view(const std::vector<Method>& methods, int64_t min_ns, size_t max_methods, size_t max_arcs) const {
  View v;
  std::vector<uint32_t> ordered = order(methods);
  v.method_count = ordered.size();
  std::vector<uint32_t> picked = heaviest(ordered, min_ns, max_methods);
  std::vector<MethodArcs> arcs = arcs_of(picked, max_arcs);
  std::vector<uint32_t> index_of(methods.size(), UINT32_MAX);
  auto index = [&](uint32_t method) {
    if (index_of[method] == UINT32_MAX) {
      index_of[method] = static_cast<uint32_t>(v.methods.size());
      v.methods.push_back(method);
    }
    return index_of[method];
  };
  auto kept = [&](const Arcs& all) {  // heaviest first
    Arcs out;
    for (size_t k = 0; k < all.size() && k < max_arcs && all[k].second >= min_ns; k++) out.emplace_back(index(all[k].first), all[k].second);
    return out;
  };
  v.rows.reserve(picked.size());
  for (size_t k = 0; k < picked.size(); k++) {
    const Entry& e = entries_[picked[k]];
    View::Row row{index(picked[k]), e.self_ns, e.total_ns, e.recursive, {}, {}, arcs[k].caller_count, arcs[k].callee_count};
    row.callers = kept(arcs[k].callers);
    row.callees = kept(arcs[k].callees);
    v.rows.push_back(std::move(row));
  }
  return v;
}

}  // namespace rperf
