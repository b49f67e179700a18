// The Viewer's Timeline tab: how much of each equal slice of time every thread spent running,
// blocked off the GVL, waiting for it, or in GC, and per slice the heaviest leaf methods (the
// hover's line). From the raw samples (aggregate: false) a SampleFilter keeps; a sample covers
// [time - weight, time]. The server and the --html writer ask for it (Native::Profile#
// timeline_bins), so the page draws the bins; a --html page under a label filter bins its rows
// with the same TimelineBinner (page/page_rows.hh, in WebAssembly): the one binning, intervals
// of time per thread and state summed into equal slices, and per slice the heaviest leaf names.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "profile/profile.hh"
#include "profile/sample_filter.hh"
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
    int64_t from, to;
    if (weight_ns <= 0 || !filter.covered(time_ns, weight_ns, from, to)) return;
    const double start = static_cast<double>(std::max<int64_t>(from, 0));  // the axis starts at 0
    if (static_cast<double>(to) > start) add_interval(thread_seq, state, start, static_cast<double>(to), kept, name());
  }
  // The bins, threads ascending; the binner is spent.
  TimelineBins finish();

 private:
  void add_interval(uint32_t thread_seq, TimelineState state, double from, double to, int64_t kept, uint32_t name);

  TimelineBins out_;
  std::map<uint32_t, std::vector<double>> occupancy_;  // thread_seq -> its ns per (state, bin)
  std::unordered_map<std::string, uint32_t> name_index_;
  std::unordered_map<uint64_t, double> leaf_weight_;  // (bin, leaf name) -> ns, for the hover
};

// A label set's state (timeline_state of its labels' text); a sample's own VM state comes first.
TimelineState timeline_state(const LabelSet& set);

// A sample's state: its own VM state, else the one its label set names (each set read once).
// The Timeline's bins and the stack chart's leaf cells.
class TimelineStates {
 public:
  explicit TimelineStates(const Profile& p) : p_(p), of_set_(p.label_sets.size(), -1) {}
  TimelineState of(const Sample& s) {
    TimelineState state = timeline_state(s.vm_state);
    if (state != kTimelineRunning || s.label_set >= of_set_.size()) return state;
    int8_t& known = of_set_[s.label_set];
    if (known < 0) known = static_cast<int8_t>(timeline_state(p_.label_sets[s.label_set]));
    return static_cast<TimelineState>(known);
  }

 private:
  const Profile& p_;
  std::vector<int8_t> of_set_;  // by label set: -1 not read yet
};

// `bins` >= 1 slices of [0, max(min_end_ns, last sample's time, 1)]. A time range in `filter`
// keeps each sample's part inside it. Samples of zero weight or before 0 add nothing.
TimelineBins bin_timeline(const Profile& p, const SampleFilter& filter, uint32_t bins, int64_t min_end_ns);

}  // namespace rperf
