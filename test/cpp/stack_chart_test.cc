// The Viewer's stack chart cells (views/stack_chart): exact cells of a hand-built raw profile,
// method-level frames, gaps, VM-state leaf cells and the Viewer's filters.
#include <gtest/gtest.h>

#include "test_profiles.hh"
#include "views/stack_chart.hh"
#include "views/timeline_bins.hh"

using namespace rperf;
using namespace rperf::fixtures;

namespace {

// Frames: main, a (two lines of one method), b. Label sets: 0 {}, 1 %GC=mark.
// Thread 1 (recorded out of time order): a, a again (another line), b after a 5 ns gap, b GVL
// blocked, then main alone after a 50 ns gap, a sample of no weight, and a frameless GC sample.
// Thread 2: one sample at 200.
Profile raw_profile() {
  Profile p = make_profile({{"m.rb", "main", 1}, {"a.rb", "a", 2}, {"b.rb", "b", 3}, {"a.rb", "a", 9}},
                           {{{1, 0}, 10, 1, 0, kRunning, 10},
                            {{3, 0}, 10, 1, 0, kRunning, 20},
                            {{2, 0}, 10, 1, 0, kRunning, 35},
                            {{0}, 5, 1, 0, kRunning, 100},
                            {{2, 0}, 10, 1, 0, kGvlBlocked, 45},
                            {{1}, 7, 2, 0, kRunning, 200},
                            {{2}, 0, 1, 0, kRunning, 102},
                            {{}, 5, 1, 1, kRunning, 105}},
                           {{{"%GC", "mark"}}});
  p.timestamps = true;
  return p;
}

const int32_t kBlockedCell = -1 - kTimelineBlocked;
const int32_t kGcCell = -1 - kTimelineGc;

}  // namespace

TEST(StackChart, EveryCellOfAThreadExactly) {
  StackCharts charts = stack_charts(raw_profile(), SampleFilter{}, 0);
  EXPECT_EQ(200, charts.end_ns);
  ASSERT_EQ(2u, charts.threads.size());
  const StackChart& c = charts.threads[0];
  EXPECT_EQ(1u, c.thread);
  EXPECT_EQ(50, c.total_ns);
  EXPECT_EQ(6u, c.samples);  // the sample of no weight is not one
  using Frames = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ((Frames{{"main", "m.rb"}, {"a", "a.rb"}, {"b", "b.rb"}, {"(no Ruby frames)", ""}}), c.frames);
  // main [0, 45] open across the 5 ns gap; a [0, 20] over both its lines; b [25, 45] and its
  // blocked leaf [35, 45]; main again [95, 100]; the frameless GC sample [100, 105].
  EXPECT_EQ((std::vector<int32_t>{0, 1, 2, kBlockedCell, 0, 3, kGcCell}), c.f);
  EXPECT_EQ((std::vector<uint32_t>{0, 1, 1, 2, 0, 0, 1}), c.d);
  EXPECT_EQ((std::vector<int64_t>{0, 0, 25, 35, 95, 100, 100}), c.x);
  EXPECT_EQ((std::vector<int64_t>{45, 20, 20, 10, 5, 5, 5}), c.w);
  EXPECT_EQ((std::vector<int64_t>{5, 0, 0, 0, 0, 0, 0}), c.gap);

  const StackChart& other = charts.threads[1];
  EXPECT_EQ(2u, other.thread);
  EXPECT_EQ((std::vector<int64_t>{193}), other.x);
  EXPECT_EQ((std::vector<int64_t>{7}), other.w);
  EXPECT_EQ((std::vector<int32_t>{0}), other.f);
  EXPECT_EQ((std::vector<std::pair<std::string, std::string>>{{"a", "a.rb"}}), other.frames);
}

TEST(StackChart, TheFiltersAndTheAxis) {
  Profile p = raw_profile();
  SampleFilter thread2;
  thread2.by_thread = true;
  thread2.thread = 2;
  StackCharts charts = stack_charts(p, thread2, 500);
  EXPECT_EQ(500, charts.end_ns);  // at least the duration given
  ASSERT_EQ(1u, charts.threads.size());
  EXPECT_EQ(2u, charts.threads[0].thread);

  // Only the GC label set: the frameless sample alone, its leaf the GC state of its label set.
  SampleFilter gc;
  gc.by_label_sets = true;
  gc.label_sets = {1};
  charts = stack_charts(p, gc, 0);
  EXPECT_EQ(200, charts.end_ns);  // the axis is every sample's, kept or not
  ASSERT_EQ(1u, charts.threads.size());
  EXPECT_EQ((std::vector<int32_t>{0, kGcCell}), charts.threads[0].f);
  EXPECT_EQ((std::vector<int64_t>{100, 100}), charts.threads[0].x);
  EXPECT_EQ(5, charts.threads[0].total_ns);
}

TEST(StackChart, AThreadOfOnlyWeightlessSamplesHasNoCells) {
  Profile p = make_profile({{"a.rb", "a", 1}}, {{{0}, 0, 3, 0, kRunning, 10}}, {});
  p.timestamps = true;
  StackCharts charts = stack_charts(p, SampleFilter{}, 0);
  ASSERT_EQ(1u, charts.threads.size());
  EXPECT_EQ(0u, charts.threads[0].samples);
  EXPECT_TRUE(charts.threads[0].x.empty());
  EXPECT_TRUE(charts.threads[0].frames.empty());
}
