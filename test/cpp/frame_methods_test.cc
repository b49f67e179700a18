// The concepts kept once that the model and its views share: frames folded into methods with
// their lines (profile/frame_methods), per-function self and total (views/functions' SelfTotals,
// the text report's and the method table's), a sample's Timeline state (views/timeline_bins'
// TimelineStates, the Timeline's and the stack chart's).
#include <gtest/gtest.h>

#include "profile/frame_methods.hh"
#include "test_profiles.hh"
#include "views/functions.hh"
#include "views/timeline_bins.hh"

using namespace rperf;
using namespace rperf::fixtures;

TEST(FrameMethods, AMethodIsPathAndLabelStartingAtItsStartLineElseItsLowestLine) {
  Profile p = make_profile({{"a.rb", "a", 5}, {"a.rb", "a", 3}, {"b.rb", "b", 0}, {"c.rb", "b", 7}, {"d.rb", "d", 9}}, {});
  p.frames.at(4).start_line = 2;
  FrameMethods m = frame_methods(p);
  EXPECT_EQ((std::vector<uint32_t>{0, 0, 1, 2, 3}), m.of_frame);
  EXPECT_EQ((std::vector<uint32_t>{0, 2, 3, 4}), m.first_frame);
  EXPECT_EQ((std::vector<int32_t>{3, 0, 7, 2}), m.lines) << "lowest line; none; the only line; the start line over a lower sampled one";

  FrameMethods by_label = frame_methods(p, true);
  EXPECT_EQ((std::vector<uint32_t>{0, 0, 1, 1, 2}), by_label.of_frame) << "b of b.rb and of c.rb are one";
  EXPECT_EQ((std::vector<int32_t>{3, 7, 2}), by_label.lines);
}

TEST(SelfTotals, SelfAtTheLeafTotalOncePerSampleHoweverDeepItRecurses) {
  SelfTotals t(3);
  auto add = [&](std::vector<uint32_t> stack, int64_t weight) {  // leaf first
    return t.add(stack[0], weight, [&](auto&& visit) {
      for (uint32_t f : stack) visit(f);
    });
  };
  EXPECT_TRUE(add({0, 1, 0, 2}, 5)) << "0 calls 1 which calls 0 again";
  EXPECT_FALSE(add({1, 2}, 3));
  EXPECT_EQ((std::vector<int64_t>{5, 3, 0}), t.self_ns);
  EXPECT_EQ((std::vector<int64_t>{5, 8, 8}), t.total_ns);
  EXPECT_EQ((std::vector<uint8_t>{1, 0, 0}), t.recursive);
}

TEST(TimelineStates, ASamplesOwnStateElseTheOneItsLabelSetNames) {
  Profile p = make_profile({{"a.rb", "a", 1}},
                           {{{0}, 1, 1, 1, kRunning}, {{0}, 1, 1, 1, kGcSweep}, {{0}, 1, 1, 2, kRunning}, {{0}, 1, 1, 0, kRunning}},
                           {{{"%GVL", "wait"}}, {{"%GC", "mark"}, {"endpoint", "GET /"}}});
  TimelineStates states(p);
  std::vector<TimelineState> got;
  for (const Sample& s : p.samples) got.push_back(states.of(s));
  EXPECT_EQ((std::vector<TimelineState>{kTimelineWait, kTimelineGc, kTimelineGc, kTimelineRunning}), got);
  Sample unknown_set = p.samples[0];
  unknown_set.label_set = 99;
  EXPECT_EQ(kTimelineRunning, states.of(unknown_set)) << "a label set the profile lacks names no state";
}
