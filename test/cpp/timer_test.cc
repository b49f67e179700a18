#include "sampler/timer.hh"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include <sys/syscall.h>

#include "util/clock.hh"

namespace {
std::atomic<int> g_ticks{0};
std::atomic<int> g_background{0};
void tick(pid_t) { g_ticks.fetch_add(1); }
void background(void*) { g_background.fetch_add(1); }

int run_for_ms(rperf::Timer::Options opts, int ms) {
  g_ticks = 0;
  rperf::Timer timer;
  std::string error;
  EXPECT_TRUE(timer.start(opts, tick, background, nullptr, &error)) << error;
  usleep(ms * 1000);
  timer.stop();
  EXPECT_EQ(timer.trigger_count(), static_cast<uint64_t>(g_ticks.load()));
  return g_ticks.load();
}
}  // namespace

TEST(Timer, SleepModeTicksAtTheFrequency) {
  rperf::Timer::Options o;
  o.frequency = 200;
  o.signal = 0;
  int ticks = run_for_ms(o, 500);
  EXPECT_GE(ticks, 80);
  EXPECT_LE(ticks, 101);
  EXPECT_GT(g_background.load(), 0);
}

TEST(Timer, SignalModeTicksAtTheFrequency) {
  rperf::Timer::Options o;
  o.frequency = 200;
  o.signal = rperf::Timer::default_signal();
  int ticks = run_for_ms(o, 500);
  EXPECT_GE(ticks, 80);
  EXPECT_LE(ticks, 101);
}

TEST(Timer, OneHertzIsAValidInterval) {
  rperf::Timer::Options o;
  o.frequency = 1;
  o.signal = rperf::Timer::default_signal();
  rperf::Timer timer;
  std::string error;
  ASSERT_TRUE(timer.start(o, tick, background, nullptr, &error)) << error;
  EXPECT_EQ(timer.interval_ns(), 1000000000LL);
  timer.stop();
}

TEST(Timer, DisarmedTimerDoesNotTick) {
  rperf::Timer::Options o;
  o.frequency = 1000;
  o.signal = rperf::Timer::default_signal();
  o.armed = false;
  EXPECT_EQ(run_for_ms(o, 100), 0);
  o.signal = 0;
  EXPECT_EQ(run_for_ms(o, 100), 0);
}

TEST(Timer, ProcessSignalsAreNotDeliveredToTheWorker) {
  // The main thread keeps running normal system calls while the timer fires: none of them is
  // interrupted, because the signal is aimed at the worker thread only.
  rperf::Timer::Options o;
  o.frequency = 2000;
  o.signal = rperf::Timer::default_signal();
  rperf::Timer timer;
  std::string error;
  g_ticks = 0;
  ASSERT_TRUE(timer.start(o, tick, background, nullptr, &error)) << error;
  int interrupted = 0;
  for (int i = 0; i < 50; i++) {
    timespec ts{0, 2000000};
    if (nanosleep(&ts, &ts) != 0) interrupted++;
  }
  timer.stop();
  EXPECT_EQ(interrupted, 0);
  EXPECT_GT(g_ticks.load(), 50);
}

namespace {
std::atomic<pid_t> g_target{0};
std::atomic<int> g_on_target{0};
std::atomic<int> g_elsewhere{0};
std::atomic<int> g_self_wrong{0};
pid_t gettid_now() { return static_cast<pid_t>(syscall(SYS_gettid)); }
// `self` names the thread the tick runs on when forwarded, 0 on the timer thread.
void tick_where(pid_t self) {
  pid_t me = gettid_now();
  if (self != 0 && self != me) g_self_wrong.fetch_add(1);
  (self != 0 && me == g_target.load() ? g_on_target : g_elsewhere).fetch_add(1);
}
pid_t forward_target() { return g_target.load(); }
}  // namespace

// Each tick is re-sent to the thread the target function names (the GVL holder in the
// extension) and runs there; with no target it runs on the timer thread.
TEST(Timer, TicksAreForwardedToTheTargetThread) {
  std::atomic<bool> stop{false};
  std::atomic<pid_t> worker_tid{0};
  std::thread worker([&] {
    worker_tid = gettid_now();
    while (!stop) usleep(1000);  // interrupted by the forwarded signal (SA_RESTART)
  });
  while (worker_tid.load() == 0) usleep(100);
  rperf::Timer::Options o;
  o.frequency = 500;
  o.signal = rperf::Timer::default_signal();
  o.target = forward_target;
  rperf::Timer timer;
  std::string error;
  g_target = worker_tid.load();
  ASSERT_TRUE(timer.start(o, tick_where, background, nullptr, &error)) << error;
  usleep(200 * 1000);
  g_target = 0;  // no target: the timer thread runs the tick itself
  int forwarded = g_on_target.load();
  usleep(100 * 1000);
  timer.stop();
  stop = true;
  worker.join();
  EXPECT_GE(forwarded, 50);
  EXPECT_GE(g_elsewhere.load(), 20);
  EXPECT_LE(g_on_target.load(), forwarded + 1);
  EXPECT_EQ(g_self_wrong.load(), 0);
}

namespace {
std::atomic<int> g_target_calls{0};
// Every other tick has nothing to do (the extension: a GVL holder whose CPU clock did not move).
pid_t skip_every_other() { return g_target_calls.fetch_add(1) % 2 == 0 ? rperf::Timer::kSkipTick : 0; }
}  // namespace

// A tick the target function skips is counted as triggered and runs nowhere, in both modes.
TEST(Timer, SkippedTicksAreCountedButNotRun) {
  for (int signal : {rperf::Timer::default_signal(), 0}) {
    rperf::Timer::Options o;
    o.frequency = 500;
    o.signal = signal;
    o.target = skip_every_other;
    g_ticks = 0;
    g_target_calls = 0;
    rperf::Timer timer;
    std::string error;
    ASSERT_TRUE(timer.start(o, tick, background, nullptr, &error)) << error;
    usleep(200 * 1000);
    timer.stop();
    const int calls = g_target_calls.load();
    EXPECT_GE(calls, 20) << "signal " << signal;
    EXPECT_EQ(timer.trigger_count(), static_cast<uint64_t>(calls)) << "signal " << signal;
    EXPECT_EQ(g_ticks.load(), calls / 2) << "signal " << signal;  // the odd calls ran
  }
}
