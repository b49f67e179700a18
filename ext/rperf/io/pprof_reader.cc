// pprof (profile.proto, gzip-compressed or not) -> Profile: the files encode_pprof writes
// (io/pprof.cc), and the same profiles re-encoded by other tools (go tool pprof -proto). The
// rows go through ProfileRows like the JSON loader's and a Ruby Hash's, so the model is built
// the same way whatever the file.
//
// Two passes over the message: the first keeps the tables (strings as views into the input,
// locations, functions, sample types, comments, scalars), the second reads each sample
// straight into the profile; no sample is held in between. What the reader builds is bounded
// by the input: every table entry costs a few bytes of input, and what a few bytes can name
// many times over (a long string behind every frame or label set) is counted against the
// loader's budget (64 MiB + 8 bytes per byte of input).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <map>
#include <unordered_map>
#include <utility>

#include "io/encoders.hh"
#include "io/loader.hh"
#include "profile/label_value.hh"
#include "profile/profile_rows.hh"
#include "profile/thread_names.hh"
#include "profile/vm_state.hh"

namespace rperf {

namespace {

// profile.proto's field numbers (the ones read).
namespace field {
constexpr uint32_t kSampleType = 1, kSample = 2, kLocation = 4, kFunction = 5, kStringTable = 6, kTimeNanos = 9,
                   kDurationNanos = 10, kPeriod = 12, kComment = 13;
}  // namespace field

constexpr const char* kAllocObjects = "alloc_objects";
constexpr const char* kInuseObjects = "inuse_objects";
constexpr const char* kThreadLabel = "thread_seq";     // a sample's thread (numeric label)
constexpr const char* kClassLabel = "object_class";    // an allocation sample's class
constexpr const char* kThreadNameLabel = "thread_name";  // the thread's name (profile/thread_names)

struct Failure {
  std::string why;
};

// One field of a message: a varint's value, or a length-delimited field's bytes.
struct Field {
  uint32_t number = 0;
  uint8_t wire = 0;
  uint64_t value = 0;
  std::string_view bytes;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : p_(in.data()), end_(in.data() + in.size()) {}
  bool done() const { return p_ == end_; }

  uint64_t varint() {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) throw Failure{"truncated"};
      uint8_t byte = static_cast<uint8_t>(*p_++);
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (byte < 0x80) return result;
    }
    throw Failure{"varint too long"};
  }

  Field next() {
    Field f;
    uint64_t key = varint();
    f.number = static_cast<uint32_t>(key >> 3);
    f.wire = static_cast<uint8_t>(key & 7);
    switch (f.wire) {
      case 0: f.value = varint(); break;
      case 1: skip(8); break;
      case 5: skip(4); break;
      case 2: {
        uint64_t len = varint();
        if (len > static_cast<uint64_t>(end_ - p_)) throw Failure{"truncated"};
        f.bytes = std::string_view(p_, static_cast<size_t>(len));
        p_ += len;
        break;
      }
      default: throw Failure{"wire type " + std::to_string(f.wire)};
    }
    return f;
  }

 private:
  void skip(size_t n) {
    if (n > static_cast<size_t>(end_ - p_)) throw Failure{"truncated"};
    p_ += n;
  }
  const char* p_;
  const char* end_;
};

// A repeated integer field, packed (wire type 2) or not.
template <typename Each>
void integers(const Field& f, Each&& each) {
  if (f.wire == 0) {
    each(f.value);
  } else if (f.wire == 2) {
    Reader r(f.bytes);
    while (!r.done()) each(r.varint());
  } else {
    throw Failure{"field " + std::to_string(f.number) + " is not an integer"};
  }
}

uint64_t integer(const Field& f) {
  if (f.wire != 0) throw Failure{"field " + std::to_string(f.number) + " is not an integer"};
  return f.value;
}

std::string_view bytes(const Field& f) {
  if (f.wire != 2) throw Failure{"field " + std::to_string(f.number) + " is not length-delimited"};
  return f.bytes;
}

struct Location {
  uint64_t id = 0;
  uint64_t function = 0;  // the first Line's (the others are inlined callers: none in Ruby)
  int64_t line = 0;
  bool has_line = false;
};

struct Function {
  uint64_t id = 0;
  uint64_t name = 0, filename = 0;  // string table indexes
  int64_t start_line = 0;
};

constexpr uint32_t kUnresolved = 0xffffffffu;
constexpr uint32_t kNoFrame = 0xfffffffeu;  // the writer's "(no Ruby frames)": an empty stack

class PprofLoader {
 public:
  PprofLoader(std::string_view in, Profile& p) : in_(in), p_(p), budget_(load_budget(in.size())) {}

  void load() {
    read_tables();
    if (strings_.empty() || !strings_[0].empty()) throw Failure{"no string table"};
    sort_by_id(locations_);
    sort_by_id(functions_);
    location_frames_.assign(locations_.size(), kUnresolved);
    read_types();
    ProfileRows rows(p_, false);
    read_samples(rows);
    for (const Function& fn : functions_) {
      if (fn.start_line > 0) {
        std::string_view name = str(fn.name), file = str(fn.filename);
        rows.start_line(file.data(), file.size(), name.data(), name.size(), static_cast<int32_t>(fn.start_line));
      }
    }
    set_header();
    set_thread_names();
    rows.finish();
  }

 private:
  void spend(size_t n) {
    spent_ += n;
    if (spent_ > budget_) {
      throw Failure{"over the loader's memory budget (" + std::to_string(budget_ >> 20) +
                    " MiB for this input: 64 MiB + 8 bytes per byte, at most 8 GiB)"};
    }
  }

  std::string_view str(uint64_t index) const {
    if (index >= strings_.size()) throw Failure{"string index " + std::to_string(index) + " out of range"};
    return strings_[static_cast<size_t>(index)];
  }

  template <typename T>
  static void sort_by_id(std::vector<T>& v) {
    // A repeated id: the last one wins.
    std::stable_sort(v.begin(), v.end(), [](const T& a, const T& b) { return a.id < b.id; });
  }
  template <typename T>
  static size_t find(const std::vector<T>& v, uint64_t id) {
    if (id - 1 < v.size() && v[id - 1].id == id) return id - 1;  // ids 1..n, as writers number them
    auto it = std::upper_bound(v.begin(), v.end(), id, [](uint64_t i, const T& e) { return i < e.id; });
    if (it == v.begin() || (it - 1)->id != id) return SIZE_MAX;
    return static_cast<size_t>(it - v.begin() - 1);
  }

  void read_tables() {
    Reader r(in_);
    while (!r.done()) {
      Field f = r.next();
      switch (f.number) {
        case field::kSampleType: sample_types_.push_back(read_value_type(bytes(f))); break;
        case field::kSample: bytes(f); break;  // the second pass
        case field::kLocation: spend(sizeof(Location)); locations_.push_back(read_location(bytes(f))); break;
        case field::kFunction: spend(sizeof(Function)); functions_.push_back(read_function(bytes(f))); break;
        case field::kStringTable: spend(sizeof(std::string_view)); strings_.push_back(bytes(f)); break;
        case field::kTimeNanos: time_nanos_ = static_cast<int64_t>(integer(f)); break;
        case field::kDurationNanos: duration_nanos_ = static_cast<int64_t>(integer(f)); break;
        case field::kPeriod: period_ = static_cast<int64_t>(integer(f)); break;
        case field::kComment: integers(f, [&](uint64_t c) { spend(sizeof(uint64_t)); comments_.push_back(c); }); break;
        default: break;
      }
    }
  }

  std::pair<uint64_t, uint64_t> read_value_type(std::string_view m) {
    spend(16);
    std::pair<uint64_t, uint64_t> t{0, 0};
    Reader r(m);
    while (!r.done()) {
      Field f = r.next();
      if (f.number == 1) t.first = integer(f);
      else if (f.number == 2) t.second = integer(f);
    }
    return t;
  }

  static Location read_location(std::string_view m) {
    Location loc;
    Reader r(m);
    while (!r.done()) {
      Field f = r.next();
      if (f.number == 1) {
        loc.id = integer(f);
      } else if (f.number == 4 && !loc.has_line) {  // Line { function_id 1, line 2 }
        loc.has_line = true;
        Reader line(bytes(f));
        while (!line.done()) {
          Field lf = line.next();
          if (lf.number == 1) loc.function = integer(lf);
          else if (lf.number == 2) loc.line = static_cast<int64_t>(integer(lf));
        }
      }
    }
    return loc;
  }

  static Function read_function(std::string_view m) {
    Function fn;  // Function { id 1, name 2, system_name 3, filename 4, start_line 5 }
    Reader r(m);
    while (!r.done()) {
      Field f = r.next();
      if (f.number == 1) fn.id = integer(f);
      else if (f.number == 2) fn.name = integer(f);
      else if (f.number == 4) fn.filename = integer(f);
      else if (f.number == 5) fn.start_line = static_cast<int64_t>(integer(f));
    }
    return fn;
  }

  // Which value of a sample is time and which are rperf's allocation counts.
  void read_types() {
    for (size_t i = 0; i < sample_types_.size(); i++) {
      std::string_view type = str(sample_types_[i].first);
      if (type == kAllocObjects) alloc_index_ = i;
      else if (type == kInuseObjects) inuse_index_ = i;
      else if (time_index_ == SIZE_MAX) time_index_ = i;
    }
    // rperf writes both; retained objects alone are not an allocation profile it can show.
    if (inuse_index_ != SIZE_MAX && alloc_index_ == SIZE_MAX) throw Failure{"inuse_objects without alloc_objects (rperf writes both sample types)"};
    if (time_index_ == SIZE_MAX) time_index_ = 0;
  }

  // The profile's frame of a location (kNoFrame: the writer's stand-in for an empty stack).
  uint32_t frame(uint64_t location_id) {
    size_t at = find(locations_, location_id);
    if (at == SIZE_MAX) throw Failure{"unknown location " + std::to_string(location_id)};
    uint32_t& known = location_frames_[at];
    if (known != kUnresolved) return known;
    const Location& loc = locations_[at];
    size_t fn_at = loc.has_line ? find(functions_, loc.function) : SIZE_MAX;
    if (fn_at == SIZE_MAX) throw Failure{"unknown function " + std::to_string(loc.function) + " (location " + std::to_string(loc.id) + ")"};
    std::string_view name = str(functions_[fn_at].name), file = str(functions_[fn_at].filename);
    if (file.empty() && name == kNoRubyFrames) return known = kNoFrame;
    size_t before = p_.frames.size();
    known = p_.frames.intern(file.data(), file.size(), name.data(), name.size(), static_cast<int32_t>(loc.line));
    if (p_.frames.size() != before) spend(file.size() + name.size() + 64);
    return known;
  }

  void read_samples(ProfileRows& rows) {
    p_.has_lines = true;  // a pprof frame always has its line (0 when unknown)
    Reader r(in_);
    std::vector<uint32_t> stack;
    std::vector<uint64_t> values;
    while (!r.done()) {
      Field f = r.next();
      if (f.number != field::kSample) continue;
      spend(sizeof(Sample));
      stack.clear();
      values.clear();
      label_refs_.clear();
      int64_t thread = 0;
      thread_name_ = 0;
      uint64_t klass = 0;
      bool has_class = false;
      Reader s(bytes(f));  // Sample { location_id 1, value 2, label 3 }
      while (!s.done()) {
        Field sf = s.next();
        if (sf.number == 1) {
          integers(sf, [&](uint64_t id) {
            uint32_t fr = frame(id);
            if (fr != kNoFrame) stack.push_back(fr);
          });
        } else if (sf.number == 2) {
          integers(sf, [&](uint64_t v) { values.push_back(v); });
        } else if (sf.number == 3) {
          read_label(bytes(sf), thread, klass, has_class);
        }
      }
      size_t stacks_before = p_.stacks.size();
      uint32_t stack_id = p_.stacks.intern(stack);
      if (p_.stacks.size() != stacks_before) spend(stack.size() * sizeof(uint32_t) + 32);
      int64_t set = label_set(rows);
      if (thread_name_ != 0 && thread > 0) note_thread_name(thread);
      auto value = [&](size_t i) { return i < values.size() ? static_cast<int64_t>(values[i]) : 0; };
      // Allocation samples (rperf's alloc_objects/inuse_objects types) carry no time, time
      // samples no objects.
      int64_t allocated = alloc_index_ == SIZE_MAX ? 0 : value(alloc_index_);
      int64_t retained = inuse_index_ == SIZE_MAX ? 0 : value(inuse_index_);
      bool ok;
      if (allocated > 0 || retained > 0) {
        if (!has_class) throw Failure{"an allocation sample without an object_class label"};
        // No inuse_objects: rperf wrote a profile without retained (not measured).
        ok = rows.allocation(stack_id, allocated, thread, set, class_name(rows, klass),
                             inuse_index_ == SIZE_MAX ? ProfileRows::kNotMeasured : retained, false);
        allocated_ += static_cast<uint64_t>(allocated);
        gcd_ = gcd(gcd(gcd_, magnitude(allocated)), magnitude(retained));
      } else {
        ok = rows.sample(stack_id, value(time_index_), thread, set);
      }
      if (!ok) throw Failure{rows.error()};
    }
  }

  static uint64_t magnitude(int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); }
  static uint64_t gcd(uint64_t a, uint64_t b) {
    while (b) {
      uint64_t t = a % b;
      a = b;
      b = t;
    }
    return a;
  }

  // Label { key 1, str 2, num 3, num_unit 4 }: a string label, or a numeric one (num given).
  // The sample's labels are kept as string table indexes (label_refs_) until label_set().
  void read_label(std::string_view m, int64_t& thread, uint64_t& klass, bool& has_class) {
    LabelRef l;
    Reader r(m);
    while (!r.done()) {
      Field f = r.next();
      if (f.number == 1) l.key = integer(f);
      else if (f.number == 2) l.text = integer(f);
      else if (f.number == 3) {
        l.num = integer(f);
        l.numeric = 1;
      }
    }
    std::string_view k = str(l.key);
    if (k == kThreadLabel) {
      thread = static_cast<int64_t>(l.num);
      return;
    }
    if (k == kThreadNameLabel && l.text != 0) {
      str(l.text);
      thread_name_ = l.text;
      return;
    }
    if (k == kClassLabel && alloc_index_ != SIZE_MAX) {
      str(l.text);
      klass = l.text;
      has_class = true;
      return;
    }
    if (l.text != 0) l.numeric = 0;  // a string label (num, if any, is ignored)
    str(l.text);
    label_refs_.push_back(l);
  }

  // The sample's thread's name, per (its %pid label's text, thread): each thread's samples all
  // carry its last name (the writer's), so one entry per thread, in order of first sight.
  void note_thread_name(int64_t thread) {
    uint64_t pid = 0;
    for (const LabelRef& l : label_refs_) {
      if (!l.numeric && str(l.key) == kPidLabelKey) pid = l.text;
    }
    auto [at, added] = thread_names_.emplace(std::make_pair(pid, thread), thread_name_order_.size());
    if (added) {
      spend(64);
      thread_name_order_.push_back({pid, thread, thread_name_});
    } else {
      thread_name_order_[at->second].name = thread_name_;
    }
  }

  void set_thread_names() {
    std::vector<ThreadName> names;
    for (const ThreadNameRef& n : thread_name_order_) {
      if (n.thread > ProfileRows::kMaxThreadSeq) continue;  // the sample row was refused already
      names.push_back(ThreadName{static_cast<uint32_t>(n.thread), std::string(str(n.name)), 0, n.pid ? std::string(str(n.pid)) : std::string()});
    }
    if (!names.empty()) set_thread_name_entries(p_, names);
  }

  // The source id of the sample's label set: the same labels (by string table index) are
  // looked up, not built again, so a long label value costs once, not once per sample.
  int64_t label_set(ProfileRows& rows) {
    std::string key(reinterpret_cast<const char*>(label_refs_.data()), label_refs_.size() * sizeof(LabelRef));
    auto it = label_set_ids_.find(key);
    if (it != label_set_ids_.end()) return it->second;
    spend(key.size() + 64);
    LabelSet labels;
    std::unordered_map<std::string_view, size_t> position;  // a repeated key: its last value, first place
    for (const LabelRef& l : label_refs_) {
      std::string_view k = str(l.key);
      // Keys are Symbols as everywhere in the model (the VM state's "%GVL" too); a numeric
      // label is an Integer, a string label a String.
      Label label{label_value::symbol(k), l.numeric ? label_value::integer(static_cast<int64_t>(l.num)) : label_value::string(str(l.text))};
      auto [at, added] = position.emplace(k, labels.size());
      if (added) labels.push_back(std::move(label));
      else labels[at->second] = std::move(label);
    }
    size_t sets_before = p_.label_sets.size();
    int64_t id = rows.label_set_id(labels);
    if (p_.label_sets.size() != sets_before) {
      size_t size = 64;
      for (const Label& l : labels) size += l.key.size() + l.value.size() + sizeof(Label);
      spend(size);
    }
    label_set_ids_.emplace(std::move(key), id);
    return id;
  }

  uint32_t class_name(ProfileRows& rows, uint64_t text) {
    auto it = class_names_.find(text);
    if (it != class_names_.end()) return it->second;
    std::string_view name = str(text);
    spend(name.size() + 64);
    uint32_t type = rows.class_name(name.data(), name.size());
    class_names_.emplace(text, type);
    return type;
  }

  void set_header() {
    std::string mode = sample_types_.empty() ? "cpu" : std::string(str(sample_types_[time_index_].first));
    p_.header.mode = HeaderText{mode, true};
    p_.header.frequency = period_ > 0 ? 1000000000LL / period_ : 0;
    p_.header.start_time_ns = time_nanos_;
    p_.header.duration_ns = duration_nanos_;
    if (alloc_index_ == SIZE_MAX) return;
    p_.retained_measured = inuse_index_ != SIZE_MAX;
    // The interval from the comment rperf writes; a file without it (rperf before allocation
    // profiling was readable from pprof) gets the largest interval every count is a multiple
    // of, marked as guessed.
    int64_t interval = 0;
    const size_t prefix = std::strlen(kPprofAllocationComment);
    for (uint64_t c : comments_) {
      std::string_view text = str(c);
      if (text.size() <= prefix || text.compare(0, prefix, kPprofAllocationComment) != 0) continue;
      std::string_view digits = text.substr(prefix);
      if (digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string_view::npos) continue;
      interval = std::stoll(std::string(digits));
      if (interval <= 0) throw Failure{"allocation interval " + std::to_string(interval)};
      break;
    }
    if (interval == 0) {
      interval = gcd_ > 0 && gcd_ <= static_cast<uint64_t>(INT64_MAX) ? static_cast<int64_t>(gcd_) : 1;
      p_.header.allocation_interval_guessed = true;
    }
    p_.header.allocation_interval = interval;
    p_.header.allocation_sample_count = static_cast<int64_t>(allocated_ / static_cast<uint64_t>(interval));
  }

  std::string_view in_;
  Profile& p_;
  size_t budget_, spent_ = 0;
  std::vector<std::string_view> strings_;
  std::vector<Location> locations_;
  std::vector<Function> functions_;
  std::vector<uint32_t> location_frames_;  // per location (sorted by id): its frame, once resolved
  std::vector<std::pair<uint64_t, uint64_t>> sample_types_;  // (type, unit) string indexes
  std::vector<uint64_t> comments_;
  int64_t time_nanos_ = 0, duration_nanos_ = 0, period_ = 0;
  size_t time_index_ = SIZE_MAX, alloc_index_ = SIZE_MAX, inuse_index_ = SIZE_MAX;
  uint64_t allocated_ = 0, gcd_ = 0;
  // A label of the sample being read, as the file gives it (string table indexes).
  struct LabelRef {
    uint64_t key = 0, text = 0, num = 0;
    uint64_t numeric = 0;  // 1: num was given and str was not (8 bytes: no padding in the key)
  };
  std::vector<LabelRef> label_refs_;
  uint64_t thread_name_ = 0;  // the sample's thread_name label (string index), 0: none
  struct ThreadNameRef {
    uint64_t pid;  // string index of its %pid label's value, 0: the root process
    int64_t thread;
    uint64_t name;
  };
  std::map<std::pair<uint64_t, int64_t>, size_t> thread_names_;  // -> into thread_name_order_
  std::vector<ThreadNameRef> thread_name_order_;
  std::unordered_map<std::string, int64_t> label_set_ids_;  // the LabelRefs' bytes -> source id
  std::unordered_map<uint64_t, uint32_t> class_names_;      // string index -> class name id
};

}  // namespace

bool load_pprof_profile(const char* data, size_t len, Profile& out, std::string& error) {
  std::string inflated;
  if (!inflate_if_gzip(data, len, inflated, error)) return false;
  try {
    PprofLoader(std::string_view(data, len), out).load();
  } catch (const Failure& f) {
    error = "not a readable pprof profile (" + f.why + ")";
    return false;
  }
  return true;
}

}  // namespace rperf
