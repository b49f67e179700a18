#include "sampler/sample_ring.hh"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace rperf;

namespace {
SampleRecord interval(int64_t weight) {
  SampleRecord r;
  r.thread_seq = 1;
  r.weight_ns = weight;
  return r;
}
}  // namespace

TEST(SampleRing, DropsWhenRecordsAreFullAndDrainsInOrder) {
  SampleRing ring(8, 64, 4);
  for (int i = 0; i < 8; i++) EXPECT_TRUE(ring.push(interval(i + 1)));
  EXPECT_FALSE(ring.push(interval(99)));
  int64_t expect = 1;
  EXPECT_EQ(ring.drain([&](const SampleRecord& r, const SampleRing::Run&) { EXPECT_EQ(r.weight_ns, expect++); }), 8u);
  EXPECT_TRUE(ring.push(interval(9)));
}

namespace {
// What a walk does: frames written at the head, then the record published.
bool push_stack(SampleRing& ring, const std::vector<uint64_t>& leaf_first, const std::vector<int32_t>& lines = {}) {
  int32_t* line_slots = nullptr;
  uint64_t* slots = ring.frame_slots(&line_slots);
  if (!slots) return false;
  for (size_t k = 0; k < leaf_first.size(); k++) {
    slots[k] = leaf_first[k];
    if (line_slots) line_slots[k] = lines.empty() ? 0 : lines[k];
  }
  SampleRecord r = interval(5);
  r.kind = SampleRecord::kStack;
  r.run = static_cast<uint32_t>(leaf_first.size());
  return ring.push(r);
}
}  // namespace

TEST(SampleRing, WalksWriteAtTheHeadAndWrapAroundTheEnd) {
  SampleRing ring(16, 8, 3, true);  // 8 frame slots, walks of at most 3
  EXPECT_TRUE(push_stack(ring, {30, 20, 10}, {3, 2, 1}));
  EXPECT_TRUE(push_stack(ring, {31, 21, 11}, {4, 5, 6}));
  EXPECT_FALSE(push_stack(ring, {32, 22, 12}));  // 6 used: no room for a walk of 3
  std::vector<uint64_t> seen;
  std::vector<int32_t> seen_lines;
  ring.drain([&](const SampleRecord& rec, const SampleRing::Run& run) {
    for (uint32_t k = 0; k < rec.run; k++) {
      seen.push_back(run.method(k));
      seen_lines.push_back(run.line(k));
    }
  });
  EXPECT_EQ(seen, (std::vector<uint64_t>{30, 20, 10, 31, 21, 11}));
  EXPECT_EQ(seen_lines, (std::vector<int32_t>{3, 2, 1, 4, 5, 6}));
  // The next walk starts at slot 6 and runs past the end (slots 6, 7, then 0).
  EXPECT_TRUE(push_stack(ring, {33, 23, 13}, {7, 8, 9}));
  seen.clear();
  seen_lines.clear();
  ring.drain([&](const SampleRecord& rec, const SampleRing::Run& run) {
    for (uint32_t k = 0; k < rec.run; k++) {
      seen.push_back(run.method(k));
      seen_lines.push_back(run.line(k));
    }
  });
  EXPECT_EQ(seen, (std::vector<uint64_t>{33, 23, 13}));
  EXPECT_EQ(seen_lines, (std::vector<int32_t>{7, 8, 9}));
}

TEST(SampleRing, PendingMethodsAreTheUnconsumedOnes) {
  SampleRing ring(16, 16, 4);
  push_stack(ring, {2, 1});
  std::vector<uint64_t> pending;
  ring.each_pending_method([&](uint64_t m) { pending.push_back(m); });
  EXPECT_EQ(pending, (std::vector<uint64_t>{2, 1}));
  ring.drain([](const SampleRecord&, const SampleRing::Run&) {});
  pending.clear();
  ring.each_pending_method([&](uint64_t m) { pending.push_back(m); });
  EXPECT_TRUE(pending.empty());
}

TEST(SampleRing, ProducerAndConsumerOnTwoThreadsLoseNothing) {
  SampleRing ring(1024, 4096, 8);
  constexpr int64_t kCount = 200000;
  int64_t pushed_weight = 0, drained_weight = 0;
  uint64_t pushed_frames = 0, drained_frames = 0;
  std::atomic<bool> done{false};
  std::thread producer([&] {
    for (int64_t i = 1; i <= kCount; i++) {
      uint64_t* slots = ring.frame_slots(nullptr);
      if (!slots) continue;
      SampleRecord r = interval(i);
      r.kind = SampleRecord::kStack;
      r.run = static_cast<uint32_t>(i % 8);
      for (uint32_t k = 0; k < r.run; k++) slots[k] = static_cast<uint64_t>(i) + k;
      if (ring.push(r)) {
        pushed_weight += i;
        for (uint32_t k = 0; k < r.run; k++) pushed_frames += static_cast<uint64_t>(i) + k;
      }
    }
    done = true;
  });
  auto consume = [&](const SampleRecord& r, const SampleRing::Run& run) {
    drained_weight += r.weight_ns;
    for (uint32_t k = 0; k < r.run; k++) drained_frames += run.method(k);
  };
  while (!done) ring.drain(consume);
  producer.join();
  ring.drain(consume);
  EXPECT_EQ(drained_weight, pushed_weight);
  EXPECT_EQ(drained_frames, pushed_frames);
  EXPECT_GT(pushed_weight, 0);
}
