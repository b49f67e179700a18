#include "sampler/sample_ring.hh"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

using namespace rperf;

TEST(SampleRing, DropsWhenFullAndDrainsInOrder) {
  SampleRing ring(8);
  for (int i = 0; i < 8; i++) EXPECT_TRUE(ring.push({1, 1, 0, kRunning, i + 1, 0}));
  EXPECT_FALSE(ring.push({1, 1, 0, kRunning, 99, 0}));
  int64_t expect = 1;
  EXPECT_EQ(ring.drain([&](const Sample& r) { EXPECT_EQ(r.weight_ns, expect++); }), 8u);
  EXPECT_TRUE(ring.push({1, 1, 0, kRunning, 9, 0}));
}

TEST(SampleRing, ProducerAndConsumerOnTwoThreadsLoseNothing) {
  SampleRing ring(1024);
  constexpr int64_t kCount = 200000;
  int64_t pushed_weight = 0, drained_weight = 0;
  std::atomic<bool> done{false};
  std::thread producer([&] {
    for (int64_t i = 1; i <= kCount; i++) {
      if (ring.push({0, 1, 0, kRunning, i, i})) pushed_weight += i;
    }
    done = true;
  });
  while (!done) ring.drain([&](const Sample& r) { drained_weight += r.weight_ns; });
  producer.join();
  ring.drain([&](const Sample& r) { drained_weight += r.weight_ns; });
  EXPECT_EQ(drained_weight, pushed_weight);
  EXPECT_GT(pushed_weight, 0);
}

