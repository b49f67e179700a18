// The overhead budget (overhead_target:): the timer's tick interval that holds the profiler's
// own CPU (timer thread, capture, hooks, export) at a share of the whole process's CPU.
// Pure arithmetic, Ruby-independent: the timer thread measures a window and asks for the next
// interval. The sample weights do not depend on it: each is the time since the thread's
// previous event (thread_timeline.hh), whatever the rate.
#pragma once
#include <cstdint>

namespace rperf {

class OverheadBudget {
 public:
  static constexpr int64_t kSlowestIntervalNs = 1000000000LL;  // 1 Hz
  // A window's measurement moves the interval by at most these factors: one noisy window (a GC
  // burst, the machine's other load) never swings the rate far, and a cost far above the
  // target still comes down within a few windows.
  static constexpr double kMaxSlowdown = 4.0;
  static constexpr double kMaxSpeedup = 2.0;
  // What one tick costs before anything is measured: the budget starts at the rate this cost
  // holds to the target and speeds up from there, rather than starting at the requested rate
  // and paying for it until the first windows bring it down. 25 us: a sample of a CPU-bound
  // loop at 10 kHz on the 2-core development VM (bench/overhead_budget_bench.rb: +22% CPU
  // for ~3,500 samples of a 0.4 s run). Starting at 10 kHz, a 0.4 s run's budget of 1% cost 1.5%.
  static constexpr int64_t kAssumedTickCostNs = 25000;

  // `target`: own CPU / process CPU, in (0, 1); `fastest_interval_ns`: the requested frequency's.
  OverheadBudget(double target, int64_t fastest_interval_ns);

  // The next interval, given the current one and a window's CPU: `own_ns` the profiler's,
  // `process_ns` the whole process's (own included). The cost of sampling grows with the rate,
  // so the interval scales by own/process over the target, within the step limits and
  // [fastest, 1 s]. A window with no process CPU measured keeps the interval.
  int64_t next_interval_ns(int64_t interval_ns, int64_t own_ns, int64_t process_ns) const;

  // The interval the timer starts (and restarts) at: the requested rate's, or slower when the
  // assumed tick cost would not fit in the target.
  int64_t first_interval_ns() const;

  double target() const { return target_; }
  int64_t fastest_interval_ns() const { return fastest_interval_ns_; }

 private:
  double target_;
  int64_t fastest_interval_ns_;
};

}  // namespace rperf
