#include "sampler/stack_store.hh"

#include <gtest/gtest.h>

#include <vector>

using rperf::StackCache;
using rperf::StackStore;

TEST(Interner, AssignsDenseIdsAndFindsThem) {
  rperf::Interner<rperf::FrameKey, rperf::FrameKeyHash> in(4);
  for (uint64_t i = 0; i < 10000; i++) EXPECT_EQ(in.intern({i * 8, static_cast<int32_t>(i % 7)}), i);
  EXPECT_EQ(in.size(), 10000u);
  for (uint64_t i = 0; i < 10000; i++) EXPECT_EQ(in.find({i * 8, static_cast<int32_t>(i % 7)}), i);
  EXPECT_EQ(in.find({1, 1}), decltype(in)::kNotFound);
  EXPECT_EQ(in.intern({8, 1}), 1u);  // existing key keeps its id
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

TEST(StackCache, ReusesTheUnchangedPrefix) {
  StackStore s;
  StackCache cache(16);
  // leaf-first, as rb_profile_frames returns them
  uint64_t m1[] = {30, 20, 10};
  int l1[] = {3, 2, 1};
  uint32_t id1 = cache.intern(s, m1, l1, 3);
  EXPECT_EQ(s.node_count(), 3u);
  EXPECT_EQ(cache.intern(s, m1, l1, 3), id1);
  uint64_t m2[] = {40, 20, 10};
  int l2[] = {4, 2, 1};
  uint32_t id2 = cache.intern(s, m2, l2, 3);
  EXPECT_NE(id2, id1);
  EXPECT_EQ(s.node_count(), 4u);  // only the new leaf was added
  int l3[] = {7, 2, 1};           // same method, another line: another frame
  EXPECT_NE(cache.intern(s, m2, l3, 3), id2);
  // A second cache (another thread) finds the same ids for the same stack.
  StackCache other(16);
  EXPECT_EQ(other.intern(s, m1, l1, 3), id1);
  EXPECT_EQ(other.intern(s, m1, l1, 0), StackStore::kRoot);
  EXPECT_EQ(other.intern(s, m1 + 1, l1 + 1, 2), s.node(id1).parent);
}

TEST(StackStore, MemoryIsBoundedByUniqueStacks) {
  StackStore s;
  StackCache cache(64);
  uint64_t m[3];
  int l[3] = {0, 0, 0};
  for (int round = 0; round < 1000; round++) {
    for (uint64_t leaf = 0; leaf < 50; leaf++) {
      m[0] = 1000 + leaf;
      m[1] = 2;
      m[2] = 1;
      cache.intern(s, m, l, 3);
    }
  }
  EXPECT_EQ(s.node_count(), 52u);
  EXPECT_EQ(s.frame_count(), 52u);
}
