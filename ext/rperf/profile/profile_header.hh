// A profile's header: the scalar keys of a result (mode, frequency, times, counters, ...) as
// typed fields, each present or absent as the input had it, and the keys this code does not
// know kept as given (`extras`). The JSON file and the Ruby Hash list these keys in the order
// they were set (rperf 0.11's order first, see result_keys.hh), so the header remembers that
// order across typed fields and extras alike. The file's meta and summary objects live here
// too, as the JSON they are.
//
// Names reach fields in one place (ProfileHeader::set / get / members): every reader and
// writer that goes by name (the JSON loader and writer, the Ruby Hash, Native::Profile
// #attribute) uses it. A known key holding a value of another type than its field's (a file
// or Hash written by hand) is kept as given among the extras: written back unchanged, but
// absent for the code that reads the typed field.
//
// Ruby-independent: unit-tested under GoogleTest without a Ruby VM.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profile/json_value.hh"

namespace rperf {

// A stamp later than every stamp given before (never 0).
uint64_t next_header_stamp();

// One header field: its value when present, and when it was first set. Stamps come from one
// process-wide counter, so comparing them gives the order keys were added in, as
// JsonValue::set keeps it: a replaced value keeps its place, a value set after a reset() goes
// last, and a copied header keeps its order.
template <typename T>
class HeaderField {
 public:
  using value_type = T;
  HeaderField() = default;
  HeaderField(const HeaderField&) = default;
  HeaderField(HeaderField&&) = default;
  // Not from another field (`a.x = b.x` would take b's stamp, b's place in another header's
  // order): assign the value, `a.x = *b.x`. Whole headers copy their stamps (ProfileHeader).
  HeaderField& operator=(const HeaderField&) = delete;
  HeaderField& operator=(HeaderField&&) = delete;
  HeaderField& operator=(T v) {
    assign(std::move(v), 0);
    return *this;
  }
  // Sets the value; a field that was absent takes `stamp` (a fresh one when 0).
  void assign(T v, uint64_t stamp) {
    if (!stamp_) stamp_ = stamp ? stamp : next_header_stamp();
    value_ = std::move(v);
  }
  bool has_value() const { return stamp_ != 0; }
  explicit operator bool() const { return has_value(); }
  const T& operator*() const { return value_; }
  const T* operator->() const { return &value_; }
  T value_or(T fallback) const { return has_value() ? value_ : fallback; }
  void reset() {
    stamp_ = 0;
    value_ = T();
  }
  uint64_t stamp() const { return stamp_; }

 private:
  friend struct ProfileHeader;
  void copy_from(const HeaderField& o) {
    value_ = o.value_;
    stamp_ = o.stamp_;
  }

  T value_{};
  uint64_t stamp_ = 0;  // 0: absent
};

// A text value that Ruby may hold as a Symbol (mode: :cpu) or a String (a Hash from
// JSON.parse): given back as it came.
struct HeaderText {
  std::string text;
  bool symbol = true;
  bool operator==(const HeaderText& o) const { return text == o.text && symbol == o.symbol; }
};

struct ProfileHeader {
  ProfileHeader() = default;
  ProfileHeader(const ProfileHeader&) = default;  // stamps and all: the same order
  ProfileHeader(ProfileHeader&&) = default;
  ProfileHeader& operator=(const ProfileHeader& o);
  ProfileHeader& operator=(ProfileHeader&& o) { return *this = static_cast<const ProfileHeader&>(o); }

  HeaderField<HeaderText> mode;  // "cpu" or "wall"
  HeaderField<int64_t> frequency;
  // Sampler counters (summed over the processes of a merge).
  HeaderField<int64_t> trigger_count;
  HeaderField<int64_t> sampling_count;
  HeaderField<int64_t> sampling_time_ns;
  HeaderField<int64_t> hook_time_ns;
  HeaderField<int64_t> dropped_samples;
  HeaderField<int64_t> dropped_aggregation;  // rperf 0.11's; placed by result_keys.hh
  HeaderField<int64_t> label_sets_overflowed;
  HeaderField<int64_t> detected_thread_count;
  HeaderField<int64_t> max_depth;
  // The overhead budget's measure (a session with overhead_target: only): the profiler's own
  // CPU and the whole process's over the profile's time (the effective rate: trigger_count
  // over duration_ns).
  HeaderField<int64_t> profiler_cpu_ns;
  HeaderField<int64_t> process_cpu_ns;
  // Times: wall clock at the start (ns since the epoch), lengths in ns.
  HeaderField<int64_t> start_time_ns;
  HeaderField<int64_t> duration_ns;
  HeaderField<int64_t> total_duration_ns;  // a merge: every process's duration added up
  HeaderField<int64_t> process_count;      // a merge: the processes in it
  HeaderField<int64_t> user_ns;
  HeaderField<int64_t> sys_ns;
  // Allocation profiling (present: the profile has allocation data).
  HeaderField<int64_t> allocation_interval;
  HeaderField<int64_t> allocation_sample_count;
  HeaderField<int64_t> dropped_allocations;
  HeaderField<bool> allocation_interval_guessed;  // a pprof file that did not say
  // Process statistics: GC.stat's delta (an object of open-ended keys), the peak RSS (an
  // Integer, or null where the platform does not tell).
  HeaderField<JsonValue> gc_stats;
  HeaderField<std::optional<int64_t>> maxrss_mb;

  // The file's head objects, open-ended, null until written or loaded (or given by a Hash).
  // Not keys of the header by name: the JSON writer puts them first, the Hash view after it.
  JsonValue meta;
  JsonValue summary;

  // ---- by name (the one mapping of key names to fields) ----

  // Sets `key` to `value`: its typed field when the key is known and the value has the
  // field's type, else an extra. Returns nullptr, or for a known key given another type what
  // the field expected ("an Integer"): the value is then kept as given among the extras.
  const char* set(const std::string& key, JsonValue value);
  // The value of `key` as JSON (Symbols as kSymbol), nullopt when absent.
  std::optional<JsonValue> get(const std::string& key) const;
  bool has(const std::string& key) const;
  void erase(const std::string& key);
  // Every present key in the order they were set, typed fields and extras alike: what the
  // JSON writer and the Ruby Hash list.
  std::vector<JsonValue::Member> members() const;
  // members() as one JSON object.
  JsonValue to_json() const;
  // Whether `key` names a typed field.
  static bool known(const std::string& key);

  // The keys that are not typed fields (or known keys given another type), in order.
  const JsonValue& extras() const { return extras_; }

 private:
  void set_extra(const std::string& key, JsonValue value, uint64_t stamp);
  uint64_t extra_stamp(const std::string& key) const;  // 0 when not an extra
  void erase_extra(const std::string& key);

  JsonValue extras_ = JsonValue::object();
  std::vector<uint64_t> extra_stamps_;  // per member of extras_
};

}  // namespace rperf
