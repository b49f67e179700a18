// A timeline's charge as a record of a sample ring (the one producer of that ring at a time
// calls it): the main Ractor's session and the other Ractors' threads each push to their own.
#pragma once
#include <atomic>
#include <cstdint>

#include "sampler/sample_ring.hh"
#include "sampler/stack_store.hh"
#include "sampler/thread_timeline.hh"

namespace rperf {

// Returns ChargeSink::charge's answer; a weight with nowhere to go is counted in `dropped`.
// `start_mono_ns`: the session interval's start (records carry times relative to it).
inline bool push_charge(SampleRing& ring, std::atomic<uint64_t>& dropped, int64_t start_mono_ns, uint32_t thread_seq, const Charge& c) {
  SampleRecord r;
  r.thread_seq = thread_seq;
  r.label_set = c.label_set;
  r.vm_state = c.state;
  r.weight_ns = c.weight;
  r.time_ns = c.wall_ns - start_mono_ns;
  int depth = c.depth;
  if (depth == Charge::kNoRubyFrame) {  // the one synthetic frame, written where a walk writes
    int32_t* lines = nullptr;
    if (uint64_t* slots = ring.frame_slots(&lines)) {
      slots[0] = kThreadStartMethod;
      if (lines) lines[0] = 0;
      depth = 1;
    } else {
      depth = Charge::kNoRoom;  // the frame ring is full
    }
  }
  if (depth == Charge::kNoRoom) {  // the stack is unknown: the weight has nowhere to go
    if (c.weight > 0) dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (depth >= 0) {  // `depth` frames were just written into the ring: the thread's stack now
    r.kind = SampleRecord::kStack;
    r.run = static_cast<uint32_t>(depth);
    bool stored = ring.push(r);
    if (!stored && c.weight > 0) dropped.fetch_add(1, std::memory_order_relaxed);
    return stored;
  }
  if (c.weight > 0 && !ring.push(r)) dropped.fetch_add(1, std::memory_order_relaxed);
  return true;  // on the current stack, which stays
}

}  // namespace rperf
