#include "sampler/thread_timeline.hh"

#include <algorithm>

namespace rperf {

void ThreadTimeline::init(uint32_t seq, bool wall) {
  seq_ = seq;
  wall_ = wall;
}

void ThreadTimeline::start_running(int64_t now) {
  phase_ = ThreadPhase::kRunning;
  since_ = now;
  stack_known_ = false;  // whatever was walked before (a previous epoch) is stale
  frameless_ = false;
  baseline_known_ = false;
}

void ThreadTimeline::unobserve(int64_t cpu_baseline) {
  phase_ = ThreadPhase::kUnobserved;
  stack_known_ = false;
  frameless_ = false;
  baseline_known_ = cpu_baseline >= 0;
  since_ = baseline_known_ ? cpu_baseline : 0;
}

void ThreadTimeline::observe_running(int64_t now) {
  switch (phase_) {
    case ThreadPhase::kRunning:
      return;
    case ThreadPhase::kOffGvl:
      // SUSPENDED without a switch: the thread kept the GVL, the time since is running time.
      phase_ = ThreadPhase::kRunning;
      return;
    case ThreadPhase::kUnobserved:
      phase_ = ThreadPhase::kRunning;
      if (!baseline_known_) since_ = now;
      baseline_known_ = false;
      return;
    case ThreadPhase::kInGc:
    case ThreadPhase::kExited:
      RPERF_TRANSITION_ASSERT(!"an event on a thread in GC or exited");
      return;
  }
}

void ThreadTimeline::charge(VmState state, int64_t until, int64_t wall, int depth, ChargeSink& sink) {
  Charge c;
  c.state = state;
  c.label_set = label_set_;
  c.weight = until > since_ ? until - since_ : 0;
  c.wall_ns = wall;
  // A walk without a Ruby frame: the thread's last stack keeps the interval, else the
  // synthetic frame (never an empty stack).
  if (depth == 0) depth = stack_known_ ? Charge::kCurrentStack : Charge::kNoRubyFrame;
  c.depth = depth == Charge::kCurrentStack && !stack_known_ ? Charge::kNoRoom : depth;
  bool known = sink.charge(seq_, c);
  if (c.depth != Charge::kCurrentStack) stack_known_ = known;
  frameless_ = false;
  since_ = until;
}

void ThreadTimeline::charge_off_gvl(int64_t now, int64_t wall, ChargeSink& sink) {
  if (!wall_) {  // cpu mode: the CPU the thread burned without the GVL (C code), as running
    charge(kRunning, now, wall, Charge::kCurrentStack, sink);
    return;
  }
  RPERF_TRANSITION_ASSERT(now == wall);
  int64_t ready = ready_wall_.load(std::memory_order_acquire);
  if (ready == 0) ready = wall;  // READY not seen: blocked all along
  // READY before the interval began (a snapshot split it): all of it is waiting.
  ready = std::min(std::max(ready, off_gvl_wall_), wall);
  charge(kGvlBlocked, ready, ready, Charge::kCurrentStack, sink);
  charge(kGvlWait, wall, wall, Charge::kCurrentStack, sink);
}

void ThreadTimeline::tick(int64_t now, int64_t wall, int depth, ChargeSink& sink) {
  observe_running(now);
  // No Ruby frame yet (a new thread before its block's frame): the interval stays open and
  // goes to the thread's first real stack.
  if (depth == 0 && !stack_known_) {
    frameless_ = true;
    return;
  }
  charge(kRunning, now, wall, depth, sink);
}

void ThreadTimeline::suspended(int64_t now, int64_t wall, int depth, ChargeSink& sink) {
  observe_running(now);
  charge(kRunning, now, wall, depth, sink);
  phase_ = ThreadPhase::kOffGvl;
  off_gvl_wall_ = wall;
  ready_wall_.store(0, std::memory_order_relaxed);
}

void ThreadTimeline::resumed(int64_t now, int64_t wall, ChargeSink& sink) {
  switch (phase_) {
    case ThreadPhase::kOffGvl:
      charge_off_gvl(now, wall, sink);
      phase_ = ThreadPhase::kRunning;
      return;
    case ThreadPhase::kUnobserved:
      observe_running(now);
      return;
    case ThreadPhase::kRunning:  // its SUSPENDED was not seen (another thread's context)
      return;
    case ThreadPhase::kInGc:
    case ThreadPhase::kExited:
      RPERF_TRANSITION_ASSERT(!"RESUMED in GC or after exit");
      return;
  }
}

void ThreadTimeline::gc_enter(int64_t now, int64_t wall, int depth, ChargeSink& sink) {
  observe_running(now);
  charge(kRunning, now, wall, depth, sink);
  phase_ = ThreadPhase::kInGc;
}

void ThreadTimeline::gc_end_mark(int64_t now, int64_t wall, ChargeSink& sink) {
  if (phase_ != ThreadPhase::kInGc) return;
  charge(kGcMark, now, wall, Charge::kCurrentStack, sink);
}

void ThreadTimeline::gc_exit(int64_t now, int64_t wall, bool marking, ChargeSink& sink) {
  if (phase_ != ThreadPhase::kInGc) return;
  charge(marking ? kGcMark : kGcSweep, now, wall, Charge::kCurrentStack, sink);
  phase_ = ThreadPhase::kRunning;
}

void ThreadTimeline::set_label(uint32_t label_set, int64_t now, int64_t wall, int depth, ChargeSink& sink) {
  if (label_set == label_set_) return;
  observe_running(now);
  charge(kRunning, now, wall, depth, sink);
  label_set_ = label_set;
}

void ThreadTimeline::close_own(int64_t now, int64_t wall, int depth, ChargeSink& sink) {
  observe_running(now);
  if (phase_ != ThreadPhase::kRunning) return;
  charge(kRunning, now, wall, depth, sink);
}

void ThreadTimeline::close_off_gvl(int64_t now, int64_t wall, ChargeSink& sink) {
  if (phase_ != ThreadPhase::kOffGvl) return;
  charge_off_gvl(now, wall, sink);
  off_gvl_wall_ = wall;  // still off the GVL: counted from here (READY stays if seen)
}

void ThreadTimeline::exited(int64_t now, int64_t wall, ChargeSink& sink) {
  // A thread whose walks found no Ruby frame: its open interval is the synthetic frame's.
  if (phase_ == ThreadPhase::kRunning) charge(kRunning, now, wall, frameless_ ? Charge::kNoRubyFrame : Charge::kCurrentStack, sink);
  phase_ = ThreadPhase::kExited;
}

}  // namespace rperf
