#include "views/functions.hh"

#include <algorithm>
#include <utility>

#include "profile/frame_methods.hh"

namespace rperf {

namespace {

// Totals over weighted stacks: each(add) calls add(stack, weight) once per sample.
template <typename EachSample>
FunctionTotals totals_of(const Profile& p, bool by_name, EachSample&& each) {
  FunctionTotals t;
  FrameMethods functions = frame_methods(p, by_name);
  const std::vector<uint32_t>& function_of = functions.of_frame;
  t.first_frame = std::move(functions.first_frame);
  SelfTotals totals(t.first_frame.size());
  each([&](uint32_t stack, int64_t weight) {
    t.grand_total_ns += weight;
    FrameSpan frames = p.stacks[stack];
    if (frames.empty()) return;
    totals.add(function_of[frames[0]], weight, [&](auto&& visit) {
      for (uint32_t f : frames) visit(function_of[f]);
    });
  });
  t.self_ns = std::move(totals.self_ns);
  t.total_ns = std::move(totals.total_ns);
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
  n = std::min(n, out.size());
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n), out.end(), heavier);
  out.resize(n);
  return out;
}

std::vector<uint32_t> start_line_frames(const Profile& p) {
  std::vector<uint32_t> out;
  FrameMethods methods = frame_methods(p);
  std::vector<bool> seen(methods.first_frame.size(), false);
  for (uint32_t i = 0; i < p.frames.size(); i++) {
    if (p.frames[i].start_line <= 0 || seen[methods.of_frame[i]]) continue;
    seen[methods.of_frame[i]] = true;
    out.push_back(i);
  }
  return out;
}

}  // namespace rperf
