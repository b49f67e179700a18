// The Viewer's Timeline tab: how much of each equal slice of time every thread spent running,
// blocked off the GVL, waiting for it, or in GC, and per slice the heaviest leaf methods (the
// hover's line). From the raw samples (aggregate: false) a SampleFilter keeps; a sample covers
// [time - weight, time]. The server and the --html writer ask for it (Native::Profile#
// timeline_bins), so the page draws the bins; a --html page under a label filter bins its rows
// with the same TimelineBinner (page/page_rows.hh, in WebAssembly).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.hh"
#include "views/method_stacks.hh"
#include "views/timeline_binner.hh"

namespace rperf {

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
