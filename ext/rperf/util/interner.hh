// Interner: assigns dense ids (0, 1, 2, ...) to distinct keys. The keys live in a dense vector
// so ids index them; a HashIndex finds them. Lookups of known keys never allocate, which keeps
// the sampling hot path allocation-free once the program's stacks have been seen.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/hash_index.hh"

namespace rperf {

template <typename Key, typename Hash>
class Interner {
 public:
  static constexpr uint32_t kNotFound = HashIndex::kNotFound;

  // `initial_slots`: a power of two.
  explicit Interner(size_t initial_slots = 1024) : index_(initial_slots) {}

  uint32_t intern(const Key& key) {
    const uint64_t h = Hash()(key);
    uint32_t id = index_.find(h, [&](uint32_t i) { return keys_[i] == key; });
    if (id != kNotFound) return id;
    id = static_cast<uint32_t>(keys_.size());
    keys_.push_back(key);
    try {
      index_.insert(h, id);
    } catch (...) {  // out of memory: no key without its index entry
      keys_.pop_back();
      throw;
    }
    return id;
  }

  uint32_t find(const Key& key) const {
    return index_.find(Hash()(key), [&](uint32_t i) { return keys_[i] == key; });
  }

  const Key& operator[](uint32_t id) const { return keys_[id]; }
  size_t size() const { return keys_.size(); }
  const std::vector<Key>& keys() const { return keys_; }

  void clear() {
    keys_.clear();
    index_.clear();
  }

 private:
  std::vector<Key> keys_;
  HashIndex index_;
};

}  // namespace rperf
