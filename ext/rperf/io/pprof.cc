// pprof encoder: perftools.profiles.Profile (profile.proto), written field by field.
// Functions are (name, filename); locations are (function, line), so `-lines` views work when
// the profile carries line numbers. With allocation profiling, two more sample types follow the
// time type: alloc_objects/count (estimated objects allocated) and inuse_objects/count (of
// those, still alive at the end; only when retained was measured); time samples carry 0 for them and allocation samples 0 time,
// with the class as an "object_class" label. The time type stays the default.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <unordered_map>

#include "io/encoders.hh"
#include "profile/label_value.hh"
#include "profile/thread_names.hh"
#include "profile/vm_state.hh"

namespace rperf {

namespace {

class ProtoWriter {
 public:
  std::string& buffer() { return buf_; }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      buf_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    buf_ += static_cast<char>(v);
  }
  void tag(int field, int wire_type) { varint((static_cast<uint64_t>(field) << 3) | wire_type); }
  void int_field(int field, int64_t v) {
    if (v == 0) return;  // proto3 default
    tag(field, 0);
    varint(static_cast<uint64_t>(v));
  }
  void bytes_field(int field, const std::string& s) {
    tag(field, 2);
    varint(s.size());
    buf_ += s;
  }
  void packed(int field, const std::vector<uint64_t>& values) {
    if (values.empty()) return;
    ProtoWriter inner;
    for (uint64_t v : values) inner.varint(v);
    bytes_field(field, inner.buf_);
  }

 private:
  std::string buf_;
};

class StringTable {
 public:
  StringTable() { id(""); }
  int64_t id(const std::string& s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    int64_t i = static_cast<int64_t>(strings_.size());
    strings_.push_back(valid_utf8(s));
    ids_.emplace(s, i);
    return i;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string, int64_t> ids_;
  std::vector<std::string> strings_;
};

// Label fields: key 1, str 2, num 3, num_unit 4. A numeric label's num is written even when 0,
// so the reader tells it from an empty string label.
std::string label_message(int64_t key, int64_t str, int64_t num, bool numeric = false) {
  ProtoWriter w;
  w.int_field(1, key);
  w.int_field(2, str);
  if (numeric && num == 0) {
    w.tag(3, 0);
    w.varint(0);
  } else {
    w.int_field(3, num);
  }
  return w.buffer();
}

}  // namespace

std::string encode_pprof(const Profile& p, const std::vector<std::string>& comments) {
  StringTable strings;
  ProtoWriter out;

  const int64_t kind = strings.id(p.mode());
  const int64_t nanoseconds = strings.id("nanoseconds");
  const bool allocations = p.has_allocations();
  const bool inuse = allocations && p.retained_measured;
  // sample_type (1): ValueType { type 1, unit 2 }
  auto sample_type = [&](int64_t type, int64_t unit) {
    ProtoWriter vt;
    vt.int_field(1, type);
    vt.int_field(2, unit);
    out.bytes_field(1, vt.buffer());
  };
  sample_type(kind, nanoseconds);
  if (allocations) {
    const int64_t count = strings.id("count");
    sample_type(strings.id("alloc_objects"), count);
    if (inuse) sample_type(strings.id("inuse_objects"), count);
  }

  // Functions by (label, path) and locations by (function, line), ids from 1.
  std::unordered_map<std::string, uint64_t> function_ids;
  std::unordered_map<uint64_t, uint64_t> location_ids;  // (function << 32 | line) -> id
  std::string functions, locations;
  auto function_id = [&](const std::string& name, const std::string& filename, int32_t start_line) {
    std::string key = name + '\0' + filename;
    auto it = function_ids.find(key);
    if (it != function_ids.end()) return it->second;
    uint64_t id = function_ids.size() + 1;
    function_ids.emplace(key, id);
    ProtoWriter fn;  // Function { id 1, name 2, system_name 3, filename 4, start_line 5 }
    fn.int_field(1, static_cast<int64_t>(id));
    int64_t name_id = strings.id(name);
    fn.int_field(2, name_id);
    fn.int_field(3, name_id);
    fn.int_field(4, strings.id(filename));
    fn.int_field(5, start_line);
    ProtoWriter wrap;
    wrap.bytes_field(5, fn.buffer());
    functions += wrap.buffer();
    return id;
  };
  auto location_id = [&](uint64_t function, int32_t line) {
    uint64_t key = (function << 32) | static_cast<uint32_t>(line < 0 ? 0 : line);
    auto it = location_ids.find(key);
    if (it != location_ids.end()) return it->second;
    uint64_t id = location_ids.size() + 1;
    location_ids.emplace(key, id);
    ProtoWriter ln;  // Line { function_id 1, line 2 }
    ln.int_field(1, static_cast<int64_t>(function));
    ln.int_field(2, line);
    ProtoWriter loc;  // Location { id 1, mapping_id 2, address 3, line 4 }
    loc.int_field(1, static_cast<int64_t>(id));
    loc.int_field(2, 1);
    loc.bytes_field(4, ln.buffer());
    ProtoWriter wrap;
    wrap.bytes_field(4, loc.buffer());
    locations += wrap.buffer();
    return id;
  };
  std::vector<uint64_t> frame_location(p.frames.size());
  for (uint32_t i = 0; i < p.frames.size(); i++) {
    const Frame& f = p.frames[i];
    frame_location[i] = location_id(function_id(f.label, f.path, f.start_line), f.line);
  }

  // Labels per label set, encoded once.
  const int64_t thread_key = strings.id("thread_seq");
  // Beside thread_seq, a named thread's samples carry its (last) name: thread_name (a string
  // label: -tags lists it, -tagfocus selects by it). A merged child's by its %pid.
  const ThreadNames names(p);
  int64_t thread_name_key = 0;
  std::vector<std::string> set_pid(p.label_sets.size());
  for (uint32_t i = 0; !names.empty() && i < p.label_sets.size(); i++) {
    for (const Label& l : p.label_sets[i]) {
      if (label_value::to_s(l.key) == kPidLabelKey) set_pid[i] = label_value::to_s(l.value);
    }
  }
  std::map<std::pair<std::string, uint32_t>, std::string> thread_name_bytes;
  auto thread_name_label = [&](uint32_t thread_seq, uint32_t label_set) -> const std::string& {
    const std::string& pid = label_set < set_pid.size() ? set_pid[label_set] : set_pid.at(0);
    auto [at, added] = thread_name_bytes.emplace(std::make_pair(pid, thread_seq), std::string());
    if (added) {
      const std::string& name = names.of(thread_seq, pid);
      if (!name.empty()) {
        if (!thread_name_key) thread_name_key = strings.id("thread_name");
        ProtoWriter w;
        w.bytes_field(3, label_message(thread_name_key, strings.id(name), 0));
        at->second = w.buffer();
      }
    }
    return at->second;
  };
  std::vector<std::string> label_bytes(p.label_sets.size());
  for (uint32_t i = 0; i < p.label_sets.size(); i++) {
    ProtoWriter w;
    for (const Label& l : p.label_sets[i]) {
      // Integer labels are numeric pprof labels (-tagfocus ranges work on them); the others
      // are strings, each value's to_s as rperf 0.11 writes it ("1.5", "true", "[1, 2]").
      int64_t number;
      const int64_t key = strings.id(label_value::to_s(l.key));
      w.bytes_field(3, label_value::int64_of(l.value, number) ? label_message(key, 0, number, true)
                                                              : label_message(key, strings.id(label_value::to_s(l.value)), 0));
    }
    label_bytes[i] = w.buffer();
  }

  // sample (2): Sample { location_id 1 (packed), value 2 (packed), label 3 }
  std::vector<uint64_t> locs;
  auto write_sample = [&](uint32_t stack, const std::vector<uint64_t>& values, uint32_t thread_seq, uint32_t label_set,
                          const std::string& extra_labels) {
    ProtoWriter sw;
    locs.clear();
    for (uint32_t f : p.stacks[stack]) locs.push_back(frame_location[f]);
    // Samples without Ruby frames get a location of their own, so no weight is lost.
    if (locs.empty()) locs.push_back(location_id(function_id(kNoRubyFrames, "", 0), 0));
    sw.packed(1, locs);
    sw.packed(2, values);
    if (thread_seq) sw.bytes_field(3, label_message(thread_key, 0, thread_seq));
    if (thread_seq && !names.empty()) sw.buffer() += thread_name_label(thread_seq, label_set);
    if (label_set < label_bytes.size()) sw.buffer() += label_bytes[label_set];
    sw.buffer() += extra_labels;
    out.bytes_field(2, sw.buffer());
  };
  std::vector<uint64_t> values(allocations ? (inuse ? 3 : 2) : 1, 0);
  for (const Sample& s : p.samples) {
    values[0] = static_cast<uint64_t>(s.weight_ns);
    write_sample(s.stack, values, s.thread_seq, s.label_set, std::string());
  }
  if (allocations) {
    const int64_t class_key = strings.id("object_class");
    std::vector<std::string> class_labels(p.class_names.size());
    for (uint32_t i = 0; i < p.class_names.size(); i++) {
      ProtoWriter w;
      w.bytes_field(3, label_message(class_key, strings.id(p.class_names[i]), 0));
      class_labels[i] = w.buffer();
    }
    values[0] = 0;
    for (const AllocationSample& a : p.aggregated_allocations()) {
      values[1] = static_cast<uint64_t>(a.count);
      if (inuse) values[2] = static_cast<uint64_t>(a.retained);
      write_sample(a.stack, values, a.thread_seq, a.label_set, class_labels[a.type]);
    }
  }

  // mapping (3): one mapping for the Ruby VM. Mapping { id 1, ..., filename 5, has_functions 7 }
  {
    ProtoWriter m;
    m.int_field(1, 1);
    m.int_field(5, strings.id("ruby"));
    m.int_field(7, 1);
    m.int_field(8, 1);  // has_filenames
    m.int_field(9, 1);  // has_line_numbers
    out.bytes_field(3, m.buffer());
  }
  out.buffer() += locations;
  out.buffer() += functions;

  // Everything that adds strings comes before the string table.
  std::vector<int64_t> comment_ids;
  for (const std::string& c : comments) comment_ids.push_back(strings.id(c));
  if (allocations) comment_ids.push_back(strings.id(kPprofAllocationComment + std::to_string(p.header.allocation_interval.value_or(1))));
  const double hz = p.sampling_hz();
  const double overhead = p.overhead_ratio();
  if (overhead >= 0) {  // an overhead budget's profile: the rate it ran at, and what it cost
    char text[160];
    std::snprintf(text, sizeof text, "sampling: %.1f Hz effective (%d Hz asked), profiler overhead %.4f of the process's CPU", hz,
                  p.frequency(), overhead);
    comment_ids.push_back(strings.id(text));
  }
  const int64_t period_unit = nanoseconds;
  for (const std::string& s : strings.strings()) out.bytes_field(6, s);  // string_table (6)
  out.int_field(9, p.header.start_time_ns.value_or(0));                              // time_nanos
  out.int_field(10, p.header.duration_ns.value_or(0));                               // duration_nanos
  {
    ProtoWriter vt;  // period_type (11)
    vt.int_field(1, kind);
    vt.int_field(2, period_unit);
    out.bytes_field(11, vt.buffer());
  }
  const int64_t period = overhead >= 0 ? (hz > 0 ? static_cast<int64_t>(1e9 / hz + 0.5) : 0) : (p.frequency() > 0 ? 1000000000LL / p.frequency() : 0);
  out.int_field(12, period);  // period
  for (int64_t c : comment_ids) out.int_field(13, c);                  // comment
  if (allocations) out.int_field(14, kind);                             // default_sample_type: time
  return out.buffer();
}

}  // namespace rperf
