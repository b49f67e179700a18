// TextTable: byte strings -> values, for deduplicating repeated source text (the loader's
// frame arrays). Open addressing over a flat slot array; keys are copied into one arena, so
// probing and comparing stay in a few cache-resident megabytes instead of chasing pointers
// into a 250 MB input (std::unordered_map<string_view> made the loader 40% slower).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "util/hash_index.hh"  // hash_bytes

namespace rperf {

template <typename T>
class TextTable {
 public:
  static constexpr size_t kMaxKey = 4096;  // longer texts are not stored

  TextTable() : slots_(1024) {}

  const T* find(const char* text, size_t len) const {
    if (len > kMaxKey) return nullptr;
    uint64_t h = hash_bytes(text, len);
    for (size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.hash == h && s.len == len && std::memcmp(arena_.data() + s.offset, text, len) == 0) return &s.value;
    }
  }

  // Stores text -> value unless the text is present or too long. Returns whether stored.
  bool insert(const char* text, size_t len, const T& value) {
    if (len > kMaxKey || arena_.size() + len > UINT32_MAX || find(text, len)) return false;
    if ((count_ + 1) * 2 > slots_.size()) grow();
    Slot s{hash_bytes(text, len), static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(len), value, true};
    arena_.append(text, len);
    place(s);
    count_++;
    return true;
  }

  size_t size() const { return count_; }

  template <typename F>
  void each_value(F f) const {
    for (const Slot& s : slots_)
      if (s.used) f(s.value);
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0;
    uint32_t len = 0;
    T value{};
    bool used = false;
  };

  void place(const Slot& s) {
    size_t i = s.hash & (slots_.size() - 1);
    while (slots_[i].used) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = s;
  }

  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.used) place(s);
  }

  std::vector<Slot> slots_;  // size is a power of two, at most half full
  std::string arena_;
  size_t count_ = 0;
};

}  // namespace rperf
