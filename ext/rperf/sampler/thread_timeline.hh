// One thread's time as a state machine (Ruby-independent; test/cpp/thread_timeline_test.cc).
//
// A thread's observed time is cut into consecutive intervals. Every event closes the open
// interval and charges it ONCE, to the stack, VM state and labels that held DURING it, then
// moves to the next phase. By construction a thread's charges add up to the time it was
// observed (wall mode) or the CPU it burned (cpu mode).
//
//   phase        event (caller)                 charge of the closed interval      next phase
//   ───────────  ─────────────────────────────  ─────────────────────────────────  ──────────
//   Running      tick (sample job, walked)      running, walked stack              Running
//   Running      suspended (SUSPENDED, walked)  running, walked stack              OffGvl
//   OffGvl       resumed (RESUMED)              wall: blocked (to READY) + wait    Running
//                                               (READY to now); cpu: running (CPU
//                                               burned off the GVL); on the stack
//                                               walked at SUSPENDED
//   Running      gc_enter (walked)              running, walked stack              InGc
//   InGc         gc_end_mark                    GC mark, the GC_ENTER stack        InGc
//   InGc         gc_exit                        GC mark or sweep, same stack       Running
//   Running      set_label                      running, the OLD labels, the       Running
//                                               thread's last stack (or walked)
//   Running      close_own (stop/snapshot/      running, last stack (or walked)    Running
//                pause on this thread)
//   OffGvl       close_off_gvl (stop/snapshot/  as resumed, up to now              OffGvl
//                pause, another thread)
//   Running      exited (reaped)                running, last stack                Exited
//   any          unobserve (pause/resume,       nothing                            Unobserved
//                threads adopted at start)
//   Unobserved   any event on the thread        nothing: counting starts here      (as above)
//
// Two transitions are not the ideal path and are handled explicitly:
// - OffGvl + an event on the thread itself (tick, label, GC): Ruby emits SUSPENDED before it
//   checks interrupts and may then keep the GVL without sleeping and without RESUMED
//   (thread_sched_to_waiting_until_wakeup): the thread never left, so the time since
//   SUSPENDED is running time, charged by the event that proves it.
// - Unobserved: a thread's stack and state are unknown since start or the last resume (its
//   hooks were inert while paused): nothing is charged for that time, never another thread's
//   or a stale stack. A thread created while profiling (born) has a known cpu baseline (its
//   clock starts at zero) and counts from it in cpu mode.
//
// Stacks: only the caller can walk a stack. An event that needs one gets `depth`: > 0 the
// frames just walked, kNoRoom when the walk found no room (the stack is then unknown and the
// charge is dropped). For set_label and close_own the caller walks only when needs_walk().
// No interval is ever charged to an empty stack (rperf 0.11 records none): a walk that finds
// no Ruby frame (depth 0: a thread before its block's frame, or after it returned) leaves the
// thread's last stack in place; with none known, a tick leaves the interval open for the
// thread's first real stack, and any other event (one that must close it now) charges it to
// the synthetic frame kThreadStartFrame (Charge::kNoRubyFrame).
#pragma once
#include <atomic>
#include <cstdint>

#include "profile/vm_state.hh"

// Transitions that correct use never makes abort in debug builds (the C++ tests define it).
#ifdef RPERF_DEBUG_TRANSITIONS
#include <cstdio>
#include <cstdlib>
#define RPERF_TRANSITION_ASSERT(cond) \
  do {                                \
    if (!(cond)) {                    \
      std::fprintf(stderr, "rperf: impossible transition: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                   \
    }                                 \
  } while (0)
#else
#define RPERF_TRANSITION_ASSERT(cond) ((void)0)
#endif

namespace rperf {

// One charge: an interval's weight on a stack, in a VM state, under a label set.
struct Charge {
  static constexpr int kCurrentStack = -1;  // the thread's last stack
  static constexpr int kNoRoom = -2;        // the walk found no room: stack unknown
  static constexpr int kNoRubyFrame = -3;   // no Ruby frame, none known: the [thread start] frame
  VmState state = kRunning;
  uint32_t label_set = 0;
  int64_t weight = 0;    // >= 0, on the mode's clock
  int64_t wall_ns = 0;   // monotonic time at the end of the interval
  int depth = kCurrentStack;  // > 0: the stack just walked (it becomes current even at weight 0)
};

// Receives the charges (the session pushes them to its sample ring; tests record them).
class ChargeSink {
 public:
  // Returns whether the thread's current stack is known afterwards: false when a walked stack
  // (or kNoRubyFrame's) could not be stored (or was not walked: kNoRoom).
  virtual bool charge(uint32_t thread_seq, const Charge& c) = 0;

 protected:
  ~ChargeSink() = default;
};

enum class ThreadPhase : uint8_t { kUnobserved, kRunning, kOffGvl, kInGc, kExited };

class ThreadTimeline {
 public:
  void init(uint32_t seq, bool wall);  // once, when the thread's state is created

  ThreadPhase phase() const { return phase_; }
  uint32_t label_set() const { return label_set_; }
  int64_t since() const { return since_; }
  // Whether set_label / close_own need a fresh walk (no stack of this thread is known).
  bool needs_walk() const { return !stack_known_; }

  // Counting starts at `now`: the thread that starts or resumes the session holds the GVL.
  void start_running(int64_t now);
  // Nothing known of the thread from here until its next event (pause/resume, adoption at
  // start). `cpu_baseline` >= 0: its CPU clock reading is known (cpu mode), counted from it.
  void unobserve(int64_t cpu_baseline = -1);

  void tick(int64_t now, int64_t wall, int depth, ChargeSink& sink);
  void suspended(int64_t now, int64_t wall, int depth, ChargeSink& sink);
  // READY: any thread, without the GVL (the only event that may be).
  void ready(int64_t wall) { ready_wall_.store(wall, std::memory_order_release); }
  void resumed(int64_t now, int64_t wall, ChargeSink& sink);
  void gc_enter(int64_t now, int64_t wall, int depth, ChargeSink& sink);
  void gc_end_mark(int64_t now, int64_t wall, ChargeSink& sink);
  void gc_exit(int64_t now, int64_t wall, bool marking, ChargeSink& sink);
  void set_label(uint32_t label_set, int64_t now, int64_t wall, int depth, ChargeSink& sink);
  // A label change while nothing is observed (a paused deferred session): nothing to close.
  void relabel(uint32_t label_set) { label_set_ = label_set; }
  void close_own(int64_t now, int64_t wall, int depth, ChargeSink& sink);
  // Another thread, off the GVL, at a snapshot/pause/stop: its interval closes at `now`
  // (cpu mode: its CPU clock), `wall`; it stays off the GVL, counted from here.
  void close_off_gvl(int64_t now, int64_t wall, ChargeSink& sink);
  void exited(int64_t now, int64_t wall, ChargeSink& sink);

 private:
  // An event on the thread itself: it runs (see the header comment for OffGvl/Unobserved).
  void observe_running(int64_t now);
  void charge(VmState state, int64_t until, int64_t wall, int depth, ChargeSink& sink);
  void charge_off_gvl(int64_t now, int64_t wall, ChargeSink& sink);

  uint32_t seq_ = 0;
  bool wall_ = false;
  ThreadPhase phase_ = ThreadPhase::kUnobserved;
  bool stack_known_ = false;     // the sink holds this thread's stack of the open interval
  bool frameless_ = false;       // no stack known, and the last walk found no Ruby frame
  bool baseline_known_ = false;  // Unobserved with a valid since_ (cpu: born or adopted)
  uint32_t label_set_ = 0;
  int64_t since_ = 0;            // start of the open interval, on the mode's clock
  int64_t off_gvl_wall_ = 0;     // OffGvl: monotonic time the off-GVL interval started
  std::atomic<int64_t> ready_wall_{0};  // READY's monotonic time (0: not seen)
};

}  // namespace rperf
