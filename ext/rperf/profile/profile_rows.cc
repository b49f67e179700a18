#include "profile/profile_rows.hh"

#include <cstring>

#include "profile/transform.hh"

namespace rperf {

bool is_body_key(const char* key, size_t len) {
  static const char* const kKeys[] = {"aggregated_samples", "raw_samples", "label_sets", "allocation_samples", "raw_allocation_samples",
                                      "function_start_lines", "unique_frames", "unique_stacks", "meta", "summary"};
  for (const char* k : kKeys) {
    if (std::strlen(k) == len && std::memcmp(k, key, len) == 0) return true;
  }
  return false;
}

ProfileRows::ProfileRows(Profile& p, bool raw) : p_(p), label_map_{0} { p_.timestamps = raw; }

void ProfileRows::label_set(const LabelSet& set) {
  if (!sets_given_) {
    label_map_.clear();
    sets_given_ = true;
  }
  label_map_.push_back(p_.label_sets.intern(set));
}

int64_t ProfileRows::label_set_id(const LabelSet& set) {
  uint32_t interned = p_.label_sets.intern(set);
  if (source_id_.size() <= interned) source_id_.resize(interned + 1, -1);
  if (source_id_[interned] < 0) {
    label_set(set);
    source_id_[interned] = static_cast<int64_t>(label_map_.size() - 1);
  }
  return source_id_[interned];
}

std::string ProfileRows::row_name(Kind kind, size_t index) const {
  static const char* const kNames[] = {"aggregated_samples", "raw_samples", "allocation_samples", "raw_allocation_samples"};
  return std::string(kNames[kind]) + "[" + std::to_string(index) + "]";
}

bool ProfileRows::map_label_set(Kind kind, int64_t id, uint32_t& out) {
  if (id == kNoLabels) {
    out = 0;
    return true;
  }
  size_t count = label_map_.empty() ? 1 : label_map_.size();  // label_sets: [] still has the empty set
  if (id < 0 || static_cast<uint64_t>(id) >= count) {
    error_ = row_name(kind, counts_[kind]) + ": label_set_id " + std::to_string(id) + " has no label set (ids: 0 to " +
             std::to_string(count - 1) + ")";
    return false;
  }
  out = label_map_.empty() ? 0 : label_map_[static_cast<size_t>(id)];
  return true;
}

bool ProfileRows::in_range(Kind kind, const char* field, int64_t value, int64_t max, int64_t* total) {
  if (value >= 0 && value <= max && (!total || value <= kMaxTotal - *total)) {
    if (total) *total += value;
    return true;
  }
  error_ = row_name(kind, counts_[kind]) + ": " + field + " " + std::to_string(value) +
           (value < 0 || value > max ? " is out of range (0 to " + std::to_string(max) + ")"
                                     : " takes the rows' total past " + std::to_string(kMaxTotal) + " (2^62)");
  return false;
}

bool ProfileRows::sample(uint32_t stack, int64_t weight, int64_t thread_seq, int64_t label_set_id, const int64_t* extra, size_t extra_count) {
  Kind kind = p_.timestamps ? kRaw : kAggregated;
  Sample s;
  if (!map_label_set(kind, label_set_id, s.label_set)) return false;
  if (!in_range(kind, "thread_seq", thread_seq, kMaxThreadSeq)) return false;
  s.stack = stack;
  s.weight_ns = weight;
  s.thread_seq = static_cast<uint32_t>(thread_seq);
  if (extra_count >= 1) {
    // [..., vm_state(, time_ns)] (rperf 0.11: both); early builds of ours wrote [..., time_ns].
    int64_t first = extra[0];
    bool is_state = first >= 0 && first < kVmStateCount;
    if (extra_count >= 2 || is_state) s.vm_state = static_cast<VmState>(is_state ? first : 0);
    else s.time_ns = first;
    if (extra_count >= 2) s.time_ns = extra[1];
  }
  if (!in_range(kind, "time_ns", s.time_ns, kMaxTotal)) return false;
  if (!in_range(kind, "weight", weight, kMaxTotal, &total_weight_)) return false;
  p_.samples.push_back(s);
  counts_[kind]++;
  return true;
}

bool ProfileRows::allocation(uint32_t stack, int64_t count, int64_t thread_seq, int64_t label_set_id, uint32_t class_name, int64_t retained,
                             bool raw, int64_t time_ns) {
  Kind kind = raw ? kRawAllocations : kAllocations;
  AllocationSample a;
  if (!map_label_set(kind, label_set_id, a.label_set)) return false;
  if (!in_range(kind, "thread_seq", thread_seq, kMaxThreadSeq) || !in_range(kind, "time_ns", time_ns, kMaxTotal) ||
      !in_range(kind, "count", count, kMaxTotal, &total_count_) || !in_range(kind, "retained_count", retained, kMaxTotal, &total_retained_)) {
    return false;
  }
  a.stack = stack;
  a.count = count;
  a.thread_seq = static_cast<uint32_t>(thread_seq);
  a.type = class_name;
  a.retained = retained;
  if (raw) {
    a.time_ns = time_ns;
    p_.allocations.push_back(a);
  } else {
    allocations_.add(a);
    aggregated_allocations_ = true;
  }
  counts_[kind]++;
  return true;
}

void ProfileRows::start_line(const char* path, size_t path_len, const char* label, size_t label_len, int32_t line) {
  uint32_t m = methods_.intern(path, path_len, label, label_len, 0);
  start_of_method_.resize(methods_.size(), 0);
  start_of_method_[m] = line;
}

void ProfileRows::finish() {
  for (uint32_t i = 0; i < p_.frames.size() && methods_.size(); i++) {
    Frame& f = p_.frames.at(i);
    size_t before = methods_.size();
    uint32_t m = methods_.intern(f.path, f.label, 0);
    // Only methods start_line named have a start line: one first interned here (an earlier
    // frame of this loop) has none (ASan: a read past start_of_method_ on a corrupt pprof).
    if (methods_.size() == before && m < start_of_method_.size()) f.start_line = start_of_method_[m];
  }
  if (aggregated_allocations_) p_.allocations = allocations_.take();
  if (!p_.timestamps) infer_vm_states(p_);  // raw samples carry their state
  else label_vm_states(p_);                 // and the user's labels only (rperf 0.11)
}

}  // namespace rperf
