// The Viewer's Timeline bins (views/timeline_bins): exact ns per thread, VM state and bin, and
// each bin's heaviest leaves, on a hand-built raw profile, with the Viewer's filters.
#include <gtest/gtest.h>

#include "test_profiles.hh"
#include "views/timeline_bins.hh"

using namespace rperf;
using namespace rperf::fixtures;

namespace {

// Frames a, b, c (leaves of their own). Label sets: 0 {}, 1 %GVL=blocked, 2 %GC=mark, 3 %GVL=wait.
// Thread 1: a running over [0, 10], b blocked over [10, 25]. Thread 2: c running over [0, 4],
// c in GC over [30, 40], a waiting over [26, 28].
Profile raw_profile() {
  Profile p = make_profile({{"a.rb", "a", 1}, {"b.rb", "b", 2}, {"c.rb", "c", 3}},
                           {{{0}, 10, 1, 0, kRunning, 10},
                            {{1}, 15, 1, 1, kGvlBlocked, 25},
                            {{2}, 4, 2, 0, kRunning, 4},
                            {{2}, 10, 2, 2, kGcMark, 40},
                            {{0}, 2, 2, 3, kGvlWait, 28},
                            {{1}, 0, 1, 0, kRunning, 30}},
                           {{{"%GVL", "blocked"}}, {{"%GC", "mark"}}, {{"%GVL", "wait"}}});
  p.timestamps = true;
  return p;
}

std::vector<std::string> top_names(const TimelineBins& t, uint32_t bin) {
  std::vector<std::string> out;
  for (uint32_t n : t.top[bin]) out.push_back(t.leaf_names[n]);
  return out;
}

}  // namespace

TEST(TimelineBins, StatesOfLabelSetsAsThePageReadsThem) {
  EXPECT_EQ(kTimelineRunning, timeline_state(labels({})));
  EXPECT_EQ(kTimelineRunning, timeline_state(labels({{"endpoint", "GET /"}})));
  EXPECT_EQ(kTimelineBlocked, timeline_state(labels({{"endpoint", "GET /"}, {"%GVL", "blocked"}})));
  EXPECT_EQ(kTimelineWait, timeline_state(labels({{"%GVL", "wait"}})));
  EXPECT_EQ(kTimelineGc, timeline_state(labels({{"%GC", "sweep"}})));
  EXPECT_EQ(kTimelineBlocked, timeline_state(labels({{"%GC", "mark"}, {"%GVL", "blocked"}})));
}

TEST(TimelineBins, ASamplesOwnVmStateWithoutItsLabel) {
  // As a recorded profile's raw samples: the user's label set, the VM state apart.
  Profile p = make_profile({{"a.rb", "a", 1}}, {{{0}, 10, 1, 1, kGvlBlocked, 10}, {{0}, 10, 1, 1, kGcSweep, 20}, {{0}, 10, 1, 1, kRunning, 30}},
                           {{{"endpoint", "GET /"}}});
  p.timestamps = true;
  TimelineBins t = bin_timeline(p, SampleFilter{}, 3, 0);
  EXPECT_DOUBLE_EQ(10, t.at(0, kTimelineBlocked, 0));
  EXPECT_DOUBLE_EQ(10, t.at(0, kTimelineGc, 1));
  EXPECT_DOUBLE_EQ(10, t.at(0, kTimelineRunning, 2));
  EXPECT_EQ(kTimelineWait, timeline_state(kGvlWait));
  EXPECT_EQ(kTimelineRunning, timeline_state(kRunning));
}

TEST(TimelineBins, EveryThreadStateAndBinExactly) {
  Profile p = raw_profile();
  TimelineBins t = bin_timeline(p, SampleFilter{}, 4, 0);
  EXPECT_EQ(40, t.end_ns);
  EXPECT_DOUBLE_EQ(10.0, t.bin_ns);
  ASSERT_EQ((std::vector<uint32_t>{1, 2}), t.threads);
  ASSERT_EQ(2u * kTimelineStates * 4, t.occupancy.size());
  EXPECT_DOUBLE_EQ(10, t.at(0, kTimelineRunning, 0));
  EXPECT_DOUBLE_EQ(10, t.at(0, kTimelineBlocked, 1));
  EXPECT_DOUBLE_EQ(5, t.at(0, kTimelineBlocked, 2));
  EXPECT_DOUBLE_EQ(4, t.at(1, kTimelineRunning, 0));
  EXPECT_DOUBLE_EQ(2, t.at(1, kTimelineWait, 2));
  EXPECT_DOUBLE_EQ(10, t.at(1, kTimelineGc, 3));
  double sum = 0;
  for (double ns : t.occupancy) sum += ns;
  EXPECT_DOUBLE_EQ(41, sum) << "every sample's weight once, the zero-weight one nothing";
  EXPECT_EQ(41, t.kept_ns);
  EXPECT_EQ((std::vector<std::string>{"a", "c"}), top_names(t, 0));
  EXPECT_EQ((std::vector<std::string>{"b"}), top_names(t, 1));
  EXPECT_EQ((std::vector<std::string>{"b", "a"}), top_names(t, 2));
  EXPECT_EQ((std::vector<std::string>{"c"}), top_names(t, 3));
}

TEST(TimelineBins, TheAxisReachesTheDurationGiven) {
  Profile p = raw_profile();
  TimelineBins t = bin_timeline(p, SampleFilter{}, 4, 80);
  EXPECT_EQ(80, t.end_ns);
  EXPECT_DOUBLE_EQ(20, t.at(0, kTimelineBlocked, 0) + t.at(0, kTimelineRunning, 0));
  EXPECT_DOUBLE_EQ(5, t.at(0, kTimelineBlocked, 1));
  EXPECT_DOUBLE_EQ(10, t.at(1, kTimelineGc, 1));
}

TEST(TimelineBins, TheViewersFiltersApply) {
  Profile p = raw_profile();
  SampleFilter thread;
  thread.by_thread = true;
  thread.thread = 2;
  TimelineBins t = bin_timeline(p, thread, 4, 0);
  EXPECT_EQ((std::vector<uint32_t>{2}), t.threads);
  EXPECT_EQ(40, t.end_ns) << "the axis is the whole profile's, whatever the filter";
  EXPECT_EQ(16, t.kept_ns);

  SampleFilter blocked;
  blocked.by_label_sets = true;
  blocked.label_sets = {1};
  t = bin_timeline(p, blocked, 4, 0);
  EXPECT_EQ((std::vector<uint32_t>{1}), t.threads);
  EXPECT_DOUBLE_EQ(0, t.at(0, kTimelineRunning, 0));
  EXPECT_DOUBLE_EQ(15, t.at(0, kTimelineBlocked, 1) + t.at(0, kTimelineBlocked, 2));

  SampleFilter range;  // [5, 22]: each sample's part inside
  range.by_range = true;
  range.from_ns = 5;
  range.to_ns = 22;
  range.hidden_threads = {2};
  t = bin_timeline(p, range, 4, 0);
  EXPECT_EQ((std::vector<uint32_t>{1}), t.threads);
  EXPECT_DOUBLE_EQ(5, t.at(0, kTimelineRunning, 0));
  EXPECT_DOUBLE_EQ(10, t.at(0, kTimelineBlocked, 1));
  EXPECT_DOUBLE_EQ(2, t.at(0, kTimelineBlocked, 2));
  EXPECT_EQ(17, t.kept_ns);
  EXPECT_EQ((std::vector<std::string>{"b"}), top_names(t, 2));
}

TEST(TimelineBins, NoSamplesNoThreadsOneBinAtLeast) {
  Profile p;
  p.timestamps = true;
  TimelineBins t = bin_timeline(p, SampleFilter{}, 0, 0);
  EXPECT_EQ(1u, t.bins);
  EXPECT_EQ(1, t.end_ns);
  EXPECT_TRUE(t.threads.empty());
  EXPECT_TRUE(t.occupancy.empty());
  ASSERT_EQ(1u, t.top.size());
  EXPECT_TRUE(t.top[0].empty());
}
