// The per-thread time state machine (sampler/thread_timeline.hh), without Ruby: every
// transition with its exact charges, the Puma pattern, and conservation over random events.
#include "sampler/thread_timeline.hh"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <vector>

namespace rperf {
namespace {

// A sink that stands for the session: a walked "depth" is the id of a stack (stack 7 is
// "the stack walked with depth 7"); the thread's current stack is the last one stored.
struct Recorded {
  uint32_t seq;
  int stack;  // -1: unknown (dropped)
  VmState state;
  uint32_t label;
  int64_t weight;
  bool operator==(const Recorded& o) const {
    return seq == o.seq && stack == o.stack && state == o.state && label == o.label && weight == o.weight;
  }
};
std::ostream& operator<<(std::ostream& os, const Recorded& r) {
  return os << "{seq " << r.seq << ", stack " << r.stack << ", state " << int(r.state) << ", label " << r.label
            << ", weight " << r.weight << "}";
}

struct FakeSink : ChargeSink {
  std::map<uint32_t, int> current;
  std::vector<Recorded> charges;  // weight > 0 only
  int64_t dropped = 0;
  bool refuse_stacks = false;  // the ring is full

  static constexpr int kThreadStartStack = 99;  // the synthetic frame's stack

  bool charge(uint32_t seq, const Charge& c) override {
    int stack = -1;
    bool known = true;
    EXPECT_NE(c.depth, 0) << "an empty stack is never charged";
    if (c.depth == Charge::kNoRoom) {
      known = false;
    } else if (c.depth >= 0 || c.depth == Charge::kNoRubyFrame) {
      int walked = c.depth == Charge::kNoRubyFrame ? kThreadStartStack : c.depth;
      known = !refuse_stacks;
      if (known) current[seq] = walked;
      else current.erase(seq);
      stack = known ? walked : -1;
    } else {
      auto it = current.find(seq);
      stack = it == current.end() ? -1 : it->second;
    }
    if (c.weight > 0) {
      if (stack < 0) dropped += c.weight;
      else charges.push_back({seq, stack, c.state, c.label_set, c.weight});
    }
    return known;
  }
  int64_t total(uint32_t seq) const {
    int64_t t = 0;
    for (const Recorded& r : charges) t += r.seq == seq ? r.weight : 0;
    return t;
  }
  int64_t total(uint32_t seq, VmState state, uint32_t label) const {
    int64_t t = 0;
    for (const Recorded& r : charges) t += r.seq == seq && r.state == state && r.label == label ? r.weight : 0;
    return t;
  }
};

constexpr bool kWall = true;
constexpr bool kCpu = false;
constexpr int kAppStack = 7;   // e.g. Digest inside the app's call
constexpr int kPoolStack = 3;  // e.g. Puma's thread pool waiting for work
constexpr uint32_t kNoLabel = 0;
constexpr uint32_t kHash = 1;  // endpoint=GET /hash
constexpr uint32_t kSlow = 2;  // endpoint=GET /slow

struct Timeline : ThreadTimeline {
  Timeline(uint32_t seq, bool wall, int64_t start) {
    init(seq, wall);
    start_running(start);
  }
};

TEST(ThreadTimeline, TicksChargeRunningTimeOnTheWalkedStack) {
  FakeSink sink;
  Timeline t(1, kWall, 1000);
  t.tick(1400, 1400, kAppStack, sink);
  t.tick(2000, 2000, kPoolStack, sink);
  EXPECT_EQ(sink.charges, (std::vector<Recorded>{{1, kAppStack, kRunning, 0, 400}, {1, kPoolStack, kRunning, 0, 600}}));
  EXPECT_EQ(t.phase(), ThreadPhase::kRunning);
}

TEST(ThreadTimeline, OffGvlInWallModeIsBlockedThenWaitOnTheSuspendedStack) {
  FakeSink sink;
  Timeline t(1, kWall, 0);
  t.set_label(kSlow, 0, 0, kPoolStack, sink);
  t.suspended(100, 100, kAppStack, sink);  // sleep
  EXPECT_EQ(t.phase(), ThreadPhase::kOffGvl);
  t.ready(5100);
  t.resumed(5300, 5300, sink);
  EXPECT_EQ(sink.charges, (std::vector<Recorded>{{1, kAppStack, kRunning, kSlow, 100},
                                                 {1, kAppStack, kGvlBlocked, kSlow, 5000},
                                                 {1, kAppStack, kGvlWait, kSlow, 200}}));
  EXPECT_EQ(t.phase(), ThreadPhase::kRunning);
}

TEST(ThreadTimeline, ReadyNotSeenIsBlockedAllAlong) {
  FakeSink sink;
  Timeline t(1, kWall, 0);
  t.suspended(10, 10, kAppStack, sink);
  t.resumed(90, 90, sink);
  EXPECT_EQ(sink.total(1, kGvlBlocked, 0), 80);
  EXPECT_EQ(sink.total(1, kGvlWait, 0), 0);
}

TEST(ThreadTimeline, OffGvlInCpuModeIsTheCpuBurnedAsRunning) {
  FakeSink sink;
  Timeline t(1, kCpu, 50);
  t.suspended(80, 1000, kAppStack, sink);  // cpu clock 80 at SUSPENDED
  t.ready(9000);
  t.resumed(95, 9500, sink);  // 15 ns of CPU burned by C code without the GVL
  EXPECT_EQ(sink.charges, (std::vector<Recorded>{{1, kAppStack, kRunning, 0, 30}, {1, kAppStack, kRunning, 0, 15}}));
}

// The Puma pattern: A (labelled /hash) is preempted by a time slice inside the app, B
// (labelled /slow) runs, A resumes and its block ends; each interval keeps its own labels and
// CPU-only code is never charged as blocked.
TEST(ThreadTimeline, PumaTimeSliceKeepsEachRequestsLabels) {
  FakeSink sink;
  Timeline a(1, kWall, 0), b(2, kWall, 0);
  b.suspended(0, 0, kPoolStack, sink);  // B idle in the pool
  a.set_label(kHash, 10, 10, kPoolStack, sink);
  a.tick(1000, 1000, kAppStack, sink);
  a.suspended(1500, 1500, kAppStack, sink);  // time slice: SUSPENDED then READY at once
  a.ready(1500);
  b.ready(1400);
  b.resumed(1500, 1500, sink);  // B gets the GVL: a /slow request
  b.set_label(kSlow, 1600, 1600, Charge::kCurrentStack, sink);
  b.suspended(1700, 1700, kAppStack + 1, sink);  // sleep in /slow
  a.resumed(1700, 1700, sink);
  a.tick(2000, 2000, kAppStack, sink);
  a.set_label(kNoLabel, 2300, 2300, Charge::kCurrentStack, sink);  // A's block ends
  a.suspended(2400, 2400, kPoolStack, sink);                      // A back to the pool

  EXPECT_EQ(sink.total(1, kRunning, kHash), (1000 - 10) + 500 + 300 + 300);
  EXPECT_EQ(sink.total(1, kGvlWait, kHash), 200);
  EXPECT_EQ(sink.total(1, kGvlBlocked, kHash), 0);  // CPU-only code is never "blocked"
  EXPECT_EQ(sink.total(1, kRunning, kNoLabel), 10 + 100);
  for (const Recorded& r : sink.charges) {
    if (r.stack == kAppStack) {
      EXPECT_EQ(r.label, kHash) << r;
    }
    if (r.state == kGvlBlocked) {
      EXPECT_NE(r.stack, kAppStack) << r;
    }
  }
  EXPECT_EQ(sink.total(2, kGvlBlocked, kNoLabel), 1400);
  EXPECT_EQ(sink.total(2, kGvlWait, kNoLabel), 100);
  EXPECT_EQ(sink.total(2, kRunning, kNoLabel), 100);  // RESUMED..label, on the pool stack
  EXPECT_EQ(sink.total(2, kRunning, kSlow), 100);
  EXPECT_EQ(sink.total(1), 2400);
  EXPECT_EQ(sink.total(2), 1700);
}

TEST(ThreadTimeline, ALabelChangeClosesTheIntervalUnderTheOldLabels) {
  FakeSink sink;
  Timeline t(1, kWall, 0);
  t.tick(100, 100, kAppStack, sink);
  t.set_label(kHash, 150, 150, Charge::kCurrentStack, sink);
  t.set_label(kHash, 170, 170, Charge::kCurrentStack, sink);  // no change: nothing closes
  t.tick(400, 400, kAppStack, sink);
  EXPECT_EQ(sink.charges, (std::vector<Recorded>{{1, kAppStack, kRunning, 0, 100},
                                                 {1, kAppStack, kRunning, 0, 50},
                                                 {1, kAppStack, kRunning, kHash, 250}}));
}

TEST(ThreadTimeline, ALabelChangeWithoutAKnownStackNeedsAWalk) {
  FakeSink sink;
  Timeline t(1, kWall, 0);
  EXPECT_TRUE(t.needs_walk());
  t.set_label(kHash, 40, 40, kPoolStack, sink);
  EXPECT_FALSE(t.needs_walk());
  EXPECT_EQ(sink.charges, (std::vector<Recorded>{{1, kPoolStack, kRunning, 0, 40}}));
}

// Ruby emits SUSPENDED before it checks interrupts and may keep the GVL without RESUMED: the
// next event on the thread proves it ran, and the time is running time, charged once.
TEST(ThreadTimeline, SuspendedWithoutSwitchIsRunningTime) {
  FakeSink sink;
  Timeline t(1, kWall, 0);
  t.suspended(100, 100, kPoolStack, sink);
  t.tick(300, 300, kAppStack, sink);  // the postponed job ran instead of sleeping
  EXPECT_EQ(t.phase(), ThreadPhase::kRunning);
  t.close_off_gvl(500, 500, sink);  // a snapshot elsewhere: not off the GVL, nothing to close
  t.tick(600, 600, kAppStack, sink);
  EXPECT_EQ(sink.charges, (std::vector<Recorded>{{1, kPoolStack, kRunning, 0, 100},
                                                 {1, kAppStack, kRunning, 0, 200},
                                                 {1, kAppStack, kRunning, 0, 300}}));
}

// A deferred session: while paused nothing is observed; after a resume by another thread, a
// thread that was off the GVL (or whose hooks were inert) is charged nothing until its next
// event, never on its stale stack or labels.
TEST(ThreadTimeline, AfterResumeAStaleThreadIsChargedNothingUntilItsNextEvent) {
  FakeSink sink;
  Timeline t(1, kWall, 0);
  t.set_label(kHash, 0, 0, kPoolStack, sink);
  t.tick(100, 100, kAppStack, sink);
  t.set_label(kNoLabel, 200, 200, Charge::kCurrentStack, sink);
  t.suspended(200, 200, kPoolStack, sink);
  t.close_off_gvl(300, 300, sink);  // pause (another thread's block ended)
  t.unobserve();                    // resume by another thread
  t.close_off_gvl(5000, 5000, sink);  // a snapshot: nothing known, nothing charged
  t.resumed(6000, 6000, sink);        // a request for this thread: counted from here
  t.set_label(kSlow, 6100, 6100, Charge::kCurrentStack, sink);
  t.tick(6500, 6500, kAppStack, sink);
  EXPECT_EQ(sink.total(1), 100 + 100 + 100 + 400);
  EXPECT_EQ(sink.dropped, 100);  // RESUMED..label: its stack unknown since the resume
  EXPECT_EQ(sink.total(1, kRunning, kSlow), 400);
  EXPECT_EQ(sink.total(1, kGvlBlocked, kNoLabel), 100);
}

TEST(ThreadTimeline, GcSlicesAreChargedOnceOnTheEnterStack) {
  FakeSink sink;
  Timeline t(1, kWall, 0);
  t.set_label(kHash, 0, 0, kPoolStack, sink);
  t.gc_enter(100, 100, kAppStack, sink);
  EXPECT_EQ(t.phase(), ThreadPhase::kInGc);
  t.gc_end_mark(160, 160, sink);
  t.gc_exit(200, 200, /*marking=*/false, sink);
  t.gc_enter(300, 300, kAppStack, sink);
  t.gc_exit(320, 320, /*marking=*/true, sink);  // an incremental marking step
  t.tick(400, 400, kAppStack, sink);
  EXPECT_EQ(sink.charges, (std::vector<Recorded>{{1, kAppStack, kRunning, kHash, 100},
                                                 {1, kAppStack, kGcMark, kHash, 60},
                                                 {1, kAppStack, kGcSweep, kHash, 40},
                                                 {1, kAppStack, kRunning, kHash, 100},
                                                 {1, kAppStack, kGcMark, kHash, 20},
                                                 {1, kAppStack, kRunning, kHash, 80}}));
}

TEST(ThreadTimeline, ASnapshotSplitsAnOffGvlIntervalWithoutLosingOrDoubling) {
  FakeSink sink;
  Timeline t(1, kWall, 0);
  t.suspended(0, 0, kAppStack, sink);
  t.ready(300);
  t.close_off_gvl(500, 500, sink);  // snapshot 1
  t.close_off_gvl(800, 800, sink);  // snapshot 2: READY was before: all waiting
  t.resumed(1000, 1000, sink);
  EXPECT_EQ(sink.total(1, kGvlBlocked, 0), 300);
  EXPECT_EQ(sink.total(1, kGvlWait, 0), 700);
  EXPECT_EQ(t.phase(), ThreadPhase::kRunning);
}

TEST(ThreadTimeline, ABornThreadCountsItsCpuFromZero) {
  FakeSink sink;
  ThreadTimeline t;
  t.init(2, kCpu);
  t.unobserve(0);
  t.resumed(40, 1000, sink);  // first RESUMED: the CPU clock already reads 40
  t.tick(250, 2000, kAppStack, sink);
  EXPECT_EQ(sink.charges, (std::vector<Recorded>{{2, kAppStack, kRunning, 0, 250}}));
}

TEST(ThreadTimeline, AThreadAdoptedInWallModeCountsFromItsFirstEvent) {
  FakeSink sink;
  ThreadTimeline t;
  t.init(2, kWall);
  t.unobserve();
  t.resumed(4000, 4000, sink);
  t.tick(4300, 4300, kAppStack, sink);
  EXPECT_EQ(sink.charges, (std::vector<Recorded>{{2, kAppStack, kRunning, 0, 300}}));
}

TEST(ThreadTimeline, AWalkWithoutRoomDropsUntilTheNextWalk) {
  FakeSink sink;
  Timeline t(1, kWall, 0);
  t.tick(100, 100, Charge::kNoRoom, sink);
  EXPECT_TRUE(t.needs_walk());
  t.suspended(150, 150, kAppStack, sink);
  t.resumed(200, 200, sink);
  EXPECT_EQ(sink.dropped, 100);
  EXPECT_EQ(sink.total(1), 100);
}

TEST(ThreadTimeline, ExitClosesARunningThreadsLastInterval) {
  FakeSink sink;
  Timeline t(1, kWall, 0);
  t.tick(100, 100, kAppStack, sink);
  t.exited(180, 180, sink);
  EXPECT_EQ(t.phase(), ThreadPhase::kExited);
  EXPECT_EQ(sink.total(1), 180);
}

TEST(ThreadTimeline, CloseOwnChargesTheTailOnTheLastStack) {
  FakeSink sink;
  Timeline t(1, kWall, 0);
  t.set_label(kHash, 0, 0, kPoolStack, sink);
  t.tick(100, 100, kAppStack, sink);
  t.close_own(130, 130, Charge::kCurrentStack, sink);
  EXPECT_EQ(sink.charges.back(), (Recorded{1, kAppStack, kRunning, kHash, 30}));
}

// A walk that finds no Ruby frame (depth 0: a new thread before its block's frame, or one whose
// block returned) never charges an empty stack: a tick leaves the interval open for the first
// real stack; the thread's last stack keeps it; with none known, an event that must close the
// interval charges it to the synthetic [thread start] frame.
TEST(ThreadTimeline, ANewThreadsFirstIntervalGoesToItsFirstRealStack) {
  FakeSink sink;
  ThreadTimeline t;
  t.init(2, kCpu);
  t.unobserve(0);  // born: its CPU counts from zero
  t.resumed(40, 1000, sink);
  t.tick(90, 1100, 0, sink);  // before the block's frame: nothing charged yet
  EXPECT_TRUE(sink.charges.empty());
  t.tick(250, 2000, kAppStack, sink);
  EXPECT_EQ(sink.charges, (std::vector<Recorded>{{2, kAppStack, kRunning, 0, 250}}));
}

TEST(ThreadTimeline, AWalkWithoutRubyFramesKeepsTheLastStack) {
  FakeSink sink;
  Timeline t(1, kWall, 0);
  t.tick(100, 100, kAppStack, sink);
  t.tick(300, 300, 0, sink);  // the block returned: thread teardown
  t.suspended(350, 350, 0, sink);
  t.resumed(400, 400, sink);
  t.exited(420, 420, sink);
  EXPECT_EQ(sink.charges, (std::vector<Recorded>{{1, kAppStack, kRunning, 0, 100},
                                                 {1, kAppStack, kRunning, 0, 200},
                                                 {1, kAppStack, kRunning, 0, 50},
                                                 {1, kAppStack, kGvlBlocked, 0, 50},
                                                 {1, kAppStack, kRunning, 0, 20}}));
}

TEST(ThreadTimeline, WithoutAnyRubyFrameTheIntervalGoesToTheThreadStartFrame) {
  const int start = FakeSink::kThreadStartStack;
  {  // it blocks before its first frame: the interval closes there, and the blocked time follows
    FakeSink sink;
    Timeline t(1, kWall, 0);
    t.tick(10, 10, 0, sink);
    t.suspended(30, 30, 0, sink);
    t.resumed(80, 80, sink);
    t.tick(100, 100, kAppStack, sink);
    EXPECT_EQ(sink.charges, (std::vector<Recorded>{{1, start, kRunning, 0, 30},
                                                   {1, start, kGvlBlocked, 0, 50},
                                                   {1, kAppStack, kRunning, 0, 20}}));
  }
  {  // it exits after a walk found no frame: its last interval is the synthetic frame's
    FakeSink sink;
    Timeline t(1, kWall, 0);
    t.tick(10, 10, 0, sink);
    t.exited(25, 25, sink);
    EXPECT_EQ(sink.charges, (std::vector<Recorded>{{1, start, kRunning, 0, 25}}));
    EXPECT_EQ(sink.dropped, 0);
  }
  {  // GC and a label change before its first frame
    FakeSink sink;
    Timeline t(1, kWall, 0);
    t.gc_enter(10, 10, 0, sink);
    t.gc_exit(40, 40, false, sink);
    t.set_label(kHash, 50, 50, 0, sink);
    EXPECT_EQ(sink.charges, (std::vector<Recorded>{{1, start, kRunning, 0, 10},
                                                   {1, start, kGcSweep, 0, 30},
                                                   {1, start, kRunning, 0, 10}}));
  }
}

// Random legal event sequences for three threads sharing one GVL: each thread's charges (plus
// what was dropped for unknown stacks) add up exactly to the time it was observed.
TEST(ThreadTimeline, ChargesAddUpToObservedTimeOverRandomEvents) {
  std::mt19937 rng(20261125);
  for (int round = 0; round < 200; round++) {
    FakeSink sink;
    const int n = 3;
    std::deque<Timeline> threads;
    int64_t now = 1000;
    for (int i = 0; i < n; i++) threads.emplace_back(static_cast<uint32_t>(i + 1), kWall, now);
    for (int i = 1; i < n; i++) threads[static_cast<size_t>(i)].suspended(now, now, kPoolStack, sink);
    const int64_t start = now;
    size_t holder = 0;
    for (int step = 0; step < 300; step++) {
      now += static_cast<int64_t>(rng() % 500);
      Timeline& h = threads[holder];
      switch (rng() % 6) {
        case 0: h.tick(now, now, static_cast<int>(rng() % 10), sink); break;
        case 1: h.set_label(rng() % 3, now, now, Charge::kCurrentStack, sink); break;
        case 2: {
          h.gc_enter(now, now, static_cast<int>(rng() % 10), sink);
          now += static_cast<int64_t>(rng() % 50);
          if (rng() % 2) h.gc_end_mark(now, now, sink);
          now += static_cast<int64_t>(rng() % 50);
          h.gc_exit(now, now, rng() % 2, sink);
          break;
        }
        case 3:  // snapshot on the holder
          h.close_own(now, now, Charge::kCurrentStack, sink);
          for (size_t i = 0; i < threads.size(); i++) {
            if (i != holder) threads[i].close_off_gvl(now, now, sink);
          }
          break;
        default: {  // the GVL moves to another thread
          size_t next = (holder + 1 + rng() % (n - 1)) % n;
          h.suspended(now, now, static_cast<int>(rng() % 10), sink);
          h.ready(now + static_cast<int64_t>(rng() % 2) * 5);
          threads[next].ready(now - static_cast<int64_t>(rng() % 100));
          threads[next].resumed(now, now, sink);
          holder = next;
        }
      }
    }
    now += 100;
    threads[holder].close_own(now, now, Charge::kCurrentStack, sink);
    for (size_t i = 0; i < threads.size(); i++) {
      if (i != holder) threads[i].close_off_gvl(now, now, sink);
    }
    int64_t all = sink.dropped;
    for (int i = 1; i <= n; i++) all += sink.total(static_cast<uint32_t>(i));
    ASSERT_EQ(all, n * (now - start)) << "round " << round;
  }
}

}  // namespace
}  // namespace rperf
