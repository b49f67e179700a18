// The page's call trees, method table and sandwich (page/page_views): the rows the page's filter
// keeps, made a profile, give the same views as the server's model gives of the profile's own
// samples under the same filter (select_samples), byte for byte.
#include <gtest/gtest.h>

#include <algorithm>

#include "page/page_rows.hh"
#include "page/page_views.hh"
#include "profile/idle_wait.hh"
#include "profile/label_value.hh"
#include "profile/stack_tree.hh"
#include "profile/transform.hh"
#include "views/stack_chart.hh"
#include "test_profiles.hh"

using namespace rperf;
using namespace rperf::fixtures;
using rperf::page::KeptRows;
using rperf::page::PageRows;
using rperf::page::RowKind;
using rperf::page::Rows;
using rperf::page::ViewLimits;

namespace {

constexpr int64_t kMs = 1000000;

Profile sample_profile() {
  std::vector<FrameSpec> frames = {{"m.rb", "main", 1}, {"a.rb", "a", 12}, {"b.rb", "b", 30}, {"a.rb", "a", 14}, {"r.rb", "rec", 5}};
  std::vector<SampleSpec> samples = {
      {{1, 0}, 10 * kMs, 1, 0},        {{3, 0}, 5 * kMs, 1, 1},           {{2, 1, 0}, 7 * kMs, 2, 0},
      {{2, 3, 0}, 3 * kMs, 2, 2, kGvlBlocked}, {{4, 4, 4, 0}, 6 * kMs, 1, 0}, {{0}, 2 * kMs, 2, 1, kGcSweep},
      {{4, 2, 1, 0}, 4 * kMs, 1, 2},
  };
  int64_t time = 0;
  for (SampleSpec& s : samples) s.time_ns = (time += s.weight);
  Profile p = make_profile(frames, samples, {{}, {{"endpoint", "a"}}, {{"endpoint", "b"}}});
  label_vm_states(p);  // as the payload's rows: each sample's set with its VM state's label
  return p;
}

// The profile's payload rows (build_stack_tree) in a PageRows, as viewer.js writes them.
PageRows page_of(const Profile& p, const StackTree& tree) {
  PageRows page;
  EXPECT_TRUE(page.set_tree(tree.parents, tree.node_frames));
  std::vector<LabelTexts> texts;
  for (uint32_t id = 0; id < p.label_sets.size(); id++) {
    LabelTexts t;
    for (const Label& l : p.label_sets[id]) t.emplace_back(label_value::to_s(l.key), label_value::to_s(l.value));
    texts.push_back(t);
  }
  page.set_label_sets(texts);
  std::vector<std::string> labels, paths;
  for (const auto& [label, path] : tree.frames) {
    labels.push_back(label);
    paths.push_back(path);
  }
  page.set_frames(labels, paths, tree.frame_lines);
  Rows rows;
  for (const StackTree::Row& r : tree.rows) {
    rows.node.push_back(r.node);
    rows.thread_seq.push_back(r.thread_seq);
    rows.label_set.push_back(r.label_set);
    rows.weight.push_back(r.weight_ns);
  }
  EXPECT_TRUE(page.set_rows(RowKind::kSamples, rows));
  return page;
}

}  // namespace

TEST(PageViews, ThePagesViewsAreTheModelsOfTheSameSamples) {
  Profile p = sample_profile();
  StackTree tree = build_stack_tree(p, p.aggregated_samples(), StackTreeOptions());
  EXPECT_EQ((std::vector<int32_t>{1, 12, 5, 30}), tree.frame_lines) << "each method at its first line (frames in order of first use)";
  PageRows page = page_of(p, tree);
  std::vector<SampleFilter> filters(3);
  filters[1].by_thread = true;
  filters[1].thread = 2;
  filters[2].by_label_sets = true;
  filters[2].label_sets = {2};
  ViewLimits limits;
  for (size_t f = 0; f < filters.size(); f++) {
    Profile server = p;
    select_samples(server, filters[f]);
    KeptRows kept = page.select(RowKind::kSamples, filters[f]);
    Profile shown = rperf::page::profile_of_rows(page, RowKind::kSamples, kept);
    EXPECT_EQ(rperf::page::call_tree_json(server, false, limits), rperf::page::call_tree_json(shown, false, limits)) << f;
    EXPECT_EQ(rperf::page::call_tree_json(server, true, limits), rperf::page::call_tree_json(shown, true, limits)) << f;
    EXPECT_EQ(rperf::page::method_table_json(server, limits), rperf::page::method_table_json(shown, limits)) << f;
    EXPECT_EQ(rperf::page::sandwich_json(server, "a", "a.rb", limits), rperf::page::sandwich_json(shown, "a", "a.rb", limits)) << f;
  }
  KeptRows all = page.select(RowKind::kSamples, SampleFilter());
  std::string tree_json = rperf::page::call_tree_json(rperf::page::profile_of_rows(page, RowKind::kSamples, all), false, limits);
  EXPECT_NE(std::string::npos, tree_json.find("\"total_ns\":37000000")) << tree_json;
  EXPECT_NE(std::string::npos, tree_json.find("[\"a\",\"a.rb\",12]")) << tree_json;
  EXPECT_NE(std::string::npos, tree_json.find("[GVL blocked]")) << tree_json;
  EXPECT_NE(std::string::npos, tree_json.find("[GC sweeping]")) << tree_json;
}

// The page's stack chart, merged from the timeline's rows, is the model's chart of the profile's
// raw samples (stack_charts) under the same filter: the same cells and frames, the filter's
// thread (else the first kept thread), each row's VM state a leaf cell.
TEST(PageViews, TheStackChartOfTimelineRowsIsTheModels) {
  Profile p = sample_profile();
  p.timestamps = true;
  StackTreeOptions raw;
  raw.raw = true;
  StackTree tree = build_stack_tree(p, p.aggregated_samples(), raw);
  PageRows page = page_of(p, tree);
  Rows rows;
  for (const StackTree::TimelineRow& r : tree.timeline) {
    rows.node.push_back(r.node);
    rows.thread_seq.push_back(r.thread_seq);
    rows.label_set.push_back(r.label_set);
    rows.weight.push_back(r.weight_ns);
    rows.time_ns.push_back(r.time_ns);
  }
  ASSERT_EQ(p.samples.size(), rows.size());
  ASSERT_TRUE(page.set_rows(RowKind::kTimeline, rows));
  std::vector<SampleFilter> filters(3);
  filters[1].by_thread = true;
  filters[1].thread = 2;
  filters[2].by_label_sets = true;
  filters[2].label_sets = {0, 2};  // no endpoint or endpoint b: threads 1 and 2, the chart of 1
  for (size_t f = 0; f < filters.size(); f++) {
    KeptRows kept = page.select(RowKind::kTimeline, filters[f]);
    rperf::page::StackChartView shown = rperf::page::stack_chart_view(page, RowKind::kTimeline, kept, 5);
    StackCharts model = stack_charts(p, filters[f], 5);
    ASSERT_FALSE(model.threads.empty()) << f;
    const StackChart& c = model.threads[0];
    EXPECT_EQ(c.thread, shown.chart.thread) << f;
    EXPECT_EQ(c.total_ns, shown.chart.total_ns) << f;
    EXPECT_EQ(c.samples, shown.chart.samples) << f;
    EXPECT_EQ(c.frames, shown.chart.frames) << f;
    EXPECT_EQ(c.x, shown.chart.x) << f;
    EXPECT_EQ(c.w, shown.chart.w) << f;
    EXPECT_EQ(c.d, shown.chart.d) << f;
    EXPECT_EQ(c.f, shown.chart.f) << f;
    EXPECT_EQ(c.gap, shown.chart.gap) << f;
    if (f == 0) {
      EXPECT_NE(std::string::npos, shown.json.find("\"end_ns\":" + std::to_string(model.end_ns))) << shown.json;
    }
  }
  KeptRows thread2 = page.select(RowKind::kTimeline, filters[1]);
  const StackChart& two = rperf::page::stack_chart_view(page, RowKind::kTimeline, thread2, 0).chart;
  EXPECT_EQ(2u, two.thread);
  EXPECT_NE(two.f.end(), std::find(two.f.begin(), two.f.end(), -1 - kTimelineBlocked)) << "the GVL-blocked sample's leaf";
  EXPECT_NE(two.f.end(), std::find(two.f.begin(), two.f.end(), -1 - kTimelineGc)) << "the GC sample's leaf";
  KeptRows none;
  rperf::page::StackChartView empty = rperf::page::stack_chart_view(page, RowKind::kTimeline, none, 9);
  EXPECT_TRUE(empty.chart.x.empty());
  EXPECT_NE(std::string::npos, empty.json.find("\"end_ns\":9,\"cells\":0")) << empty.json;
}

// Every node weighs 0: the threshold cannot rise, so the first max_nodes calls are sent.
TEST(PageViews, ACapWithAZeroTotalSendsTheFirstNodes) {
  std::vector<FrameSpec> frames;
  std::vector<SampleSpec> samples;
  for (uint32_t i = 0; i < 30; i++) {
    frames.push_back({"app.rb", "m" + std::to_string(i), 1});
    std::vector<uint32_t> stack;
    for (uint32_t k = i + 1; k-- > 0;) stack.push_back(k);
    samples.push_back({stack, 0});
  }
  ViewLimits limits;
  limits.max_nodes = 10;
  std::string json = rperf::page::call_tree_json(make_profile(frames, samples, {{}}), false, limits);
  EXPECT_NE(std::string::npos, json.find("\"node_count\":31")) << json;
  EXPECT_NE(std::string::npos, json.find("\"min_percent\":0.1,")) << json;
  std::string nodes = json.substr(json.find("\"nodes\":"));
  EXPECT_EQ(11, std::count(nodes.begin(), nodes.end(), '[')) << "ten nodes: " << json;
}

// The page's transforms: its tree through transform_tree and its rows mapped to the new nodes
// (by hand, and by the model's transform_snapshot) give the views of the profile through the
// model's transform_stacks, as its payload shows it (a stack merge leaves empty is the "(no Ruby
// frames)" root).
TEST(PageViews, TheTransformedTreeIsTheModelsTransform) {
  Profile p = sample_profile();
  StackTree tree = build_stack_tree(p, p.aggregated_samples(), StackTreeOptions());
  PageRows page = page_of(p, tree);
  using Op = StackTransform::Op;
  const std::vector<std::vector<StackTransform>> lists = {
      {{Op::kFocus, "a", "a.rb"}},  {{Op::kMerge, "a", "a.rb"}},  {{Op::kDrop, "b", "b.rb"}},
      {{Op::kRecursion, "", ""}},   {{Op::kAppFirst, "", ""}},    {{Op::kMerge, "main", "m.rb"}, {Op::kMerge, "a", "a.rb"}, {Op::kRecursion, "", ""}},
  };
  ViewLimits limits;
  for (size_t k = 0; k < lists.size(); k++) {
    Profile transformed = p;
    transform_stacks(transformed, lists[k]);
    PageRows server_page = page_of(transformed, build_stack_tree(transformed, transformed.aggregated_samples(), StackTreeOptions()));
    KeptRows every = server_page.select(RowKind::kSamples, SampleFilter());
    Profile server = rperf::page::profile_of_rows(server_page, RowKind::kSamples, every);
    rperf::page::TransformedTree t = rperf::page::transform_tree(page, lists[k]);
    ASSERT_EQ(page.node_count(), t.node_map.size()) << k;
    PageRows shown;
    ASSERT_TRUE(shown.set_tree(t.parents, t.node_frames)) << k;
    shown.set_label_sets(page.label_sets());
    std::vector<std::string> labels, paths;
    for (const auto& [label, path] : t.frames) {
      labels.push_back(label);
      paths.push_back(path);
    }
    shown.set_frames(labels, paths, t.frame_lines);
    Rows rows;
    const Rows& old = page.rows(RowKind::kSamples);
    for (size_t i = 0; i < old.size(); i++) {
      if (t.node_map[old.node[i]] < 0) continue;
      rows.node.push_back(static_cast<uint32_t>(t.node_map[old.node[i]]));
      rows.thread_seq.push_back(old.thread_seq[i]);
      rows.label_set.push_back(old.label_set[i]);
      rows.weight.push_back(old.weight[i]);
    }
    ASSERT_TRUE(shown.set_rows(RowKind::kSamples, rows)) << k;
    KeptRows kept = shown.select(RowKind::kSamples, SampleFilter());
    Profile page_profile = rperf::page::profile_of_rows(shown, RowKind::kSamples, kept);
    EXPECT_EQ(rperf::page::call_tree_json(server, false, limits), rperf::page::call_tree_json(page_profile, false, limits)) << k;
    EXPECT_EQ(rperf::page::method_table_json(server, limits), rperf::page::method_table_json(page_profile, limits)) << k;
    // The snapshot the model makes of them (transform_snapshot, the page's) is the same.
    rperf::page::TransformedSnapshot made = rperf::page::transform_snapshot(page, lists[k]);
    EXPECT_EQ(t.node_map, made.tree.node_map) << k;
    EXPECT_EQ(rows.node, made.rows.rows(RowKind::kSamples).node) << k;
    Profile made_profile = rperf::page::profile_of_rows(made.rows, RowKind::kSamples, made.rows.select(RowKind::kSamples, SampleFilter()));
    EXPECT_EQ(rperf::page::call_tree_json(server, false, limits), rperf::page::call_tree_json(made_profile, false, limits)) << k;
  }
  rperf::page::TransformedTree merged = rperf::page::transform_tree(page, {{Op::kMerge, "main", "m.rb"}});
  EXPECT_NE(merged.frames.end(), std::find(merged.frames.begin(), merged.frames.end(), std::make_pair(std::string(StackTree::kNoFramesLabel), std::string())))
      << "a stack merge leaves empty is the (no Ruby frames) root";
  StackTransform::Op op;
  EXPECT_TRUE(stack_transform_op("focus", true, op));
  EXPECT_EQ(Op::kFocus, op);
  EXPECT_TRUE(stack_transform_op("app", false, op));
  EXPECT_EQ(Op::kAppFirst, op);
  EXPECT_FALSE(stack_transform_op("focus", false, op));
  EXPECT_FALSE(stack_transform_op("eval", true, op));
}

// The Source tab's lines: the kept rows made a profile at line level from the payload's line
// tree give the model's source_lines of the same samples, under each filter.
TEST(PageViews, TheSourceLinesOfKeptRowsAreTheModels) {
  Profile p = sample_profile();
  StackTreeOptions options;
  options.lines = true;
  StackTree tree = build_stack_tree(p, p.aggregated_samples(), options);
  ASSERT_EQ(tree.rows.size(), tree.row_line_nodes.size());
  PageRows page = page_of(p, tree);
  ASSERT_TRUE(page.set_line_tree(tree.line_parents, tree.line_frames, tree.line_lines));
  Rows rows = page.rows(RowKind::kSamples);
  rows.line_node = tree.row_line_nodes;
  ASSERT_TRUE(page.set_rows(RowKind::kSamples, rows));
  std::vector<SampleFilter> filters(3);
  filters[1].by_thread = true;
  filters[1].thread = 2;
  filters[2].by_label_sets = true;
  filters[2].label_sets = {2};
  for (size_t f = 0; f < filters.size(); f++) {
    for (const char* path : {"a.rb", "r.rb", "m.rb"}) {
      KeptRows kept = page.select(RowKind::kSamples, filters[f]);
      SourceLines shown = page.source_lines(RowKind::kSamples, kept, path);
      Profile aggregated = p;
      aggregated.samples = p.aggregated_samples();
      SourceLines model = source_lines(aggregated, filters[f], path);
      EXPECT_EQ(model.kept_ns, shown.kept_ns) << f << path;
      ASSERT_EQ(model.lines.size(), shown.lines.size()) << f << path;
      for (size_t i = 0; i < model.lines.size(); i++) {
        EXPECT_EQ(model.lines[i].line, shown.lines[i].line) << f << path;
        EXPECT_EQ(model.lines[i].self_ns, shown.lines[i].self_ns) << f << path;
        EXPECT_EQ(model.lines[i].total_ns, shown.lines[i].total_ns) << f << path;
      }
    }
  }
  KeptRows all = page.select(RowKind::kSamples, SampleFilter());
  SourceLines a = page.source_lines(RowKind::kSamples, all, "a.rb");
  ASSERT_EQ(2u, a.lines.size());
  EXPECT_EQ(12, a.lines[0].line);
  EXPECT_EQ(14, a.lines[1].line);
  EXPECT_FALSE(page.set_line_tree({0}, {0}, {1})) << "a parent after its child";
}
