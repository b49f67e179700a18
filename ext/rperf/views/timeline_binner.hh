// The Timeline tab's binning, once: intervals of time per thread and state summed into equal
// slices, and per slice the heaviest leaf names. The server bins a profile's samples with it
// (views/timeline_bins.hh) and the page its rows (page/page_rows.hh, in WebAssembly).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "profile/sample_filter.hh"
#include "profile/thread_index.hh"
#include "profile/vm_state.hh"

namespace rperf {

struct TimelineBins {
  static constexpr size_t kTopLeaves = 3;

  int64_t end_ns = 1;  // the axis is [0, end_ns]: the last sample's time, at least the duration given
  uint32_t bins = 0;
  double bin_ns = 0;                 // end_ns / bins
  std::vector<uint32_t> threads;     // thread_seqs with kept time, ascending
  // ns per (thread in `threads` order, state, bin): occupancy[(t * kTimelineStates + state) * bins + b]
  std::vector<double> occupancy;
  std::vector<std::string> leaf_names;     // the leaf methods' labels `top` names
  std::vector<std::vector<uint32_t>> top;  // per bin: up to kTopLeaves leaf_names, heaviest first
  int64_t kept_ns = 0;                     // the kept samples' weight (within the filter's range)

  double at(size_t thread_index, int state, uint32_t bin) const {
    return occupancy[(thread_index * kTimelineStates + static_cast<size_t>(state)) * bins + bin];
  }
};

class TimelineBinner {
 public:
  // `bins` >= 1 slices of [0, max(end_ns, 1)].
  TimelineBinner(uint32_t bins, int64_t end_ns);

  // The id of a leaf name (interned).
  uint32_t leaf_name(const std::string& label);
  // A kept sample (or row) of `thread_seq` in `state`: it covers [time - weight, time], only
  // its part inside the filter's range if it has one; `kept`: its kept weight; `name()`: its
  // leaf name's id, asked only when it adds time. Zero weight, or nothing after 0 or inside the
  // range, adds nothing.
  template <typename LeafName>
  void add(uint32_t thread_seq, TimelineState state, int64_t time_ns, int64_t weight_ns, int64_t kept,
           const SampleFilter& filter, LeafName name) {
    double from, to;
    if (covers(time_ns, weight_ns, filter, from, to)) add_interval(thread_seq, state, from, to, kept, name());
  }
  // The bins, threads ascending; the binner is spent.
  TimelineBins finish();

 private:
  static bool covers(int64_t time_ns, int64_t weight_ns, const SampleFilter& filter, double& from, double& to);
  void add_interval(uint32_t thread_seq, TimelineState state, double from, double to, int64_t kept, uint32_t name);

  TimelineBins out_;
  ThreadIndex thread_index_;  // thread_seq -> into out_.threads
  std::unordered_map<std::string, uint32_t> name_index_;
  std::unordered_map<uint64_t, double> leaf_weight_;  // (bin, leaf name) -> ns, for the hover
};

}  // namespace rperf
