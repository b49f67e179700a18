// Issue 43: a file's numbers are checked once, by ProfileRows, against what they index or
// bound, for every reader; and the views never size a table from a thread_seq.
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "io/loader.hh"
#include "profile/idle_wait.hh"
#include "profile/profile_rows.hh"
#include "profile/thread_index.hh"
#include "views/timeline_bins.hh"

using namespace rperf;

namespace {

std::string json_with_row(const std::string& row) {
  return R"({"mode":"wall","frequency":1000,"label_sets":[{},{"a":"b"}],"aggregated_samples":[[[["a.rb","A#x",1]],5,1,0],)" + row + "]}";
}

std::string load_error(const std::string& json) {
  Profile p;
  std::string error;
  EXPECT_FALSE(load_json_profile(json.data(), json.size(), p, error)) << json;
  return error;
}

}  // namespace

TEST(HostileRows, ThreadSeqOutOfRangeNamesRowAndField) {
  for (const char* seq : {"-1", "-2", "2147483648", "4294967295", "1000000000000", "-9223372036854775808"}) {
    std::string error = load_error(json_with_row(std::string("[[[\"b.rb\",\"B#y\",2]],7,") + seq + ",1]"));
    EXPECT_EQ("malformed profile: aggregated_samples[1]: thread_seq " + std::string(seq) + " is out of range (0 to 2147483647)", error);
  }
}

TEST(HostileRows, IntegerPast64BitsNamesRowAndField) {
  std::string error = load_error(json_with_row("[[[\"b.rb\",\"B#y\",2]],7,9223372036854775808,1]"));
  EXPECT_EQ(0u, error.find("malformed profile: aggregated_samples[1]: thread_seq 9223372036854775808 is not an integer of 64 bits at byte ")) << error;
  error = load_error(json_with_row("[[[\"b.rb\",\"B#y\",2]],1e300,1,1]"));
  EXPECT_NE(std::string::npos, error.find("aggregated_samples[1]: weight ")) << error;
}

TEST(HostileRows, LabelSetIdOutOfRange) {
  EXPECT_EQ("malformed profile: aggregated_samples[1]: label_set_id 2 has no label set (ids: 0 to 1)",
            load_error(json_with_row("[[[\"b.rb\",\"B#y\",2]],7,1,2]")));
  EXPECT_EQ("malformed profile: aggregated_samples[1]: label_set_id -1 has no label set (ids: 0 to 1)",
            load_error(json_with_row("[[[\"b.rb\",\"B#y\",2]],7,1,-1]")));
}

TEST(HostileRows, WeightsTimesAndCounts) {
  Profile p;
  ProfileRows rows(p, true);
  int64_t extra[2] = {0, -1};
  EXPECT_FALSE(rows.sample(0, 5, 1, 0, extra, 2));
  EXPECT_EQ("raw_samples[0]: time_ns -1 is out of range (0 to 4611686018427387904)", rows.error());
  extra[1] = 10;
  EXPECT_FALSE(rows.sample(0, -3, 1, 0, extra, 2));
  EXPECT_EQ("raw_samples[0]: weight -3 is out of range (0 to 4611686018427387904)", rows.error());
  EXPECT_TRUE(rows.sample(0, ProfileRows::kMaxTotal - 1, 1, 0, extra, 2));
  EXPECT_TRUE(rows.sample(0, 1, 1, 0, extra, 2));
  EXPECT_FALSE(rows.sample(0, 1, 1, 0, extra, 2));  // the total would pass 2^62
  EXPECT_EQ("raw_samples[2]: weight 1 takes the rows' total past 4611686018427387904 (2^62)", rows.error());
  EXPECT_FALSE(rows.allocation(0, -1, 1, 0, 0, 0, false));
  EXPECT_EQ("allocation_samples[0]: count -1 is out of range (0 to 4611686018427387904)", rows.error());
  EXPECT_FALSE(rows.allocation(0, 1, 1, 0, 0, INT64_MAX, false));
  EXPECT_EQ("allocation_samples[0]: retained_count 9223372036854775807 is out of range (0 to 4611686018427387904)", rows.error());
  EXPECT_FALSE(rows.allocation(0, 1, INT64_MIN, 0, 0, 0, false));
  EXPECT_TRUE(rows.allocation(0, 1, ProfileRows::kMaxThreadSeq, 0, 0, 0, false));
}

TEST(HostileRows, LargestThreadSeqLoadsAndIsServed) {
  std::string json = json_with_row("[[[\"b.rb\",\"B#y\",2]],7,2147483647,1]");
  Profile p;
  std::string error;
  ASSERT_TRUE(load_json_profile(json.data(), json.size(), p, error)) << error;
  std::vector<ThreadIdleTotal> totals = thread_idle_totals(p);
  ASSERT_EQ(2u, totals.size());
  EXPECT_EQ(2147483647u, totals[1].thread_seq);
  EXPECT_EQ(7, totals[1].total_ns);
}

// The model's own samples may hold any uint32 seq (a Hash, the sampler): no view sizes a
// table by it (a table of 2^32 slots was 16 GB).
TEST(HostileRows, ViewsKeepThreadsByIndexNotBySeq) {
  Profile p;
  uint32_t stack = p.stacks.intern(std::vector<uint32_t>{p.frames.intern("a.rb", "A#x", 1)});
  for (uint32_t seq : {UINT32_MAX, 1u, 70000u, UINT32_MAX, 3u}) {
    Sample s;
    s.stack = stack;
    s.thread_seq = seq;
    s.weight_ns = 10;
    s.time_ns = 100;
    p.samples.push_back(s);
  }
  std::vector<ThreadIdleTotal> totals = thread_idle_totals(p);
  ASSERT_EQ(4u, totals.size());
  EXPECT_EQ(1u, totals[0].thread_seq);
  EXPECT_EQ(UINT32_MAX, totals[3].thread_seq);
  EXPECT_EQ(20, totals[3].total_ns);
  TimelineBins bins = bin_timeline(p, SampleFilter{}, 4, 0);
  EXPECT_EQ((std::vector<uint32_t>{1u, 3u, 70000u, UINT32_MAX}), bins.threads);

  ThreadIndex index;
  bool added;
  EXPECT_EQ(0u, index.find_or_add(UINT32_MAX, added));
  EXPECT_TRUE(added);
  EXPECT_EQ(1u, index.find_or_add(5, added));
  EXPECT_EQ(0u, index.find_or_add(UINT32_MAX, added));
  EXPECT_FALSE(added);
  EXPECT_EQ(2u, index.size());
}
