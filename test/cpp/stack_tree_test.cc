// The Viewer's stack tree (profile/stack_tree) and the samples a view's filters keep
// (SampleFilter): exact numbers on hand-built profiles.
#include <gtest/gtest.h>

#include <set>

#include "profile/idle_wait.hh"
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

TEST(StackTree, RowsKeptThenPrunedFoldedPerThreadLabelSetAndIdleness) {
  // Frames: main, work, Thread::Queue#pop (a thread's top-level Queue#pop off the GVL is idle).
  Profile p = make_profile({{"m.rb", "main", 1}, {"m.rb", "work", 2}, {"<C method>", "Thread::Queue#pop", 0}},
                           {{{1, 0}, 500, 1, 0},                  // kept
                            {{0}, 400, 2, 0},                     // kept
                            {{1, 0}, 30, 1, 0},                   // pruned: thread 1, set 0
                            {{1}, 20, 2, 1},                      // pruned: thread 2, set 1
                            {{2}, 10, 3, 0, kGvlBlocked},         // pruned, idle
                            {{0}, 5, 1, 0},                       // pruned: thread 1, set 0 again
                            {{2}, 3, 3, 0, kRunning}},            // pruned, not idle (on the GVL)
                           {{}, {{"job", "a"}}});
  IdleSamples idle(p);
  StackTree t = build_stack_tree(p, p.samples, 2, false, &idle);
  ASSERT_EQ(6u, t.rows.size());
  EXPECT_EQ(t.kept_nodes[0], t.rows[0].node);
  EXPECT_EQ(500, t.rows[0].weight_ns);
  EXPECT_EQ(t.kept_nodes[1], t.rows[1].node);
  EXPECT_EQ(2u, t.rows[1].thread_seq);
  const uint32_t pruned = static_cast<uint32_t>(t.pruned_node);
  struct Expected {
    int64_t weight;
    uint32_t thread, set;
    bool idle;
  };
  // In order of first appearance among the pruned samples, heaviest first.
  const Expected folded[] = {{35, 1, 0, false}, {20, 2, 1, false}, {10, 3, 0, true}, {3, 3, 0, false}};
  for (size_t i = 0; i < 4; i++) {
    const StackTree::Row& r = t.rows[2 + i];
    EXPECT_EQ(pruned, r.node) << i;
    EXPECT_EQ(folded[i].weight, r.weight_ns) << i;
    EXPECT_EQ(folded[i].thread, r.thread_seq) << i;
    EXPECT_EQ(folded[i].set, r.label_set) << i;
    EXPECT_EQ(folded[i].idle, r.idle) << i;
  }
  EXPECT_EQ(5u, t.pruned_samples);
  EXPECT_EQ(68, t.pruned_weight_ns);
  EXPECT_EQ(968, t.total_weight_ns);
  StackTree unmarked = build_stack_tree(p, p.samples, 2);
  EXPECT_EQ(5u, unmarked.rows.size()) << "without idleness the two thread-3 groups are one";
}

// More stacks than the walks side by side (8), sharing prefixes at every depth: each stack
// ends at the node of its own path, and no path has two nodes.
TEST(StackTree, StacksWalkedSideBySideShareTheirPrefixes) {
  std::vector<FrameSpec> frames;
  for (int i = 0; i < 6; i++) frames.push_back({"x.rb", "f" + std::to_string(i), i + 1});
  std::vector<SampleSpec> samples;
  for (uint32_t n = 0; n < 40; n++) {  // stack n: root f0, then the digits of n in base 3 (leaf first below)
    std::vector<uint32_t> root_first = {0};
    for (uint32_t v = n; v > 0; v /= 3) root_first.push_back(1 + v % 3);
    samples.push_back({std::vector<uint32_t>(root_first.rbegin(), root_first.rend()), 100 - n, 1, 0});
  }
  samples.push_back({{}, 1, 1, 0});
  Profile p = make_profile(frames, samples);
  StackTree t = build_stack_tree(p, p.samples, p.samples.size());
  std::set<std::string> paths;
  for (uint32_t n = 0; n < t.parents.size(); n++) {
    EXPECT_LT(t.parents[n], static_cast<int32_t>(n)) << "a parent comes before its children";
    EXPECT_TRUE(paths.insert(path_of(t, n)).second) << path_of(t, n) << " has two nodes";
  }
  for (uint32_t n = 0; n < 40; n++) {
    std::string expected = "f0";
    for (uint32_t v = n; v > 0; v /= 3) expected += ">f" + std::to_string(1 + v % 3);
    EXPECT_EQ(expected, path_of(t, t.kept_nodes[n])) << n;
  }
  EXPECT_EQ("(no Ruby frames)", path_of(t, t.kept_nodes[40]));
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
