// The profile model without Ruby: tables, aggregation, the transformations, the summary, and
// the JSON round trip through the loader.
#include <gtest/gtest.h>

#include <cstring>

#include "io/encoders.hh"
#include "io/loader.hh"
#include "io/output.hh"
#include "profile/transform.hh"
#include "test_profiles.hh"
#include "views/functions.hh"
#include "views/summary.hh"

using namespace rperf;
using namespace rperf::fixtures;

namespace {
std::string to_json(const Profile& p) {
  std::string s;
  Output out(&s, OutputOptions());
  encode_json(p, JsonValue::object(), out);
  EXPECT_EQ(out.finish(), 0);
  return s;
}

int64_t weight_of(const Profile& p, const std::string& stack) {
  int64_t w = 0;
  for (const Sample& s : p.samples) {
    if (stack_text(p, s.stack) == stack) w += s.weight_ns;
  }
  return w;
}
}  // namespace

TEST(Tables, InternByContent) {
  Profile p;
  uint32_t a = p.frames.intern("a.rb", "A#x", 3);
  EXPECT_EQ(p.frames.intern(std::string("a.rb"), std::string("A#x"), 3), a);
  EXPECT_NE(p.frames.intern("a.rb", "A#x", 4), a);
  EXPECT_NE(p.frames.intern("b.rb", "A#x", 3), a);
  uint32_t s = p.stacks.intern(std::vector<uint32_t>{a, 1, 2});
  EXPECT_EQ(p.stacks.intern(std::vector<uint32_t>{a, 1, 2}), s);
  EXPECT_NE(p.stacks.intern(std::vector<uint32_t>{a, 1}), s);
  EXPECT_EQ(p.stacks[s].size(), 3u);
  uint32_t empty = p.stacks.intern(std::vector<uint32_t>{});
  EXPECT_TRUE(p.stacks[empty].empty());
  EXPECT_EQ(p.label_sets.intern({}), 0u);  // id 0 is always the empty set
  uint32_t x = p.label_sets.intern(labels({{"endpoint", "/x", false}}));
  EXPECT_EQ(p.label_sets.with(0, labels({{"endpoint", "/x", false}})[0]), x);
  uint32_t y = p.label_sets.with(x, labels({{"endpoint", "/y", false}})[0]);  // replaces the key's value
  ASSERT_EQ(p.label_sets[y].size(), 1u);
  EXPECT_EQ(text(p.label_sets[y][0].value), "/y");
}

// Labels given in another order are the same set (Ruby's Hash equality, rperf 0.11's interning):
// one id, the first order kept; a different value or an Integer for a String is another set.
TEST(Tables, LabelSetsInternWhateverTheOrder) {
  LabelSetTable t;
  uint32_t ba = t.intern(labels({{"b", "2", true}, {"a", "1", true}}));
  EXPECT_EQ(t.intern(labels({{"a", "1", true}, {"b", "2", true}})), ba);
  EXPECT_EQ(text(t[ba][0].key), "b");
  EXPECT_EQ(t.with(t.intern(labels({{"a", "1", true}})), labels({{"b", "2", true}})[0]), ba);
  EXPECT_NE(t.intern(labels({{"a", "1", true}, {"b", "3", true}})), ba);
  EXPECT_NE(t.intern(labels({{"a", "1", false}, {"b", "2", true}})), ba);
  EXPECT_NE(t.intern(labels({{"a", "1", true}})), ba);
  EXPECT_NE(t.intern(labels({{"a", "1", true}, {"b", "2", true}, {"c", "3", true}})), ba);
  EXPECT_EQ(t.size(), 6u);  // {}, {b,a}, {a}, {a,b=3}, {a="1",b}, {a,b,c}
}

TEST(Tables, ManyEntriesSurviveGrowth) {
  FrameTable t;
  for (int i = 0; i < 50000; i++) EXPECT_EQ(t.intern("f.rb", "m" + std::to_string(i), i % 7), static_cast<uint32_t>(i));
  for (int i = 0; i < 50000; i++) EXPECT_EQ(t.intern("f.rb", "m" + std::to_string(i), i % 7), static_cast<uint32_t>(i));
}

// The batched lookup (hash, prefetches, intern_hashed) and reserve() give the same ids.
TEST(Tables, HashedInternAndReserveKeepIds) {
  FrameTable t;
  StackTable stacks;
  for (int i = 0; i < 1000; i++) stacks.intern(std::vector<uint32_t>{static_cast<uint32_t>(i), 1});
  stacks.reserve(100000, 400000);  // rehashes the existing entries
  for (int i = 0; i < 1000; i++) EXPECT_EQ(stacks.intern(std::vector<uint32_t>{static_cast<uint32_t>(i), 1}), static_cast<uint32_t>(i));
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < 30000; i++) {
      std::string label = "m" + std::to_string(i);
      uint64_t h = FrameTable::hash("f.rb", 4, label.data(), label.size(), i % 5);
      t.prefetch(h);
      t.prefetch_offset(h);
      t.prefetch_key(h);
      EXPECT_EQ(t.intern_hashed(h, "f.rb", 4, label.data(), label.size(), i % 5), static_cast<uint32_t>(i));
    }
  }
  EXPECT_EQ(t.intern("f.rb", "m7", 2), 7u);
}

TEST(SampleAggregator, SumsPerKeyInOrderOfFirstAppearance) {
  SampleAggregator agg;
  agg.add({1, 1, 0, kRunning, 10, 5});
  agg.add({2, 1, 0, kRunning, 1, 6});
  agg.add({1, 1, 0, kRunning, 20, 7});
  agg.add({1, 2, 0, kRunning, 3, 8});       // another thread
  agg.add({1, 1, 0, kGvlBlocked, 4, 9});    // another state
  ASSERT_EQ(agg.samples().size(), 4u);
  EXPECT_EQ(agg.samples()[0].weight_ns, 30);
  EXPECT_EQ(agg.samples()[0].time_ns, 5);  // the first one's time
  EXPECT_EQ(agg.samples()[1].stack, 2u);
  std::vector<Sample> taken = agg.take();
  EXPECT_EQ(taken.size(), 4u);
  EXPECT_TRUE(agg.samples().empty());
}

TEST(Transform, FoldLinesMergesFramesAndSamplesOfOneMethod) {
  Profile p = make_profile({{"a.rb", "fib", 1}, {"a.rb", "fib", 2}, {"a.rb", "<main>", 9}},
                           {{{0, 2}, 100}, {{1, 2}, 50}, {{0, 1, 2}, 25}});
  p.frames.at(0).start_line = 1;
  fold_lines(p);
  EXPECT_FALSE(p.has_lines);
  EXPECT_EQ(p.frames.size(), 2u);
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(weight_of(p, "<main>:0;fib:0"), 150);
  EXPECT_EQ(weight_of(p, "<main>:0;fib:0;fib:0"), 25);
  EXPECT_EQ(p.frames[p.stacks[p.samples[0].stack][0]].start_line, 1);
  EXPECT_EQ(p.total_weight(), 175);
}

TEST(Transform, FoldLinesKeepsRawSamples) {
  Profile p = make_profile({{"a.rb", "f", 1}, {"a.rb", "f", 2}}, {{{0}, 1, 1, 0, kRunning, 10}, {{1}, 2, 1, 0, kRunning, 20}});
  p.timestamps = true;
  fold_lines(p);
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(p.samples[1].time_ns, 20);
  EXPECT_EQ(p.aggregated_samples().size(), 1u);
  EXPECT_EQ(p.aggregated_samples()[0].weight_ns, 3);
}

// The Viewer's stack transforms, one at a time and chained; names matched as the page shows
// them (valid UTF-8), at method level.
// "App code first": each run of gem and stdlib frames (with the C methods they call) is one
// [framework] frame; the app's frames, and C methods the app calls, stay.
TEST(Transform, AppFirstMakesEachFrameworkRunOneFrame) {
  const char* gem = "/bundle/gems/rack-3.1.8/lib/rack/x.rb";
  const char* stdlib = "/usr/lib/ruby/3.3.0/monitor.rb";
  Profile p = make_profile({{"app.rb", "main", 1},          // 0
                            {gem, "Rack::A#call", 2},       // 1
                            {"<C method>", "Array#each", 0},  // 2: called by the gem
                            {stdlib, "Monitor#synchronize", 3},  // 3
                            {"app.rb", "Controller#show", 4},    // 4
                            {gem, "ActiveRecord#find", 5},       // 5
                            {"<C method>", "String#gsub", 0}},   // 6: called by the app
                           {{{5, 4, 3, 2, 1, 0}, 10}, {{6, 4, 3, 1, 0}, 20}, {{1, 0}, 5}});
  transform_stacks(p, {StackTransform{StackTransform::Op::kAppFirst, "", ""}});
  EXPECT_EQ(weight_of(p, "main:1;[framework]:0;Controller#show:4;[framework]:0"), 10);
  EXPECT_EQ(weight_of(p, "main:1;[framework]:0;Controller#show:4;String#gsub:0"), 20);
  EXPECT_EQ(weight_of(p, "main:1;[framework]:0"), 5);
  EXPECT_EQ(p.total_weight(), 35);
  // Another transform after it sees the [framework] frame as any other.
  transform_stacks(p, {StackTransform{StackTransform::Op::kFocus, kFrameworkFrame, kFrameworkPath}});
  EXPECT_EQ(p.total_weight(), 35);
}

TEST(Transform, FocusMergeDropAndRecursionOnEveryStack) {
  auto profile = [] {
    return make_profile({{"a.rb", "main", 1}, {"a.rb", "handle", 5}, {"a.rb", "handle", 6}, {"v.rb", "render", 2}, {"x.rb", "bad\xff", 3}},
                        {{{3, 1, 0}, 10}, {{3, 2, 1, 0}, 20}, {{0}, 5}, {{4, 0}, 7}});
  };
  auto op = [](StackTransform::Op o, const char* label = "", const char* path = "") { return StackTransform{o, label, path}; };
  using Op = StackTransform::Op;

  Profile focus = profile();
  transform_stacks(focus, {op(Op::kFocus, "handle", "a.rb")});
  EXPECT_EQ(focus.total_weight(), 30);
  EXPECT_EQ(weight_of(focus, "handle:5;render:2"), 10);
  EXPECT_EQ(weight_of(focus, "handle:5;handle:6;render:2"), 20);  // cut at the outermost call

  Profile callers = profile();  // from the outermost handle up to the root
  transform_stacks(callers, {op(Op::kCallers, "handle", "a.rb")});
  EXPECT_EQ(weight_of(callers, "main:1;handle:5"), 30);
  EXPECT_EQ(callers.samples.size(), 1u);

  Profile merge = profile();
  transform_stacks(merge, {op(Op::kMerge, "handle", "a.rb")});
  ASSERT_EQ(merge.samples.size(), 3u);  // the two render stacks are one now
  EXPECT_EQ(weight_of(merge, "main:1;render:2"), 30);
  EXPECT_EQ(merge.total_weight(), 42);

  Profile drop = profile();
  transform_stacks(drop, {op(Op::kDrop, "render", "v.rb")});
  EXPECT_EQ(drop.total_weight(), 12);

  Profile recursion = profile();
  transform_stacks(recursion, {op(Op::kRecursion)});
  EXPECT_EQ(weight_of(recursion, "main:1;handle:6;render:2"), 20);
  EXPECT_EQ(weight_of(recursion, "main:1;handle:5;render:2"), 10);

  Profile invalid = profile();  // the page knows "bad\xff" as "bad" U+FFFD
  transform_stacks(invalid, {op(Op::kFocus, "bad\xef\xbf\xbd", "x.rb")});
  EXPECT_EQ(invalid.total_weight(), 7);
  EXPECT_EQ(invalid.samples.size(), 1u);

  Profile chained = profile();
  transform_stacks(chained, {op(Op::kRecursion), op(Op::kFocus, "handle", "a.rb"), op(Op::kMerge, "render", "v.rb")});
  EXPECT_EQ(chained.samples.size(), 2u);
  EXPECT_EQ(weight_of(chained, "handle:5"), 10);
  EXPECT_EQ(weight_of(chained, "handle:6"), 20);

  Profile raw = make_profile({{"a.rb", "f", 1}, {"a.rb", "g", 2}}, {{{0, 1}, 1, 1, 0, kRunning, 10}, {{0}, 2, 1, 0, kRunning, 20}, {{1}, 4, 1, 0, kRunning, 30}});
  raw.timestamps = true;
  transform_stacks(raw, {op(Op::kDrop, "g", "a.rb")});
  ASSERT_EQ(raw.samples.size(), 1u);
  EXPECT_EQ(raw.samples[0].time_ns, 20);
}

TEST(Transform, VmStatesBecomeLabelsMergedWithTheThreadsLabels) {
  Profile p = make_profile({{"a.rb", "io", 1}}, {{{0}, 5, 1, 1, kGvlBlocked}, {{0}, 6, 1, 0, kGcSweep}, {{0}, 7}},
                           {{}, {{"endpoint", "/x", false}}});
  apply_vm_states(p, false);
  const LabelSet& blocked = p.label_sets[p.samples[0].label_set];
  ASSERT_EQ(blocked.size(), 2u);
  EXPECT_EQ(text(blocked[0].key), "endpoint");
  EXPECT_EQ(blocked[1].key, label_value::symbol("%GVL"));
  EXPECT_EQ(blocked[1].value, label_value::string("blocked"));
  EXPECT_EQ(text(p.label_sets[p.samples[1].label_set][0].value), "sweep");
  EXPECT_EQ(p.samples[2].label_set, 0u);
}

TEST(Transform, VmStatesAsFramesAndInferredBack) {
  Profile p = make_profile({{"a.rb", "io", 1}}, {{{0}, 5, 1, 0, kGvlWait}, {{0}, 7}});
  apply_vm_states(p, true);
  EXPECT_EQ(stack_text(p, p.samples[0].stack), "io:1;[GVL wait]:0");
  EXPECT_EQ(p.samples[0].label_set, 0u);
  for (Sample& s : p.samples) s.vm_state = kRunning;
  infer_vm_states(p);
  EXPECT_EQ(p.samples[0].vm_state, kGvlWait);
  EXPECT_EQ(p.samples[1].vm_state, kRunning);
}

TEST(Transform, MergeChildLabelsOnlyTheChildAndSumsCounters) {
  Profile root = make_profile({{"a.rb", "root", 1}}, {{{0}, 100}});
  root.header.set("sampling_count", JsonValue::integer(3));
  root.header.set("duration_ns", JsonValue::integer(500));
  Profile child = make_profile({{"b.rb", "child", 2}, {"a.rb", "root", 1}}, {{{0, 1}, 40, 1, 1}, {{1}, 2}},
                               {{}, {{"job", "X", false}}});
  child.header.set("sampling_count", JsonValue::integer(4));
  child.header.set("duration_ns", JsonValue::integer(300));
  merge_child(root, child, "4242");
  EXPECT_EQ(root.header.duration_ns.value_or(0), 500);        // the longest process
  EXPECT_EQ(root.header.total_duration_ns.value_or(0), 800);  // every process
  merge_child(root, child, "4243");
  EXPECT_EQ(root.header.total_duration_ns.value_or(0), 1100);
  EXPECT_EQ(root.header.process_count.value_or(0), 3);
  EXPECT_EQ(root.total_weight(), 184);
  EXPECT_EQ(root.header.sampling_count.value_or(0), 11);
  EXPECT_EQ(root.samples[0].label_set, 0u);  // the root's own samples keep their labels
  const LabelSet& job = root.label_sets[root.samples[1].label_set];
  ASSERT_EQ(job.size(), 2u);
  EXPECT_EQ(job[1].key, label_value::symbol("%pid"));
  EXPECT_EQ(job[1].value, label_value::string("4242"));
  EXPECT_EQ(weight_of(root, "root:1"), 104);  // same frame, three processes: one stack, three label sets
}

TEST(Transform, MergeChildPutsRawTimesOnTheRootsClock) {
  Profile root = make_profile({{"a.rb", "root", 1}}, {{{0}, 100, 1, 0, kRunning, 1000}});
  root.timestamps = true;
  root.header.set("start_time_ns", JsonValue::integer(5000000));
  Profile child = make_profile({{"b.rb", "child", 2}}, {{{0}, 40, 1, 0, kRunning, 700}});
  child.timestamps = true;
  child.header.set("start_time_ns", JsonValue::integer(5002000));  // started 2 us after the root
  merge_child(root, child, "4242");
  ASSERT_EQ(root.samples.size(), 2u);
  EXPECT_EQ(root.samples[0].time_ns, 1000);
  EXPECT_EQ(root.samples[1].time_ns, 2700);
}

TEST(Summary, FieldsOfRperf011) {
  Profile p = make_profile({{"a.rb", "fib", 1}, {"b.rb", "fib", 1}, {"a.rb", "<main>", 9}}, {{{0, 2}, 75}, {{1, 2}, 25}});
  p.header.set("duration_ns", JsonValue::integer(123456789));
  p.header.set("user_ns", JsonValue::integer(1000000));
  p.header.set("sampling_count", JsonValue::integer(9));
  JsonValue gc = JsonValue::object();
  gc.set("minor_count", JsonValue::integer(2));
  gc.set("time_ms", JsonValue::integer(5));
  p.header.set("gc_stats", gc);
  JsonValue s = summarize(p);
  EXPECT_DOUBLE_EQ(s.get("total_ms")->as_double(), 123.5);
  EXPECT_DOUBLE_EQ(s.get("cpu_ms")->as_double(), 1.0);
  EXPECT_EQ(s.get("gc_count_minor")->as_int(), 2);
  EXPECT_EQ(s.get("samples")->as_int(), 9);
  const JsonValue* top = s.get("top_methods");
  ASSERT_EQ(top->items().size(), 1u);  // fib in two files: one name; <main> has no self time
  EXPECT_EQ(top->items()[0].get("name")->as_string(), "fib");
  EXPECT_DOUBLE_EQ(top->items()[0].get("self_pct")->as_double(), 100.0);
}

TEST(Functions, TotalCountsARecursiveFunctionOncePerSample) {
  Profile p = make_profile({{"a.rb", "fib", 1}, {"a.rb", "fib", 2}, {"a.rb", "<main>", 1}}, {{{0, 1, 0, 2}, 100}});
  FunctionTotals t = function_totals(p);
  ASSERT_EQ(t.first_frame.size(), 2u);
  EXPECT_EQ(t.self_ns[0], 100);
  EXPECT_EQ(t.total_ns[0], 100);
  EXPECT_EQ(t.total_ns[1], 100);
}

TEST(Loader, JsonRoundTripKeepsEverything) {
  Profile p = make_profile({{"a.rb", "M#x", 3}, {"<C method>", "sleep\"q", 0}}, {{{1, 0}, 5, 2, 1}, {{0}, 7, 1, 0}},
                           {{}, {{"endpoint", "/é", false}, {"id", "42", true}}});
  p.frames.at(0).start_line = 2;
  p.header.set("duration_ns", JsonValue::integer(99));
  JsonValue meta = JsonValue::object();
  meta.set("format_version", JsonValue::integer(1));
  p.header.meta = meta;
  std::string json = to_json(p);
  Profile q;
  std::string error;
  ASSERT_TRUE(load_json_profile(json.data(), json.size(), q, error)) << error;
  EXPECT_EQ(to_json(q), json);
  EXPECT_EQ(q.mode(), "wall");
  EXPECT_EQ(q.label_sets[1][1].value, label_value::integer(42));
  EXPECT_EQ(q.frames[q.stacks[q.samples[1].stack][0]].start_line, 2);
  JsonValue m, s;
  ASSERT_TRUE(read_json_head(json.data(), 60, m, s) || read_json_head(json.data(), json.size(), m, s));
  ASSERT_TRUE(read_json_head(json.data(), json.size(), m, s));
  EXPECT_EQ(m.int_or("format_version", 0), 1);
  EXPECT_TRUE(s.get("top_methods"));
}

TEST(Loader, RawSamplesKeepTimesAndStates) {
  Profile p = make_profile({{"a.rb", "f", 1}}, {{{0}, 5, 1, 0, kGvlWait, 100}, {{0}, 6, 1, 0, kRunning, 200}});
  p.timestamps = true;
  std::string json = to_json(p);
  Profile q;
  std::string error;
  ASSERT_TRUE(load_json_profile(json.data(), json.size(), q, error)) << error;
  ASSERT_TRUE(q.timestamps);
  ASSERT_EQ(q.samples.size(), 2u);
  EXPECT_EQ(q.samples[0].vm_state, kGvlWait);
  EXPECT_EQ(q.samples[1].time_ns, 200);
}

TEST(Loader, MalformedProfilesSayWhat) {
  const std::pair<const char*, const char*> cases[] = {
      {"[]", "not an rperf profile"},
      {"{\"mode\":\"cpu\"}", "not an rperf profile"},
      {"{\"aggregated_samples\":[[[[\"a\"]],1,1,0]]}", "frame is not"},
      {"{\"aggregated_samples\":[[[],\"x\",1,0]]}", "sample is not"},
      {"{\"aggregated_samples\":[[[],1,1,3]],\"label_sets\":[{}]}", "aggregated_samples[0]: label_set_id 3 has no label set (ids: 0 to 0)"},
      {"{\"aggregated_samples\":[],\"label_sets\":[[1]]}", "label_sets is not an array of objects"},
      {"{\"aggregated_samples\":[", "invalid JSON"},
  };
  for (const auto& [doc, message] : cases) {
    Profile q;
    std::string error;
    EXPECT_FALSE(load_json_profile(doc, std::strlen(doc), q, error)) << doc;
    EXPECT_NE(error.find(message), std::string::npos) << doc << " -> " << error;
  }
}

// The byte offset in a loader error ("... at byte N"), or -1.
long error_offset(const std::string& error) {
  size_t at = error.rfind("at byte ");
  return at == std::string::npos ? -1 : std::stol(error.substr(at + 8));
}

std::string repeated(const char* piece, size_t times) {
  std::string s;
  s.reserve(std::strlen(piece) * times);
  for (size_t i = 0; i < times; i++) s += piece;
  return s;
}

// Issue 30 (3): 512 MiB of "[]," grew to 11 GB before failing. A value that is not what its
// place in a profile holds now stops the parse when it ends, and arbitrary trees are budgeted.
TEST(Loader, RefusesAJsonBombWhereItStarts) {
  const std::string bombs = repeated("[],", 1 << 20) + "[]";  // 3 MiB of empty arrays
  const std::pair<std::string, const char*> cases[] = {
      {"[" + bombs + "]", "not an rperf profile"},
      {"{\"aggregated_samples\":[" + bombs + "]}", "sample is not"},
      {"{\"aggregated_samples\":[],\"raw_samples\":[" + bombs + "]}", "raw sample is not"},
      {"{\"aggregated_samples\":[[" + bombs + "]]}", "sample is not"},     // in a row
      {"{\"aggregated_samples\":[[[" + bombs + "]]]}", "frame is not"},    // in a row's stack
      {"{\"aggregated_samples\":[[[[" + bombs + "]]]]}", "frame is not"},   // in a frame
      {"{\"label_sets\":[" + bombs + "]}", "label_sets is not an array of objects"},
      {"{\"allocation_samples\":[" + bombs + "]}", "allocation sample is not"},
      {"{\"function_start_lines\":[" + bombs + "]}", "function_start_lines"},
  };
  for (const auto& [doc, message] : cases) {
    Profile q;
    std::string error;
    EXPECT_FALSE(load_json_profile(doc.data(), doc.size(), q, error));
    EXPECT_NE(error.find(message), std::string::npos) << error;
    long at = error_offset(error);
    EXPECT_GE(at, 0) << error;
    EXPECT_LT(at, 64) << error;  // at the first bad value, not after the whole document
  }
  // A label's value may be any JSON (rperf 0.11 keeps what Rperf.label was given): a bomb there
  // is bounded by the document's memory budget.
  const std::string in_label = "{\"label_sets\":[{\"k\":[" + bombs + "]}]}";
  Profile q;
  std::string error;
  EXPECT_FALSE(load_json_profile(in_label.data(), in_label.size(), q, error));
  EXPECT_NE(error.find("over the loader's memory budget"), std::string::npos) << error;
}

TEST(Loader, BudgetsArbitraryTrees) {
  // In meta (any shape is allowed there): stopped once the tree holds 128 MiB, long before
  // the end of the 12 MiB document (each "[]" is a node of ~100 bytes).
  std::string doc = "{\"meta\":{\"x\":[" + repeated("[],", 4 << 20) + "[]]},\"aggregated_samples\":[]}";
  Profile q;
  std::string error;
  EXPECT_FALSE(load_json_profile(doc.data(), doc.size(), q, error));
  EXPECT_NE(error.find("not an rperf profile (its meta, summary and attributes hold over 128 MiB)"), std::string::npos) << error;
  EXPECT_GT(error_offset(error), 1 << 20);
  EXPECT_LT(error_offset(error), static_cast<long>(doc.size() * 3 / 4)) << error;
  // Any JSON: 64 MiB + 8 bytes per byte of input.
  std::string any = "[" + repeated("[],", 4 << 20) + "[]]";
  JsonValue v;
  EXPECT_FALSE(parse_json(any.data(), any.size(), v, error));
  EXPECT_NE(error.find("over the loader's memory budget (160 MiB"), std::string::npos) << error;
  std::string small = "[" + repeated("[],", 1000) + "[]]";
  EXPECT_TRUE(parse_json(small.data(), small.size(), v, error)) << error;
}

TEST(Loader, BodyChecksAcceptWhatRperfWrites) {
  // Many label sets (empty ones too), raw rows with states, allocations, start lines, and an
  // aggregated_samples ignored beside raw_samples: all still load.
  std::string doc =
      "{\"meta\":{\"a\":[[],{},[1,[2]]]},\"mode\":\"wall\",\"aggregated_samples\":[[[[\"a.rb\",\"f\",1]],5,1,1]],"
      "\"label_sets\":[{},{\"k\":\"v\",\"n\":3},{}],"
      "\"allocation_samples\":[[[[\"a.rb\",\"f\",1]],2,1,0,\"String\",1],[[],1,1,2,\"Array\",0]],"
      "\"function_start_lines\":[[\"a.rb\",\"f\",1]]}";
  Profile q;
  std::string error;
  ASSERT_TRUE(load_json_profile(doc.data(), doc.size(), q, error)) << error;
  EXPECT_EQ(q.samples.size(), 1u);
  EXPECT_EQ(q.allocations.size(), 2u);
  EXPECT_EQ(q.label_sets.size(), 2u);
  std::string raw =
      "{\"aggregated_samples\":[[[[\"a.rb\",\"f\"]],5,1,0]],\"raw_samples\":[[[[\"a.rb\",\"f\"]],5,1,0,2,100],[[],6,1,0,0,200]]}";
  Profile r;
  ASSERT_TRUE(load_json_profile(raw.data(), raw.size(), r, error)) << error;
  EXPECT_EQ(r.samples.size(), 2u);
}

TEST(Loader, SniffsJsonAndPprof) {
  EXPECT_EQ(sniff_file_kind("  {\"a\":1}", 9), FileKind::kJson);
  EXPECT_EQ(sniff_file_kind("\n\x04", 2), FileKind::kPprof);
  EXPECT_EQ(sniff_file_kind("hello", 5), FileKind::kUnknown);
  // JSON after line breaks is JSON; a pprof sample type (length, then field 1: 0x08) is pprof.
  EXPECT_EQ(sniff_file_kind("\n\n {\"a\":1}", 10), FileKind::kJson);
  EXPECT_EQ(sniff_file_kind("\r\n\t{}", 5), FileKind::kJson);
  EXPECT_EQ(sniff_file_kind("\n\x04\x08\x01\x10\x02", 6), FileKind::kPprof);
}

namespace rperf {
namespace {
// Issue 30 (9): past the cap a new label set folds into its keys with "(other)" values; known
// sets keep their ids; the fold is counted.
TEST(Tables, LabelSetsFoldIntoOtherPastTheCap) {
  LabelSetTable t;  // holds {} already
  uint32_t a = t.intern_bounded(labels({{"endpoint", "GET /a", false}}), 3);
  uint32_t b = t.intern_bounded(labels({{"endpoint", "GET /b", false}}), 3);
  EXPECT_EQ(t.size(), 3u);
  uint32_t c = t.intern_bounded(labels({{"endpoint", "GET /scan/1", false}}), 3);
  uint32_t d = t.intern_bounded(labels({{"endpoint", "GET /scan/2", false}}), 3);
  EXPECT_EQ(c, d);
  EXPECT_EQ(text(t[c][0].key), "endpoint");
  EXPECT_EQ(t[c][0].value, label_value::string(kOtherLabelValue));
  EXPECT_EQ(t.intern_bounded(labels({{"endpoint", "GET /a", false}}), 3), a);
  EXPECT_EQ(t.intern_bounded(labels({{"endpoint", "GET /b", false}}), 3), b);
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(t.overflowed(), 2u);
  for (int i = 0; i < 1000; i++) t.intern_bounded(labels({{"endpoint", "x" + std::to_string(i), false}, {"id", std::to_string(i), true}}), 3);
  EXPECT_EQ(t.size(), 5u);  // plus {endpoint: (other), id: (other)}
}
}  // namespace
}  // namespace rperf
