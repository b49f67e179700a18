// Aggregation of sample records: (stack, thread, label set, vm state) -> total weight and
// count. Runs on the worker thread, off the GVL. With aggregation disabled it keeps every
// record (with its timestamp) instead, for timelines.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "interner.hh"
#include "sample_ring.hh"

namespace rperf {

struct AggregateKey {
  uint32_t stack;
  uint32_t thread_seq;
  uint32_t label_set;
  uint8_t vm_state;
  bool operator==(const AggregateKey& o) const {
    return stack == o.stack && thread_seq == o.thread_seq && label_set == o.label_set && vm_state == o.vm_state;
  }
};
struct AggregateKeyHash {
  size_t operator()(const AggregateKey& k) const {
    return mix64((static_cast<uint64_t>(k.stack) << 32) ^ (static_cast<uint64_t>(k.thread_seq) << 20) ^
                 (static_cast<uint64_t>(k.label_set) << 3) ^ k.vm_state);
  }
};
struct AggregateValue {
  int64_t weight_ns = 0;
  int64_t count = 0;
};

class Aggregator {
 public:
  explicit Aggregator(bool keep_raw = false) : keep_raw_(keep_raw) {}

  void add(const SampleRecord& r) {
    total_weight_ns_ += r.weight_ns;
    if (keep_raw_) {
      raw_.push_back(r);
      return;
    }
    AggregateValue& v = table_[{r.stack, r.thread_seq, r.label_set, r.vm_state}];
    v.weight_ns += r.weight_ns;
    v.count++;
  }

  void clear() {
    table_.clear();
    raw_.clear();
    total_weight_ns_ = 0;
  }

  const std::unordered_map<AggregateKey, AggregateValue, AggregateKeyHash>& table() const { return table_; }
  const std::vector<SampleRecord>& raw() const { return raw_; }
  int64_t total_weight_ns() const { return total_weight_ns_; }

 private:
  bool keep_raw_;
  std::unordered_map<AggregateKey, AggregateValue, AggregateKeyHash> table_;
  std::vector<SampleRecord> raw_;
  int64_t total_weight_ns_ = 0;
};

}  // namespace rperf
