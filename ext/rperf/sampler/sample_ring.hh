// The hand-off from the GVL holder (producer: postponed job, GVL and GC hooks, serialised by
// the GVL) to the worker thread (consumer: the aggregation drain, or stop/snapshot under the
// consumer lock). Two fixed-size single-producer/single-consumer rings published together:
// records, and the frames (method handles, and lines when the session captures them) of the
// stacks the records carry. A record with a stack carries only the frames that differ from the
// thread's previous stack (a "frame run" after `prefix` unchanged root-side frames), so the
// producer copies a few words per sample and the worker interns them. Push never allocates;
// when either ring is full the record is refused and the producer counts it as dropped.
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
    kStack,       // the thread's stack becomes prefix + run, then weight (if any) on it
    kThreadGone,  // the thread exited: the worker forgets its stack
  };
  uint32_t thread_seq = 0;
  uint32_t label_set = 0;
  uint32_t prefix = 0;  // kStack: frames kept from the previous stack, root-first
  uint32_t run = 0;     // kStack: new frames after them, in the frame ring
  int64_t weight_ns = 0;
  int64_t time_ns = 0;  // end of the interval, ns since the session started
  VmState vm_state = kRunning;
  Kind kind = kInterval;
};

class SampleRing {
 public:
  // Capacities are powers of two; `lines` allocates the line ring too.
  explicit SampleRing(size_t records_pow2 = 1 << 14, size_t frames_pow2 = 1 << 17, bool lines = false)
      : records_(records_pow2), methods_(frames_pow2), lines_(lines ? frames_pow2 : 0),
        record_mask_(records_pow2 - 1), frame_mask_(frames_pow2 - 1) {}

  // `methods`/`lines` are leaf-first (as rb_profile_frames fills them); the record's run is
  // their first `r.run` entries, stored root-first. `lines` may be null (line 0).
  bool push(const SampleRecord& r, const uint64_t* methods = nullptr, const int32_t* lines = nullptr) {
    uint64_t head = record_head_.load(std::memory_order_relaxed);
    if (head - record_tail_.load(std::memory_order_acquire) > record_mask_) return false;
    uint64_t fhead = frame_head_.load(std::memory_order_relaxed);
    if (r.run > 0) {
      if (fhead + r.run - frame_tail_.load(std::memory_order_acquire) > frame_mask_ + 1) return false;
      for (uint32_t k = 0; k < r.run; k++) methods_[(fhead + k) & frame_mask_] = methods[r.run - 1 - k];
      if (!lines_.empty()) {
        for (uint32_t k = 0; k < r.run; k++) lines_[(fhead + k) & frame_mask_] = lines ? lines[r.run - 1 - k] : 0;
      }
      frame_head_.store(fhead + r.run, std::memory_order_release);
    }
    records_[head & record_mask_] = r;
    record_head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // A record's frames as the consumer sees them, root-first.
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

  size_t record_capacity() const { return records_.size(); }
  size_t frame_capacity() const { return methods_.size(); }

 private:
  std::vector<SampleRecord> records_;
  std::vector<uint64_t> methods_;
  std::vector<int32_t> lines_;
  size_t record_mask_;
  size_t frame_mask_;
  alignas(64) std::atomic<uint64_t> record_head_{0};
  std::atomic<uint64_t> frame_head_{0};
  alignas(64) std::atomic<uint64_t> record_tail_{0};
  std::atomic<uint64_t> frame_tail_{0};
};

}  // namespace rperf
