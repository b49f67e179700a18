// The Viewer's Timeline tab: how much of each equal slice of time every thread spent running,
// blocked off the GVL, waiting for it, or in GC, and per slice the heaviest leaf methods (the
// hover's line). From the raw samples (aggregate: false) a SampleFilter keeps; a sample covers
// [time - weight, time]. The server and the --html writer ask for it (Native::Profile#
// timeline_bins), so the page draws the bins and never unpacks or bins the rows itself.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "profile/method_stacks.hh"
#include "profile/profile.hh"

namespace rperf {

// The page's four states, in its order (viewer.js STATES). A sample's own VM state (a recorded
// profile's raw samples keep it apart from the user's label set), else its label set's as the
// page's Threads tab reads it: %GVL=blocked, %GVL=wait, any %GC, else running.
enum TimelineState : uint8_t { kTimelineRunning = 0, kTimelineBlocked = 1, kTimelineWait = 2, kTimelineGc = 3 };
constexpr int kTimelineStates = 4;
TimelineState timeline_state(const LabelSet& set);
TimelineState timeline_state(VmState state);  // kTimelineRunning for kRunning

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

// `bins` >= 1 slices of [0, max(min_end_ns, last sample's time, 1)]. A time range in `filter`
// keeps each sample's part inside it. Samples of zero weight or before 0 add nothing.
TimelineBins bin_timeline(const Profile& p, const SampleFilter& filter, uint32_t bins, int64_t min_end_ns);

}  // namespace rperf
