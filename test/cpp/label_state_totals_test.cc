// A profile's time per VM state and label values (views/label_state_totals): worked by hand.
#include <gtest/gtest.h>

#include "test_profiles.hh"
#include "views/label_state_totals.hh"

using namespace rperf;
using namespace rperf::fixtures;

TEST(LabelStateTotals, SumsEachStatePerValueOfTheKeysInOrderOfFirstAppearance) {
  // Sets: 1 endpoint=/a, 2 endpoint=/b, 3 endpoint=/a with another key (the same row), 4 an
  // Integer value of another key only.
  Profile p = make_profile({{"a.rb", "a"}},
                           {{{0}, 10, 1, 1, kRunning},
                            {{0}, 20, 1, 2, kGvlWait},
                            {{0}, 30, 2, 3, kGvlBlocked},
                            {{0}, 40, 1, 0, kGcMark},
                            {{0}, 5, 1, 1, kRunning},
                            {{0}, 7, 1, 4, kGcSweep}},
                           {{{"endpoint", "/a"}}, {{"endpoint", "/b"}}, {{"job", "x"}, {"endpoint", "/a"}}, {{"n", "3", true}}});
  std::vector<LabelStateTotal> rows = label_state_totals(p, {"endpoint"});
  ASSERT_EQ(3u, rows.size());
  EXPECT_EQ(std::vector<std::string>{"/a"}, rows[0].values);
  EXPECT_EQ(15, rows[0].weight_ns[kRunning]);
  EXPECT_EQ(30, rows[0].weight_ns[kGvlBlocked]);
  EXPECT_EQ(std::vector<std::string>{"/b"}, rows[1].values);
  EXPECT_EQ(20, rows[1].weight_ns[kGvlWait]);
  EXPECT_EQ(std::vector<std::string>{""}, rows[2].values) << "sets without the key: one row";
  EXPECT_EQ(40, rows[2].weight_ns[kGcMark]);
  EXPECT_EQ(7, rows[2].weight_ns[kGcSweep]);

  rows = label_state_totals(p, {"n", "endpoint"});
  ASSERT_EQ(4u, rows.size());
  EXPECT_EQ((std::vector<std::string>{"3", ""}), rows[3].values) << "an Integer value by its text";
}

TEST(LabelStateTotals, NoKeysIsOneRowOfTheWholeProfile) {
  Profile p = make_profile({{"a.rb", "a"}}, {{{0}, 10, 1, 1, kRunning}, {{0}, 20, 1, 0, kGvlWait}}, {{{"endpoint", "/a"}}});
  std::vector<LabelStateTotal> rows = label_state_totals(p, {});
  ASSERT_EQ(1u, rows.size());
  EXPECT_EQ(10, rows[0].weight_ns[kRunning]);
  EXPECT_EQ(20, rows[0].weight_ns[kGvlWait]);
  EXPECT_TRUE(label_state_totals(Profile{}, {"endpoint"}).empty());
}

TEST(LabelKeyTotals, EachKeysValuesHeaviestFirstAndTheWeightWithoutTheKey) {
  // Sets: 0 none, 1 endpoint=/a, 2 endpoint=/b job=x, 3 endpoint="" (a value, not unset), 4 no row.
  std::vector<LabelTexts> sets = {{}, {{"endpoint", "/a"}}, {{"job", "x"}, {"endpoint", "/b"}}, {{"endpoint", ""}}, {{"zz", "never"}}};
  std::vector<LabelKeyTotal> keys = label_key_totals(sets, {1, 2, 0, 1, 3, 2, 7}, {10, 15, 4, 10, 1, 5, 100});
  ASSERT_EQ(2u, keys.size()) << "a set no row has, and a row of no set, count nowhere";
  EXPECT_EQ("endpoint", keys[0].key);
  EXPECT_EQ((std::vector<std::pair<std::string, int64_t>>{{"/a", 20}, {"/b", 20}, {"", 1}}), keys[0].values)
      << "equal weights by text";
  EXPECT_EQ(4, keys[0].unset);
  EXPECT_EQ("job", keys[1].key);
  EXPECT_EQ((std::vector<std::pair<std::string, int64_t>>{{"x", 20}}), keys[1].values);
  EXPECT_EQ(25, keys[1].unset);
  EXPECT_TRUE(label_key_totals(sets, {}, {}).empty());
}
