// The sampling clock. A dedicated worker thread sleeps to absolute deadlines (no timer slack)
// and at each one asks `target` which thread should take the tick:
//  - signal mode (Linux): it sends that thread the real-time signal, whose handler calls `tick`
//    there; with no target (or a failed send) it calls `tick` itself. Only the target is
//    interrupted. (An earlier design had a timer_create signal wake the worker, which then
//    forwarded it: the worker's own signal frame per tick cost the profiled thread more, 16.7
//    against 13.9 us per sample on the YJIT loop workload at 10 kHz, medians of 5 interleaved
//    on the development VM; the worker spent a third of the main thread's CPU.)
//  - sleep mode (signal 0): it calls `tick` itself.
// Between ticks the worker calls `background` (the aggregation drain) about every 10 ms.
// With an overhead budget (Options::overhead_target) the worker also measures, every 100 ms
// (10 ms at first, doubling),
// the profiler's CPU (its own thread's clock plus `own_time`: the capture, hooks and export
// on other threads) against the process's, and sets its next interval (OverheadBudget). Only
// the worker changes the interval, between its own deadlines, so no tick of either capture
// path sees a change in flight; the weights are the timelines' intervals, exact at any rate.
// Ruby-independent: `tick` must be async-signal-safe (rb_postponed_job_trigger is).
// A forwarded tick carries its target's kernel id (rt_tgsigqueueinfo's value), so the handler
// on that thread knows which thread it runs on without a system call.
#pragma once
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "sampler/overhead_budget.hh"

namespace rperf {

class Timer {
 public:
  // `self`: the kernel id of the thread the tick runs on when it was forwarded there, else 0
  // (the timer thread).
  using TickFn = void (*)(pid_t self);
  // Called on the timer thread at each tick, before `tick` (async-signal-safe in signal
  // mode); returns the kernel id of the thread that should run the tick, 0, or kSkipTick.
  using TargetFn = pid_t (*)();
  // TargetFn's answer for a tick with nothing to do: it is counted and goes no further.
  static constexpr pid_t kSkipTick = -1;
  using BackgroundFn = void (*)(void* ctx);
  // The profiler's CPU spent on other threads so far (ns, never decreasing), read by the worker.
  using OwnTimeFn = int64_t (*)(void* ctx);

  struct Options {
    int frequency = 1000;  // Hz, 1..10000
    int signal = 0;        // real-time signal number, or 0 for sleep mode
    bool armed = true;     // false: start paused (defer)
    // Signal mode: each tick is re-sent (rt_tgsigqueueinfo, same signal) to the thread this
    // names, whose handler then calls `tick(tid)` there; 0 or a failed send runs `tick(0)` on
    // the timer thread (and in sleep mode always).
    TargetFn target = nullptr;
    // Signal mode: threads that each take every tick besides the target (other Ractors' running
    // threads, which run in parallel with it). Fills `out` with at most `max` kernel ids, on the
    // timer thread; each is sent the tick, and its handler calls `extra_tick(tid)`.
    int (*extra_targets)(pid_t* out, int max) = nullptr;
    TickFn extra_tick = nullptr;
    // > 0: the share of the process's CPU the profiler holds itself to, by lowering (down to
    // 1 Hz) or raising (up to `frequency`) the rate; `own_time` counts its work elsewhere.
    double overhead_target = 0;
    OwnTimeFn own_time = nullptr;
  };

  static int default_signal();

  // Starts the worker thread (and the signal timer). Returns false with `error` set on failure.
  bool start(const Options& opts, TickFn tick, BackgroundFn background, void* ctx, std::string* error);
  void stop();  // joins the worker and restores the previous signal disposition
  // stop(), then start() again with the same options and armed state, the tick count kept:
  // around an exec that failed (see Session::suspend_for_exec).
  bool restart(std::string* error);
  void arm();
  void disarm();
  // In a forked child: the worker thread and the POSIX timer do not exist there. Forget them
  // without touching them and restore the signal disposition.
  void abandon_after_fork();

  bool running() const { return running_; }
  uint64_t trigger_count() const { return trigger_count_.load(std::memory_order_relaxed); }
  void reset_trigger_count() { trigger_count_.store(0, std::memory_order_relaxed); }
  // The tick interval now (the overhead budget changes it; else the frequency's).
  int64_t interval_ns() const { return interval_ns_.load(std::memory_order_relaxed); }
  // The CPU the timer's threads burned (this one's and those of earlier starts): ticks,
  // forwarding, the drain and the budget's own reads. Any thread; a system call.
  int64_t cpu_ns() const;

 private:
  static void* worker_main(void* self);
  static void on_signal(int, siginfo_t*, void*);
  void worker_loop();
  void restore_signal();
  void adjust_rate(int64_t now);  // the overhead budget's step, on the worker (mutex held)

  Options opts_;
  TickFn tick_ = nullptr;
  TargetFn target_ = nullptr;
  BackgroundFn background_ = nullptr;
  void* ctx_ = nullptr;
  std::atomic<int64_t> interval_ns_{0};
  OverheadBudget budget_{0, 1};
  // The budget's window: the process's and the profiler's CPU at its start (-1: none yet).
  int64_t window_process_ns_ = -1;
  int64_t window_own_ns_ = 0;
  int64_t next_control_ns_ = 0;
  int64_t control_period_ns_ = 0;
  clockid_t worker_clock_ = 0;             // the running worker's CPU clock
  std::atomic<int64_t> earlier_cpu_ns_{0};  // the CPU of workers already joined
  bool running_ = false;
  struct sigaction old_action_ {};
  pthread_t worker_{};
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cond_;
  bool stop_requested_ = false;
  bool worker_ready_ = false;
  std::atomic<bool> armed_{false};
  int64_t next_deadline_ns_ = 0;
  static std::atomic<uint64_t> trigger_count_;
  static std::atomic<TickFn> signal_tick_;
  static std::atomic<TickFn> extra_tick_;
  // Bumped at each start: a forwarded tick carries it, so one still pending from a stopped
  // timer (its thread was blocked past the stop) does not tick the next (lock-free: read in the
  // handler).
  static std::atomic<uint8_t> generation_;
  static pid_t pid_;
  static uid_t uid_;
};

}  // namespace rperf
