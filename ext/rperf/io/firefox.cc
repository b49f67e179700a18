// The Firefox Profiler's "processed profile" format: the JSON its front end loads (the
// profiler's "Load a profile from file", or the `profile-viewer` gem serving a file locally).
//
// Version 55 of the processed format: each thread carries its own string array and tables.
// profile-viewer rewrites thread.stringArray when it serves a file (file paths become links to
// their source), so a file without it would not load there; the front end upgrades any older
// version on load (its newer versions share the tables between threads).
//
//   meta      interval (ms), startTime (ms since the epoch), the categories, the marker schema,
//             "extra" (shown under the profile's info button) and "rperf": {mode, frequency,
//             timeline, ...} for programs
//   threads   one per (process, Ruby thread): processes by the %pid label (the root process has
//             none), threads by thread_seq in each; the lowest seq is the process's main thread
//     samples      weightType "tracing-ms": each sample's weight on the mode's clock, in ms;
//                  its time: the start of its interval (the profiler draws a sample's stack
//                  until the next sample), in ms since the profile started. An interval ends
//                  at the sample's time_ns, or where the next one starts when both were
//                  recorded at once (a GVL wait's blocked and wait parts). An aggregated
//                  profile has no times: every sample is at 0 (a call tree, no timeline)
//     stackTable, frameTable, funcTable
//                  one func per method (path, label), a frame per (frame, category); a sample
//                  in a GVL/GC state ends in the state's frame ([GVL blocked], ...) unless its
//                  stack already does
//     markers      GVL blocked/wait, GC mark/sweep and each label (not the %-keys rperf sets
//                  itself) as interval markers, a label's named by its value (with the events
//                  counted for that value, the header's work_events, when it has some): the thread's
//                  consecutive samples in one state, or with one value, merged while their
//                  intervals follow each other (a gap of one sampling period at most)
//
// Categories: Ruby frames by where their file is (app, gems: one subcategory per gem,
// stdlib), C methods (subcategory: the origin of the Ruby code calling them), GC and GVL.
#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "io/encoders.hh"
#include "profile/frame_category.hh"
#include "profile/label_value.hh"
#include "profile/thread_names.hh"
#include "io/output.hh"

namespace rperf {

namespace {

constexpr int kProcessedProfileVersion = 55;

enum Category : uint8_t { kCatOther, kCatApp, kCatGems, kCatStdlib, kCatC, kCatGc, kCatGvl, kCatCount };
struct CategoryDef {
  const char* name;
  const char* color;
};
constexpr CategoryDef kCategories[kCatCount] = {
    {"Other", "grey"}, {"Ruby: app", "blue"}, {"Ruby: gems", "purple"}, {"Ruby: stdlib", "green"},
    {"C", "yellow"},   {"GC", "orange"},      {"GVL", "lightblue"},
};
// Subcategories of C methods: where the Ruby code calling them is (0 = no Ruby caller).
enum Origin : uint16_t { kOriginNone = 0, kOriginApp = 1, kOriginGems = 2, kOriginStdlib = 3 };
constexpr const char* kOriginNames[] = {"Other", "app", "gems", "stdlib"};

enum class FrameKind : uint8_t { kRuby, kC, kVm, kOther };

struct FrameClass {
  FrameKind kind = FrameKind::kOther;
  uint8_t category = kCatOther;
  uint16_t subcategory = 0;
  Origin origin = kOriginNone;  // Ruby frames
};

// Every frame of the profile classified once, and the gem subcategories they need.
class Classifier {
 public:
  explicit Classifier(const Profile& p) : classes_(p.frames.size()) {
    gems_.push_back("Other");
    for (uint32_t id = 0; id < p.frames.size(); id++) {
      const Frame& f = p.frames[id];
      FrameClass& c = classes_[id];
      if (f.path == kVmFramePath) {
        c.kind = FrameKind::kVm;
        for (uint8_t s = 1; s < kVmStateCount; s++) {
          if (f.label == vm_state_names(static_cast<VmState>(s)).frame_label) set_vm(c, static_cast<VmState>(s));
        }
      } else {
        switch (frame_category(f.label, f.path)) {
          case FrameCategory::kNative:
            c.kind = FrameKind::kC;
            c.category = kCatC;
            break;
          case FrameCategory::kGem:
            c.kind = FrameKind::kRuby;
            c.category = kCatGems;
            c.origin = kOriginGems;
            c.subcategory = gem_subcategory(gem_name(f.path));
            break;
          case FrameCategory::kStdlib:
            c.kind = FrameKind::kRuby;
            c.category = kCatStdlib;
            c.origin = kOriginStdlib;
            break;
          case FrameCategory::kApp:
            c.kind = FrameKind::kRuby;
            c.category = kCatApp;
            c.origin = kOriginApp;
            break;
          default:
            c.kind = FrameKind::kOther;  // [truncated], (no Ruby frames)
            break;
        }
      }
    }
  }

  const FrameClass& operator[](uint32_t id) const { return classes_[id]; }
  const std::vector<std::string>& gem_subcategories() const { return gems_; }

  static void set_vm(FrameClass& c, VmState state) {
    c.kind = FrameKind::kVm;
    bool gvl = state == kGvlBlocked || state == kGvlWait;
    c.category = gvl ? kCatGvl : kCatGc;
    c.subcategory = (state == kGvlBlocked || state == kGcMark) ? 1 : 2;
  }

 private:
  uint16_t gem_subcategory(const std::string& gem) {
    auto it = gem_ids_.find(gem);
    if (it != gem_ids_.end()) return it->second;
    uint16_t id = static_cast<uint16_t>(std::min<size_t>(gems_.size(), 0xffff));
    if (gems_.size() < 0xffff) gems_.push_back(gem);
    gem_ids_.emplace(gem, id);
    return id;
  }

  std::vector<FrameClass> classes_;
  std::vector<std::string> gems_;
  std::map<std::string, uint16_t> gem_ids_;
};

// ns -> ms, exactly (up to 6 decimals, no exponent).
void append_ms(std::string& out, int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  out += std::to_string(ns / 1000000);
  int64_t frac = ns % 1000000;
  if (frac == 0) return;
  char digits[8];
  std::snprintf(digits, sizeof digits, "%06lld", static_cast<long long>(frac));
  size_t n = 6;
  while (n > 0 && digits[n - 1] == '0') n--;
  out += '.';
  out.append(digits, n);
}

template <typename T, typename Write>
void append_column(std::string& out, const char* name, const std::vector<T>& values, Write write) {
  out += '"';
  out += name;
  out += "\":[";
  for (size_t i = 0; i < values.size(); i++) {
    if (i) out += ',';
    write(values[i]);
  }
  out += ']';
}

void append_repeated(std::string& out, const char* name, const char* value, size_t n) {
  out += '"';
  out += name;
  out += "\":[";
  for (size_t i = 0; i < n; i++) {
    if (i) out += ',';
    out += value;
  }
  out += ']';
}

void append_index_or_null(std::string& out, int64_t v) {
  if (v < 0) out += "null";
  else out += std::to_string(v);
}

// One process of the profile: its %pid (empty for the root) and its threads' samples.
struct ThreadSamples {
  std::string pid;  // empty: the root process
  uint32_t seq = 0;
  std::string ractor;  // another Ractor's thread: the Ractor's id (%ractor)
  std::string name;  // Thread#name (profile/thread_names), empty without one
  std::vector<uint32_t> samples;  // indexes into Profile::samples, in time order
};

struct LabelSetInfo {
  std::string pid;
  std::string ractor;
  std::vector<Label> labels;  // the user's labels (keys not starting with '%') as text (to_s)
};

struct Marker {
  uint32_t name = 0;  // the thread's string index
  int64_t start_ns = 0, end_ns = 0;
  uint8_t category = kCatOther;
  std::string data;  // the payload object
};

// The tables of one thread: strings, funcs, frames and stacks, made as its samples need them.
class ThreadTables {
 public:
  ThreadTables(const Profile& p, const Classifier& classes) : p_(p), classes_(classes) {
    for (uint8_t s = 1; s < kVmStateCount; s++) {
      vm_frames_[s].path = kVmFramePath;
      vm_frames_[s].label = vm_state_names(static_cast<VmState>(s)).frame_label;
      Classifier::set_vm(vm_classes_[s], static_cast<VmState>(s));
    }
    no_frames_.label = kNoRubyFrames;
  }

  uint32_t string(const std::string& s) { return strings_.intern(s); }

  // The stack (an index into the stack table) of a sample: its frames root first, then its
  // VM state's frame unless its leaf is one already.
  int64_t stack(const Sample& s) {
    uint64_t key = (static_cast<uint64_t>(s.stack) << 3) | s.vm_state;
    auto cached = sample_stacks_.find(key);
    if (cached != sample_stacks_.end()) return cached->second;
    FrameSpan span = p_.stacks[s.stack];
    int64_t prefix = -1;
    Origin caller = kOriginNone;
    for (size_t i = span.size(); i-- > 0;) {
      uint32_t id = span[i];
      const FrameClass& c = classes_[id];
      uint16_t sub = c.subcategory;
      if (c.kind == FrameKind::kRuby) caller = c.origin;
      else if (c.kind == FrameKind::kC) sub = caller;
      prefix = push(prefix, frame(p_.frames[id], c, sub));
    }
    bool leaf_is_vm = !span.empty() && classes_[span[0]].kind == FrameKind::kVm;
    if (s.vm_state != kRunning && s.vm_state < kVmStateCount && !leaf_is_vm) {
      const FrameClass& c = vm_classes_[s.vm_state];
      prefix = push(prefix, frame(vm_frames_[s.vm_state], c, c.subcategory));
    } else if (span.empty()) {
      prefix = push(prefix, frame(no_frames_, FrameClass(), 0));
    }
    sample_stacks_.emplace(key, prefix);
    return prefix;
  }

  void write(std::string& out) const {
    out += "\"stackTable\":{";
    append_column(out, "frame", stack_frame_, [&](uint32_t v) { out += std::to_string(v); });
    out += ',';
    append_column(out, "prefix", stack_prefix_, [&](int64_t v) { append_index_or_null(out, v); });
    out += ",\"length\":" + std::to_string(stack_frame_.size()) + "},";

    size_t frames = frame_func_.size();
    out += "\"frameTable\":{";
    append_repeated(out, "address", "-1", frames);
    out += ',';
    append_repeated(out, "inlineDepth", "0", frames);
    out += ',';
    append_column(out, "category", frame_category_, [&](uint8_t v) { out += std::to_string(v); });
    out += ',';
    append_column(out, "subcategory", frame_subcategory_, [&](uint16_t v) { out += std::to_string(v); });
    out += ',';
    append_column(out, "func", frame_func_, [&](uint32_t v) { out += std::to_string(v); });
    out += ',';
    append_repeated(out, "nativeSymbol", "null", frames);
    out += ',';
    append_repeated(out, "innerWindowID", "null", frames);
    out += ',';
    append_column(out, "line", frame_line_, [&](int32_t v) { append_index_or_null(out, v > 0 ? v : -1); });
    out += ',';
    append_repeated(out, "column", "null", frames);
    out += ",\"length\":" + std::to_string(frames) + "},";

    size_t funcs = func_name_.size();
    out += "\"funcTable\":{";
    append_column(out, "isJS", func_ruby_, [&](bool v) { out += v ? "true" : "false"; });
    out += ',';
    append_column(out, "relevantForJS", func_ruby_, [&](bool v) { out += v ? "false" : "true"; });
    out += ',';
    append_column(out, "name", func_name_, [&](uint32_t v) { out += std::to_string(v); });
    out += ',';
    append_repeated(out, "resource", "-1", funcs);
    out += ',';
    append_column(out, "fileName", func_file_, [&](int64_t v) { append_index_or_null(out, v); });
    out += ',';
    append_column(out, "lineNumber", func_line_, [&](int32_t v) { append_index_or_null(out, v > 0 ? v : -1); });
    out += ',';
    append_repeated(out, "columnNumber", "null", funcs);
    out += ",\"length\":" + std::to_string(funcs) + "},";

    out += "\"resourceTable\":{\"lib\":[],\"name\":[],\"host\":[],\"type\":[],\"length\":0},";
    out += "\"nativeSymbols\":{\"libIndex\":[],\"address\":[],\"name\":[],\"functionSize\":[],\"length\":0},";
    out += "\"stringArray\":[";
    for (uint32_t i = 0; i < strings_.size(); i++) {
      if (i) out += ',';
      append_json_string(out, strings_[i]);
    }
    out += ']';
  }

 private:
  uint32_t func(const Frame& f, FrameKind kind) {
    uint32_t id = func_keys_.intern(f.path, f.label, 0);
    if (id < func_name_.size()) return id;
    bool ruby = kind == FrameKind::kRuby;
    func_name_.push_back(string(f.label));
    func_file_.push_back(ruby ? static_cast<int64_t>(string(f.path)) : -1);
    func_line_.push_back(ruby ? f.start_line : 0);
    func_ruby_.push_back(ruby);
    return id;
  }

  uint32_t frame(const Frame& f, const FrameClass& c, uint16_t subcategory) {
    uint32_t fn = func(f, c.kind);
    uint64_t key = (static_cast<uint64_t>(fn) << 32) ^ (static_cast<uint64_t>(static_cast<uint32_t>(f.line)) << 20) ^
                   (static_cast<uint64_t>(c.category) << 16) ^ subcategory;
    // The key packs (func, line, category, subcategory); a collision is resolved by comparing.
    auto range = frame_index_.equal_range(key);
    for (auto it = range.first; it != range.second; ++it) {
      uint32_t i = it->second;
      if (frame_func_[i] == fn && frame_line_[i] == f.line && frame_category_[i] == c.category && frame_subcategory_[i] == subcategory) return i;
    }
    uint32_t id = static_cast<uint32_t>(frame_func_.size());
    frame_func_.push_back(fn);
    frame_line_.push_back(f.line);
    frame_category_.push_back(c.category);
    frame_subcategory_.push_back(subcategory);
    frame_index_.emplace(key, id);
    return id;
  }

  int64_t push(int64_t prefix, uint32_t frame) {
    uint64_t key = (static_cast<uint64_t>(prefix + 1) << 32) | frame;
    auto it = stack_index_.find(key);
    if (it != stack_index_.end()) return it->second;
    int64_t id = static_cast<int64_t>(stack_frame_.size());
    stack_frame_.push_back(frame);
    stack_prefix_.push_back(prefix);
    stack_index_.emplace(key, id);
    return id;
  }

  const Profile& p_;
  const Classifier& classes_;
  Frame vm_frames_[kVmStateCount];
  FrameClass vm_classes_[kVmStateCount];
  Frame no_frames_;

  NameTable strings_;
  FrameTable func_keys_;  // (path, label): one func per method
  std::vector<uint32_t> func_name_;
  std::vector<int64_t> func_file_;  // -1: none (C methods, VM states)
  std::vector<int32_t> func_line_;
  std::vector<bool> func_ruby_;
  std::unordered_multimap<uint64_t, uint32_t> frame_index_;
  std::vector<uint32_t> frame_func_;
  std::vector<int32_t> frame_line_;
  std::vector<uint8_t> frame_category_;
  std::vector<uint16_t> frame_subcategory_;
  std::unordered_map<uint64_t, int64_t> stack_index_;
  std::vector<uint32_t> stack_frame_;
  std::vector<int64_t> stack_prefix_;
  std::unordered_map<uint64_t, int64_t> sample_stacks_;
};

struct OpenRun {
  std::string value;  // the state or the label's value
  Marker marker;
};

// Runs of one kind (VM states, or one label key) on one thread.
class RunTracker {
 public:
  RunTracker(int64_t tolerance_ns, std::vector<Marker>& out) : tolerance_ns_(tolerance_ns), out_(out) {}
  // The sample's interval [start, end] has `value`: extend the open run or start a new one.
  template <typename Make>
  void add(const std::string& value, int64_t start, int64_t end, Make make) {
    if (open_ && run_.value == value && start <= run_.marker.end_ns + tolerance_ns_) {
      run_.marker.end_ns = std::max(run_.marker.end_ns, end);
      return;
    }
    close();
    run_.value = value;
    run_.marker = make();
    run_.marker.start_ns = start;
    run_.marker.end_ns = end;
    open_ = true;
  }
  void close() {
    if (open_) out_.push_back(run_.marker);
    open_ = false;
  }

 private:
  int64_t tolerance_ns_;
  std::vector<Marker>& out_;
  OpenRun run_;
  bool open_ = false;
};

// (label key, value) -> the events of its runs, for the Label markers of that value: the
// header's work_events (Rperf::WorkEvents: counts and durations of a program's events per unit
// of work) in one line, "4 runs; sql.active_record: 6.0 per run (max 6), 0.52 ms per run; ...".
// Only rows of one label; any other shape (a file's, edited by hand) is left out.
using WorkEventLines = std::map<std::pair<std::string, std::string>, std::string>;

WorkEventLines work_event_lines(const Profile& p) {
  WorkEventLines out;
  const JsonValue* rows = p.header.extras().get("work_events");
  if (!rows || rows->kind() != JsonValue::Kind::kArray) return out;
  for (const JsonValue& row : rows->items()) {
    if (!row.is_object()) continue;
    const JsonValue* labels = row.get("labels");
    const JsonValue* events = row.get("events");
    const int64_t units = row.int_or("units", 0);
    if (!labels || !labels->is_object() || labels->members().size() != 1 || !labels->members()[0].second.is_text() ||
        !events || !events->is_object() || units <= 0) {
      continue;
    }
    std::string line = std::to_string(units) + (units == 1 ? " run" : " runs");
    for (const auto& [name, e] : events->members()) {
      const int64_t count = e.is_object() ? e.int_or("count", -1) : -1;
      const int64_t ns = e.is_object() ? e.int_or("duration_ns", -1) : -1;
      if (count < 0 || ns < 0) continue;
      char text[128];
      std::snprintf(text, sizeof text, ": %.1f per run (max %lld), %.2f ms per run", static_cast<double>(count) / units,
                    static_cast<long long>(e.int_or("max_per_unit", count)), static_cast<double>(ns) / 1e6 / units);
      line += "; " + name + text;
    }
    out[{labels->members()[0].first, labels->members()[0].second.as_string()}] = line;
  }
  return out;
}

std::string thread_name(const ThreadSamples& t, bool multi_process) {
  std::string name = "Thread " + std::to_string(t.seq);
  std::string detail = t.name;
  if (!t.ractor.empty()) detail += (detail.empty() ? "Ractor #" : ", Ractor #") + t.ractor;
  if (multi_process) detail += (detail.empty() ? "pid " : ", pid ") + t.pid;
  if (!detail.empty()) name += " (" + detail + ")";
  return name;
}

void write_thread(std::string& out, const Profile& p, const Classifier& classes, const ThreadSamples& t,
                  const std::vector<LabelSetInfo>& sets, const WorkEventLines& events, bool main_thread,
                  bool multi_process, int64_t tolerance_ns) {
  ThreadTables tables(p, classes);
  std::vector<int64_t> stacks;
  stacks.reserve(t.samples.size());
  for (uint32_t i : t.samples) stacks.push_back(tables.stack(p.samples[i]));

  // Each sample's interval. Samples recorded at one time (a GVL state closed at RESUMED: its
  // blocked and wait parts) end one after the other, in their order, at that time.
  size_t n = t.samples.size();
  std::vector<int64_t> starts(n, 0), ends(n, 0);
  if (p.timestamps) {
    for (size_t k = n; k-- > 0;) {
      const Sample& s = p.samples[t.samples[k]];
      ends[k] = k + 1 < n && p.samples[t.samples[k + 1]].time_ns == s.time_ns ? starts[k + 1] : s.time_ns;
      starts[k] = sample_start_ns(ends[k], s.weight_ns);
    }
  }

  std::vector<Marker> markers;
  if (p.timestamps) {
    RunTracker states(tolerance_ns, markers);
    std::map<std::string, RunTracker> labels;  // by key
    for (size_t k = 0; k < n; k++) {
      const Sample& s = p.samples[t.samples[k]];
      int64_t start = starts[k], end = ends[k];
      if (s.vm_state != kRunning && s.vm_state < kVmStateCount) {
        const VmStateNames& names = vm_state_names(s.vm_state);
        bool gvl = s.vm_state == kGvlBlocked || s.vm_state == kGvlWait;
        std::string name = std::string(gvl ? "GVL " : "GC ") + names.label_value;
        states.add(name, start, end, [&] {
          Marker m;
          m.name = tables.string(name);
          m.category = gvl ? kCatGvl : kCatGc;
          m.data = std::string("{\"type\":\"") + (gvl ? "GVL\",\"state\":\"" : "GC\",\"phase\":\"") + names.label_value + "\"}";
          return m;
        });
      } else {
        states.close();
      }
      const LabelSetInfo& set = sets[s.label_set];
      for (auto& [key, run] : labels) {
        bool present = std::any_of(set.labels.begin(), set.labels.end(), [&](const Label& l) { return l.key == key; });
        if (!present) run.close();
      }
      for (const Label& l : set.labels) {
        RunTracker& run = labels.try_emplace(l.key, tolerance_ns, markers).first->second;
        run.add(l.value, start, end, [&] {
          Marker m;
          m.name = tables.string(l.value);
          m.data = "{\"type\":\"Label\",\"key\":";
          append_json_string(m.data, l.key);
          m.data += ",\"value\":";
          append_json_string(m.data, l.value);
          auto e = events.find({l.key, l.value});
          if (e != events.end()) {
            m.data += ",\"events\":";
            append_json_string(m.data, e->second);
          }
          m.data += '}';
          return m;
        });
      }
    }
    states.close();
    for (auto& [key, run] : labels) run.close();
    std::stable_sort(markers.begin(), markers.end(), [](const Marker& a, const Marker& b) { return a.start_ns < b.start_ns; });
  }

  // A sample's time is the start of its interval: the profiler shows a sample's stack from its
  // time to the next sample's. Kept in order (the profiler searches them) and from 0.
  std::vector<int64_t> times(n, 0);
  for (size_t k = 0; k < n && p.timestamps; k++) times[k] = std::max<int64_t>(starts[k], k ? times[k - 1] : 0);
  int64_t register_ns = n ? times[0] : 0;
  out += "{\"processType\":\"default\",\"processStartupTime\":0,\"processShutdownTime\":null,\"registerTime\":";
  append_ms(out, register_ns);
  out += ",\"unregisterTime\":null,\"pausedRanges\":[],\"name\":";
  append_json_string(out, thread_name(t, multi_process));
  out += ",\"processName\":";
  append_json_string(out, t.pid.empty() ? std::string("ruby") : "ruby (pid " + t.pid + ")");
  out += ",\"isMainThread\":";
  out += main_thread ? "true" : "false";
  out += ",\"pid\":";
  append_json_string(out, t.pid.empty() ? std::string("0") : t.pid);
  out += ",\"tid\":" + std::to_string(t.seq);

  out += ",\"samples\":{\"weightType\":\"tracing-ms\",";
  append_column(out, "weight", t.samples, [&](uint32_t i) { append_ms(out, p.samples[i].weight_ns); });
  out += ',';
  append_column(out, "stack", stacks, [&](int64_t v) { append_index_or_null(out, v); });
  out += ',';
  append_column(out, "time", times, [&](int64_t v) { append_ms(out, v); });
  out += ",\"length\":" + std::to_string(t.samples.size()) + "},";

  out += "\"markers\":{";
  append_column(out, "data", markers, [&](const Marker& m) { out += m.data; });
  out += ',';
  append_column(out, "name", markers, [&](const Marker& m) { out += std::to_string(m.name); });
  out += ',';
  append_column(out, "startTime", markers, [&](const Marker& m) { append_ms(out, m.start_ns); });
  out += ',';
  append_column(out, "endTime", markers, [&](const Marker& m) { append_ms(out, m.end_ns); });
  out += ',';
  append_repeated(out, "phase", "1", markers.size());  // interval markers
  out += ',';
  append_column(out, "category", markers, [&](const Marker& m) { out += std::to_string(m.category); });
  out += ",\"length\":" + std::to_string(markers.size()) + "},";
  tables.write(out);
  out += '}';
}

void append_schema(std::string& out, const char* name, const char* description, const char* label,
                   std::initializer_list<std::pair<const char*, const char*>> fields) {
  out += "{\"name\":\"";
  out += name;
  out += "\",\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],\"chartLabel\":\"";
  out += label;
  out += "\",\"tooltipLabel\":\"";
  out += label;
  out += "\",\"tableLabel\":\"";
  out += label;
  out += "\",\"description\":";
  append_json_string(out, description);
  out += ",\"fields\":[";
  bool first = true;
  for (const auto& [key, field_label] : fields) {
    if (!first) out += ',';
    first = false;
    out += "{\"key\":\"";
    out += key;
    out += "\",\"label\":\"";
    out += field_label;
    out += "\",\"format\":\"string\"}";
  }
  out += "]}";
}

void append_extra_entry(std::string& out, bool& first, const char* label, const std::string& value) {
  if (!first) out += ',';
  first = false;
  out += "{\"label\":\"";
  out += label;
  out += "\",\"format\":\"string\",\"value\":";
  append_json_string(out, value);
  out += '}';
}

}  // namespace

void encode_firefox(const Profile& p, const FirefoxOptions& options, Output& out) {
  Classifier classes(p);

  std::vector<LabelSetInfo> sets(p.label_sets.size());
  for (uint32_t i = 0; i < p.label_sets.size(); i++) {
    for (const Label& l : p.label_sets[i]) {
      std::string key = label_value::to_s(l.key);
      if (key == kPidLabelKey) sets[i].pid = label_value::to_s(l.value);
      else if (key == kRactorLabelKey) sets[i].ractor = label_value::to_s(l.value);
      else if (key.empty() || key[0] != '%') sets[i].labels.push_back(Label{std::move(key), label_value::to_s(l.value)});
    }
  }
  const WorkEventLines events = work_event_lines(p);

  // Threads by (process, seq): the root process first, then the others by pid (numerically
  // for numbers: shorter first, then by text).
  auto process_order = [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  };
  std::map<std::string, std::map<uint32_t, ThreadSamples>, decltype(process_order)> processes(process_order);
  const ThreadNames names(p);
  for (uint32_t i = 0; i < p.samples.size(); i++) {
    const Sample& s = p.samples[i];
    const LabelSetInfo& set = s.label_set < sets.size() ? sets[s.label_set] : sets[0];
    const std::string& pid = set.pid;
    ThreadSamples& t = processes[pid][s.thread_seq];
    if (t.samples.empty()) t.name = names.of(s.thread_seq, pid);
    t.pid = pid;
    if (!set.ractor.empty()) t.ractor = set.ractor;
    t.seq = s.thread_seq;
    t.samples.push_back(i);
  }
  bool multi_process = processes.size() > 1 || (processes.size() == 1 && !processes.begin()->first.empty());
  size_t thread_count = 0;
  for (auto& [pid, threads] : processes) {
    for (auto& [seq, t] : threads) {
      if (!options.root_pid.empty() && t.pid.empty()) t.pid = options.root_pid;
      if (p.timestamps) {
        std::stable_sort(t.samples.begin(), t.samples.end(),
                         [&](uint32_t a, uint32_t b) { return p.samples[a].time_ns < p.samples[b].time_ns; });
      }
      thread_count++;
    }
  }
  int frequency = p.frequency() > 0 ? p.frequency() : 1000;
  int64_t interval_ns = 1000000000LL / frequency;
  std::string mode = p.mode();

  std::string chunk = "{\"meta\":{\"interval\":";
  append_ms(chunk, interval_ns);
  chunk += ",\"startTime\":";
  append_ms(chunk, p.header.start_time_ns.value_or(0));
  chunk += ",\"processType\":0,\"product\":";
  append_json_string(chunk, options.product.empty() ? "rperf " + mode : options.product);
  chunk += ",\"importedFrom\":\"rperf\",\"stackwalk\":0,\"version\":30,\"preprocessedProfileVersion\":";
  chunk += std::to_string(kProcessedProfileVersion);
  chunk += ",\"symbolicated\":true,\"sourceCodeIsNotOnSearchfox\":true,\"keepProfileThreadOrder\":true,\"categories\":[";
  for (int c = 0; c < kCatCount; c++) {
    if (c) chunk += ',';
    chunk += "{\"name\":\"";
    chunk += kCategories[c].name;
    chunk += "\",\"color\":\"";
    chunk += kCategories[c].color;
    chunk += "\",\"subcategories\":[";
    std::vector<std::string> subs = {"Other"};
    if (c == kCatGems) subs = classes.gem_subcategories();
    if (c == kCatC) subs.assign(std::begin(kOriginNames), std::end(kOriginNames));
    if (c == kCatGc) subs = {"Other", "mark", "sweep"};
    if (c == kCatGvl) subs = {"Other", "blocked", "wait"};
    for (size_t i = 0; i < subs.size(); i++) {
      if (i) chunk += ',';
      append_json_string(chunk, subs[i]);
    }
    chunk += "]}";
  }
  chunk += "],\"markerSchema\":[";
  append_schema(chunk, "GVL", "The thread was off the GVL (blocked: I/O, sleep, a lock) or waiting to take it back",
                "{marker.name}", {{"state", "State"}});
  chunk += ',';
  append_schema(chunk, "GC", "Garbage collection (marking or sweeping) while this thread held the GVL",
                "{marker.name}", {{"phase", "Phase"}});
  chunk += ',';
  append_schema(chunk, "Label", "Samples with this label (Rperf.label), one marker per stretch of consecutive samples",
                "{marker.data.key}: {marker.data.value}", {{"key", "Key"}, {"value", "Value"}, {"events", "Events (per run)"}});
  chunk += "],";
  if (thread_count <= 64) {
    chunk += "\"initialVisibleThreads\":[";
    for (size_t i = 0; i < thread_count; i++) {
      if (i) chunk += ',';
      chunk += std::to_string(i);
    }
    chunk += "],";
  }
  std::string timeline = p.timestamps
                             ? "each sample at its time (aggregate: false)"
                             : "none: the profile was aggregated (one sample per stack, no times); record with "
                               "aggregate: false (--no-aggregate) for a timeline";
  chunk += "\"extra\":[{\"label\":\"rperf\",\"entries\":[";
  bool first = true;
  append_extra_entry(chunk, first, "Mode", mode);
  append_extra_entry(chunk, first, "Frequency", std::to_string(frequency) + " Hz");
  append_extra_entry(chunk, first, "Samples", std::to_string(p.samples.size()));
  append_extra_entry(chunk, first, "Timeline", timeline);
  chunk += "]}],\"rperf\":{\"mode\":";
  append_json_string(chunk, mode);
  chunk += ",\"frequency\":" + std::to_string(frequency);
  chunk += ",\"timeline\":";
  chunk += p.timestamps ? "true" : "false";
  chunk += ",\"aggregated\":";
  chunk += p.timestamps ? "false" : "true";
  chunk += ",\"processes\":" + std::to_string(processes.size());
  chunk += ",\"threads\":" + std::to_string(thread_count);
  chunk += ",\"samples\":" + std::to_string(p.samples.size());
  chunk += ",\"total_weight_ns\":" + std::to_string(p.total_weight());
  chunk += "}},\"libs\":[],\"pages\":[],\"threads\":[";
  out.append(chunk);

  bool first_thread = true;
  for (const auto& [pid, threads] : processes) {
    bool main_thread = true;  // the lowest seq of each process
    for (const auto& [seq, t] : threads) {
      if (out.failed()) return;
      chunk.clear();
      if (!first_thread) chunk += ',';
      first_thread = false;
      write_thread(chunk, p, classes, t, sets, events, main_thread, multi_process, interval_ns);
      main_thread = false;
      out.append(chunk);
    }
  }
  out.append("]}");
}

}  // namespace rperf
