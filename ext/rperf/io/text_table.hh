// TextTable: byte strings -> values, for deduplicating repeated source text (the loader's
// frame arrays). Open addressing over 8-byte slots (a tag from the hash, and where the entry
// is); each entry (value, length, text) is packed in one arena. The slot array of the
// benchmark profile's 20,000 frames is 512 KiB, so a lookup costs about one cache miss for the
// slot and one for the text; slots of 48 bytes (3 MiB) made their load 60% of the parser's
// time, and std::unordered_map<string_view> pointing into the input was 40% slower still.
#pragma once
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include "util/hash_index.hh"  // hash_bytes

namespace rperf {

template <typename T>
class TextTable {
  static_assert(std::is_trivially_copyable<T>::value && alignof(T) <= 8, "values are copied into the arena's words");

 public:
  static constexpr size_t kMaxKey = 4096;  // longer texts are not stored

  TextTable() : slots_(1024) {}

  static uint64_t hash(const char* text, size_t len) { return hash_bytes(text, len); }
  // Hints for a batch of lookups (their cache misses overlap): fetch the slot `h` probes first,
  // then (once it may have arrived) the entry it likely names.
  void prefetch(uint64_t h) const { __builtin_prefetch(&slots_[h & (slots_.size() - 1)]); }
  void prefetch_entry(uint64_t h) const {
    const Slot& s = slots_[h & (slots_.size() - 1)];
    if (s.entry != 0 && s.tag == static_cast<uint32_t>(h >> 32)) __builtin_prefetch(&arena_[s.entry - 1]);
  }

  const T* find(const char* text, size_t len) const { return len > kMaxKey ? nullptr : find(text, len, hash_bytes(text, len)); }
  // `h`: hash(text, len).
  const T* find(const char* text, size_t len, uint64_t h) const {
    if (len > kMaxKey) return nullptr;
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.entry == 0) return nullptr;
      if (s.tag != tag) continue;
      const uint64_t* e = &arena_[s.entry - 1];
      if (length_of(e) == len && std::memcmp(text_of(e), text, len) == 0) return reinterpret_cast<const T*>(e);
    }
  }

  // Stores text -> value unless the text is present or too long. Returns whether stored.
  bool insert(const char* text, size_t len, const T& value) {
    const size_t words = entry_words(len);
    if (len > kMaxKey || arena_.size() + words >= UINT32_MAX || find(text, len)) return false;
    if ((count_ + 1) * 2 > slots_.size()) grow();
    const uint32_t entry = static_cast<uint32_t>(arena_.size()) + 1;
    arena_.resize(arena_.size() + words, 0);
    uint64_t* e = &arena_[entry - 1];
    new (e) T(value);
    const uint32_t len32 = static_cast<uint32_t>(len);
    std::memcpy(reinterpret_cast<char*>(e) + kValueBytes, &len32, sizeof len32);
    std::memcpy(reinterpret_cast<char*>(e) + kHeadBytes, text, len);
    place(hash_bytes(text, len), entry);
    count_++;
    return true;
  }

  size_t size() const { return count_; }

  template <typename F>
  void each_value(F f) const {
    for (size_t at = 0; at < arena_.size(); at += entry_words(length_of(&arena_[at]))) f(*reinterpret_cast<const T*>(&arena_[at]));
  }

 private:
  struct Slot {
    uint32_t tag = 0;    // the hash's upper half
    uint32_t entry = 0;  // 1 + the entry's first word in arena_; 0: empty
  };
  // An entry: the value (padded to 8 bytes), the text's length (32 bits), the text, padding.
  static constexpr size_t kValueBytes = (sizeof(T) + 7) / 8 * 8;
  static constexpr size_t kHeadBytes = kValueBytes + sizeof(uint32_t);
  static size_t entry_words(size_t len) { return (kHeadBytes + len + 7) / 8; }
  static uint32_t length_of(const uint64_t* e) {
    uint32_t len;
    std::memcpy(&len, reinterpret_cast<const char*>(e) + kValueBytes, sizeof len);
    return len;
  }
  static const char* text_of(const uint64_t* e) { return reinterpret_cast<const char*>(e) + kHeadBytes; }

  void place(uint64_t hash, uint32_t entry) {
    const size_t mask = slots_.size() - 1;
    size_t i = hash & mask;
    while (slots_[i].entry != 0) i = (i + 1) & mask;
    slots_[i] = Slot{static_cast<uint32_t>(hash >> 32), entry};
  }

  void grow() {
    slots_.assign(slots_.size() * 2, Slot{});
    for (size_t at = 0; at < arena_.size(); at += entry_words(length_of(&arena_[at]))) {
      const uint64_t* e = &arena_[at];
      place(hash_bytes(text_of(e), length_of(e)), static_cast<uint32_t>(at) + 1);
    }
  }

  std::vector<Slot> slots_;       // size is a power of two, at most half full
  std::vector<uint64_t> arena_;   // the entries, 8-byte aligned (values are read in place)
  size_t count_ = 0;
};

}  // namespace rperf
