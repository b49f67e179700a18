// HashIndex against std::unordered_map over random operations (with weak hashes, so that probe
// runs collide and wrap around the slot array).
#include "util/hash_index.hh"

#include <gtest/gtest.h>

#include <unordered_map>
#include <vector>

#include "heap_allocations.hh"

using rperf::HashIndex;

namespace {

struct Rng {
  uint64_t state;
  uint64_t next() { return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; }
};

// A table of keys by id over a HashIndex, the way its users build one. `weak` hashes collide
// often: 13 tags, and homes among the last 16 slots, so that probe runs wrap around.
struct Table {
  explicit Table(bool weak_hashes) : weak(weak_hashes) {}
  bool weak;
  HashIndex index{4};
  std::vector<uint64_t> keys;      // by id
  std::vector<uint32_t> free_ids;  // erased, for reuse
  uint64_t hash(uint64_t key) const {
    return weak ? (key % 13) << 32 | (0xfffffff0u + key % 13) : rperf::mix64(key);
  }
  uint32_t find(uint64_t key) const {
    return index.find(hash(key), [&](uint32_t id) { return keys[id] == key; });
  }
  uint32_t insert(uint64_t key) {
    uint32_t id;
    if (!free_ids.empty()) {
      id = free_ids.back();
      free_ids.pop_back();
      keys[id] = key;
    } else {
      id = static_cast<uint32_t>(keys.size());
      keys.push_back(key);
    }
    index.insert(hash(key), id);
    return id;
  }
  bool erase(uint64_t key) {
    const uint32_t id = find(key);
    if (id == HashIndex::kNotFound) return false;
    EXPECT_TRUE(index.erase(hash(key), id));
    free_ids.push_back(id);
    return true;
  }
};

void expect_same(const Table& t, const std::unordered_map<uint64_t, uint32_t>& model, uint64_t key_range) {
  ASSERT_EQ(t.index.size(), model.size());
  for (uint64_t key = 0; key < key_range; key++) {
    auto it = model.find(key);
    ASSERT_EQ(t.find(key), it == model.end() ? HashIndex::kNotFound : it->second) << "key " << key;
  }
}

}  // namespace

TEST(HashIndex, RandomInsertsAndFindsAgreeWithUnorderedMap) {
  for (bool weak : {false, true}) {
    Table t(weak);
    std::unordered_map<uint64_t, uint32_t> model;
    Rng rng{7};
    const uint64_t range = weak ? 600 : 20000;
    for (int i = 0; i < 20000; i++) {
      const uint64_t key = rng.next() % range;
      const uint32_t found = t.find(key);
      auto it = model.find(key);
      ASSERT_EQ(found, it == model.end() ? HashIndex::kNotFound : it->second);
      if (found == HashIndex::kNotFound) model[key] = t.insert(key);
    }
    expect_same(t, model, range + 100);
  }
}

TEST(HashIndex, RandomErasesAgreeWithUnorderedMapAndReuseIds) {
  for (bool weak : {false, true}) {
    Table t(weak);
    std::unordered_map<uint64_t, uint32_t> model;
    Rng rng{11};
    const uint64_t range = weak ? 300 : 3000;
    for (int i = 0; i < 100000; i++) {
      const uint64_t key = rng.next() % range;
      // Mostly inserts at first, then as many erases: the table grows with ids erased
      // (rehashing from its slots) and shrinks back through backward shifts.
      const bool insert = rng.next() % 100 < (i < 50000 ? 70u : 45u);
      auto it = model.find(key);
      if (insert && it == model.end()) {
        model[key] = t.insert(key);
      } else if (!insert) {
        ASSERT_EQ(t.erase(key), it != model.end());
        if (it != model.end()) model.erase(it);
      }
      if (i % 5000 == 0) expect_same(t, model, range);
    }
    expect_same(t, model, range);
    // Ids are reused: never more of them than entries at the busiest.
    EXPECT_LE(t.keys.size(), range);
  }
}

TEST(HashIndex, EraseOfAnAbsentIdIsRefused) {
  HashIndex index;
  index.insert(5, 0);
  index.insert(5, 1);  // same home: a probe run of two
  EXPECT_FALSE(index.erase(5, 2));
  EXPECT_FALSE(index.erase(6, 0));  // another home, empty
  EXPECT_TRUE(index.erase(5, 0));
  EXPECT_FALSE(index.erase(5, 0));
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.find(5, [](uint32_t id) { return id == 1; }), 1u);
}

TEST(HashIndex, SkippedIdsAreNotEntries) {
  HashIndex index(4);
  index.insert(rperf::mix64(1), 0);
  index.insert(rperf::mix64(2), 9);  // ids 1..8 never inserted
  EXPECT_EQ(index.size(), 2u);
  for (uint32_t id = 10; id < 100; id++) index.insert(rperf::mix64(id), id);  // grows past them
  EXPECT_EQ(index.size(), 92u);
  EXPECT_EQ(index.find(0, [](uint32_t) { return true; }), HashIndex::kNotFound);  // no phantom of ids 1..8
  EXPECT_EQ(index.find(rperf::mix64(2), [](uint32_t id) { return id == 9; }), 9u);
  for (uint32_t id = 10; id < 100; id++) EXPECT_EQ(index.find(rperf::mix64(id), [&](uint32_t i) { return i == id; }), id);
}

TEST(HashIndex, GrowingWithErasedIdsKeepsThemOut) {
  Table t(false);
  for (uint64_t key = 0; key < 100; key++) t.insert(key);
  for (uint64_t key = 0; key < 100; key += 3) EXPECT_TRUE(t.erase(key));
  t.index.reserve(5000);  // rehashes while ids are free
  EXPECT_EQ(t.index.size(), 66u);
  for (uint64_t key = 0; key < 100; key++) EXPECT_EQ(t.find(key) == HashIndex::kNotFound, key % 3 == 0) << key;
  EXPECT_EQ(t.insert(1000), 99u);  // the last id freed is reused first
  EXPECT_EQ(t.find(1000), 99u);
}

TEST(HashIndex, ReservedRoomAndReusedIdsNeverAllocate) {
  HashIndex index;
  index.reserve(1000);
  const size_t before = rperf_test::heap_allocations();
  for (uint32_t id = 0; id < 1000; id++) index.insert(rperf::mix64(id), id);
  for (uint32_t id = 0; id < 1000; id += 2) EXPECT_TRUE(index.erase(rperf::mix64(id), id));
  for (uint32_t id = 0; id < 1000; id += 2) index.insert(rperf::mix64(id + 5000), id);  // reused ids
  EXPECT_EQ(rperf_test::heap_allocations(), before);
  EXPECT_EQ(index.size(), 1000u);
}
