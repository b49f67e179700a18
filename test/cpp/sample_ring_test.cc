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
  SampleRing ring(8, 64);
  for (int i = 0; i < 8; i++) EXPECT_TRUE(ring.push(interval(i + 1)));
  EXPECT_FALSE(ring.push(interval(99)));
  int64_t expect = 1;
  EXPECT_EQ(ring.drain([&](const SampleRecord& r, const SampleRing::Run&) { EXPECT_EQ(r.weight_ns, expect++); }), 8u);
  EXPECT_TRUE(ring.push(interval(9)));
}

TEST(SampleRing, StoresRunsRootFirstAndRefusesWhenFramesAreFull) {
  SampleRing ring(16, 8, true);
  uint64_t methods[] = {30, 20, 10};  // leaf-first
  int32_t lines[] = {3, 2, 1};
  SampleRecord r = interval(5);
  r.kind = SampleRecord::kStack;
  r.run = 3;
  EXPECT_TRUE(ring.push(r, methods, lines));
  EXPECT_TRUE(ring.push(r, methods, lines));
  EXPECT_FALSE(ring.push(r, methods, lines));  // 6 of 8 frame slots used
  r.run = 2;                                    // the two leaf-most: 20, 30 root-first
  EXPECT_TRUE(ring.push(r, methods + 1, lines + 1));
  std::vector<uint64_t> seen;
  std::vector<int32_t> seen_lines;
  ring.drain([&](const SampleRecord& rec, const SampleRing::Run& run) {
    for (uint32_t k = 0; k < rec.run; k++) {
      seen.push_back(run.method(k));
      seen_lines.push_back(run.line(k));
    }
  });
  EXPECT_EQ(seen, (std::vector<uint64_t>{10, 20, 30, 10, 20, 30, 10, 20}));
  EXPECT_EQ(seen_lines, (std::vector<int32_t>{1, 2, 3, 1, 2, 3, 1, 2}));
  // Wrapped around the end of the frame ring.
  r.run = 3;
  EXPECT_TRUE(ring.push(r, methods, nullptr));
  ring.drain([&](const SampleRecord&, const SampleRing::Run& run) {
    EXPECT_EQ(run.method(0), 10u);
    EXPECT_EQ(run.method(2), 30u);
    EXPECT_EQ(run.line(1), 0);
  });
}

TEST(SampleRing, PendingMethodsAreTheUnconsumedOnes) {
  SampleRing ring(16, 16);
  uint64_t methods[] = {2, 1};
  SampleRecord r = interval(1);
  r.kind = SampleRecord::kStack;
  r.run = 2;
  ring.push(r, methods);
  std::vector<uint64_t> pending;
  ring.each_pending_method([&](uint64_t m) { pending.push_back(m); });
  EXPECT_EQ(pending, (std::vector<uint64_t>{1, 2}));
  ring.drain([](const SampleRecord&, const SampleRing::Run&) {});
  pending.clear();
  ring.each_pending_method([&](uint64_t m) { pending.push_back(m); });
  EXPECT_TRUE(pending.empty());
}

TEST(SampleRing, ProducerAndConsumerOnTwoThreadsLoseNothing) {
  SampleRing ring(1024, 4096);
  constexpr int64_t kCount = 200000;
  int64_t pushed_weight = 0, drained_weight = 0;
  uint64_t pushed_frames = 0, drained_frames = 0;
  std::atomic<bool> done{false};
  std::thread producer([&] {
    uint64_t methods[8];
    for (int64_t i = 1; i <= kCount; i++) {
      SampleRecord r = interval(i);
      r.kind = SampleRecord::kStack;
      r.run = static_cast<uint32_t>(i % 8);
      for (uint32_t k = 0; k < r.run; k++) methods[k] = static_cast<uint64_t>(i) + k;
      if (ring.push(r, methods)) {
        pushed_weight += i;
        for (uint32_t k = 0; k < r.run; k++) pushed_frames += methods[k];
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
