#include "sampler/stack_store.hh"

#include <gtest/gtest.h>

#include <unordered_map>
#include <vector>

#include "heap_allocations.hh"

using rperf::StackStore;

TEST(Interner, AssignsDenseIdsAndFindsThem) {
  rperf::Interner<rperf::FrameKey, rperf::FrameKeyHash> in(4);
  for (uint64_t i = 0; i < 10000; i++) EXPECT_EQ(in.intern({i * 8, static_cast<int32_t>(i % 7)}), i);
  EXPECT_EQ(in.size(), 10000u);
  for (uint64_t i = 0; i < 10000; i++) EXPECT_EQ(in.find({i * 8, static_cast<int32_t>(i % 7)}), i);
  EXPECT_EQ(in.find({1, 1}), decltype(in)::kNotFound);
  EXPECT_EQ(in.intern({8, 1}), 1u);  // existing key keeps its id
}

TEST(Interner, RandomKeysAgreeWithUnorderedMapAndKnownOnesNeverAllocate) {
  rperf::Interner<rperf::StackNode, rperf::StackNodeHash> in(4);
  std::unordered_map<uint64_t, uint32_t> model;
  uint64_t state = 3;
  auto next = [&] { return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  auto key = [](uint64_t k) { return rperf::StackNode{static_cast<uint32_t>(k % 211), static_cast<uint32_t>(k / 211)}; };
  for (int i = 0; i < 50000; i++) {
    const uint64_t k = next() % 30000;
    auto it = model.find(k);
    ASSERT_EQ(in.find(key(k)), it == model.end() ? decltype(in)::kNotFound : it->second);
    const uint32_t id = in.intern(key(k));
    if (it == model.end()) {
      EXPECT_EQ(id, model.size());  // dense
      model[k] = id;
    } else {
      EXPECT_EQ(id, it->second);
    }
  }
  ASSERT_EQ(in.size(), model.size());
  for (const auto& [k, id] : model) EXPECT_TRUE(in[id] == key(k));
  // The sampling hot path: stacks seen before are interned again without allocating.
  const size_t before = rperf_test::heap_allocations();
  uint32_t sum = 0;
  for (const auto& [k, id] : model) sum += in.intern(key(k)) - id;
  EXPECT_EQ(rperf_test::heap_allocations(), before);
  EXPECT_EQ(sum, 0u);
  in.clear();
  EXPECT_EQ(in.size(), 0u);
  EXPECT_EQ(in.find(key(1)), decltype(in)::kNotFound);
  EXPECT_EQ(in.intern(key(1)), 0u);
}

TEST(StackStore, SharesPrefixesAndWalksLeafFirst) {
  StackStore s;
  uint32_t main = s.push(StackStore::kRoot, s.intern_frame(100, 1));
  uint32_t a = s.push(main, s.intern_frame(200, 5));
  uint32_t b = s.push(main, s.intern_frame(300, 9));
  EXPECT_EQ(s.node_count(), 3u);
  EXPECT_EQ(s.push(main, s.intern_frame(200, 5)), a);
  std::vector<uint32_t> frames;
  s.frames_of(b, frames);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(s.frame(frames[0]).method, 300u);
  EXPECT_EQ(s.frame(frames[1]).method, 100u);
}

namespace {
// What the worker does with one thread's walked stack (leaf-first).
uint32_t through_path(StackStore& s, rperf::StackPath& path, const uint64_t* m, const int32_t* l, int n) {
  return path.apply(s, static_cast<uint32_t>(n), [&](uint32_t k) { return std::make_pair(m[k], l ? l[k] : 0); });
}
}  // namespace

TEST(StackPath, InternsFromTheFirstDifferenceAndFindsTheSameIds) {
  StackStore s;
  rperf::StackPath path;
  uint64_t m1[] = {30, 20, 10};  // leaf-first, as rb_profile_frames returns them
  int32_t l1[] = {3, 2, 1};
  uint32_t id1 = through_path(s, path, m1, l1, 3);
  EXPECT_EQ(s.node_count(), 3u);
  EXPECT_EQ(through_path(s, path, m1, l1, 3), id1);
  uint64_t m2[] = {40, 20, 10};
  int32_t l2[] = {4, 2, 1};
  uint32_t id2 = through_path(s, path, m2, l2, 3);
  EXPECT_NE(id2, id1);
  EXPECT_EQ(s.node_count(), 4u);  // only the new leaf was added
  int32_t l3[] = {7, 2, 1};       // same method, another line: another frame
  EXPECT_NE(through_path(s, path, m2, l3, 3), id2);
  // Another thread's path finds the same ids for the same stacks.
  rperf::StackPath other;
  EXPECT_EQ(through_path(s, other, m1, l1, 3), id1);
  EXPECT_EQ(through_path(s, other, m1 + 1, l1 + 1, 2), s.node(id1).parent);
  EXPECT_EQ(other.current(), s.node(id1).parent);
  EXPECT_EQ(through_path(s, other, m1, l1, 0), StackStore::kRoot);
  EXPECT_EQ(other.current(), StackStore::kRoot);
}

TEST(StackPath, RandomStacksGiveTheIdsOfDirectInterning) {
  StackStore s;
  rperf::StackPath path;
  uint64_t state = 42;
  auto next = [&] { return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  std::vector<uint64_t> stack;  // root-first
  for (int i = 0; i < 5000; i++) {
    size_t keep = stack.empty() ? 0 : next() % (stack.size() + 1);
    stack.resize(keep);
    size_t add = next() % 6;
    for (size_t k = 0; k < add && stack.size() < 60; k++) stack.push_back(1 + next() % 7);
    std::vector<uint64_t> leaf_first(stack.rbegin(), stack.rend());
    uint32_t via_path = through_path(s, path, leaf_first.data(), nullptr, static_cast<int>(stack.size()));
    uint32_t direct = StackStore::kRoot;
    for (uint64_t m : stack) direct = s.push(direct, s.intern_frame(m, 0));
    ASSERT_EQ(via_path, direct) << "at step " << i;
  }
}

TEST(StackStore, MemoryIsBoundedByUniqueStacks) {
  StackStore s;
  rperf::StackPath path;
  uint64_t m[3];
  for (int round = 0; round < 1000; round++) {
    for (uint64_t leaf = 0; leaf < 50; leaf++) {
      m[0] = 1000 + leaf;
      m[1] = 2;
      m[2] = 1;
      through_path(s, path, m, nullptr, 3);
    }
  }
  EXPECT_EQ(s.node_count(), 52u);
  EXPECT_EQ(s.frame_count(), 52u);
}
