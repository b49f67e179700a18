#include "sampler/profile_builder.hh"

#include <unordered_map>

#include "profile/label_value.hh"
#include "profile/transform.hh"
#include "util/clock.hh"

namespace rperf {

namespace {

constexpr uint32_t kUnresolved = 0xffffffffu;

void copy_text(VALUE str, std::string& out, const char* fallback) {
  if (RB_TYPE_P(str, T_STRING)) out.assign(RSTRING_PTR(str), static_cast<size_t>(RSTRING_LEN(str)));
  else out = fallback;
}

class Resolver {
 public:
  Resolver(const StackStore& store, Profile& p) : store_(store), p_(p), frame_map_(store.frame_count(), kUnresolved) {}

  uint32_t stack(uint32_t node) {
    ids_.clear();
    if (node != StackStore::kRoot) {
      for (uint32_t n = node; n != StackStore::kRoot; n = store_.node(n).parent) ids_.push_back(frame(store_.node(n).frame));
    }
    return p_.stacks.intern(ids_);
  }

 private:
  uint32_t frame(uint32_t id) {
    if (id < frame_map_.size() && frame_map_[id] != kUnresolved) return frame_map_[id];
    // A copy: resolving allocates, a GC hook may intern frames, and the store may move.
    const FrameKey key = store_.frame(id);
    uint32_t out;
    if (key.method == kTruncatedMethod) {
      out = p_.frames.intern("", kTruncatedFrame, 0);
    } else if (key.method == kThreadStartMethod) {
      out = p_.frames.intern("", kThreadStartFrame, 0);
    } else {
      VALUE method = static_cast<VALUE>(key.method);
      copy_text(rb_profile_frame_path(method), path_, "<C method>");
      copy_text(rb_profile_frame_full_label(method), label_, "<unknown>");
      out = p_.frames.intern(path_, label_, key.line);
      VALUE first = rb_profile_frame_first_lineno(method);
      if (FIXNUM_P(first) && FIX2INT(first) > 0) p_.frames.at(out).start_line = FIX2INT(first);
    }
    if (id < frame_map_.size()) frame_map_[id] = out;
    return out;
  }

  const StackStore& store_;
  Profile& p_;
  std::vector<uint32_t> frame_map_;  // StackStore frame id -> profile frame id
  std::vector<uint32_t> ids_;
  std::string path_, label_;
};

// A class VALUE of an allocation sample -> its name in the profile (once per class). Runs after
// the hooks' work is taken: rb_class_name may allocate here.
class ClassNamer {
 public:
  explicit ClassNamer(Profile& p) : p_(p) {}
  uint32_t name(uint64_t klass) {
    auto it = known_.find(klass);
    if (it != known_.end()) return it->second;
    VALUE real = klass ? rb_class_real(static_cast<VALUE>(klass)) : 0;
    std::string text;
    if (real) copy_text(rb_class_name(real), text, kInternalObjects);
    else text = kInternalObjects;
    uint32_t id = p_.class_names.intern(text);
    known_.emplace(klass, id);
    return id;
  }

 private:
  static constexpr const char* kInternalObjects = "(internal)";  // hidden objects and T_IMEMO (no class)
  Profile& p_;
  std::unordered_map<uint64_t, uint32_t> known_;
};

}  // namespace

void build_profile(Session& s, const BuildOptions& opts, Profile& out) {
  // While the worker runs (snapshot), it may grow the live store: resolve from a copy.
  StackStore copy;
  const bool worker_running = s.timer.running();
  std::vector<AllocationSample> allocations;
  const bool with_allocations = s.opts.allocation_interval > 0;
  std::vector<Sample> samples = s.take_samples(opts.clear, worker_running ? &copy : nullptr, with_allocations ? &allocations : nullptr);
  const StackStore& store = worker_running ? copy : s.stacks;
  // A stopped session's duration ends where its intervals were closed.
  const int64_t now = s.stopped_mono_ns != 0 ? s.stopped_mono_ns : monotonic_ns();
  const uint64_t triggers = s.timer.trigger_count();  // read with `now`: the ticks of duration_ns
  out.has_lines = s.opts.lines;
  out.timestamps = !s.opts.aggregate;
  out.retained_measured = s.opts.retained;
  // The session's table may have ids freed by snapshot(clear: true): the profile's is dense.
  std::vector<uint32_t> set_map;
  if (s.label_sets.held() == s.label_sets.size()) {
    out.label_sets = s.label_sets;
  } else {
    set_map.assign(s.label_sets.size(), 0);
    for (uint32_t id = 1; id < s.label_sets.size(); id++) {
      if (!s.label_sets.released(id)) set_map[id] = out.label_sets.intern(s.label_sets[id]);
    }
  }
  auto map_set = [&](uint32_t id) { return set_map.empty() || id >= set_map.size() ? id : set_map[id]; };
  // Another Ractor's thread: its samples carry the Ractor (each label set and Ractor once).
  const std::unordered_map<uint32_t, uint32_t> ractor_of_thread = s.ractors.ractors_of_threads();
  std::unordered_map<uint64_t, uint32_t> ractor_sets;
  auto with_ractor = [&](const Sample& sample) {
    auto it = ractor_of_thread.find(sample.thread_seq);
    if (it == ractor_of_thread.end() || it->second == 0) return sample.label_set;
    const uint64_t key = static_cast<uint64_t>(it->second) << 32 | sample.label_set;
    auto known = ractor_sets.find(key);
    if (known != ractor_sets.end()) return known->second;
    const uint32_t id = out.label_sets.with(sample.label_set, Label{label_value::symbol(kRactorLabelKey), label_value::string(std::to_string(it->second))});
    ractor_sets.emplace(key, id);
    return id;
  };
  {
    Resolver resolver(store, out);
    std::vector<uint32_t> stack_map(store.node_count() + 1, kUnresolved);  // [node_count] = empty stack
    out.samples.reserve(samples.size());
    for (Sample sample : samples) {
      size_t slot = sample.stack < store.node_count() ? sample.stack : store.node_count();
      if (stack_map[slot] == kUnresolved) stack_map[slot] = resolver.stack(sample.stack);
      sample.stack = stack_map[slot];
      sample.label_set = map_set(sample.label_set);
      sample.label_set = with_ractor(sample);
      out.samples.push_back(sample);
    }
    ClassNamer namer(out);
    out.allocations.reserve(allocations.size());
    for (AllocationSample a : allocations) {
      size_t slot = a.stack < store.node_count() ? a.stack : store.node_count();
      if (stack_map[slot] == kUnresolved) stack_map[slot] = resolver.stack(a.stack);
      a.stack = stack_map[slot];
      a.type = namer.name(a.type);
      a.label_set = map_set(a.label_set);
      out.allocations.push_back(a);
    }
  }
  s.alloc.resolving.clear();  // every class is named
  apply_vm_states(out, opts.vm_state_frames);

  ProfileHeader& h = out.header;  // set in rperf 0.11's order, ours among them
  h.mode = HeaderText{s.opts.wall ? "wall" : "cpu", true};
  h.frequency = s.opts.frequency;
  h.trigger_count = static_cast<int64_t>(triggers);
  uint64_t ractor_samples = 0;
  int64_t ractor_sampling_ns = 0;
  s.ractors.take_counts(opts.clear ? now : 0, &ractor_samples, &ractor_sampling_ns);
  h.sampling_count = static_cast<int64_t>(s.sampling_count + ractor_samples);
  const Session::IntervalStart ends{s.sampling_time_ns.total(), s.hook_time_ns.total(), s.own_cpu_ns(), clock_ns(CLOCK_PROCESS_CPUTIME_ID)};
  h.sampling_time_ns = ends.sampling_ns - s.interval_start.sampling_ns + ractor_sampling_ns;
  h.hook_time_ns = ends.hook_ns - s.interval_start.hook_ns;
  uint64_t dropped = s.dropped_samples.load();
  if (dropped) h.dropped_samples = static_cast<int64_t>(dropped);
  // Label sets folded into "(other)" once max_label_sets distinct ones existed.
  if (s.label_sets.overflowed()) h.label_sets_overflowed = static_cast<int64_t>(s.label_sets.overflowed());
  h.detected_thread_count = s.threads.detected();
  h.start_time_ns = s.start_realtime_ns;
  h.duration_ns = now - s.start_mono_ns;
  h.max_depth = s.opts.max_depth;
  if (s.opts.overhead_target > 0) {  // the budget's measure of this interval (the rate: trigger_count)
    h.profiler_cpu_ns = ends.own_cpu_ns - s.interval_start.own_cpu_ns;
    h.process_cpu_ns = ends.process_cpu_ns - s.interval_start.process_cpu_ns;
  }
  if (with_allocations) {
    h.allocation_interval = s.opts.allocation_interval;
    h.allocation_sample_count = static_cast<int64_t>(s.alloc.sample_count);
    if (s.alloc.dropped) h.dropped_allocations = static_cast<int64_t>(s.alloc.dropped);
  }
  set_thread_name_entries(out, s.thread_names_since(s.start_mono_ns));

  if (opts.clear) {
    s.timer.reset_trigger_count();
    s.sampling_count = 0;
    s.interval_start = ends;
    s.dropped_samples.store(0);
    s.alloc.sample_count = 0;
    s.alloc.dropped = 0;
    s.label_sets.reset_overflowed();
    // The next interval starts where this one ends, on the wall clock too (not a new clock
    // read microseconds later): consecutive snapshots' start_time_ns + duration_ns meet exactly.
    s.start_realtime_ns += now - s.start_mono_ns;
    s.start_mono_ns = now;
  }
}

}  // namespace rperf
