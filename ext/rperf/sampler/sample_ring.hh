// The hand-off from the GVL holder (producer: postponed job, GVL and GC hooks, serialised by
// the GVL) to the worker thread (consumer: the aggregation drain, or stop/snapshot under the
// consumer lock). Two fixed-size single-producer/single-consumer rings published together:
// records, and the frames (method handles, and lines when the session captures them) of the
// stacks the records carry. The producer's stack walk writes straight into the frame ring
// (leaf-first, as rb_profile_frames fills a buffer), so a sample costs the walk and nothing
// more; the worker compares each stack with the thread's previous one and interns only what
// changed. Nothing here allocates after construction; when either ring is full a record is
// refused and the producer counts it as dropped.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "profile/vm_state.hh"

namespace rperf {

struct SampleRecord {
  enum Kind : uint8_t {
    kInterval,    // weight on the thread's current stack
    kStack,       // the thread's stack becomes the `run` frames (leaf-first), then weight on it
    kThreadGone,  // the thread exited: the worker forgets its stack
    kAllocation,  // a sampled allocation on the `run` frames: weight_ns objects of class `klass`
  };
  uint32_t thread_seq = 0;
  uint32_t label_set = 0;
  uint32_t run = 0;     // kStack: the stack's depth: that many frames in the frame ring
  int64_t weight_ns = 0;
  int64_t time_ns = 0;  // end of the interval, ns since the session started
  VmState vm_state = kRunning;
  Kind kind = kInterval;
  uint32_t slot = 0;   // kAllocation: the object's LiveObjects slot (kNoSlot: not tracked)
  uint64_t klass = 0;  // kAllocation: the object's class (a VALUE; 0 for internal objects)
};

class SampleRing {
 public:
  // Capacities are powers of two; `max_run` is the most frames one record carries (the walk's
  // limit); `lines` allocates the line ring too.
  explicit SampleRing(size_t records_pow2 = 1 << 14, size_t frames_pow2 = 1 << 17, uint32_t max_run = 1024, bool lines = false)
      : records_(records_pow2), methods_(frames_pow2 + max_run), lines_(lines ? frames_pow2 + max_run : 0),
        record_mask_(records_pow2 - 1), frame_mask_(frames_pow2 - 1), max_run_(max_run) {}

  // Producer: room for `max_run` contiguous frames at the head (a walk writes there), or null
  // when the frame ring has no room. `lines` gets the line slots (null without lines).
  uint64_t* frame_slots(int32_t** lines) {
    uint64_t fhead = frame_head_.load(std::memory_order_relaxed);
    if (fhead + max_run_ - frame_tail_.load(std::memory_order_acquire) > frame_mask_ + 1) return nullptr;
    size_t at = fhead & frame_mask_;
    if (lines) *lines = lines_.empty() ? nullptr : &lines_[at];
    return &methods_[at];
  }

  // Publishes `r`; a kStack record's `run` frames were written at frame_slots() (leaf-first).
  // False when the record ring is full (the frames are then not published either).
  bool push(const SampleRecord& r) {
    uint64_t head = record_head_.load(std::memory_order_relaxed);
    if (head - record_tail_.load(std::memory_order_acquire) > record_mask_) return false;
    if (r.run > 0) {
      uint64_t fhead = frame_head_.load(std::memory_order_relaxed);
      size_t at = fhead & frame_mask_;
      size_t cap = frame_mask_ + 1;
      if (at + r.run > cap) {  // the walk ran past the end: move that part to the start
        for (size_t k = cap; k < at + r.run; k++) methods_[k - cap] = methods_[k];
        if (!lines_.empty()) {
          for (size_t k = cap; k < at + r.run; k++) lines_[k - cap] = lines_[k];
        }
      }
      frame_head_.store(fhead + r.run, std::memory_order_release);
    }
    records_[head & record_mask_] = r;
    record_head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // A record's frames as the consumer sees them, leaf-first (index 0 is the leaf).
  class Run {
   public:
    Run(const SampleRing& ring, uint64_t start) : ring_(ring), start_(start) {}
    uint64_t method(uint32_t k) const { return ring_.methods_[(start_ + k) & ring_.frame_mask_]; }
    int32_t line(uint32_t k) const { return ring_.lines_.empty() ? 0 : ring_.lines_[(start_ + k) & ring_.frame_mask_]; }

   private:
    const SampleRing& ring_;
    uint64_t start_;
  };

  // Consumer: calls consume(record, run) for every published record, in order.
  template <typename F>
  size_t drain(F&& consume) {
    uint64_t tail = record_tail_.load(std::memory_order_relaxed);
    uint64_t head = record_head_.load(std::memory_order_acquire);  // frames were published before
    uint64_t ftail = frame_tail_.load(std::memory_order_relaxed);
    for (uint64_t i = tail; i < head; i++) {
      const SampleRecord& r = records_[i & record_mask_];
      consume(r, Run(*this, ftail));
      ftail += r.run;
    }
    frame_tail_.store(ftail, std::memory_order_release);
    record_tail_.store(head, std::memory_order_release);
    return static_cast<size_t>(head - tail);
  }

  // The method handles not yet consumed (for the GC: they must stay alive until interned).
  // Neither side may run concurrently: the caller holds the consumer lock and is the producer.
  template <typename F>
  void each_pending_method(F&& f) const {
    uint64_t head = frame_head_.load(std::memory_order_acquire);
    for (uint64_t i = frame_tail_.load(std::memory_order_acquire); i < head; i++) f(methods_[i & frame_mask_]);
  }

  // The records not yet consumed (for the GC: the classes they name). Same rule as above.
  template <typename F>
  void each_pending_record(F&& f) const {
    uint64_t head = record_head_.load(std::memory_order_acquire);
    for (uint64_t i = record_tail_.load(std::memory_order_acquire); i < head; i++) f(records_[i & record_mask_]);
  }

  size_t record_capacity() const { return records_.size(); }
  size_t frame_capacity() const { return frame_mask_ + 1; }

 private:
  std::vector<SampleRecord> records_;
  std::vector<uint64_t> methods_;
  std::vector<int32_t> lines_;
  size_t record_mask_;
  size_t frame_mask_;
  uint32_t max_run_;
  alignas(64) std::atomic<uint64_t> record_head_{0};
  std::atomic<uint64_t> frame_head_{0};
  alignas(64) std::atomic<uint64_t> record_tail_{0};
  std::atomic<uint64_t> frame_tail_{0};
};

}  // namespace rperf
