// The sampled objects that are still alive: object address -> slot (a small dense id naming the
// allocation sample the object belongs to; slots are recycled when objects die). Inserted by
// the NEWOBJ hook, erased by the FREEOBJ hook, re-keyed when GC compaction moves objects, read
// at stop/snapshot for the retained counts: all with the GVL held, so no locking.
// Open addressing with linear probing (address keys, 0 = empty) and backward-shift deletion,
// so FREEOBJ (called for every object the GC frees) costs one probe when the address is not
// sampled. Memory is reserved ahead (grow()) so that the GC-time operations never allocate.
#pragma once
#include <cstdint>
#include <vector>

#include "util/hash_index.hh"

namespace rperf {

class LiveObjects {
 public:
  static constexpr uint32_t kNoSlot = 0xffffffffu;

  LiveObjects() { reset(1024); }

  size_t size() const { return size_; }
  size_t capacity() const { return table_.size(); }

  // Room for one more object (call before insert, outside GC): may allocate. False when memory
  // could not be had (the caller then does not track the object).
  bool reserve_one() {
    if ((size_ + 1) * 2 <= table_.size() && !free_slots_.empty()) return true;
    try {
      if ((size_ + 1) * 2 > table_.size()) rehash(table_.size() * 2);
      if (free_slots_.empty()) grow_slots();
    } catch (...) {
      return false;
    }
    return true;
  }

  // Tracks `address` (not tracked yet); returns its slot. reserve_one() must have succeeded.
  uint32_t insert(uint64_t address) {
    uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    place(table_, address, slot);
    size_++;
    return slot;
  }

  // Forgets `address` if tracked (FREEOBJ). Never allocates.
  bool erase(uint64_t address) {
    size_t mask = table_.size() - 1;
    size_t i = mix64(address) & mask;
    while (table_[i].address != 0) {
      if (table_[i].address == address) {
        free_slots_.push_back(table_[i].slot);  // capacity reserved by grow_slots
        remove_at(i);
        size_--;
        return true;
      }
      i = (i + 1) & mask;
    }
    return false;
  }

  // Compaction: every address becomes new_address(address). Never allocates (the spare table
  // has the same size).
  template <typename NewAddress>
  void rekey(NewAddress&& new_address) {
    spare_.assign(table_.size(), Entry{0, 0});
    for (const Entry& e : table_) {
      if (e.address != 0) place(spare_, new_address(e.address), e.slot);
    }
    table_.swap(spare_);
  }

  template <typename F>
  void each(F&& f) const {  // f(address, slot)
    for (const Entry& e : table_) {
      if (e.address != 0) f(e.address, e.slot);
    }
  }

  void clear() { reset(1024); }

 private:
  struct Entry {
    uint64_t address;
    uint32_t slot;
  };

  void reset(size_t capacity) {
    table_.assign(capacity, Entry{0, 0});
    spare_.assign(capacity, Entry{0, 0});
    free_slots_.clear();
    next_slot_ = 0;
    size_ = 0;
    grow_slots();
  }

  static void place(std::vector<Entry>& table, uint64_t address, uint32_t slot) {
    size_t mask = table.size() - 1;
    size_t i = mix64(address) & mask;
    while (table[i].address != 0) i = (i + 1) & mask;
    table[i] = Entry{address, slot};
  }

  void remove_at(size_t hole) {
    size_t mask = table_.size() - 1;
    size_t i = hole;
    for (;;) {
      i = (i + 1) & mask;
      if (table_[i].address == 0) break;
      size_t home = mix64(table_[i].address) & mask;
      // The entry at i may fill the hole when its home is not in (hole, i] (cyclically).
      bool between = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
      if (!between) {
        table_[hole] = table_[i];
        hole = i;
      }
    }
    table_[hole] = Entry{0, 0};
  }

  void rehash(size_t capacity) {
    std::vector<Entry> bigger(capacity, Entry{0, 0});
    for (const Entry& e : table_) {
      if (e.address != 0) place(bigger, e.address, e.slot);
    }
    spare_.assign(capacity, Entry{0, 0});
    table_.swap(bigger);
  }

  // More slot ids; free_slots_ keeps room for every slot so erase() never allocates.
  void grow_slots() {
    uint32_t more = next_slot_ < 1024 ? 1024 : next_slot_;
    free_slots_.reserve(next_slot_ + more);
    for (uint32_t k = 0; k < more; k++) free_slots_.push_back(next_slot_ + more - 1 - k);
    next_slot_ += more;
  }

  std::vector<Entry> table_;
  std::vector<Entry> spare_;  // rekey's destination, same size as table_
  std::vector<uint32_t> free_slots_;
  uint32_t next_slot_ = 0;
  size_t size_ = 0;
};

}  // namespace rperf
