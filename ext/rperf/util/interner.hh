// Interner: assigns dense ids (0, 1, 2, ...) to distinct keys. Open addressing with linear
// probing over a power-of-two slot array; keys live in a dense vector so ids index them.
// Lookups of known keys never allocate, which keeps the sampling hot path allocation-free
// once the program's stacks have been seen.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/hash_index.hh"  // mix64

namespace rperf {

template <typename Key, typename Hash>
class Interner {
 public:
  static constexpr uint32_t kNotFound = 0xffffffffu;

  explicit Interner(size_t initial_slots = 1024) { reset_slots(initial_slots); }

  uint32_t intern(const Key& key) {
    size_t slot = Hash()(key) & mask_;
    for (;;) {
      uint32_t entry = slots_[slot];
      if (entry == 0) break;
      if (keys_[entry - 1] == key) return entry - 1;
      slot = (slot + 1) & mask_;
    }
    uint32_t id = static_cast<uint32_t>(keys_.size());
    keys_.push_back(key);
    slots_[slot] = id + 1;
    if (keys_.size() * 2 > slots_.size()) rehash(slots_.size() * 2);
    return id;
  }

  uint32_t find(const Key& key) const {
    size_t slot = Hash()(key) & mask_;
    for (;;) {
      uint32_t entry = slots_[slot];
      if (entry == 0) return kNotFound;
      if (keys_[entry - 1] == key) return entry - 1;
      slot = (slot + 1) & mask_;
    }
  }

  const Key& operator[](uint32_t id) const { return keys_[id]; }
  size_t size() const { return keys_.size(); }
  const std::vector<Key>& keys() const { return keys_; }

  void clear() {
    keys_.clear();
    reset_slots(1024);
  }

 private:
  void reset_slots(size_t n) {
    slots_.assign(n, 0);
    mask_ = n - 1;
  }
  void rehash(size_t n) {
    reset_slots(n);
    for (uint32_t id = 0; id < keys_.size(); id++) {
      size_t slot = Hash()(keys_[id]) & mask_;
      while (slots_[slot] != 0) slot = (slot + 1) & mask_;
      slots_[slot] = id + 1;
    }
  }

  std::vector<Key> keys_;
  std::vector<uint32_t> slots_;
  size_t mask_ = 0;
};

}  // namespace rperf
