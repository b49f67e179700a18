// HashIndex: finds dense ids (0, 1, 2, ...) of entries stored elsewhere, by a 64-bit hash and
// an equality test the caller supplies. Open addressing with linear probing over a
// power-of-two slot array. Lets tables keyed by content (frames by their text, stacks by
// their frame ids) look a key up without building a key object: no allocation on a hit.
// erase() frees an id for reuse without tombstones, so a miss still ends at the first empty slot.
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

  // Adds `id` under `hash` (after find() missed). Ids are dense: 0, 1, 2, ..., or ones erase() freed.
  void insert(uint64_t hash, uint32_t id) {
    if (id < hashes_.size()) {
      hashes_[id] = hash;
      unused_--;  // an id erase() freed
    } else {
      // The table holds at most hashes_.size() entries (distinct ids below it), so only an id
      // beyond them may need room: reusing freed ids never grows (nor allocates).
      if ((size_t{id} + 1) * 2 > slots_.size()) rehash(slots_for(size_t{id} + 1));
      if (id > hashes_.size()) {  // ids skipped: none of them is in the table
        const size_t skipped = id - hashes_.size();
        hashes_.resize(id);
        unused_ += skipped;
      }
      hashes_.push_back(hash);
    }
    place(slots_, mask_, hash, id);
  }

  // Removes `id`, inserted under `hash`; false if absent. Never allocates. Backward-shift
  // deletion: the entries after it move back so that no probe run has a gap.
  bool erase(uint64_t hash, uint32_t id) {
    size_t hole = hash & mask_;
    for (; slots_[hole].id != id; hole = (hole + 1) & mask_) {
      if (slots_[hole].id == kEmpty) return false;
    }
    for (size_t i = (hole + 1) & mask_; slots_[i].id != kEmpty; i = (i + 1) & mask_) {
      const size_t home = hashes_[slots_[i].id] & mask_;
      // The entry at i may fill the hole unless its home lies (cyclically) in (hole, i].
      if (((i - home) & mask_) >= ((i - hole) & mask_)) {
        slots_[hole] = slots_[i];
        hole = i;
      }
    }
    slots_[hole] = Slot{0, kEmpty};
    unused_++;
    return true;
  }

  size_t size() const { return hashes_.size() - unused_; }
  // Room for `n` entries with ids below `n` without growing (a large table's regrowth
  // reallocates and rehashes).
  void reserve(size_t n) {
    hashes_.reserve(n);
    const size_t slots = slots_for(n);
    if (slots != slots_.size()) rehash(slots);
  }
  void clear() {
    hashes_.clear();
    unused_ = 0;
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
  static void place(std::vector<Slot>& slots, size_t mask, uint64_t hash, uint32_t id) {
    size_t slot = hash & mask;
    while (slots[slot].id != kEmpty) slot = (slot + 1) & mask;
    slots[slot] = Slot{static_cast<uint32_t>(hash >> 32), id};
  }
  // The slot count for `n` entries: at most half full, so that probe runs stay short.
  size_t slots_for(size_t n) const {
    size_t slots = slots_.size();
    while (n * 2 > slots) slots *= 2;
    return slots;
  }
  // Builds the new array before dropping the old one: a failed allocation leaves the table as it was.
  void rehash(size_t n) {
    std::vector<Slot> fresh(n, Slot{0, kEmpty});
    if (unused_ == 0) {  // every id present: read the hashes in order
      for (uint32_t id = 0; id < hashes_.size(); id++) place(fresh, n - 1, hashes_[id], id);
    } else {  // some ids erased: only the slots know which
      for (const Slot& s : slots_) {
        if (s.id != kEmpty) place(fresh, n - 1, hashes_[s.id], s.id);
      }
    }
    slots_.swap(fresh);
    mask_ = n - 1;
  }

  std::vector<Slot> slots_;
  std::vector<uint64_t> hashes_;  // by id
  size_t mask_ = 0;
  size_t unused_ = 0;  // ids below hashes_.size() not in the table (erased, or skipped)
};

}  // namespace rperf
