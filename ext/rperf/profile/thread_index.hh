// Thread seqs -> dense indexes (0, 1, 2, ... in order of first appearance), for the views that
// keep something per thread. A seq comes from a file too (checked by profile_rows, but up to
// 2^31 - 1), so it never sizes a table: small seqs, which the sampler gives, are looked up in
// a table of at most kDirect slots, any larger one in a hash map. Ruby-independent.
#pragma once
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace rperf {

class ThreadIndex {
 public:
  static constexpr uint32_t kDirect = 1u << 16;  // 256 KiB of slots at most

  // The dense index of `seq`; `added`: it was first seen now (its index is size() - 1).
  uint32_t find_or_add(uint32_t seq, bool& added) {
    added = false;
    if (seq < kDirect) {
      if (seq >= direct_.size()) direct_.resize(static_cast<size_t>(seq) + 1, kNone);
      uint32_t& slot = direct_[seq];
      if (slot == kNone) {
        slot = count_++;
        added = true;
      }
      return slot;
    }
    auto [it, inserted] = sparse_.emplace(seq, count_);
    if (inserted) {
      count_++;
      added = true;
    }
    return it->second;
  }
  size_t size() const { return count_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> direct_;
  std::unordered_map<uint32_t, uint32_t> sparse_;
  uint32_t count_ = 0;
};

}  // namespace rperf
