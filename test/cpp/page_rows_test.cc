// The Viewer page's model (page/page_rows): the page's rows, selected with the server's
// SampleFilter and summed up the payload's tree. Exact numbers on hand-built rows, and the
// page's totals against the server's on the same profile (the payload made by build_stack_tree).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <tuple>

#include "page/page_rows.hh"
#include "profile/idle_wait.hh"
#include "profile/stack_tree.hh"
#include "profile/transform.hh"
#include "test_profiles.hh"
#include "views/method_paths.hh"
#include "views/timeline_bins.hh"

using namespace rperf;
using namespace rperf::fixtures;
using rperf::page::KeptRows;
using rperf::page::PageRows;
using rperf::page::RowKind;
using rperf::page::Rows;
using rperf::page::ThreadSums;
using rperf::page::TreeWeights;

namespace {

constexpr int64_t kMs = 1000000;

// The tree: 0 main, 1 main>a, 2 main>a>b, 3 main>c; frames 0 main, 1 a, 2 b, 3 c.
PageRows small_page() {
  PageRows page;
  EXPECT_TRUE(page.set_tree({-1, 0, 1, 0}, {0, 1, 2, 3}));
  page.set_label_sets({{}, {{"%GVL", "blocked"}}, {{"endpoint", "x"}, {"%GC", "sweep"}}});
  Rows timeline;
  // node, thread, label set, weight, time (ends), idle
  timeline.node = {2, 1, 3, 2, 0};
  timeline.thread_seq = {1, 1, 2, 2, 1};
  timeline.label_set = {0, 1, 0, 2, 0};
  timeline.weight = {10 * kMs, 20 * kMs, 5 * kMs, 4 * kMs, 1 * kMs};
  timeline.time_ns = {10 * kMs, 30 * kMs, 12 * kMs, 40 * kMs, 41 * kMs};
  timeline.idle = {0, 1, 0, 0, 0};
  EXPECT_TRUE(page.set_rows(RowKind::kTimeline, timeline));
  return page;
}

}  // namespace

TEST(PageRows, SelectsWithTheServersFilterRangePartsIncluded) {
  PageRows page = small_page();
  KeptRows kept;
  SampleFilter all;
  kept = page.select(RowKind::kTimeline, all);
  EXPECT_EQ((std::vector<uint32_t>{0, 1, 2, 3, 4}), kept.rows);

  // [5, 15] ms: row 0 covers [0, 10] (5 ms in), row 2 [7, 12] (all 5), row 1 [10, 30] (5 ms in).
  SampleFilter range;
  range.by_range = true;
  range.from_ns = 5 * kMs;
  range.to_ns = 15 * kMs;
  kept = page.select(RowKind::kTimeline, range);
  EXPECT_EQ((std::vector<uint32_t>{0, 1, 2}), kept.rows);
  EXPECT_EQ((std::vector<int64_t>{5 * kMs, 5 * kMs, 5 * kMs}), kept.weights);

  SampleFilter idle_thread1;
  idle_thread1.by_thread = true;
  idle_thread1.thread = 1;
  idle_thread1.hide_idle = true;
  kept = page.select(RowKind::kTimeline, idle_thread1);
  EXPECT_EQ((std::vector<uint32_t>{0, 4}), kept.rows) << "row 1 is idle";

  SampleFilter sets;
  sets.by_label_sets = true;
  sets.label_sets = {0, 2};
  sets.hidden_threads = {1};
  kept = page.select(RowKind::kTimeline, sets);
  EXPECT_EQ((std::vector<uint32_t>{2, 3}), kept.rows);

  // Rows without times keep nothing under a range (the page asks with the timeline's).
  Rows untimed;
  untimed.node = {1};
  untimed.thread_seq = {1};
  untimed.label_set = {0};
  untimed.weight = {7};
  ASSERT_TRUE(page.set_rows(RowKind::kSamples, untimed));
  kept = page.select(RowKind::kSamples, range);
  EXPECT_TRUE(kept.rows.empty());
}

TEST(PageRows, SumsKeptRowsUpTheTreeByStateAndPerThread) {
  PageRows page = small_page();
  KeptRows kept = page.select(RowKind::kTimeline, SampleFilter());
  TreeWeights w = page.tree_weights(RowKind::kTimeline, kept);
  EXPECT_EQ((std::vector<int64_t>{1 * kMs, 20 * kMs, 14 * kMs, 5 * kMs}), w.self);
  EXPECT_EQ((std::vector<int64_t>{40 * kMs, 34 * kMs, 14 * kMs, 5 * kMs}), w.total);
  EXPECT_EQ(40 * kMs, w.sum);
  // b (node 2): 10 ms running, 4 ms in GC (sweep is GC); a (node 1): 20 ms GVL blocked.
  EXPECT_EQ(10 * kMs, w.state_self[2 * kTimelineStates + kTimelineRunning]);
  EXPECT_EQ(4 * kMs, w.state_self[2 * kTimelineStates + kTimelineGc]);
  EXPECT_EQ(20 * kMs, w.state_self[1 * kTimelineStates + kTimelineBlocked]);

  std::vector<ThreadSums> threads = page.thread_sums(RowKind::kTimeline, kept);
  ASSERT_EQ(2u, threads.size());
  EXPECT_EQ(1u, threads[0].thread_seq);
  EXPECT_EQ(31 * kMs, threads[0].total);
  EXPECT_EQ(20 * kMs, threads[0].by_state[kTimelineBlocked]);
  EXPECT_EQ(20 * kMs, threads[0].idle);
  EXPECT_EQ(1, threads[0].top_frame) << "a: 20 ms at its leaf";
  EXPECT_EQ(2u, threads[1].thread_seq);
  EXPECT_EQ(9 * kMs, threads[1].total);
  EXPECT_EQ(3, threads[1].top_frame) << "c: 5 ms at its leaf, b: 4 ms";
}

TEST(PageRows, RefusesATreeOrRowsOutOfPlace) {
  PageRows page;
  EXPECT_FALSE(page.set_tree({-1, 2, 0}, {0, 0, 0})) << "a parent after its child";
  EXPECT_FALSE(page.set_tree({-1, 0}, {0})) << "columns of different lengths";
  ASSERT_TRUE(page.set_tree({-1, 0}, {0, 1}));
  Rows bad;
  bad.node = {2};
  bad.thread_seq = {1};
  bad.label_set = {0};
  bad.weight = {1};
  EXPECT_FALSE(page.set_rows(RowKind::kSamples, bad)) << "node 2 is not in the tree";
  bad.node = {1};
  bad.time_ns = {1, 2};
  EXPECT_FALSE(page.set_rows(RowKind::kSamples, bad)) << "two times for one row";
  EXPECT_EQ(0u, page.rows(RowKind::kSamples).size());
}

// The page's totals equal the server's: a random raw profile made into the payload's tree and
// timeline rows (build_stack_tree, idle marked), then each filter applied by the page to the
// rows and by the server (SampleFilter::keeps) to the profile's samples.
TEST(PageRows, ThePagesTotalsAreTheServersOnTheSameProfile) {
  std::mt19937 rng(7);
  std::vector<FrameSpec> frames = {{"m.rb", "main", 1},
                                   {"a.rb", "a", 2},
                                   {"b.rb", "b", 3},
                                   {"<internal:thread_sync>", "Thread::Queue#pop", 0},
                                   {"w.rb", "block in work", 4}};
  std::vector<SampleSpec> samples;
  int64_t time = 0;
  for (int i = 0; i < 400; i++) {
    int64_t weight = static_cast<int64_t>(1 + rng() % 3) * kMs;
    time += weight;
    uint32_t thread = static_cast<uint32_t>(1 + rng() % 3);
    uint32_t set = static_cast<uint32_t>(rng() % 3);
    // Thread 3 is a worker: Queue#pop at the top of its block, outside the labelled work, is idle.
    bool idle_wait = thread == 3 && rng() % 2;
    if (idle_wait) set = 0;
    uint32_t root = thread == 3 ? 4 : 0;
    std::vector<uint32_t> stack = idle_wait ? std::vector<uint32_t>{3, 4} : std::vector<uint32_t>{static_cast<uint32_t>(1 + rng() % 2), root};
    VmState state = idle_wait ? kGvlBlocked : (rng() % 4 == 0 ? kGcMark : kRunning);
    samples.push_back({stack, weight, thread, set, state, time});
  }
  Profile p = make_profile(frames, samples, {{}, {{"endpoint", "a"}}, {{"endpoint", "b"}}});
  p.timestamps = true;
  label_vm_states(p);  // as the payload's rows: each sample's set with its VM state's label
  IdleSamples idle(p);
  StackTreeOptions o;
  o.raw = true;
  o.idle = &idle;
  StackTree tree = build_stack_tree(p, p.aggregated_samples(), o);
  ASSERT_EQ(samples.size(), tree.timeline.size());

  PageRows page;
  ASSERT_TRUE(page.set_tree(tree.parents, tree.node_frames));
  std::vector<LabelTexts> texts;  // as Payload#string_labels spells them
  for (uint32_t id = 0; id < p.label_sets.size(); id++) {
    const LabelSet& set = p.label_sets[id];
    LabelTexts t;
    for (const Label& l : set) t.emplace_back(label_value::to_s(l.key), label_value::to_s(l.value));
    texts.push_back(t);
  }
  page.set_label_sets(texts);
  std::vector<std::string> labels;
  for (const auto& f : tree.frames) labels.push_back(f.first);
  page.set_frames(labels, {}, {});
  Rows rows;
  for (const StackTree::TimelineRow& r : tree.timeline) {
    rows.node.push_back(r.node);
    rows.thread_seq.push_back(r.thread_seq);
    rows.label_set.push_back(r.label_set);
    rows.weight.push_back(r.weight_ns);
    rows.time_ns.push_back(r.time_ns);
    rows.idle.push_back(r.idle);
  }
  ASSERT_TRUE(page.set_rows(RowKind::kTimeline, rows));

  std::vector<SampleFilter> filters(5);
  filters[1].by_thread = true;
  filters[1].thread = 2;
  filters[2].hide_idle = true;
  filters[3].by_range = true;
  filters[3].from_ns = time / 3 + 500000;
  filters[3].to_ns = time / 2;
  filters[4].by_label_sets = true;
  filters[4].label_sets = {1};
  filters[4].hide_idle = true;
  filters[4].hidden_threads = {1};
  std::vector<int64_t> sums;
  for (size_t f = 0; f < filters.size(); f++) {
    std::map<uint32_t, int64_t> server;  // per thread
    int64_t server_sum = 0;
    for (const Sample& s : p.samples) {
      int64_t w;
      if (!filters[f].keeps(p, s, w)) continue;
      server[s.thread_seq] += w;
      server_sum += w;
    }
    KeptRows kept = page.select(RowKind::kTimeline, filters[f]);
    TreeWeights w = page.tree_weights(RowKind::kTimeline, kept);
    std::vector<ThreadSums> threads = page.thread_sums(RowKind::kTimeline, kept);
    std::map<uint32_t, int64_t> by_thread;
    for (const ThreadSums& t : threads) by_thread[t.thread_seq] = t.total;
    EXPECT_EQ(server_sum, w.sum) << "filter " << f;
    EXPECT_EQ(server, by_thread) << "filter " << f;
    EXPECT_GT(server_sum, 0) << "filter " << f << " keeps something";
    // The Timeline: the server's bins of the samples, the page's of the rows.
    TimelineBins server_bins = bin_timeline(p, filters[f], 50, 0);
    TimelineBins page_bins = page.timeline_bins(filters[f], 50, 0);
    EXPECT_EQ(server_bins.threads, page_bins.threads) << "filter " << f;
    EXPECT_EQ(server_bins.kept_ns, page_bins.kept_ns) << "filter " << f;
    ASSERT_EQ(server_bins.occupancy.size(), page_bins.occupancy.size()) << "filter " << f;
    for (size_t i = 0; i < server_bins.occupancy.size(); i++) EXPECT_NEAR(server_bins.occupancy[i], page_bins.occupancy[i], 1e-3) << i;
    double gc = 0;
    for (size_t t = 0; t < page_bins.threads.size(); t++) {
      for (uint32_t b = 0; b < 50; b++) gc += page_bins.at(t, kTimelineGc, b);
    }
    if (f == 0) {
      EXPECT_GT(gc, 0) << "GC time, read from the rows' label sets";
    }
    for (uint32_t b = 0; b < 50; b++) {
      std::vector<std::string> server_top, page_top;
      for (uint32_t n : server_bins.top[b]) server_top.push_back(server_bins.leaf_names[n]);
      for (uint32_t n : page_bins.top[b]) page_top.push_back(page_bins.leaf_names[n]);
      EXPECT_EQ(server_top, page_top) << "filter " << f << " bin " << b;
    }
    sums.push_back(w.sum);
  }
  EXPECT_LT(sums[2], sums[0]) << "some samples are idle (thread 3's Queue#pop)";
  EXPECT_LT(sums[3], sums[0] / 4) << "the range is a sixth of the time";
}

// The Allocations tab: totals of both kinds of objects, the tree of those asked for, each node's
// classes in order of first row, and the sites (leaf frame, class) however reached, heaviest first.
TEST(PageRows, AllocationSumsPerNodeClassAndSite) {
  PageRows page = small_page();
  Rows sites;
  // node, thread, label set, allocated, class, retained. Nodes 1 and 2 are frames a and b;
  // node 0 is main.
  sites.node = {2, 1, 2, 0};
  sites.thread_seq = {1, 1, 2, 1};
  sites.label_set = {0, 0, 0, 0};
  sites.weight = {40, 10, 8, 5};
  sites.class_index = {0, 1, 1, 0};
  sites.retained = {4, 0, 8, 1};
  ASSERT_TRUE(page.set_rows(RowKind::kAllocations, sites));
  KeptRows kept = page.select(RowKind::kAllocations, SampleFilter());
  page::AllocationSums sums = page.allocation_sums(kept, false, 10);
  EXPECT_EQ(63, sums.allocated);
  EXPECT_EQ(13, sums.retained);
  EXPECT_EQ(63, sums.weights.sum);
  EXPECT_EQ((std::vector<int64_t>{5, 10, 48, 0}), sums.weights.self);
  EXPECT_EQ((std::vector<int64_t>{63, 58, 48, 0}), sums.weights.total);
  ASSERT_EQ(4u, sums.node_classes.size());
  EXPECT_EQ(2u, sums.node_classes[2].node);
  EXPECT_EQ(0u, sums.node_classes[2].class_index) << "node 2's classes in order of first row";
  EXPECT_EQ(40, sums.node_classes[2].objects);
  EXPECT_EQ(8, sums.node_classes[3].objects);
  ASSERT_EQ(4u, sums.sites.size());
  EXPECT_EQ(2u, sums.sites[0].frame);
  EXPECT_EQ(40, sums.sites[0].allocated);

  // Retained: only rows with some; sites by retained, then allocated; at most 2.
  SampleFilter thread1;
  thread1.by_thread = true;
  thread1.thread = 1;
  kept = page.select(RowKind::kAllocations, thread1);
  sums = page.allocation_sums(kept, true, 2);
  EXPECT_EQ(55, sums.allocated);
  EXPECT_EQ(5, sums.retained);
  EXPECT_EQ((std::vector<int64_t>{1, 0, 4, 0}), sums.weights.self);
  EXPECT_EQ(2u, sums.node_classes.size()) << "the row with none retained has no class leaf";
  ASSERT_EQ(2u, sums.sites.size());
  EXPECT_EQ(4, sums.sites[0].retained);
  EXPECT_EQ(1, sums.sites[1].retained);
}

// rperf 0.11's names-only samples on the model's stack tree: shared prefixes one node, one row
// per sample in its order (thread 0, its label set), an empty stack the "(no Ruby frames)" node.
TEST(PageRows, NamesOnlySamplesMakeTheModelsStackTree) {
  const std::vector<uint32_t> depths{3, 2, 2, 0, 3}, label_sets{0, 1, 0, 0, 2};
  const std::vector<std::string> names{"main", "a", "b", "main", "a", "main", "c", "main", "a", "b"};
  EXPECT_FALSE(page::names_tree(depths, {5, 7, 2, 1}, label_sets, names)) << "a weight short";
  EXPECT_FALSE(page::names_tree(depths, {5, 7, 2, 1, 3}, label_sets, {"main"})) << "names short";
  std::optional<StackTree> named = page::names_tree(depths, {5, 7, 2, 1, 3}, label_sets, names);
  ASSERT_TRUE(named);
  const StackTree& tree = *named;
  std::vector<std::string> paths;
  for (size_t node = 0; node < tree.parents.size(); node++) {
    std::string path;
    for (int32_t n = static_cast<int32_t>(node); n >= 0; n = tree.parents[n]) {
      path = tree.frames[tree.node_frames[n]].first + (path.empty() ? "" : ">" + path);
    }
    paths.push_back(path);
  }
  std::vector<std::string> sorted = paths;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ((std::vector<std::string>{"(no Ruby frames)", "main", "main>a", "main>a>b", "main>c"}), sorted) << "one node per path";
  ASSERT_EQ(5u, tree.rows.size());
  std::vector<std::string> row_paths;
  std::vector<uint32_t> sets;
  int64_t total = 0;
  for (const StackTree::Row& r : tree.rows) {
    row_paths.push_back(paths[r.node]);
    sets.push_back(r.label_set);
    total += r.weight_ns;
    EXPECT_EQ(0u, r.thread_seq);
  }
  EXPECT_EQ((std::vector<std::string>{"main>a>b", "main>a", "main>c", "(no Ruby frames)", "main>a>b"}), row_paths);
  EXPECT_EQ((std::vector<uint32_t>{0, 1, 0, 0, 2}), sets);
  EXPECT_EQ(18, total);
}

TEST(PageRows, TreeDiffPutsTheBasesSelfAtTheSameStackScaledWhenNormalized) {
  // After: 0 main, 1 main>a, 2 main>a>b, 3 main>c (frames main, a, b, c). Base: its frames in
  // another order (0 b, 1 main, 2 a, 3 d), tree 0 main, 1 main>b, 2 main>a, 3 main>a>b, 4 main>d.
  PageRows after;
  after.set_frames({"main", "a", "b", "c"}, {"m.rb", "a.rb", "b.rb", "c.rb"}, {0, 0, 0, 0});
  ASSERT_TRUE(after.set_tree({-1, 0, 1, 0}, {0, 1, 2, 3}));
  PageRows base;
  base.set_frames({"b", "main", "a", "d"}, {"b.rb", "m.rb", "a.rb", "d.rb"}, {0, 0, 0, 0});
  ASSERT_TRUE(base.set_tree({-1, 0, 0, 2, 0}, {1, 0, 2, 0, 3}));
  EXPECT_EQ((std::vector<int32_t>{0, 2, 3, -1}), after.nodes_in(base)) << "main>b of the base is not main>a>b";

  Rows rows;
  rows.node = {2, 3, 0};
  rows.thread_seq = {1, 1, 1};
  rows.label_set = {0, 0, 0};
  rows.weight = {30, 10, 20};
  ASSERT_TRUE(after.set_rows(RowKind::kSamples, rows));
  Rows base_rows;
  base_rows.node = {3, 1, 4};
  base_rows.thread_seq = {1, 1, 1};
  base_rows.label_set = {0, 0, 0};
  base_rows.weight = {10, 5, 15};
  ASSERT_TRUE(base.set_rows(RowKind::kSamples, base_rows));
  KeptRows kept{{0, 1, 2}, {30, 10, 20}}, base_kept{{0, 1, 2}, {10, 5, 15}};

  rperf::page::TreeDiff d = rperf::page::tree_diff(after, RowKind::kSamples, kept, base, RowKind::kSamples, base_kept, false);
  EXPECT_EQ(60, d.sum);
  EXPECT_EQ(30, d.base_sum);
  EXPECT_EQ(1.0, d.base_scale);
  EXPECT_EQ((std::vector<double>{20, 0, 20, 10}), d.self_change);

  d = rperf::page::tree_diff(after, RowKind::kSamples, kept, base, RowKind::kSamples, base_kept, true);
  EXPECT_EQ(2.0, d.base_scale);
  EXPECT_EQ((std::vector<double>{20, 0, 10, 10}), d.self_change);
}

// The Viewer's transforms move the rows in the model (transform_snapshot): merge a, drop c on
// main>a, main>a>b, main>c, main. Each row left keeps its order and columns (thread, label set,
// weight, idle mark, class, retained, time) at its stack's new node; each keeps its line-level
// leaf on the base's line tree, so the Source tab's lines are those of the same base rows; a
// timeline the base gets later moves with move_rows, from its own base only.
TEST(PageRows, ATransformedSnapshotMovesEveryRowToItsNewNode) {
  PageRows base;
  base.set_frames({"main", "a", "b", "c"}, {"m.rb", "a.rb", "b.rb", "c.rb"}, {1, 10, 20, 30});
  base.set_label_sets({{}, {{"%GVL", "blocked"}}, {{"endpoint", "x"}}});
  ASSERT_TRUE(base.set_tree({-1, 0, 1, 0}, {0, 1, 2, 3}));
  // Line nodes: 0 main:2, 1 main:2>a:11, 2 main:2>a:11>b:21, 3 main:2>c:31.
  ASSERT_TRUE(base.set_line_tree({-1, 0, 1, 0}, {0, 1, 2, 3}, {2, 11, 21, 31}));
  Rows samples;
  samples.node = {2, 1, 3, 0, 2};
  samples.thread_seq = {1, 1, 2, 1, 2};
  samples.label_set = {0, 1, 0, 0, 2};
  samples.weight = {10, 20, 5, 1, 4};
  samples.idle = {0, 1, 0, 0, 1};
  samples.line_node = {2, 1, 3, 0, 2};
  ASSERT_TRUE(base.set_rows(RowKind::kSamples, samples));
  Rows sites;
  sites.node = {3, 2};
  sites.thread_seq = {1, 2};
  sites.label_set = {0, 0};
  sites.weight = {7, 9};
  sites.class_index = {0, 1};
  sites.retained = {1, 2};
  ASSERT_TRUE(base.set_rows(RowKind::kAllocations, sites));

  using Op = StackTransform::Op;
  page::TransformedSnapshot t = page::transform_snapshot(base, {{Op::kMerge, "a", "a.rb"}, {Op::kDrop, "c", "c.rb"}});
  const PageRows& shown = t.rows;
  // The new tree: 0 main (main and main>a), 1 main>b (main>a>b); main>c is gone.
  EXPECT_EQ((std::vector<int32_t>{0, 0, 1, -1}), t.tree.node_map);
  EXPECT_EQ((std::vector<int32_t>{-1, 0}), t.tree.parents);
  ASSERT_EQ(2u, shown.node_count());
  EXPECT_EQ("main", shown.frame_label(shown.frame_of(0)));
  EXPECT_EQ("b", shown.frame_label(shown.frame_of(1)));
  EXPECT_EQ(20, shown.frame_line(shown.frame_of(1)));
  EXPECT_EQ(base.label_sets(), shown.label_sets());

  const Rows& moved = shown.rows(RowKind::kSamples);
  EXPECT_EQ((std::vector<uint32_t>{1, 0, 0, 1}), moved.node) << "the row at main>c is gone, the others in order";
  EXPECT_EQ((std::vector<uint32_t>{1, 1, 1, 2}), moved.thread_seq);
  EXPECT_EQ((std::vector<uint32_t>{0, 1, 0, 2}), moved.label_set);
  EXPECT_EQ((std::vector<int64_t>{10, 20, 1, 4}), moved.weight);
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 0, 1}), moved.idle) << "idle marks kept";
  EXPECT_EQ((std::vector<int32_t>{2, 1, 0, 2}), moved.line_node) << "each row's recorded line-level leaf";
  EXPECT_TRUE(moved.time_ns.empty());
  const Rows& moved_sites = shown.rows(RowKind::kAllocations);
  EXPECT_EQ((std::vector<uint32_t>{1}), moved_sites.node);
  EXPECT_EQ((std::vector<int64_t>{9}), moved_sites.weight);
  EXPECT_EQ((std::vector<uint32_t>{1}), moved_sites.class_index);
  EXPECT_EQ((std::vector<int64_t>{2}), moved_sites.retained);
  EXPECT_EQ(0u, shown.rows(RowKind::kTimeline).size()) << "the base has no timeline yet";

  // The Source tab: the moved rows' lines are the base's of the rows they came from (0, 1, 3, 4).
  KeptRows kept = shown.select(RowKind::kSamples, SampleFilter());
  KeptRows origins{{0, 1, 3, 4}, kept.weights};
  EXPECT_EQ(shown.line_parents(), base.line_parents());
  for (const char* path : {"m.rb", "a.rb", "b.rb"}) {
    SourceLines mine = shown.source_lines(RowKind::kSamples, kept, path), theirs = base.source_lines(RowKind::kSamples, origins, path);
    EXPECT_EQ(theirs.kept_ns, mine.kept_ns) << path;
    ASSERT_EQ(theirs.lines.size(), mine.lines.size()) << path;
    EXPECT_FALSE(mine.lines.empty()) << path;
    for (size_t i = 0; i < mine.lines.size(); i++) {
      EXPECT_EQ(theirs.lines[i].line, mine.lines[i].line) << path;
      EXPECT_EQ(theirs.lines[i].self_ns, mine.lines[i].self_ns) << path;
      EXPECT_EQ(theirs.lines[i].total_ns, mine.lines[i].total_ns) << path;
    }
  }

  // A timeline loaded later: moved from the base, times and marks kept.
  Rows timeline;
  timeline.node = {3, 2, 1};
  timeline.thread_seq = {1, 1, 2};
  timeline.label_set = {0, 0, 1};
  timeline.weight = {5, 6, 7};
  timeline.time_ns = {5, 11, 18};
  timeline.idle = {0, 0, 1};
  ASSERT_TRUE(base.set_rows(RowKind::kTimeline, timeline));
  PageRows later = std::move(t.rows);
  ASSERT_TRUE(later.move_rows(base, RowKind::kTimeline));
  const Rows& moved_timeline = later.rows(RowKind::kTimeline);
  EXPECT_EQ((std::vector<uint32_t>{1, 0}), moved_timeline.node);
  EXPECT_EQ((std::vector<int64_t>{11, 18}), moved_timeline.time_ns);
  EXPECT_EQ((std::vector<int64_t>{6, 7}), moved_timeline.weight);
  EXPECT_EQ((std::vector<uint8_t>{0, 1}), moved_timeline.idle);
  EXPECT_TRUE(moved_timeline.line_node.empty());
  PageRows other;
  ASSERT_TRUE(other.set_tree({-1, 0}, {0, 1}));
  EXPECT_FALSE(later.move_rows(other, RowKind::kTimeline)) << "not the snapshot it was made of";
  EXPECT_EQ(0u, later.rows(RowKind::kTimeline).size());
}

namespace {

// A tag frame as (parent, node, name, value), to compare a list at once.
using TagFrameTuple = std::tuple<int32_t, uint32_t, std::string, int64_t>;
std::vector<TagFrameTuple> tuples(const std::vector<rperf::page::TagFrame>& frames) {
  std::vector<TagFrameTuple> out;
  for (const auto& f : frames) out.emplace_back(f.parent, f.node, f.name, f.value);
  return out;
}

// The tree of small_page; rows over label sets with and without the tag keys: 1 and 5 share
// their endpoint, 4 is GVL blocked.
PageRows tagged_page() {
  PageRows page;
  EXPECT_TRUE(page.set_tree({-1, 0, 1, 0}, {0, 1, 2, 3}));
  page.set_label_sets({{},
                       {{"endpoint", "GET /a"}, {"job", "x"}},
                       {{"endpoint", "GET /b"}},
                       {{"job", "y"}},
                       {{"%GVL", "blocked"}, {"job", "y"}, {"endpoint", "GET /a"}},
                       {{"endpoint", "GET /a"}}});
  Rows rows;
  rows.node = {2, 1, 3, 2, 2, 3, 2};
  rows.thread_seq = {1, 1, 1, 1, 1, 1, 1};
  rows.label_set = {2, 1, 0, 4, 5, 3, 1};
  rows.weight = {10, 20, 5, 7, 3, 4, 6};
  EXPECT_TRUE(page.set_rows(RowKind::kSamples, rows));
  return page;
}

}  // namespace

TEST(PageRows, TagRootGroupsTheKeptRowsByTheirTagPathInOrderOfFirstRow) {
  PageRows page = tagged_page();
  KeptRows kept{{0, 1, 2, 3, 4, 5, 6}, {10, 20, 5, 7, 3, 4, 2}};  // the last row kept in part
  rperf::page::TagGroups tags = page.tag_groups(RowKind::kSamples, kept, {"endpoint"}, {});
  EXPECT_EQ((std::vector<TagFrameTuple>{{-1, 0, "[endpoint: GET /b]", 10}, {-1, 0, "[endpoint: GET /a]", 32}}), tuples(tags.root_frames));
  ASSERT_EQ(3u, tags.groups.size());
  // GET /b: row 0 at main>a>b.
  EXPECT_EQ(0, tags.groups[0].under);
  EXPECT_EQ(1u, tags.groups[0].root_frames_end);
  EXPECT_EQ(10, tags.groups[0].sum);
  EXPECT_EQ((std::vector<uint32_t>{0, 1, 2}), tags.groups[0].nodes);
  EXPECT_EQ((std::vector<int64_t>{10, 10, 10}), tags.groups[0].total);
  // GET /a: label sets 1, 4 and 5; 7 of b's 12 GVL blocked.
  EXPECT_EQ(1, tags.groups[1].under);
  EXPECT_EQ(2u, tags.groups[1].root_frames_end);
  EXPECT_EQ(32, tags.groups[1].sum);
  EXPECT_EQ((std::vector<uint32_t>{0, 1, 2}), tags.groups[1].nodes);
  EXPECT_EQ((std::vector<int64_t>{32, 32, 12}), tags.groups[1].total);
  ASSERT_EQ(3u * kTimelineStates, tags.groups[1].state_self.size());
  EXPECT_EQ(7, tags.groups[1].state_self[2 * kTimelineStates + kTimelineBlocked]);
  EXPECT_EQ(5, tags.groups[1].state_self[2 * kTimelineStates + kTimelineRunning]);
  EXPECT_EQ(20, tags.groups[1].state_self[1 * kTimelineStates + kTimelineRunning]);
  // No endpoint: under the root itself, only main and main>c weigh.
  EXPECT_EQ(-1, tags.groups[2].under);
  EXPECT_EQ(2u, tags.groups[2].root_frames_end);
  EXPECT_EQ(9, tags.groups[2].sum);
  EXPECT_EQ((std::vector<uint32_t>{0, 3}), tags.groups[2].nodes);
  EXPECT_EQ((std::vector<int64_t>{9, 9}), tags.groups[2].total);
  for (const auto& g : tags.groups) EXPECT_TRUE(g.leaves.empty());

  // Two keys: a path per pair present, frames merged by name (GET /a once), "[job: y]" twice
  // (under GET /a and at the root: another parent).
  tags = page.tag_groups(RowKind::kSamples, kept, {"endpoint", "job"}, {});
  EXPECT_EQ((std::vector<TagFrameTuple>{{-1, 0, "[endpoint: GET /b]", 10},
                                        {-1, 0, "[endpoint: GET /a]", 32},
                                        {1, 0, "[job: x]", 22},
                                        {1, 0, "[job: y]", 7},
                                        {-1, 0, "[job: y]", 4}}),
            tuples(tags.root_frames));
  std::vector<std::tuple<int32_t, uint32_t, int64_t>> groups;  // under, root_frames_end, sum
  for (const auto& g : tags.groups) groups.emplace_back(g.under, g.root_frames_end, g.sum);
  EXPECT_EQ((std::vector<std::tuple<int32_t, uint32_t, int64_t>>{{0, 1, 10}, {2, 3, 22}, {-1, 3, 5}, {3, 4, 7}, {1, 4, 3}, {4, 5, 4}}), groups);
}

TEST(PageRows, TagLeafSplitsEachNodesSelfTimeByItsTagPath) {
  PageRows page = tagged_page();
  KeptRows kept{{0, 1, 2, 3, 4, 5, 6}, {10, 20, 5, 7, 3, 4, 2}};
  rperf::page::TagGroups tags = page.tag_groups(RowKind::kSamples, kept, {}, {"endpoint", "job"});
  EXPECT_TRUE(tags.root_frames.empty());
  ASSERT_EQ(1u, tags.groups.size()) << "every kept row, without tagroot keys";
  const rperf::page::TagGroup& all = tags.groups[0];
  EXPECT_EQ(-1, all.under);
  EXPECT_EQ(51, all.sum);
  EXPECT_EQ((std::vector<uint32_t>{0, 1, 2, 3}), all.nodes);
  EXPECT_EQ((std::vector<int64_t>{51, 42, 22, 9}), all.total);
  // Per node, in order of first row; main>c's row without either key has no leaf.
  EXPECT_EQ((std::vector<TagFrameTuple>{{-1, 2, "[endpoint: GET /b]", 10},
                                        {-1, 1, "[endpoint: GET /a]", 20},
                                        {1, 1, "[job: x]", 20},
                                        {-1, 2, "[endpoint: GET /a]", 12},
                                        {3, 2, "[job: y]", 7},
                                        {-1, 3, "[job: y]", 4},
                                        {3, 2, "[job: x]", 2}}),
            tuples(all.leaves));

  // Both: each group's leaves of its own rows.
  tags = page.tag_groups(RowKind::kSamples, kept, {"endpoint"}, {"job"});
  ASSERT_EQ(3u, tags.groups.size());
  EXPECT_TRUE(tags.groups[0].leaves.empty());
  EXPECT_EQ((std::vector<TagFrameTuple>{{-1, 1, "[job: x]", 20}, {-1, 2, "[job: y]", 7}, {-1, 2, "[job: x]", 2}}), tuples(tags.groups[1].leaves));
  EXPECT_EQ((std::vector<TagFrameTuple>{{-1, 3, "[job: y]", 4}}), tuples(tags.groups[2].leaves));

  // No kept rows: no group under tagroot keys, one empty group without.
  EXPECT_TRUE(page.tag_groups(RowKind::kSamples, KeptRows{}, {"endpoint"}, {"job"}).groups.empty());
  tags = page.tag_groups(RowKind::kSamples, KeptRows{}, {}, {"job"});
  ASSERT_EQ(1u, tags.groups.size());
  EXPECT_EQ(0, tags.groups[0].sum);
  EXPECT_TRUE(tags.groups[0].nodes.empty());
}
