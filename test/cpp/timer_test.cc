#include "sampler/timer.hh"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "util/clock.hh"

namespace {
std::atomic<int> g_ticks{0};
std::atomic<int> g_background{0};
void tick() { g_ticks.fetch_add(1); }
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
