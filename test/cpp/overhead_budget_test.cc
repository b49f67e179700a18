#include "sampler/overhead_budget.hh"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace {

using rperf::OverheadBudget;
constexpr int64_t kMs = 1000000;
constexpr int64_t k10kHz = 100000;  // ns

TEST(OverheadBudget, StartsWhereTheAssumedTickCostFitsTheTarget) {
  // 25 us a tick at 1%: 2.5 ms (400 Hz), not the requested 10 kHz.
  EXPECT_EQ(OverheadBudget(0.01, k10kHz).first_interval_ns(), OverheadBudget::kAssumedTickCostNs * 100);
  // A requested rate slower than that is kept; a tiny target starts no slower than 1 Hz.
  EXPECT_EQ(OverheadBudget(0.01, 10 * kMs).first_interval_ns(), 10 * kMs);
  EXPECT_EQ(OverheadBudget(1e-9, k10kHz).first_interval_ns(), OverheadBudget::kSlowestIntervalNs);
}

TEST(OverheadBudget, OnTargetKeepsTheInterval) {
  OverheadBudget b(0.01, k10kHz);
  EXPECT_EQ(b.next_interval_ns(kMs, 1 * kMs, 100 * kMs), kMs);
}

TEST(OverheadBudget, OverTargetSlowsDownInProportion) {
  OverheadBudget b(0.01, k10kHz);
  // 3% where 1% is allowed: three times the interval.
  EXPECT_EQ(b.next_interval_ns(kMs, 3 * kMs, 100 * kMs), 3 * kMs);
}

TEST(OverheadBudget, UnderTargetSpeedsUpInProportion) {
  OverheadBudget b(0.01, k10kHz);
  // 0.8% where 1% is allowed: the interval shrinks to 0.8 of itself.
  EXPECT_EQ(b.next_interval_ns(10 * kMs, 8 * kMs / 10, 100 * kMs), 8 * kMs);
}

TEST(OverheadBudget, OneWindowMovesTheRateAtMostByTheStepLimits) {
  OverheadBudget b(0.01, k10kHz);
  // 50%: four times slower, not fifty.
  EXPECT_EQ(b.next_interval_ns(kMs, 50 * kMs, 100 * kMs), 4 * kMs);
  // Nothing spent: twice as fast, not infinitely.
  EXPECT_EQ(b.next_interval_ns(10 * kMs, 0, 100 * kMs), 5 * kMs);
}

TEST(OverheadBudget, StaysWithinTheRequestedFrequencyAndOneHertz) {
  OverheadBudget b(0.01, k10kHz);
  EXPECT_EQ(b.next_interval_ns(k10kHz, 0, 100 * kMs), k10kHz);             // not above 10 kHz
  EXPECT_EQ(b.next_interval_ns(600 * kMs, 90 * kMs, 100 * kMs), 1000 * kMs);  // not below 1 Hz
  EXPECT_EQ(b.next_interval_ns(1000 * kMs, 100 * kMs, 100 * kMs), 1000 * kMs);
  // An interval given outside the range is brought into it first.
  EXPECT_EQ(b.next_interval_ns(1, 1 * kMs, 100 * kMs), k10kHz);
  EXPECT_EQ(b.next_interval_ns(5000 * kMs, 1 * kMs, 100 * kMs), 1000 * kMs);
}

TEST(OverheadBudget, AWindowWithoutProcessTimeKeepsTheInterval) {
  OverheadBudget b(0.01, k10kHz);
  EXPECT_EQ(b.next_interval_ns(2 * kMs, 0, 0), 2 * kMs);
  EXPECT_EQ(b.next_interval_ns(2 * kMs, 5, -3), 2 * kMs);
  EXPECT_EQ(b.next_interval_ns(2 * kMs, -1, 100 * kMs), 2 * kMs);
}

TEST(OverheadBudget, OwnTimeAboveTheProcessIsReadAsAllOfIt) {
  OverheadBudget b(0.5, k10kHz);
  // Clocks read a moment apart can show own > process: a share of 1, twice the target.
  EXPECT_EQ(b.next_interval_ns(kMs, 150 * kMs, 100 * kMs), 2 * kMs);
}

// A profiler whose cost is a fixed part (the drain's wake-ups) plus a part per tick, on a
// process that burns one CPU: the interval converges to where the cost is the target.
TEST(OverheadBudget, ConvergesOnACostThatGrowsWithTheRate) {
  const double target = 0.01;
  OverheadBudget b(target, k10kHz);
  const int64_t window = 100 * kMs;
  const double per_tick_ns = 8000, fixed_share = 0.002;
  int64_t interval = k10kHz;
  for (int step = 0; step < 20; step++) {
    const double ticks = static_cast<double>(window) / static_cast<double>(interval);
    const int64_t own = static_cast<int64_t>(ticks * per_tick_ns + fixed_share * window);
    interval = b.next_interval_ns(interval, own, window);
  }
  // (target - fixed) / per tick cost = ticks per ns.
  const double expected = per_tick_ns / (target - fixed_share);
  EXPECT_NEAR(static_cast<double>(interval), expected, expected * 0.01);
}

}  // namespace
