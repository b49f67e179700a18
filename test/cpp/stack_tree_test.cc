// The Viewer's stack tree (profile/stack_tree) and the samples a view's filters keep
// (SampleFilter): exact numbers on hand-built profiles.
#include <gtest/gtest.h>

#include <set>

#include "profile/idle_wait.hh"
#include "profile/stack_tree.hh"
#include "test_profiles.hh"
#include "views/method_paths.hh"

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

StackTreeOptions options(size_t max_samples, bool raw = false, const IdleSamples* idle = nullptr) {
  StackTreeOptions o;
  o.max_samples = max_samples;
  o.raw = raw;
  o.idle = idle;
  return o;
}

}  // namespace

TEST(StackTree, OneNodePerMethodPathHeaviestFirstTiesInOrder) {
  Profile p = tree_profile();
  StackTree t = build_stack_tree(p, p.samples, options(3));
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
  StackTree t = build_stack_tree(p, p.samples, options(5));
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
  StackTree t = build_stack_tree(p, p.samples, options(3, true));
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
  StackTree t = build_stack_tree(p, p.samples, options(2, false, &idle));
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
  StackTree unmarked = build_stack_tree(p, p.samples, options(2));
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
  StackTree t = build_stack_tree(p, p.samples, options(p.samples.size()));
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

// The timeline's rows: one per raw sample at its node, in time order; over max_timeline, merged
// per (node, thread, label set, idleness) and time slot, the slot doubling from 1 ms, each merged
// row ending at its last sample's time and weighing them all.
TEST(StackTree, TimelineRowsInTimeOrderMergedPerSlotUntilTheyFit) {
  constexpr int64_t kMs = 1000000;
  Profile p = make_profile({{"m.rb", "main", 1}, {"a.rb", "a", 1}},
                           {{{1, 0}, 1 * kMs, 1, 0, kRunning, 3 * kMs},
                            {{1, 0}, 1 * kMs, 1, 0, kRunning, 1 * kMs},
                            {{0}, 1 * kMs, 1, 0, kRunning, 2 * kMs},
                            {{1, 0}, 1 * kMs, 2, 0, kRunning, 1 * kMs + 500000},
                            {{1, 0}, 2 * kMs, 1, 0, kRunning, 5 * kMs}});
  p.timestamps = true;
  StackTreeOptions o = options(10, true);
  StackTree all = build_stack_tree(p, p.aggregated_samples(), o);
  ASSERT_EQ(5u, all.timeline.size());
  EXPECT_EQ(0, all.timeline_quantum_ns);
  std::vector<int64_t> times;
  for (const StackTree::TimelineRow& r : all.timeline) times.push_back(r.time_ns / 100000);
  EXPECT_EQ((std::vector<int64_t>{10, 15, 20, 30, 50}), times);
  EXPECT_EQ(all.raw_nodes[1], all.timeline[0].node);
  // 3 rows at most: 1 and 2 ms slots leave 5 (no two rows share node, thread and slot), 4 ms
  // slots merge a's samples of thread 1 at 1 and 3 ms (4 rows), 8 ms slots the one at 5 ms too.
  o.max_timeline = 3;
  StackTree merged = build_stack_tree(p, p.aggregated_samples(), o);
  EXPECT_EQ(8 * kMs, merged.timeline_quantum_ns);
  ASSERT_EQ(3u, merged.timeline.size());
  int64_t total = 0;
  for (const StackTree::TimelineRow& r : merged.timeline) total += r.weight_ns;
  EXPECT_EQ(6 * kMs, total) << "merging keeps every ns";
  EXPECT_EQ(2u, merged.timeline[0].thread_seq) << "in time order: thread 2's a at 1.5 ms, main at 2, a at 5";
  const StackTree::TimelineRow& a1 = merged.timeline[2];
  EXPECT_EQ(1u, a1.thread_seq);
  EXPECT_EQ(4 * kMs, a1.weight_ns) << "a's three samples of thread 1";
  EXPECT_EQ(5 * kMs, a1.time_ns) << "ends at the last one";
}

// Allocation sites on the same tree: the heaviest max_samples at their leaf, the rest folded
// into [pruned] per (thread, label set, class), objects and retained summed, classes in order of
// first use.
TEST(StackTree, AllocationRowsOnTheSameTreeHeaviestFirstTheRestFolded) {
  Profile p = tree_profile();
  uint32_t str = p.class_names.intern("String"), ary = p.class_names.intern("Array");
  std::vector<AllocationSample> sites = {{p.samples[0].stack, 1, 0, ary, 5, 1, 0},
                                         {p.samples[2].stack, 1, 0, str, 40, 4, 0},
                                         {p.samples[1].stack, 1, 0, str, 3, 0, 0},
                                         {p.samples[1].stack, 1, 0, ary, 2, 2, 0},
                                         {p.samples[4].stack, 1, 0, ary, 1, 1, 0}};
  StackTreeOptions o = options(2);
  o.allocations = &sites;
  StackTree t = build_stack_tree(p, p.samples, o);
  ASSERT_EQ(4u, t.allocation_rows.size()) << "2 kept, then String and Array folded";
  EXPECT_EQ("main>a>b", path_of(t, t.allocation_rows[0].node));
  EXPECT_EQ(40, t.allocation_rows[0].objects);
  EXPECT_EQ("main>a", path_of(t, t.allocation_rows[1].node));
  EXPECT_EQ((std::vector<uint32_t>{str, ary}), t.allocation_classes);
  EXPECT_EQ(0u, t.allocation_rows[0].class_index);
  EXPECT_EQ(1u, t.allocation_rows[1].class_index);
  const StackTree::AllocationRow& folded_string = t.allocation_rows[2];
  EXPECT_EQ(static_cast<uint32_t>(t.pruned_node), folded_string.node);
  EXPECT_EQ(3, folded_string.objects);
  const StackTree::AllocationRow& folded_array = t.allocation_rows[3];
  EXPECT_EQ(3, folded_array.objects);
  EXPECT_EQ(3, folded_array.retained);
  EXPECT_EQ(3u, t.pruned_allocations);
  EXPECT_EQ(6, t.pruned_objects);
  EXPECT_EQ(51, t.allocated);
  EXPECT_EQ(8, t.retained);
}
