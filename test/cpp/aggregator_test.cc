#include "aggregator.hh"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "sample_ring.hh"

using namespace rperf;

TEST(SampleRing, DropsWhenFullAndDrainsInOrder) {
  SampleRing ring(8);
  for (int i = 0; i < 8; i++) EXPECT_TRUE(ring.push({1, 1, 0, 0, i + 1, 0}));
  EXPECT_FALSE(ring.push({1, 1, 0, 0, 99, 0}));
  int64_t expect = 1;
  EXPECT_EQ(ring.drain([&](const SampleRecord& r) { EXPECT_EQ(r.weight_ns, expect++); }), 8u);
  EXPECT_TRUE(ring.push({1, 1, 0, 0, 9, 0}));
}

TEST(SampleRing, ProducerAndConsumerOnTwoThreadsLoseNothing) {
  SampleRing ring(1024);
  constexpr int64_t kCount = 200000;
  int64_t pushed_weight = 0, drained_weight = 0;
  std::atomic<bool> done{false};
  std::thread producer([&] {
    for (int64_t i = 1; i <= kCount; i++) {
      if (ring.push({0, 1, 0, 0, i, i})) pushed_weight += i;
    }
    done = true;
  });
  while (!done) ring.drain([&](const SampleRecord& r) { drained_weight += r.weight_ns; });
  producer.join();
  ring.drain([&](const SampleRecord& r) { drained_weight += r.weight_ns; });
  EXPECT_EQ(drained_weight, pushed_weight);
  EXPECT_GT(pushed_weight, 0);
}

TEST(Aggregator, SumsWeightPerKey) {
  Aggregator agg;
  agg.add({5, 1, 0, kRunning, 100, 0});
  agg.add({5, 1, 0, kRunning, 50, 0});
  agg.add({5, 2, 0, kRunning, 7, 0});
  agg.add({5, 1, 0, kGvlBlocked, 3, 0});
  EXPECT_EQ(agg.table().size(), 3u);
  auto it = agg.table().find({5, 1, 0, kRunning});
  ASSERT_NE(it, agg.table().end());
  EXPECT_EQ(it->second.weight_ns, 150);
  EXPECT_EQ(it->second.count, 2);
  EXPECT_EQ(agg.total_weight_ns(), 160);
  agg.clear();
  EXPECT_TRUE(agg.table().empty());
}

TEST(Aggregator, RawModeKeepsEveryRecordWithItsTimestamp) {
  Aggregator agg(true);
  agg.add({5, 1, 0, kRunning, 100, 10});
  agg.add({5, 1, 0, kRunning, 100, 20});
  ASSERT_EQ(agg.raw().size(), 2u);
  EXPECT_EQ(agg.raw()[1].time_ns, 20);
}
