// TextTable: byte strings -> values, for deduplicating repeated source text (the loader's
// frame arrays). Each entry (value, length, text) is packed in one arena, found through a
// HashIndex (8-byte slots: a tag from the hash and the entry's id). The slot array of the
// benchmark profile's 20,000 frames is 512 KiB, so a lookup costs about one cache miss for the
// slot and one for the text; slots of 48 bytes (3 MiB) made their load 60% of the parser's
// time, and std::unordered_map<string_view> pointing into the input was 40% slower still.
#pragma once
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include "util/hash_index.hh"

namespace rperf {

template <typename T>
class TextTable {
  static_assert(std::is_trivially_copyable<T>::value && alignof(T) <= 8, "values are copied into the arena's words");

 public:
  static constexpr size_t kMaxKey = 4096;  // longer texts are not stored

  TextTable() : index_(1024) {}

  static uint64_t hash(const char* text, size_t len) { return hash_bytes(text, len); }
  // Hints for a batch of lookups (their cache misses overlap): fetch the slot `h` probes first,
  // then (once it may have arrived) the entry it likely names.
  void prefetch(uint64_t h) const { index_.prefetch(h); }
  void prefetch_entry(uint64_t h) const {
    const uint32_t id = index_.likely_id(h);
    if (id < offsets_.size()) __builtin_prefetch(&arena_[offsets_[id]]);
  }

  const T* find(const char* text, size_t len) const { return len > kMaxKey ? nullptr : find(text, len, hash_bytes(text, len)); }
  // `h`: hash(text, len).
  const T* find(const char* text, size_t len, uint64_t h) const {
    if (len > kMaxKey) return nullptr;
    const uint32_t id = index_.find(h, [&](uint32_t i) {
      const uint64_t* e = &arena_[offsets_[i]];
      return length_of(e) == len && std::memcmp(text_of(e), text, len) == 0;
    });
    return id == HashIndex::kNotFound ? nullptr : reinterpret_cast<const T*>(&arena_[offsets_[id]]);
  }

  // Stores text -> value unless the text is present or too long. Returns whether stored.
  bool insert(const char* text, size_t len, const T& value) {
    const size_t words = entry_words(len);
    if (len > kMaxKey || arena_.size() + words >= UINT32_MAX) return false;
    const uint64_t h = hash_bytes(text, len);
    if (find(text, len, h)) return false;
    const size_t at = arena_.size();
    arena_.resize(at + words, 0);
    uint64_t* e = &arena_[at];
    new (e) T(value);
    const uint32_t len32 = static_cast<uint32_t>(len);
    std::memcpy(reinterpret_cast<char*>(e) + kValueBytes, &len32, sizeof len32);
    std::memcpy(reinterpret_cast<char*>(e) + kHeadBytes, text, len);
    try {
      offsets_.push_back(static_cast<uint32_t>(at));
      index_.insert(h, static_cast<uint32_t>(offsets_.size() - 1));
    } catch (...) {  // out of memory: the table stays as it was
      offsets_.resize(index_.size());
      arena_.resize(at);
      throw;
    }
    return true;
  }

  size_t size() const { return offsets_.size(); }

  template <typename F>
  void each_value(F f) const {
    for (uint32_t at : offsets_) f(*reinterpret_cast<const T*>(&arena_[at]));
  }

 private:
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

  HashIndex index_;               // hash -> entry id
  std::vector<uint32_t> offsets_;  // by entry id: its first word in arena_
  std::vector<uint64_t> arena_;    // the entries, 8-byte aligned (values are read in place)
};

}  // namespace rperf
