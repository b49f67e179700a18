// Two profiles' per-function totals ranked by change (views/totals_diff): worked by hand.
#include <gtest/gtest.h>

#include "views/totals_diff.hh"

using namespace rperf;

TEST(TotalsDiff, JoinsByFunctionAndRanksBySelfThenTotalThenName) {
  std::vector<FunctionRow> base = {{"main", "m.rb", 0, 100}, {"slow", "a.rb", 40, 40}, {"gone", "g.rb", 10, 10}, {"same", "s.rb", 5, 5}};
  std::vector<FunctionRow> target = {{"main", "m.rb", 0, 150}, {"slow", "a.rb", 90, 90}, {"new", "n.rb", 10, 20}, {"same", "s.rb", 5, 5},
                                        {"slow", "b.rb", 1, 1}};
  std::vector<TotalsDiffRow> rows = diff_totals(base, target);
  ASSERT_EQ(6u, rows.size());
  // slow (+50 self), then gone and new (10 self each: new's total changed more), then
  // slow in b.rb (+1), then main (0 self, +50 total), then same.
  EXPECT_EQ(1, rows[0].base);
  EXPECT_EQ(1, rows[0].target);
  EXPECT_DOUBLE_EQ(50, rows[0].self_change());
  EXPECT_EQ(2, rows[1].target) << "new: -1 in the base, +10 self, +20 total";
  EXPECT_EQ(-1, rows[1].base);
  EXPECT_EQ(2, rows[2].base) << "gone: -10 self, -10 total";
  EXPECT_EQ(-1, rows[2].target);
  EXPECT_DOUBLE_EQ(-10, rows[2].self_change());
  EXPECT_EQ(4, rows[3].target) << "slow in another file is another function";
  EXPECT_EQ(0, rows[4].target);
  EXPECT_DOUBLE_EQ(50, rows[4].total_change());
  EXPECT_EQ(3, rows[5].target);
  EXPECT_DOUBLE_EQ(0, rows[5].total_change());
}

TEST(TotalsDiff, ScalesTheBaseAndBreaksTiesByLabelThenPath) {
  std::vector<FunctionRow> base = {{"b", "x.rb", 10, 10}, {"a", "y.rb", 10, 10}, {"a", "x.rb", 10, 10}};
  std::vector<TotalsDiffRow> rows = diff_totals(base, {}, 2.0);
  ASSERT_EQ(3u, rows.size());
  EXPECT_DOUBLE_EQ(20, rows[0].base_self);
  EXPECT_EQ(2, rows[0].base) << "a in x.rb";
  EXPECT_EQ(1, rows[1].base) << "a in y.rb";
  EXPECT_EQ(0, rows[2].base) << "b";
}
