// HashIndex: finds dense ids (0, 1, 2, ...) of entries stored elsewhere, by a 64-bit hash and
// an equality test the caller supplies. Open addressing with linear probing over a
// power-of-two slot array. Lets tables keyed by content (frames by their text, stacks by
// their frame ids) look a key up without building a key object: no allocation on a hit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace rperf {

inline uint64_t mix64(uint64_t x) {  // splitmix64 finalizer: cheap, good avalanche
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// The 128-bit product of a and b, its halves folded: one multiply mixes 16 bytes.
inline uint64_t fold_multiply(uint64_t a, uint64_t b) {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

// Bytes, 16 at a time (frame texts, stack keys). `seed` chains several fields. One folded
// multiply per 16 bytes instead of a splitmix64 round per 8: the loader hashes each of the
// benchmark profile's 4 million frame texts (~60 bytes) once.
inline uint64_t hash_bytes(const char* p, size_t len, uint64_t seed = 0x9e3779b97f4a7c15ULL) {
  constexpr uint64_t k1 = 0xa0761d6478bd642fULL, k2 = 0xe7037ed1a0b428dbULL;
  uint64_t h = seed ^ len;
  while (len >= 16) {
    uint64_t a, b;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + 8, 8);
    h = fold_multiply(a ^ h ^ k1, b ^ k2);
    p += 16;
    len -= 16;
  }
  uint64_t a = 0, b = 0;
  if (len > 8) {
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + 8, len - 8);
  } else {
    std::memcpy(&a, p, len);
  }
  return mix64(fold_multiply(a ^ h ^ k1, b ^ k2) ^ h);
}

class HashIndex {
 public:
  static constexpr uint32_t kNotFound = 0xffffffffu;

  explicit HashIndex(size_t initial_slots = 64) { reset(initial_slots); }

  template <typename Equal>
  uint32_t find(uint64_t hash, Equal&& equal) const {
    const uint32_t tag = static_cast<uint32_t>(hash >> 32);
    for (size_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
      const Slot& s = slots_[slot];
      if (s.id == kEmpty) return kNotFound;
      if (s.tag == tag && equal(s.id)) return s.id;
    }
  }

  // For lookups batched to overlap their cache misses: fetch the first slot `hash` probes, then
  // (once it is cached) read the id it likely holds. Hints only: a table changed in between
  // makes them useless, never wrong.
  void prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }
  uint32_t likely_id(uint64_t hash) const {
    const Slot& s = slots_[hash & mask_];
    return s.tag == static_cast<uint32_t>(hash >> 32) ? s.id : kNotFound;
  }

  // Adds `id` under `hash` (after find() missed). Ids are dense: 0, 1, 2, ...
  void insert(uint64_t hash, uint32_t id) {
    if ((hashes_.size() + 1) * 2 > slots_.size()) grow();
    if (id >= hashes_.size()) hashes_.resize(id + 1);
    hashes_[id] = hash;
    place(hash, id);
  }

  size_t size() const { return hashes_.size(); }
  // Room for `n` entries without growing (a large table's regrowth reallocates and rehashes).
  void reserve(size_t n) {
    hashes_.reserve(n);
    size_t slots = slots_.size();
    while ((n + 1) * 2 > slots) slots *= 2;
    if (slots != slots_.size()) rehash(slots);
  }
  void clear() {
    hashes_.clear();
    reset(64);
  }

 private:
  static constexpr uint32_t kEmpty = 0xffffffffu;
  // 8 bytes a slot (the upper half of the hash as a tag): the slot array of a table of tens of
  // thousands of entries stays in the L2 cache. The full hashes, needed only to grow, live apart.
  struct Slot {
    uint32_t tag;
    uint32_t id;
  };
  void reset(size_t n) {
    slots_.assign(n, Slot{0, kEmpty});
    mask_ = n - 1;
  }
  void place(uint64_t hash, uint32_t id) {
    size_t slot = hash & mask_;
    while (slots_[slot].id != kEmpty) slot = (slot + 1) & mask_;
    slots_[slot] = Slot{static_cast<uint32_t>(hash >> 32), id};
  }
  void grow() { rehash(slots_.size() * 2); }
  void rehash(size_t slots) {
    reset(slots);
    for (uint32_t id = 0; id < hashes_.size(); id++) place(hashes_[id], id);
  }

  std::vector<Slot> slots_;
  std::vector<uint64_t> hashes_;  // by id
  size_t mask_ = 0;
};

}  // namespace rperf
