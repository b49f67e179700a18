// The Source tab's per-line weights (views/source_lines.hh) and the filtered profile
// (select_samples in profile/transform.hh), on small profiles whose answers are worked out by hand.
#include <gtest/gtest.h>

#include "profile/transform.hh"
#include "test_profiles.hh"
#include "views/method_paths.hh"
#include "views/source_lines.hh"

namespace rperf {
namespace {

using fixtures::make_profile;

constexpr int64_t kMs = 1000000;

// shop.rb: price at lines 2 and 3, checkout at 5 and 6, main at 9; other.rb beside it.
Profile shop(bool lines = true) {
  return make_profile({{"/app/shop.rb", "Shop#price", 2},
                       {"/app/shop.rb", "Shop#price", 3},
                       {"/app/shop.rb", "Shop#checkout", 5},
                       {"/app/shop.rb", "Shop#checkout", 6},
                       {"/app/shop.rb", "<main>", 9},
                       {"/lib/other.rb", "Other#run", 4}},
                      {{{0, 2, 4}, 40 * kMs, 1, 0, kRunning, 40 * kMs},
                       {{1, 2, 4}, 20 * kMs, 2, 0, kRunning, 60 * kMs},
                       {{3, 4}, 10 * kMs, 1, 0, kRunning, 70 * kMs},
                       {{5, 4}, 10 * kMs, 2, 0, kRunning, 80 * kMs}},
                      {}, lines);
}

std::vector<std::tuple<int32_t, int64_t, int64_t>> rows(const SourceLines& s) {
  std::vector<std::tuple<int32_t, int64_t, int64_t>> out;
  for (const LineWeight& l : s.lines) out.emplace_back(l.line, l.self_ns / kMs, l.total_ns / kMs);
  return out;
}

TEST(SourceLines, SelfIsTheLeafTotalIsAnywhereOnTheStack) {
  Profile p = shop();
  SourceLines s = source_lines(p, SampleFilter{}, "/app/shop.rb");
  std::vector<std::tuple<int32_t, int64_t, int64_t>> expected = {{2, 40, 40}, {3, 20, 20}, {5, 0, 60}, {6, 10, 10}, {9, 0, 80}};
  EXPECT_EQ(expected, rows(s));
  EXPECT_EQ(80 * kMs, s.kept_ns);
}

TEST(SourceLines, ALineTwiceOnOneStackCountsOnce) {
  Profile p = make_profile({{"/a.rb", "fib", 3}, {"/a.rb", "<main>", 9}}, {{{0, 0, 0, 1}, 7 * kMs}});
  std::vector<std::tuple<int32_t, int64_t, int64_t>> expected = {{3, 7, 7}, {9, 0, 7}};
  EXPECT_EQ(expected, rows(source_lines(p, SampleFilter{}, "/a.rb")));
}

TEST(SourceLines, FiltersKeepTheirSamplesAndTheirPartOfARange) {
  Profile p = shop();
  p.timestamps = true;
  SampleFilter thread;
  thread.by_thread = true;
  thread.thread = 2;
  std::vector<std::tuple<int32_t, int64_t, int64_t>> expected = {{3, 20, 20}, {5, 0, 20}, {9, 0, 30}};  // other.rb's sample is under main too
  EXPECT_EQ(expected, rows(source_lines(p, thread, "/app/shop.rb")));
  // [30, 65] ms: 10 of the first sample (0-40), 20 of the second (40-60), 5 of the third (60-70).
  SampleFilter range;
  range.by_range = true;
  range.from_ns = 30 * kMs;
  range.to_ns = 65 * kMs;
  SourceLines s = source_lines(p, range, "/app/shop.rb");
  expected = {{2, 10, 10}, {3, 20, 20}, {5, 0, 30}, {6, 5, 5}, {9, 0, 35}};
  EXPECT_EQ(expected, rows(s));
  EXPECT_EQ(35 * kMs, s.kept_ns);
}

TEST(SourceLines, NoLinesWithoutLineNumbersAndOnlyExactFramePaths) {
  Profile p = shop(false);
  SourceLines s = source_lines(p, SampleFilter{}, "/app/shop.rb");
  EXPECT_TRUE(s.lines.empty());
  EXPECT_EQ(80 * kMs, s.kept_ns);
  EXPECT_TRUE(has_frame_path(p, "/app/shop.rb"));
  EXPECT_TRUE(has_frame_path(p, "/lib/other.rb"));
  EXPECT_FALSE(has_frame_path(p, "/app/shop"));
  EXPECT_FALSE(has_frame_path(p, "/app/../app/shop.rb"));
  EXPECT_FALSE(has_frame_path(p, ""));
}

TEST(SelectSamples, KeepsTheFilteredSamplesWithTheirKeptWeight) {
  Profile p = shop();
  p.timestamps = true;
  p.allocations.push_back(AllocationSample{p.samples[0].stack, 1, 0, 0, 5, 1, 0});
  size_t frames = p.frames.size(), stacks = p.stacks.size();
  SampleFilter range;
  range.by_range = true;
  range.from_ns = 30 * kMs;
  range.to_ns = 65 * kMs;
  Profile kept = p;
  select_samples(kept, range);
  ASSERT_EQ(3u, kept.samples.size());
  EXPECT_EQ(10 * kMs, kept.samples[0].weight_ns);
  EXPECT_EQ(20 * kMs, kept.samples[1].weight_ns);
  EXPECT_EQ(5 * kMs, kept.samples[2].weight_ns);
  EXPECT_EQ(35 * kMs, kept.total_weight());
  EXPECT_TRUE(kept.allocations.empty());
  // The tables stay: ids keep naming the same frames and stacks.
  EXPECT_EQ(frames, kept.frames.size());
  EXPECT_EQ(stacks, kept.stacks.size());
  EXPECT_EQ(p.samples[1].stack, kept.samples[1].stack);
  // Every filter set must hold: thread 1 within the range keeps one part of one sample.
  range.by_thread = true;
  range.thread = 1;
  kept = p;
  select_samples(kept, range);
  ASSERT_EQ(2u, kept.samples.size());
  EXPECT_EQ(15 * kMs, kept.total_weight());
}

}  // namespace
}  // namespace rperf
