// The Viewer's stack tree (profile/stack_tree) and the samples a view's filters keep
// (SampleFilter): exact numbers on hand-built profiles.
#include <gtest/gtest.h>

#include "profile/method_paths.hh"
#include "profile/stack_tree.hh"
#include "test_profiles.hh"

using namespace rperf;
using namespace rperf::fixtures;

namespace {

// "label>label>..." of a node, root first.
std::string path_of(const StackTree& t, uint32_t node) {
  std::string out;
  for (int32_t n = static_cast<int32_t>(node); n >= 0; n = t.parents[n]) {
    out = t.frames[t.node_frames[n]].first + (out.empty() ? "" : ">" + out);
  }
  return out;
}

// Frames 0..3: main, a (line 1), a (line 2: the same method), b.
Profile tree_profile() {
  return make_profile({{"m.rb", "main", 1}, {"a.rb", "a", 1}, {"a.rb", "a", 2}, {"b.rb", "b", 3}},
                      {{{1, 0}, 50}, {{2, 0}, 70}, {{3, 1, 0}, 10}, {{}, 30}, {{3, 0}, 70}});
}

}  // namespace

TEST(StackTree, OneNodePerMethodPathHeaviestFirstTiesInOrder) {
  Profile p = tree_profile();
  StackTree t = build_stack_tree(p, p.samples, 3);
  // 70 (sample 1), 70 (sample 4: the tie keeps its order), 50; then 30 and 10 pruned.
  EXPECT_EQ((std::vector<uint32_t>{1, 4, 0, 3, 2}), t.order);
  ASSERT_EQ(3u, t.kept_nodes.size());
  EXPECT_EQ("main>a", path_of(t, t.kept_nodes[0]));
  EXPECT_EQ("main>b", path_of(t, t.kept_nodes[1]));
  EXPECT_EQ(t.kept_nodes[0], t.kept_nodes[2]) << "a at two lines is one method: one node";
  ASSERT_GE(t.pruned_node, 0);
  EXPECT_EQ("[pruned]", path_of(t, static_cast<uint32_t>(t.pruned_node)));
  EXPECT_EQ(-1, t.no_frames_node) << "the empty stack was pruned";
  EXPECT_EQ(4u, t.parents.size());  // main, main>a, main>b, [pruned]
  EXPECT_EQ(4u, t.frames.size());
}

TEST(StackTree, EverySampleKeptInItsOrder) {
  Profile p = tree_profile();
  StackTree t = build_stack_tree(p, p.samples, 5);
  EXPECT_TRUE(t.order.empty());
  ASSERT_EQ(5u, t.kept_nodes.size());
  EXPECT_EQ("main>a>b", path_of(t, t.kept_nodes[2]));
  EXPECT_EQ("(no Ruby frames)", path_of(t, t.kept_nodes[3]));
  EXPECT_EQ(t.no_frames_node, static_cast<int32_t>(t.kept_nodes[3]));
  EXPECT_EQ(-1, t.pruned_node);
}

TEST(StackTree, RawSamplesFindTheirNodeOrThePrunedOne) {
  Profile p = tree_profile();
  p.timestamps = true;  // the same rows as raw samples
  StackTree t = build_stack_tree(p, p.samples, 3, true);
  ASSERT_EQ(5u, t.raw_nodes.size());
  EXPECT_EQ(t.kept_nodes[2], t.raw_nodes[0]);
  EXPECT_EQ(t.kept_nodes[0], t.raw_nodes[1]);
  EXPECT_EQ(static_cast<uint32_t>(t.pruned_node), t.raw_nodes[2]) << "main>a>b was pruned";
  EXPECT_EQ(static_cast<uint32_t>(t.pruned_node), t.raw_nodes[3]) << "so was the empty stack";
  EXPECT_EQ(4u, t.frames.size()) << "looking a pruned stack up adds no frame";
  EXPECT_EQ(4u, t.parents.size()) << "nor a node";
}

TEST(SampleFilter, ThreadHiddenThreadsLabelSetsAndClippedRange) {
  // Raw samples: each covers [time - weight, time].
  Profile p = make_profile({{"m.rb", "main", 1}},
                           {{{0}, 100, 1, 0, kRunning, 100}, {{0}, 100, 2, 1, kRunning, 200}, {{0}, 100, 1, 1, kRunning, 300}});
  p.timestamps = true;
  auto total = [&](const SampleFilter& f) {
    CallTreeOptions options;
    options.filter = f;
    return MethodPaths(p, options).total_ns();
  };
  SampleFilter none;
  EXPECT_EQ(300, total(none));
  SampleFilter thread;
  thread.by_thread = true;
  thread.thread = 1;
  EXPECT_EQ(200, total(thread));
  SampleFilter hidden;
  hidden.hidden_threads = {1};
  EXPECT_EQ(100, total(hidden));
  SampleFilter sets;
  sets.by_label_sets = true;
  sets.label_sets = {1};
  EXPECT_EQ(200, total(sets));
  SampleFilter range;
  range.by_range = true;
  range.from_ns = 50;  // the range [50, 250]
  range.to_ns = 250;
  EXPECT_EQ(50 + 100 + 50, total(range)) << "half of the first, all of the second, half of the third";
  range.by_thread = true;
  range.thread = 1;
  EXPECT_EQ(50 + 50, total(range)) << "every filter holds";
  range.to_ns = 200;
  EXPECT_EQ(50, total(range)) << "a sample ending where the range starts, or starting where it ends, is left out";
}
