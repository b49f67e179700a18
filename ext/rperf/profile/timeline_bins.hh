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

#include "profile/method_stacks.hh"
#include "profile/profile.hh"
#include "profile/timeline_binner.hh"

namespace rperf {

// A label set's state (timeline_state of its labels' text); a sample's own VM state comes first.
TimelineState timeline_state(const LabelSet& set);

// `bins` >= 1 slices of [0, max(min_end_ns, last sample's time, 1)]. A time range in `filter`
// keeps each sample's part inside it. Samples of zero weight or before 0 add nothing.
TimelineBins bin_timeline(const Profile& p, const SampleFilter& filter, uint32_t bins, int64_t min_end_ns);

}  // namespace rperf
