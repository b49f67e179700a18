// The profile model: one C++ structure for a profile, whatever made it (the sampler at
// stop/snapshot, the JSON or pprof loader, a Ruby Hash handed to Rperf.save, the multi-process
// merge) and whatever reads it (every encoder, the summary, the Ruby Hash view).
//
//   frames      (path, label, line, start_line), interned by content
//   stacks      leaf-first lists of frame ids, interned by content
//   label_sets  ordered (key, value) lists, interned; id 0 is always the empty set
//   samples     (stack, weight, thread, label set, VM state, time): aggregated (one per key,
//               time = first) unless `timestamps` (one per sampled interval, aggregate: false)
//   allocations sampled allocations (stack, thread, label set, class): estimated objects
//               allocated and still alive at the end (allocation profiling only)
//   header      the result's scalar keys (mode, frequency, counters, ...): typed fields and
//               extras, in order, and the JSON file's head objects meta and summary
//               (profile/profile_header.hh)
//
// Ruby-independent: unit-tested under GoogleTest without a Ruby VM.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "profile/json_value.hh"
#include "profile/profile_header.hh"
#include "profile/vm_state.hh"
#include "util/hash_index.hh"

namespace rperf {

struct Frame {
  std::string path;
  std::string label;
  int32_t line = 0;        // 0 when unknown (method-level profiles, C methods)
  int32_t start_line = 0;  // first line of the method's definition, 0 when unknown
};

class FrameTable {
 public:
  uint32_t intern(const char* path, size_t path_len, const char* label, size_t label_len, int32_t line);
  uint32_t intern(const std::string& path, const std::string& label, int32_t line) {
    return intern(path.data(), path.size(), label.data(), label.size(), line);
  }
  // The same lookup in steps, for callers that intern many frames at once (a stack) and want
  // their cache misses to overlap: hash every key, prefetch() each, prefetch_offset() each,
  // prefetch_key() each, then intern_hashed() each. The prefetches are hints only.
  static uint64_t hash(const char* path, size_t path_len, const char* label, size_t label_len, int32_t line);
  void prefetch(uint64_t hash) const { index_.prefetch(hash); }
  void prefetch_offset(uint64_t hash) const {
    uint32_t id = index_.likely_id(hash);
    if (id < key_offsets_.size()) __builtin_prefetch(&key_offsets_[id]);
  }
  void prefetch_key(uint64_t hash) const {
    uint32_t id = index_.likely_id(hash);
    if (id < key_offsets_.size()) __builtin_prefetch(keys_.data() + key_offsets_[id]);
  }
  uint32_t intern_hashed(uint64_t hash, const char* path, size_t path_len, const char* label, size_t label_len, int32_t line);
  // The id of a frame already in the table, or HashIndex::kNotFound; adds nothing.
  uint32_t find(const std::string& path, const std::string& label, int32_t line) const {
    return index_.find(hash(path.data(), path.size(), label.data(), label.size(), line),
                       [&](uint32_t i) { return key_equals(i, path.data(), path.size(), label.data(), label.size(), line); });
  }
  const Frame& operator[](uint32_t id) const { return frames_[id]; }
  Frame& at(uint32_t id) { return frames_[id]; }
  size_t size() const { return frames_.size(); }
  const std::vector<Frame>& all() const { return frames_; }
  void clear();

 private:
  bool key_equals(uint32_t id, const char* path, size_t path_len, const char* label, size_t label_len, int32_t line) const;

  std::vector<Frame> frames_;
  // Each frame's key packed in one arena ([line][path_len][label_len][path][label]), so a
  // lookup compares one contiguous run of bytes instead of chasing three heap objects.
  std::string keys_;
  std::vector<size_t> key_offsets_;
  HashIndex index_;
};

// A view of one stack's frame ids, leaf first.
struct FrameSpan {
  const uint32_t* ids;
  size_t count;
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  uint32_t operator[](size_t i) const { return ids[i]; }
  const uint32_t* begin() const { return ids; }
  const uint32_t* end() const { return ids + count; }
};

class StackTable {
 public:
  StackTable() { offsets_.push_back(0); }
  uint32_t intern(const uint32_t* leaf_first, size_t n);
  uint32_t intern(const std::vector<uint32_t>& leaf_first) { return intern(leaf_first.data(), leaf_first.size()); }
  // Room for `stacks` more stacks of `frames` frame ids in all, without regrowing.
  void reserve(size_t stacks, size_t frames) {
    ids_.reserve(ids_.size() + frames);
    offsets_.reserve(offsets_.size() + stacks);
    index_.reserve(size() + stacks);
  }
  FrameSpan operator[](uint32_t id) const { return {ids_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]}; }
  size_t size() const { return offsets_.size() - 1; }
  size_t frame_count() const { return ids_.size(); }  // frame ids in all stacks
  void clear();

 private:
  std::vector<uint32_t> ids_;
  std::vector<uint32_t> offsets_;  // stack i is ids_[offsets_[i], offsets_[i + 1])
  HashIndex index_;
};

// One label: its key and value each as given (profile/label_value.hh: a typed, canonical
// encoding; "%GVL", "%GC" and "%pid" are Symbol keys with String values, as rperf 0.11 sets them).
struct Label {
  std::string key;
  std::string value;
  bool operator==(const Label& o) const { return key == o.key && value == o.value; }
};
using LabelSet = std::vector<Label>;  // insertion order, unique keys

// The value a label gets once a session's label-set table is full (LabelSetTable::intern_bounded).
constexpr const char* kOtherLabelValue = "(other)";

class LabelSetTable {
 public:
  static constexpr uint32_t kNotFound = HashIndex::kNotFound;
  LabelSetTable() { intern({}); }
  // The set's id; the same labels in another order are the same set (the first order is kept).
  uint32_t intern(const LabelSet& set);
  // As intern, but once `cap` sets are held a new set is interned with every value replaced by
  // kOtherLabelValue (its keys kept): a scanner's endless paths cannot grow the table without
  // bound. `overflowed` counts the sets so folded since the table was made or the count reset
  // (a snapshot(clear: true) interval's own count).
  uint32_t intern_bounded(const LabelSet& set, size_t cap);
  uint32_t find(const LabelSet& set) const;  // kNotFound when not held
  uint64_t overflowed() const { return overflowed_; }
  void reset_overflowed() { overflowed_ = 0; }
  // The set `id` with `label` added (or its key's value replaced).
  uint32_t with(uint32_t id, const Label& label);
  const LabelSet& operator[](uint32_t id) const { return sets_[id]; }
  // Ids run from 0 to size() - 1; released ones (release_unused) are empty until reused.
  size_t size() const { return sets_.size(); }
  size_t held() const { return sets_.size() - free_ids_.size(); }  // sets not released
  bool released(uint32_t id) const { return released_[id]; }
  // Keeps a set alive across release_unused while someone outside the samples (a label block
  // that will restore it) holds its id; counted.
  void pin(uint32_t id) { pins_[id]++; }
  void unpin(uint32_t id) {
    if (id < pins_.size() && pins_[id] > 0) pins_[id]--;
  }
  // Frees every set that neither `live` (indexed by id) names nor a pin holds; id 0 (no labels)
  // always stays. The others keep their ids; freed ids are reused by later sets.
  void release_unused(const std::vector<bool>& live);
  void clear();

 private:
  uint32_t add(const LabelSet& set, uint64_t hash);

  std::vector<LabelSet> sets_;
  std::vector<bool> released_;
  std::vector<uint32_t> pins_;
  std::vector<uint32_t> free_ids_;
  HashIndex index_;
  uint64_t overflowed_ = 0;
};

struct Sample {
  uint32_t stack = 0;
  uint32_t thread_seq = 0;  // 1-based; 0 when unknown
  uint32_t label_set = 0;
  VmState vm_state = kRunning;
  int64_t weight_ns = 0;
  int64_t time_ns = 0;  // end of the interval, ns since the profile started
};

// Where a sample's interval starts: a sample covers [time - weight, time] (its time ends it).
inline int64_t sample_start_ns(int64_t time_ns, int64_t weight_ns) { return time_ns - weight_ns; }

// Merges samples that share (stack, thread, label set, VM state): weights add up, the first
// sample's time is kept, order of first appearance. The one aggregation of the project: the
// sampler's worker thread uses it on live stack ids, the model on profile stack ids.
class SampleAggregator {
 public:
  void add(const Sample& s);
  const std::vector<Sample>& samples() const { return samples_; }
  std::vector<Sample> take();
  void clear();

 private:
  std::vector<Sample> samples_;
  HashIndex index_;
};

// Strings interned to dense ids (the class names of allocation samples).
class NameTable {
 public:
  uint32_t intern(const std::string& name);
  const std::string& operator[](uint32_t id) const { return names_[id]; }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  HashIndex index_;
};

// The objects one allocation site allocated, of one class, on one thread, under one label set.
// Each sampled allocation stands for `allocation_interval` objects on average, so `count` and
// `retained` are estimates in objects.
struct AllocationSample {
  uint32_t stack = 0;
  uint32_t thread_seq = 0;
  uint32_t label_set = 0;
  uint64_t type = 0;     // a Profile's class_names id (the sampler keys by the class VALUE)
  int64_t count = 0;     // objects allocated
  int64_t retained = 0;  // of those, still alive when the profile was taken
  int64_t time_ns = 0;   // raw (one per sampled allocation): when, ns since the profile started
};

// Merges allocation samples that share (stack, thread, label set, type): counts add up, order of
// first appearance. add() returns the merged sample's index (stable until take/clear).
class AllocationAggregator {
 public:
  uint32_t add(const AllocationSample& s);
  const std::vector<AllocationSample>& samples() const { return samples_; }
  std::vector<AllocationSample> take();
  void clear();

 private:
  std::vector<AllocationSample> samples_;
  HashIndex index_;
};

struct Profile {
  FrameTable frames;
  StackTable stacks;
  LabelSetTable label_sets;
  std::vector<Sample> samples;
  std::vector<AllocationSample> allocations;  // with allocation profiling; one per sampled allocation with `timestamps`
  NameTable class_names;
  bool has_lines = false;   // frames carry line numbers
  bool timestamps = false;  // one sample per interval with its time (aggregate: false)
  // The allocation samples' `retained` was measured (the sampler's retained: true); else it is
  // "not measured" (nil in a row, no inuse_objects in pprof) and reads 0 here.
  bool retained_measured = true;
  ProfileHeader header;

  std::string mode() const { return header.mode ? header.mode->text : "cpu"; }
  int frequency() const { return static_cast<int>(header.frequency.value_or(1000)); }
  int64_t total_weight() const;
  // The rate the timer ran at over the profile (its ticks over its time: with an overhead
  // budget below the frequency asked for), else the frequency.
  double sampling_hz() const;
  // The overhead budget's measure: the profiler's CPU over the process's; -1 when not measured.
  double overhead_ratio() const;
  // Whether the profile has allocation data (allocation profiling was on, even with no sample):
  // the key, whatever its value (a hand-written one of another type too), as before.
  bool has_allocations() const { return header.has("allocation_interval"); }
  // The samples merged by key (what "aggregated_samples" holds).
  std::vector<Sample> aggregated_samples() const;
  // The allocation samples merged by key (what "allocation_samples" holds; times dropped).
  std::vector<AllocationSample> aggregated_allocations() const;
};

}  // namespace rperf
