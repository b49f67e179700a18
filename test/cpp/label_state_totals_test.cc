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
