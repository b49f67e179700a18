// The one way a profile's rows enter the model, whatever reads them: the JSON loader
// (io/loader), the pprof reader (io/pprof_reader) and a Ruby result Hash
// (ruby/profile_binding). Each source checks only its own syntax (a JSON array, a Ruby Array,
// a protobuf message) and hands over numbers and interned stacks; here each row is checked
// once (its label_set_id must name one of the source's label sets, and a wrong row is named
// "aggregated_samples[3]: ..."), label sets are deduplicated by content, and the body is
// completed the same way for every source (function start lines, allocation rows merged,
// VM states inferred from labels). Ruby-independent.
#pragma once
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.hh"

namespace rperf {

// Keys of a result (the Ruby Hash and the JSON document) that are not attributes: the body,
// what is derived from it (unique_frames, ...), and the head objects (meta, summary). The one
// list: the loader, the Hash converter and the writers' callers ask here.
bool is_body_key(const char* key, size_t len);
inline bool is_body_key(const std::string& key) { return is_body_key(key.data(), key.size()); }

class ProfileRows {
 public:
  // Where a row comes from, as the result names its array.
  enum Kind : uint8_t { kAggregated, kRaw, kAllocations, kRawAllocations };

  // Rows are added to `p`, whose stacks the source interns. `raw`: the time rows are one per
  // sampled interval (raw_samples, aggregate: false) and the profile keeps their times.
  ProfileRows(Profile& p, bool raw);

  // The source's label sets, in its order: a row's label_set_id indexes them (equal sets are
  // valid and share one interned id). A source with none has only id 0, the empty set.
  void label_set(const LabelSet& set);
  // The bounds of a row's numbers, checked here for every source before any view reads them:
  // a thread_seq (the sampler numbers threads from 1) fits 31 bits; a weight, time, count or
  // retained count is not negative, and the weights (and the counts) of all rows add up to at
  // most 2^62 (146 years of ns), so that no sum, difference or end of an interval a view
  // computes from them overflows.
  static constexpr int64_t kMaxThreadSeq = INT32_MAX;
  static constexpr int64_t kMaxTotal = int64_t{1} << 62;
  // A row's label_set_id that names no set of the source: the row has no labels (nil in a Hash).
  static constexpr int64_t kNoLabels = INT64_MIN;
  // For a source whose rows carry their labels (pprof): the id of `set` in the source's list,
  // added when it is new.
  int64_t label_set_id(const LabelSet& set);

  // A time row: [stack, weight, thread_seq, label_set_id, extra...]. `extra` (raw rows): the
  // VM state and time (rperf 0.11), or the time alone (early builds of ours).
  bool sample(uint32_t stack, int64_t weight, int64_t thread_seq, int64_t label_set_id, const int64_t* extra = nullptr,
              size_t extra_count = 0);
  // An allocation row: [stack, count, thread_seq, label_set_id, class_name, retained(, time_ns
  // when raw)], its class interned by class_name(). Aggregated rows are merged by key when the
  // body is finished.
  bool allocation(uint32_t stack, int64_t count, int64_t thread_seq, int64_t label_set_id, uint32_t class_name, int64_t retained,
                  bool raw, int64_t time_ns = 0);
  uint32_t class_name(const char* name, size_t len) { return p_.class_names.intern(std::string(name, len)); }
  // function_start_lines: the line a method (path, label) starts at.
  void start_line(const char* path, size_t path_len, const char* label, size_t label_len, int32_t line);

  // Completes the body: start lines onto the frames, aggregated allocation rows merged, the
  // VM states of aggregated samples inferred from their labels (raw rows carry theirs).
  void finish();

  // What is wrong with the row refused last ("aggregated_samples[1]: label_set_id 1 has no
  // label set (ids: 0 to 0)").
  const std::string& error() const { return error_; }
  // Names a row of `kind` by its index for a source's own message ("allocation_samples[2]").
  std::string row_name(Kind kind, size_t index) const;
  size_t rows(Kind kind) const { return counts_[kind]; }

 private:
  bool map_label_set(Kind kind, int64_t id, uint32_t& out);
  // `value` of the row's `field` within [0, max] (and `total` with it within kMaxTotal when
  // given); else the row is named in error_.
  bool in_range(Kind kind, const char* field, int64_t value, int64_t max, int64_t* total = nullptr);

  Profile& p_;
  std::vector<uint32_t> label_map_;  // the source's label set ids -> interned ids
  std::vector<int64_t> source_id_;   // interned id -> first source id (label_set_id(set))
  bool sets_given_ = false;
  AllocationAggregator allocations_;
  bool aggregated_allocations_ = false;
  FrameTable methods_;  // (path, label) of function_start_lines -> start_of_method_
  std::vector<int32_t> start_of_method_;
  size_t counts_[4] = {};
  int64_t total_weight_ = 0, total_count_ = 0, total_retained_ = 0;
  std::string error_;
};

}  // namespace rperf
