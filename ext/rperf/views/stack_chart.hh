// The Viewer's Stack chart tab: one thread's raw samples (aggregate: false) merged into cells,
// so the page only draws them (issue 27: merging 125,000 rows in the page took seconds). In time
// order each sample is a column of its stack over [time - weight, time]; a frame that stays at
// its depth across samples with no gap longer than a sample is one cell. A sample's VM state
// (timeline_state: GVL blocked or wait, GC) is a leaf cell above its frames. The page model
// merges it from the timeline's rows (page/page_views.cc).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "profile/profile.hh"
#include "profile/sample_filter.hh"
#include "profile/vm_state.hh"

namespace rperf {

struct StackChart {
  uint32_t thread = 0;
  int64_t total_ns = 0;  // the merged samples' weight
  uint64_t samples = 0;  // samples merged (those of positive weight)
  // The cells' frames, method level: (label, path); a stack without frames is kNoRubyFrames.
  std::vector<std::pair<std::string, std::string>> frames;
  // Per cell, in the order the cells open:
  std::vector<int64_t> x;    // its start: its first sample's
  std::vector<int64_t> w;    // its width: to its last sample's end
  std::vector<uint32_t> d;   // its depth (0: the root frame)
  std::vector<int32_t> f;    // its frame, or -1 - TimelineState for a VM state's leaf cell
  std::vector<int64_t> gap;  // w minus its samples' weight (time it stayed open across gaps)
};

struct StackCharts {
  int64_t end_ns = 1;               // the last sample's time of any thread, at least the duration given
  std::vector<StackChart> threads;  // each thread with a kept sample, ascending
};

// Merges one thread's samples, given in time order, into `out`'s cells: the profile's
// (stack_charts) and the page's rows (page/page_views.cc) alike. path(): the next sample's
// frames, root first (frame(): a chart frame of a label and path; an empty path is
// kNoRubyFrames), set by the caller before add(); left as it is, the last sample's again.
class StackChartBuilder {
 public:
  explicit StackChartBuilder(StackChart& out) : out_(out) {}
  int32_t frame(const std::string& label, const std::string& path);
  std::vector<int32_t>& path() { return path_; }
  void add(int64_t weight, int64_t time, TimelineState state);
  // The cells still open close where the last sample ended.
  void finish() { close_from(0); }

 private:
  struct OpenCell {
    size_t cell;
    int32_t frame;
    int64_t weight_before;  // total_ns when it opened
  };
  void close_from(size_t depth);

  StackChart& out_;
  std::map<std::pair<std::string, std::string>, int32_t> index_;
  std::vector<int32_t> path_;   // the current sample's frames, root first
  int32_t no_frames_ = -1;
  std::vector<OpenCell> open_;  // per depth
  bool any_ = false;
  int64_t last_end_ = 0;
};

// The charts of the samples `filter` keeps; its time range is not applied (the page zooms).
StackCharts stack_charts(const Profile& p, const SampleFilter& filter, int64_t min_end_ns);

}  // namespace rperf
