// Allocation profiling's Ruby-independent parts: the geometric gaps, the live-object table, the
// model's allocation samples through folding, merging, JSON and pprof.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <unordered_map>

#include "heap_allocations.hh"
#include "io/encoders.hh"
#include "io/loader.hh"
#include "io/output.hh"
#include "profile/transform.hh"
#include "sampler/live_objects.hh"
#include "test_profiles.hh"
#include "util/geometric_gaps.hh"
#include "views/functions.hh"
#include "views/summary.hh"

using namespace rperf;
using namespace rperf::fixtures;

namespace {

// Two line-level frames of Foo#make and a caller; allocation samples of two classes.
Profile allocation_profile() {
  Profile p = make_profile({{"a.rb", "<main>", 1}, {"a.rb", "Foo#make", 10}, {"a.rb", "Foo#make", 11}}, {{{1, 0}, 100}},
                           {{}, {{"endpoint", "/x"}}});
  p.header.set("allocation_interval", JsonValue::integer(64));
  uint32_t s10 = p.stacks.intern({1, 0});
  uint32_t s11 = p.stacks.intern({2, 0});
  uint32_t str = p.class_names.intern("String");
  uint32_t ary = p.class_names.intern("Array");
  p.allocations.push_back({s10, 1, 0, str, 640, 128});
  p.allocations.push_back({s11, 1, 0, str, 320, 0});
  p.allocations.push_back({s11, 2, 1, ary, 64, 64});
  return p;
}

int64_t count_of(const Profile& p, const std::string& cls, int64_t AllocationSample::*field) {
  int64_t n = 0;
  for (const AllocationSample& a : p.allocations) {
    if (p.class_names[static_cast<uint32_t>(a.type)] == cls) n += a.*field;
  }
  return n;
}

std::string render_json(const Profile& p) {
  std::string s;
  Output out(&s, OutputOptions());
  encode_json(p, JsonValue::object(), out);
  EXPECT_EQ(out.finish(), 0);
  return s;
}

}  // namespace

TEST(GeometricGaps, MeanIsTheIntervalAndGapsVary) {
  for (uint32_t interval : {1u, 64u, 4096u}) {
    GeometricGaps gaps(interval, 42);
    const int n = 200000;
    double sum = 0;
    uint64_t min = ~0ULL, max = 0;
    for (int i = 0; i < n; i++) {
      uint64_t g = gaps.next();
      ASSERT_GE(g, 1u);
      sum += static_cast<double>(g);
      min = std::min(min, g);
      max = std::max(max, g);
    }
    // The mean of n gaps has a standard deviation of sqrt(interval^2 - interval) / sqrt(n):
    // within 5 of them.
    double sd = std::sqrt((static_cast<double>(interval) * interval - interval) / n);
    EXPECT_NEAR(sum / n, interval, 5 * sd + 1e-9) << interval;
    if (interval > 1) {
      EXPECT_LT(min, max);  // not a fixed period
    }
  }
}

TEST(LiveObjects, InsertEraseAndSlotsAreRecycled) {
  LiveObjects live;
  std::unordered_map<uint64_t, uint32_t> slots;
  for (uint64_t a = 1; a <= 5000; a++) {
    ASSERT_TRUE(live.reserve_one());
    slots[a * 40] = live.insert(a * 40);
  }
  EXPECT_EQ(live.size(), 5000u);
  for (uint64_t a = 1; a <= 5000; a += 2) EXPECT_TRUE(live.erase(a * 40));
  EXPECT_FALSE(live.erase(40));   // already gone
  EXPECT_FALSE(live.erase(999));  // never tracked
  EXPECT_EQ(live.size(), 2500u);
  size_t seen = 0;
  live.each([&](uint64_t address, uint32_t slot) {
    EXPECT_EQ((address / 40) % 2, 0u);
    EXPECT_EQ(slots[address], slot);
    seen++;
  });
  EXPECT_EQ(seen, 2500u);
  ASSERT_TRUE(live.reserve_one());
  uint32_t reused = live.insert(7);
  EXPECT_LT(reused, 5000u);  // a freed slot, not a new one
}

TEST(LiveObjects, RekeyFollowsMovedObjects) {
  LiveObjects live;
  std::unordered_map<uint64_t, uint32_t> slots;
  for (uint64_t a = 1; a <= 3000; a++) {
    ASSERT_TRUE(live.reserve_one());
    slots[a * 8] = live.insert(a * 8);
  }
  // Compaction moves every third object to a new address.
  auto moved = [](uint64_t a) { return (a / 8) % 3 == 0 ? a + 1000000 : a; };
  size_t capacity = live.capacity();
  live.rekey(moved);
  EXPECT_EQ(live.capacity(), capacity);
  EXPECT_EQ(live.size(), 3000u);
  for (uint64_t a = 1; a <= 3000; a++) {
    uint64_t now = moved(a * 8);
    live.each([&](uint64_t address, uint32_t slot) {
      if (address == now) {
        EXPECT_EQ(slot, slots[a * 8]);
      }
    });
    if (a > 20) break;  // each() is O(n): a sample of them is enough
  }
  EXPECT_FALSE(live.erase(24));          // moved away
  EXPECT_TRUE(live.erase(24 + 1000000));  // freed at its new address
  EXPECT_TRUE(live.erase(16));
}

TEST(LiveObjects, RandomInsertsErasesAndRekeysAgreeWithUnorderedMapWithoutAllocating) {
  LiveObjects live;
  std::unordered_map<uint64_t, uint32_t> model;  // address -> slot
  std::vector<uint64_t> tracked;
  size_t peak = 0;
  uint64_t state = 5;
  auto next = [&] { return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  auto address = [&] { return 40 * (1 + next() % 200000); };
  auto expect_same = [&] {
    ASSERT_EQ(live.size(), model.size());
    std::set<uint32_t> slots;
    size_t seen = 0;
    live.each([&](uint64_t a, uint32_t slot) {
      auto it = model.find(a);
      ASSERT_NE(it, model.end()) << a;
      EXPECT_EQ(it->second, slot);
      EXPECT_TRUE(slots.insert(slot).second);  // slots are unique
      seen++;
    });
    EXPECT_EQ(seen, model.size());
  };
  for (int i = 0; i < 100000; i++) {
    const uint64_t r = next() % 1000;
    if (r < (i < 50000 ? 300u : 100u)) {  // NEWOBJ, sampled: the table grows, then shrinks
      const uint64_t a = address();
      if (model.count(a)) continue;
      ASSERT_TRUE(live.reserve_one());
      const size_t before = rperf_test::heap_allocations();
      const uint32_t slot = live.insert(a);
      ASSERT_EQ(rperf_test::heap_allocations(), before);
      model[a] = slot;
      tracked.push_back(a);
      peak = std::max(peak, model.size());
    } else if (r < 997) {  // FREEOBJ: a tracked object, or (mostly) one never sampled
      uint64_t a = address() + 8;
      if (r % 3 == 0 && !tracked.empty()) {
        const size_t k = next() % tracked.size();
        a = tracked[k];
        tracked[k] = tracked.back();
        tracked.pop_back();
      }
      const size_t before = rperf_test::heap_allocations();
      const bool erased = live.erase(a);
      ASSERT_EQ(rperf_test::heap_allocations(), before);
      ASSERT_EQ(erased, model.erase(a) == 1) << a;
    } else {  // compaction: some objects swap places, some move to free ones
      std::unordered_map<uint64_t, uint64_t> moves;
      std::set<uint64_t> targets;
      for (size_t k = 0; k + 1 < tracked.size(); k += 2) {
        const uint64_t pick = next() % 4;
        if (pick == 0) {
          moves[tracked[k]] = tracked[k + 1];
          moves[tracked[k + 1]] = tracked[k];
          targets.insert(tracked[k]);
          targets.insert(tracked[k + 1]);
        } else if (pick == 1) {
          const uint64_t to = address() + 16;
          if (!model.count(to) && targets.insert(to).second) moves[tracked[k]] = to;
        }
      }
      auto moved = [&](uint64_t a) {
        auto it = moves.find(a);
        return it == moves.end() ? a : it->second;
      };
      const size_t before = rperf_test::heap_allocations();
      live.rekey(moved);
      ASSERT_EQ(rperf_test::heap_allocations(), before);
      std::unordered_map<uint64_t, uint32_t> after;
      for (const auto& [a, slot] : model) after[moved(a)] = slot;
      model.swap(after);
      for (uint64_t& a : tracked) a = moved(a);
      expect_same();
    }
    if (i % 10000 == 0) expect_same();
  }
  expect_same();
  EXPECT_GT(peak, 2048u);  // the slots grew twice
  live.clear();
  EXPECT_EQ(live.size(), 0u);
  EXPECT_FALSE(live.erase(tracked.empty() ? 40 : tracked[0]));
}

TEST(AllocationAggregator, MergesByStackThreadLabelsAndType) {
  AllocationAggregator agg;
  EXPECT_EQ(agg.add({1, 1, 0, 7, 64, 0}), 0u);
  EXPECT_EQ(agg.add({1, 1, 0, 8, 64, 0}), 1u);
  EXPECT_EQ(agg.add({1, 1, 0, 7, 64, 64}), 0u);
  EXPECT_EQ(agg.add({1, 2, 0, 7, 64, 0}), 2u);
  ASSERT_EQ(agg.samples().size(), 3u);
  EXPECT_EQ(agg.samples()[0].count, 128);
  EXPECT_EQ(agg.samples()[0].retained, 64);
}

TEST(Allocations, FoldLinesMergesSitesOfOneMethod) {
  Profile p = allocation_profile();
  fold_lines(p);
  ASSERT_EQ(p.allocations.size(), 2u);  // String at lines 10 and 11 became one method-level site
  EXPECT_EQ(count_of(p, "String", &AllocationSample::count), 960);
  EXPECT_EQ(count_of(p, "String", &AllocationSample::retained), 128);
  EXPECT_EQ(stack_text(p, p.allocations[0].stack), "<main>:0;Foo#make:0");
}

TEST(Allocations, MergeChildLabelsAndSumsThem) {
  Profile root = allocation_profile();
  Profile child = allocation_profile();
  merge_child(root, child, "123");
  EXPECT_EQ(count_of(root, "String", &AllocationSample::count), 1920);
  EXPECT_EQ(count_of(root, "Array", &AllocationSample::retained), 128);
  size_t labelled = 0;
  for (const AllocationSample& a : root.allocations) {
    for (const Label& l : root.label_sets[a.label_set]) labelled += text(l.key) == "%pid" && text(l.value) == "123";
  }
  EXPECT_EQ(labelled, 3u);
}

TEST(Allocations, JsonRoundTrip) {
  Profile p = allocation_profile();
  std::string body = render_json(p);
  EXPECT_NE(body.find("\"allocation_samples\":[[[[\"a.rb\",\"Foo#make\",10],[\"a.rb\",\"<main>\",1]],640,1,0,\"String\",128]"),
            std::string::npos)
      << body;
  Profile back;
  std::string error;
  ASSERT_TRUE(load_json_profile(body.data(), body.size(), back, error)) << error;
  ASSERT_EQ(back.allocations.size(), 3u);
  EXPECT_TRUE(back.has_allocations());
  EXPECT_EQ(count_of(back, "String", &AllocationSample::count), 960);
  EXPECT_EQ(count_of(back, "Array", &AllocationSample::retained), 64);
  EXPECT_EQ(text(back.label_sets[back.allocations[2].label_set].at(0).value), "/x");
  EXPECT_EQ(stack_text(back, back.allocations[1].stack), "<main>:1;Foo#make:11");
  EXPECT_EQ(back.samples.size(), 1u);  // time samples untouched
}

TEST(Allocations, TotalsBySiteAndClass) {
  Profile p = allocation_profile();
  FunctionTotals t = allocation_totals(p);
  EXPECT_EQ(t.grand_total_ns, 1024);
  int64_t make_self = 0, main_total = 0;
  for (size_t fn = 0; fn < t.first_frame.size(); fn++) {
    const Frame& f = p.frames[t.first_frame[fn]];
    if (f.label == "Foo#make") make_self = t.self_ns[fn];
    if (f.label == "<main>") main_total = t.total_ns[fn];
  }
  EXPECT_EQ(make_self, 1024);
  EXPECT_EQ(main_total, 1024);
  auto classes = class_totals(p, true);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(p.class_names[classes[0].first], "String");
  EXPECT_EQ(classes[0].second, 128);
  std::string text = encode_allocation_text(p, 10);
  EXPECT_NE(text.find("Allocations: 1,024 objects (estimated, one in 64 sampled), 192 retained"), std::string::npos) << text;
  EXPECT_NE(text.find("Allocated by class:\n             960  93.8%  String\n"), std::string::npos) << text;
  text = encode_allocation_text(p, 10, true);  // a file that did not name the interval
  EXPECT_NE(text.find("(estimated, one in 64 sampled; the interval estimated from the counts: the file does not name it), 192 retained"),
            std::string::npos)
      << text;
}

TEST(Allocations, CollapsedViewWeighsObjectsWithTheClassAsLeaf) {
  std::string s;
  Output out(&s, OutputOptions());
  encode_collapsed(allocation_profile(), out, true);
  ASSERT_EQ(out.finish(), 0);
  EXPECT_EQ(s, "<main>;Foo#make;String 960\n<main>;Foo#make;Array 64\n");
}

TEST(Allocations, SummaryHasTheEstimates) {
  JsonValue s = summarize(allocation_profile());
  EXPECT_EQ(s.int_or("allocation_estimate", 0), 1024);
  EXPECT_EQ(s.int_or("retained_estimate", 0), 192);
  EXPECT_EQ(summarize(make_profile({{"a.rb", "<main>", 1}}, {{{0}, 100}})).get("allocation_estimate"), nullptr);
}

TEST(Allocations, RawFormKeepsEverySampleWithItsTime) {
  Profile p = allocation_profile();
  p.timestamps = true;
  for (size_t i = 0; i < p.allocations.size(); i++) p.allocations[i].time_ns = static_cast<int64_t>(1000 * (i + 1));
  p.allocations.push_back(p.allocations[0]);  // the same site sampled again later
  p.allocations.back().time_ns = 5000;
  EXPECT_EQ(p.aggregated_allocations().size(), 3u);
  std::string body = render_json(p);
  EXPECT_NE(body.find("\"raw_allocation_samples\":[[[[\"a.rb\",\"Foo#make\",10],[\"a.rb\",\"<main>\",1]],640,1,0,\"String\",128,1000]"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("\"allocation_samples\":[[[[\"a.rb\",\"Foo#make\",10],[\"a.rb\",\"<main>\",1]],1280,1,0,\"String\",256]"),
            std::string::npos)
      << body;
  Profile back;
  std::string error;
  ASSERT_TRUE(load_json_profile(body.data(), body.size(), back, error)) << error;
  ASSERT_EQ(back.allocations.size(), 4u);
  EXPECT_EQ(back.allocations[3].time_ns, 5000);
  fold_lines(back);
  EXPECT_EQ(back.allocations.size(), 4u);  // raw: folded, not merged
  aggregate(back);
  EXPECT_EQ(back.allocations.size(), 2u);
  EXPECT_EQ(count_of(back, "String", &AllocationSample::count), 1600);
}

TEST(Allocations, JsonWithoutAllocationsHasNoKey) {
  Profile p = make_profile({{"a.rb", "<main>", 1}}, {{{0}, 100}});
  EXPECT_EQ(render_json(p).find("allocation_samples"), std::string::npos);
}

TEST(Allocations, PprofHasThreeSampleTypesWithTimeAsDefault) {
  std::string pb = encode_pprof(allocation_profile(), {});
  EXPECT_NE(pb.find("alloc_objects"), std::string::npos);
  EXPECT_NE(pb.find("inuse_objects"), std::string::npos);
  EXPECT_NE(pb.find("object_class"), std::string::npos);
  EXPECT_EQ(encode_pprof(make_profile({{"a.rb", "<main>", 1}}, {{{0}, 100}}), {}).find("alloc_objects"), std::string::npos);
}

// retained: false (the default): the retained count is "not measured" wherever it is written,
// and reads back so from JSON and pprof.
TEST(Allocations, RetainedNotMeasuredIsNullInJsonAndNoInuseTypeInPprof) {
  Profile p = allocation_profile();
  p.retained_measured = false;
  for (AllocationSample& a : p.allocations) a.retained = 0;
  std::string body = render_json(p);
  EXPECT_NE(body.find("\"allocation_samples\":[[[[\"a.rb\",\"Foo#make\",10],[\"a.rb\",\"<main>\",1]],640,1,0,\"String\",null]"),
            std::string::npos)
      << body;
  Profile back;
  std::string error;
  ASSERT_TRUE(load_json_profile(body.data(), body.size(), back, error)) << error;
  EXPECT_FALSE(back.retained_measured);
  EXPECT_EQ(count_of(back, "String", &AllocationSample::count), 960);
  EXPECT_NE(render_json(back).find("\"String\",null]"), std::string::npos);

  std::string pb = encode_pprof(p, {});
  EXPECT_NE(pb.find("alloc_objects"), std::string::npos);
  EXPECT_EQ(pb.find("inuse_objects"), std::string::npos);
  Profile from_pprof;
  ASSERT_TRUE(load_pprof_profile(pb.data(), pb.size(), from_pprof, error)) << error;
  EXPECT_FALSE(from_pprof.retained_measured);
  EXPECT_EQ(count_of(from_pprof, "String", &AllocationSample::count), 960);
  EXPECT_EQ(from_pprof.header.allocation_interval.value_or(0), 64);
  EXPECT_EQ(from_pprof.samples.size(), 1u);  // the time sample keeps its own value
  EXPECT_EQ(from_pprof.samples[0].weight_ns, 100);

  Profile measured;
  std::string full = encode_pprof(allocation_profile(), {});
  ASSERT_TRUE(load_pprof_profile(full.data(), full.size(), measured, error)) << error;
  EXPECT_TRUE(measured.retained_measured);
  EXPECT_EQ(count_of(measured, "Array", &AllocationSample::retained), 64);
}

TEST(Allocations, RetainedNotMeasuredInTheReportAndSummary) {
  Profile p = allocation_profile();
  p.retained_measured = false;
  for (AllocationSample& a : p.allocations) a.retained = 0;
  std::string text = encode_allocation_text(p, 10);
  EXPECT_NE(text.find("Allocations: 1,024 objects (estimated, one in 64 sampled), retained not measured (retained: true)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("Retained by"), std::string::npos) << text;
  JsonValue s = summarize(p);
  EXPECT_EQ(s.int_or("allocation_estimate", 0), 1024);
  EXPECT_EQ(s.get("retained_estimate"), nullptr);
}

TEST(Allocations, RowsEitherAllHaveRetainedOrNone) {
  std::string error;
  Profile back;
  const char* mixed =
      R"({"mode":"cpu","aggregated_samples":[],"allocation_interval":64,"allocation_samples":[)"
      R"([[["a.rb","x",1]],64,1,0,"String",0],[[["a.rb","y",2]],64,1,0,"String",null]]})";
  EXPECT_FALSE(load_json_profile(mixed, std::strlen(mixed), back, error));
  EXPECT_NE(error.find("allocation_samples[1]: retained_count is null (not measured), but earlier rows have one"), std::string::npos)
      << error;
}

TEST(Allocations, MergeMeasuresRetainedOnlyWhenEveryProcessDid) {
  Profile root = allocation_profile();
  Profile child = allocation_profile();
  child.retained_measured = false;
  merge_child(root, child, "123");
  EXPECT_FALSE(root.retained_measured);
  Profile bare = make_profile({{"a.rb", "<main>", 1}}, {{{0}, 100}});
  merge_child(bare, allocation_profile(), "124");  // a root without allocations takes the child's
  EXPECT_TRUE(bare.retained_measured);
}

// A hostile file's count at INT64_MIN: the report groups its digits (the magnitude taken as
// unsigned; negating it as int64_t was undefined, found by the loader fuzz under UBSan).
TEST(Allocations, TheTextReportGroupsTheSmallestCount) {
  Profile p = make_profile({{"a.rb", "<main>", 1}}, {{{0}, 100}}, {{}});
  p.header.set("allocation_interval", JsonValue::integer(1));
  p.allocations.push_back({p.stacks.intern({0}), 0, 0, p.class_names.intern("String"), INT64_MIN, 0});
  std::string text = encode_allocation_text(p, 10);
  EXPECT_NE(text.find("Allocations: -9,223,372,036,854,775,808 objects"), std::string::npos) << text;
}
