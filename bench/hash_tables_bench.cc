// Hash table micro-benchmark (not a test): the hot paths of the tables built on HashIndex.
//   FREEOBJ: LiveObjects::erase of an address not sampled (every object the GC frees), and of a
//            sampled one (with the insert that reuses its slot), N sampled objects alive.
//   TextTable: the loader's lookups of frame texts (20,000 of them, in stacks of 40, hinted in
//            batches of 32 as json_reader's look_ahead does).
//   HashIndex: 1M dense ids inserted (growing from 64 slots), then found.
// Each figure is the best of several runs (`rake bench:hash_tables` builds and runs it). To compare
// with another version of the headers, build
// this file against both, e.g. (the headers of commit C extracted into /tmp/old/ext/rperf):
//   git archive C ext/rperf | tar -x -C /tmp/old
//   g++ -std=c++17 -O2 -I ext/rperf bench/hash_tables_bench.cc -o /tmp/new && taskset -c 1 /tmp/new
//   g++ -std=c++17 -O2 -I /tmp/old/ext/rperf bench/hash_tables_bench.cc -o /tmp/old/b && taskset -c 1 /tmp/old/b
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "io/text_table.hh"
#include "sampler/live_objects.hh"
#include "util/hash_index.hh"

namespace {

using Clock = std::chrono::steady_clock;
double ns_since(Clock::time_point t0) { return std::chrono::duration<double, std::nano>(Clock::now() - t0).count(); }

uint64_t g_rng = 88172645463325252ULL;
uint64_t next() {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

// As freeobj_hook: a function of its own, called for every freed object.
__attribute__((noinline)) bool freeobj(rperf::LiveObjects& live, uint64_t address) {
  return live.size() != 0 && live.erase(address);
}

void bench_freeobj(size_t live_n) {
  const uint64_t heap = 0x7f0000000000ULL, span = 1ULL << 26;  // 40-byte object slots
  double best_miss = 1e99, best_hit = 1e99;
  size_t checksum = 0;
  for (int run = 0; run < 5; run++) {
    rperf::LiveObjects live;
    std::vector<uint64_t> tracked;
    // Twice as many sampled, then half of them freed: slots recycled, as in a running program.
    for (size_t i = 0; i < 2 * live_n; i++) {
      const uint64_t a = heap + (next() % span) * 40;
      if (!live.reserve_one()) return;
      live.insert(a);
      tracked.push_back(a);
    }
    for (size_t i = 0; i < live_n; i++) {
      const size_t k = next() % tracked.size();
      live.erase(tracked[k]);
      tracked[k] = tracked.back();
      tracked.pop_back();
    }
    std::vector<uint64_t> unsampled(1 << 16);
    for (uint64_t& a : unsampled) a = heap + (next() % span) * 40 + 8;  // never tracked
    const size_t misses = 10000000, hits = 1000000;
    auto t0 = Clock::now();
    for (size_t i = 0; i < misses; i++) checksum += freeobj(live, unsampled[i & (unsampled.size() - 1)]);
    best_miss = std::min(best_miss, ns_since(t0) / misses);
    t0 = Clock::now();
    for (size_t i = 0; i < hits; i++) {
      const size_t k = next() % tracked.size();
      checksum += freeobj(live, tracked[k]);
      tracked[k] = heap + (next() % span) * 40;
      live.reserve_one();
      live.insert(tracked[k]);
    }
    best_hit = std::min(best_hit, ns_since(t0) / hits);
  }
  std::printf("FREEOBJ, %7zu sampled objects alive: %6.2f ns a miss, %6.2f ns a hit + reinsert (checksum %zu)\n", live_n,
              best_miss, best_hit, checksum);
}

struct Val {
  uint64_t a, b;
};

void bench_text_table() {
  const size_t frames = 20000, stacks = 25000, depth = 40;
  std::vector<std::string> texts;
  for (size_t i = 0; i < frames; i++) {
    texts.push_back("[\"app/models/file" + std::to_string(i % 700) + ".rb\",\"Module" + std::to_string(i % 300) +
                    "::Klass" + std::to_string(i % 97) + "#method_" + std::to_string(i) + "\"," +
                    std::to_string(i % 900 + 1) + "]");
  }
  std::string input;
  std::vector<std::pair<size_t, size_t>> refs;
  for (size_t s = 0; s < stacks; s++) {
    for (size_t d = 0; d < depth; d++) {
      const std::string& t = texts[(s * 7919 + d * 104729 + next() % 50) % frames];
      refs.emplace_back(input.size(), t.size());
      input += t;
      input += ',';
    }
  }
  double best = 1e99;
  uint64_t checksum = 0;
  for (int run = 0; run < 5; run++) {
    const auto t0 = Clock::now();
    rperf::TextTable<Val> table;
    for (size_t i = 0; i < frames; i++) table.insert(texts[i].data(), texts[i].size(), Val{i, i});
    for (size_t at = 0; at < refs.size(); at += 32) {
      const size_t n = std::min<size_t>(32, refs.size() - at);
      uint64_t h[32];
      for (size_t k = 0; k < n; k++) h[k] = table.hash(input.data() + refs[at + k].first, refs[at + k].second);
      for (size_t k = 0; k < n; k++) table.prefetch(h[k]);
      for (size_t k = 0; k < n; k++) table.prefetch_entry(h[k]);
      for (size_t k = 0; k < n; k++) {
        const Val* v = table.find(input.data() + refs[at + k].first, refs[at + k].second, h[k]);
        checksum += v ? v->a : 0;
      }
    }
    best = std::min(best, ns_since(t0) / refs.size());
  }
  std::printf("TextTable: %.2f ns a frame text looked up (checksum %llu)\n", best, static_cast<unsigned long long>(checksum));
}

void bench_hash_index() {
  const uint32_t n = 1000000;
  std::vector<uint64_t> keys(n);
  for (uint32_t i = 0; i < n; i++) keys[i] = rperf::mix64(i + 1);
  double best_insert = 1e99, best_find = 1e99;
  uint64_t checksum = 0;
  for (int run = 0; run < 9; run++) {
    rperf::HashIndex index;
    auto t0 = Clock::now();
    for (uint32_t i = 0; i < n; i++) {
      if (index.find(keys[i], [&](uint32_t id) { return keys[id] == keys[i]; }) == rperf::HashIndex::kNotFound) index.insert(keys[i], i);
    }
    best_insert = std::min(best_insert, ns_since(t0) / n);
    t0 = Clock::now();
    for (uint32_t i = 0; i < n; i++) {
      const uint64_t key = keys[(i * 7919u) % n];
      checksum += index.find(key, [&](uint32_t id) { return keys[id] == key; });
    }
    best_find = std::min(best_find, ns_since(t0) / n);
  }
  std::printf("HashIndex: %.2f ns an insert (after a missed find), %.2f ns a find (checksum %llu)\n", best_insert, best_find,
              static_cast<unsigned long long>(checksum));
}

}  // namespace

int main() {
  bench_freeobj(1000);
  bench_freeobj(30000);
  bench_freeobj(500000);
  bench_text_table();
  bench_hash_index();
}
