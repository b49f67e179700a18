#include "profile/functions.hh"

#include <algorithm>

namespace rperf {

namespace {

// Totals over weighted stacks: each(add) calls add(stack, weight) once per sample.
template <typename EachSample>
FunctionTotals totals_of(const Profile& p, bool by_name, EachSample&& each) {
  FunctionTotals t;
  t.function_of_frame.resize(p.frames.size());
  FrameTable functions;  // (path, label) with line 0: one entry per function
  for (uint32_t i = 0; i < p.frames.size(); i++) {
    const Frame& f = p.frames[i];
    uint32_t fn = functions.intern(by_name ? std::string() : f.path, f.label, 0);
    if (fn == t.first_frame.size()) t.first_frame.push_back(i);
    t.function_of_frame[i] = fn;
  }
  t.self_ns.assign(t.first_frame.size(), 0);
  t.total_ns.assign(t.first_frame.size(), 0);
  std::vector<uint64_t> seen_in_sample(t.first_frame.size(), 0);
  uint64_t sample_no = 0;
  each([&](uint32_t stack, int64_t weight) {
    t.grand_total_ns += weight;
    FrameSpan frames = p.stacks[stack];
    if (frames.empty()) return;
    sample_no++;
    t.self_ns[t.function_of_frame[frames[0]]] += weight;
    for (uint32_t f : frames) {
      uint32_t fn = t.function_of_frame[f];
      if (seen_in_sample[fn] == sample_no) continue;
      seen_in_sample[fn] = sample_no;
      t.total_ns[fn] += weight;
    }
  });
  return t;
}

}  // namespace

FunctionTotals function_totals(const Profile& p, bool by_name) {
  return totals_of(p, by_name, [&](auto&& add) {
    for (const Sample& s : p.samples) add(s.stack, s.weight_ns);
  });
}

FunctionTotals allocation_totals(const Profile& p, bool retained) {
  return totals_of(p, false, [&](auto&& add) {
    for (const AllocationSample& a : p.allocations) add(a.stack, retained ? a.retained : a.count);
  });
}

std::vector<std::pair<uint32_t, int64_t>> class_totals(const Profile& p, bool retained) {
  std::vector<int64_t> by_class(p.class_names.size(), 0);
  for (const AllocationSample& a : p.allocations) by_class[a.type] += retained ? a.retained : a.count;
  std::vector<std::pair<uint32_t, int64_t>> out;
  for (uint32_t i = 0; i < by_class.size(); i++) {
    if (by_class[i] != 0) out.emplace_back(i, by_class[i]);
  }
  std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : p.class_names[a.first] < p.class_names[b.first];
  });
  return out;
}

std::vector<uint32_t> top_functions(const Profile& p, const FunctionTotals& t, const std::vector<int64_t>& weights, size_t n) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < weights.size(); i++) {
    if (weights[i] != 0) out.push_back(i);
  }
  auto frame = [&](uint32_t fn) -> const Frame& { return p.frames[t.first_frame[fn]]; };
  auto heavier = [&](uint32_t a, uint32_t b) {
    if (weights[a] != weights[b]) return weights[a] > weights[b];
    if (frame(a).label != frame(b).label) return frame(a).label < frame(b).label;
    return frame(a).path < frame(b).path;
  };
  if (out.size() > n) {
    std::partial_sort(out.begin(), out.begin() + static_cast<long>(n), out.end(), heavier);
    out.resize(n);
  } else {
    std::sort(out.begin(), out.end(), heavier);
  }
  return out;
}

std::vector<uint32_t> start_line_frames(const Profile& p) {
  std::vector<uint32_t> out;
  FrameTable seen;  // one entry per method
  for (uint32_t i = 0; i < p.frames.size(); i++) {
    const Frame& f = p.frames[i];
    if (f.start_line <= 0) continue;
    size_t before = seen.size();
    seen.intern(f.path, f.label, 0);
    if (seen.size() != before) out.push_back(i);
  }
  return out;
}

}  // namespace rperf
