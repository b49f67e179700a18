// Fixed-size single-producer/single-consumer ring of samples (stack = a StackStore node id). The producer is whoever
// holds Ruby's GVL (postponed job, GVL and GC hooks: the GVL serialises them); the consumer is
// the aggregation worker, or stop/snapshot under the consumer lock. Push never allocates; when
// the ring is full the sample is counted as dropped.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "profile/profile.hh"  // Sample

namespace rperf {


class SampleRing {
 public:
  explicit SampleRing(size_t capacity_pow2 = 1 << 16) : buf_(capacity_pow2), mask_(capacity_pow2 - 1) {}

  bool push(const Sample& r) {
    uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) > mask_) return false;
    buf_[head & mask_] = r;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  template <typename F>
  size_t drain(F&& consume) {
    uint64_t tail = tail_.load(std::memory_order_relaxed);
    uint64_t head = head_.load(std::memory_order_acquire);
    for (uint64_t i = tail; i < head; i++) consume(buf_[i & mask_]);
    tail_.store(head, std::memory_order_release);
    return static_cast<size_t>(head - tail);
  }

  size_t capacity() const { return buf_.size(); }

 private:
  std::vector<Sample> buf_;
  size_t mask_;
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
};

}  // namespace rperf
