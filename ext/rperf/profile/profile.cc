#include "profile/profile.hh"

#include <cstring>

#include "profile/label_value.hh"

namespace rperf {

namespace {
uint64_t frame_hash(const char* path, size_t path_len, const char* label, size_t label_len, int32_t line) {
  uint64_t h = hash_bytes(path, path_len);
  h = hash_bytes(label, label_len, h);
  return mix64(h ^ static_cast<uint32_t>(line));
}

// A label set is a set of labels whatever the order they were given in ({b: 2, a: 1} is
// {a: 1, b: 2}, as Ruby's Hash equality says and rperf 0.11 interns them): the hash is a sum
// over the labels, and two sets are the same when they hold the same labels.
uint64_t label_set_hash(const LabelSet& set) {
  uint64_t h = set.size();
  for (const Label& l : set) {
    uint64_t k = hash_bytes(l.key.data(), l.key.size());
    h += mix64(hash_bytes(l.value.data(), l.value.size(), k));
  }
  return mix64(h);
}

bool same_labels(const LabelSet& a, const LabelSet& b) {
  if (a.size() != b.size()) return false;
  // Keys are unique within a set: every label of one in the other means the same set.
  for (const Label& l : a) {
    bool found = false;
    for (const Label& m : b) {
      if (m == l) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

uint64_t sample_key_hash(const Sample& s) {
  return mix64((static_cast<uint64_t>(s.stack) << 32) ^ (static_cast<uint64_t>(s.thread_seq) << 20) ^
               (static_cast<uint64_t>(s.label_set) << 3) ^ s.vm_state);
}
bool same_key(const Sample& a, const Sample& b) {
  return a.stack == b.stack && a.thread_seq == b.thread_seq && a.label_set == b.label_set && a.vm_state == b.vm_state;
}
}  // namespace

bool FrameTable::key_equals(uint32_t id, const char* path, size_t path_len, const char* label, size_t label_len,
                            int32_t line) const {
  const char* k = keys_.data() + key_offsets_[id];
  uint32_t header[3];
  std::memcpy(header, k, sizeof(header));
  return header[0] == static_cast<uint32_t>(line) && header[1] == path_len && header[2] == label_len &&
         std::memcmp(k + sizeof(header), label, label_len) == 0 &&
         std::memcmp(k + sizeof(header) + label_len, path, path_len) == 0;
}

uint64_t FrameTable::hash(const char* path, size_t path_len, const char* label, size_t label_len, int32_t line) {
  return frame_hash(path, path_len, label, label_len, line);
}

uint32_t FrameTable::intern(const char* path, size_t path_len, const char* label, size_t label_len, int32_t line) {
  return intern_hashed(frame_hash(path, path_len, label, label_len, line), path, path_len, label, label_len, line);
}

uint32_t FrameTable::intern_hashed(uint64_t h, const char* path, size_t path_len, const char* label, size_t label_len, int32_t line) {
  uint32_t id = index_.find(h, [&](uint32_t i) { return key_equals(i, path, path_len, label, label_len, line); });
  if (id != HashIndex::kNotFound) return id;
  id = static_cast<uint32_t>(frames_.size());
  frames_.push_back(Frame{std::string(path, path_len), std::string(label, label_len), line, 0});
  key_offsets_.push_back(keys_.size());
  const uint32_t header[3] = {static_cast<uint32_t>(line), static_cast<uint32_t>(path_len), static_cast<uint32_t>(label_len)};
  keys_.append(reinterpret_cast<const char*>(header), sizeof(header));
  keys_.append(label, label_len);
  keys_.append(path, path_len);
  index_.insert(h, id);
  return id;
}

void FrameTable::clear() {
  frames_.clear();
  keys_.clear();
  key_offsets_.clear();
  index_.clear();
}

uint32_t StackTable::intern(const uint32_t* leaf_first, size_t n) {
  uint64_t h = n;
  for (size_t i = 0; i < n; i++) h = mix64(h ^ leaf_first[i]);
  uint32_t id = index_.find(h, [&](uint32_t i) {
    FrameSpan s = (*this)[i];
    return s.count == n && (n == 0 || std::memcmp(s.ids, leaf_first, n * sizeof(uint32_t)) == 0);
  });
  if (id != HashIndex::kNotFound) return id;
  id = static_cast<uint32_t>(size());
  ids_.insert(ids_.end(), leaf_first, leaf_first + n);
  offsets_.push_back(static_cast<uint32_t>(ids_.size()));
  index_.insert(h, id);
  return id;
}

void StackTable::clear() {
  ids_.clear();
  offsets_.assign(1, 0);
  index_.clear();
}

uint32_t LabelSetTable::find(const LabelSet& set) const {
  return index_.find(label_set_hash(set), [&](uint32_t i) { return !released_[i] && same_labels(sets_[i], set); });
}

uint32_t LabelSetTable::add(const LabelSet& set, uint64_t hash) {
  uint32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
    sets_[id] = set;
    released_[id] = false;
  } else {
    id = static_cast<uint32_t>(sets_.size());
    sets_.push_back(set);
    released_.push_back(false);
    pins_.push_back(0);
  }
  index_.insert(hash, id);
  return id;
}

uint32_t LabelSetTable::intern(const LabelSet& set) {
  uint64_t h = label_set_hash(set);
  uint32_t id = index_.find(h, [&](uint32_t i) { return !released_[i] && same_labels(sets_[i], set); });
  return id != HashIndex::kNotFound ? id : add(set, h);
}

uint32_t LabelSetTable::intern_bounded(const LabelSet& set, size_t cap) {
  uint32_t id = find(set);
  if (id != kNotFound) return id;
  if (held() < cap) return intern(set);
  overflowed_++;
  LabelSet other = set;
  for (Label& l : other) l.value = label_value::string(kOtherLabelValue);
  return intern(other);
}

uint32_t LabelSetTable::with(uint32_t id, const Label& label) {
  LabelSet set = sets_[id];
  bool replaced = false;
  for (Label& l : set) {
    if (l.key == label.key) {
      l = label;
      replaced = true;
    }
  }
  if (!replaced) set.push_back(label);
  return intern(set);
}

void LabelSetTable::release_unused(const std::vector<bool>& live) {
  index_.clear();
  free_ids_.clear();
  for (uint32_t id = 0; id < sets_.size(); id++) {
    bool keep = id == 0 || (id < live.size() && live[id]) || pins_[id] > 0;
    if (keep && !released_[id]) {
      index_.insert(label_set_hash(sets_[id]), id);
      continue;
    }
    LabelSet().swap(sets_[id]);
    released_[id] = true;
  }
  // Reused from the lowest id up, so the table stays as short as the sets alive.
  for (uint32_t id = static_cast<uint32_t>(sets_.size()); id-- > 1;) {
    if (released_[id]) free_ids_.push_back(id);
  }
}

void LabelSetTable::clear() {
  sets_.clear();
  released_.clear();
  pins_.clear();
  free_ids_.clear();
  index_.clear();
  intern({});
}

void SampleAggregator::add(const Sample& s) {
  uint64_t h = sample_key_hash(s);
  uint32_t id = index_.find(h, [&](uint32_t i) { return same_key(samples_[i], s); });
  if (id != HashIndex::kNotFound) {
    samples_[id].weight_ns += s.weight_ns;
    return;
  }
  index_.insert(h, static_cast<uint32_t>(samples_.size()));
  samples_.push_back(s);
}

std::vector<Sample> SampleAggregator::take() {
  std::vector<Sample> out;
  out.swap(samples_);
  index_.clear();
  return out;
}

void SampleAggregator::clear() {
  samples_.clear();
  index_.clear();
}

uint32_t NameTable::intern(const std::string& name) {
  uint64_t h = hash_bytes(name.data(), name.size());
  uint32_t id = index_.find(h, [&](uint32_t i) { return names_[i] == name; });
  if (id != HashIndex::kNotFound) return id;
  id = static_cast<uint32_t>(names_.size());
  names_.push_back(name);
  index_.insert(h, id);
  return id;
}

namespace {
uint64_t allocation_key_hash(const AllocationSample& s) {
  return mix64(mix64((static_cast<uint64_t>(s.stack) << 32) ^ (static_cast<uint64_t>(s.thread_seq) << 8) ^ s.label_set) ^ s.type);
}
bool same_key(const AllocationSample& a, const AllocationSample& b) {
  return a.stack == b.stack && a.thread_seq == b.thread_seq && a.label_set == b.label_set && a.type == b.type;
}
}  // namespace

uint32_t AllocationAggregator::add(const AllocationSample& s) {
  uint64_t h = allocation_key_hash(s);
  uint32_t id = index_.find(h, [&](uint32_t i) { return same_key(samples_[i], s); });
  if (id != HashIndex::kNotFound) {
    samples_[id].count += s.count;
    samples_[id].retained += s.retained;
    return id;
  }
  id = static_cast<uint32_t>(samples_.size());
  index_.insert(h, id);
  samples_.push_back(s);
  return id;
}

std::vector<AllocationSample> AllocationAggregator::take() {
  std::vector<AllocationSample> out;
  out.swap(samples_);
  index_.clear();
  return out;
}

void AllocationAggregator::clear() {
  samples_.clear();
  index_.clear();
}

double Profile::sampling_hz() const {
  const int64_t duration = header.duration_ns.value_or(0);
  if (!header.profiler_cpu_ns || !header.trigger_count || duration <= 0) return frequency();
  return static_cast<double>(*header.trigger_count) * 1e9 / static_cast<double>(duration);
}

double Profile::overhead_ratio() const {
  if (!header.profiler_cpu_ns || !header.process_cpu_ns || *header.process_cpu_ns <= 0) return -1;
  return static_cast<double>(*header.profiler_cpu_ns) / static_cast<double>(*header.process_cpu_ns);
}

int64_t Profile::total_weight() const {
  int64_t t = 0;
  for (const Sample& s : samples) t += s.weight_ns;
  return t;
}

std::vector<AllocationSample> Profile::aggregated_allocations() const {
  if (!timestamps) return allocations;
  AllocationAggregator agg;
  for (AllocationSample a : allocations) {
    a.time_ns = 0;
    agg.add(a);
  }
  return agg.take();
}

std::vector<Sample> Profile::aggregated_samples() const {
  if (!timestamps) return samples;
  SampleAggregator agg;
  for (const Sample& s : samples) agg.add(s);
  return agg.take();
}

}  // namespace rperf
