#include "profile/transform.hh"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "profile/frame_category.hh"
#include "profile/frame_methods.hh"
#include "profile/idle_wait.hh"
#include "profile/label_value.hh"
#include "profile/sample_filter.hh"
#include "profile/thread_names.hh"
#include "util/utf8.hh"

namespace rperf {

namespace {

// Rebuilds the samples through `remap_stack` and re-aggregates unless raw.
template <typename RemapStack>
void restack(Profile& p, RemapStack&& remap_stack) {
  std::vector<Sample> old;
  old.swap(p.samples);
  SampleAggregator agg;
  for (Sample s : old) {
    s.stack = remap_stack(s.stack);
    if (p.timestamps) p.samples.push_back(s);
    else agg.add(s);
  }
  if (!p.timestamps) p.samples = agg.take();
}

// Rebuilds the allocation samples of `from` into `to` through the stack, label set and class
// maps, merging those that now share a key (appending them, in order, when `to` is raw).
template <typename MapStack, typename MapSet, typename MapType>
void merge_allocations(Profile& to, const std::vector<AllocationSample>& from, MapStack&& map_stack, MapSet&& map_set,
                       MapType&& map_type) {
  AllocationAggregator agg;
  if (!to.timestamps) {
    for (const AllocationSample& a : to.allocations) agg.add(a);
  }
  for (AllocationSample a : from) {
    a.stack = map_stack(a.stack);
    a.label_set = map_set(a.label_set);
    a.type = map_type(a.type);
    if (to.timestamps) to.allocations.push_back(a);
    else agg.add(a);
  }
  if (!to.timestamps) to.allocations = agg.take();
}

// Copies frames and stacks of `from` into `to`, returning from's stack id -> to's.
std::vector<uint32_t> copy_stacks(Profile& to, const Profile& from, bool drop_lines) {
  std::vector<uint32_t> frame_map(from.frames.size());
  for (uint32_t i = 0; i < from.frames.size(); i++) {
    const Frame& f = from.frames[i];
    frame_map[i] = to.frames.intern(f.path, f.label, drop_lines ? 0 : f.line);
    Frame& copy = to.frames.at(frame_map[i]);
    if (copy.start_line == 0) copy.start_line = f.start_line;
  }
  std::vector<uint32_t> stack_map(from.stacks.size());
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < from.stacks.size(); i++) {
    ids.clear();
    for (uint32_t f : from.stacks[i]) ids.push_back(frame_map[f]);
    stack_map[i] = to.stacks.intern(ids);
  }
  return stack_map;
}

const VmState kStates[] = {kGvlBlocked, kGvlWait, kGcMark, kGcSweep};

// The counters a merge adds up (present in the result when either process has them).
HeaderField<int64_t> ProfileHeader::* const kSummedCounters[] = {
    &ProfileHeader::trigger_count, &ProfileHeader::sampling_count, &ProfileHeader::sampling_time_ns,
    &ProfileHeader::hook_time_ns,  &ProfileHeader::user_ns,        &ProfileHeader::sys_ns,
    &ProfileHeader::allocation_sample_count, &ProfileHeader::dropped_allocations,
    &ProfileHeader::profiler_cpu_ns, &ProfileHeader::process_cpu_ns};

}  // namespace

void fold_lines(Profile& p) {
  if (!p.has_lines) return;
  Profile folded;
  std::vector<uint32_t> stack_map = copy_stacks(folded, p, true);
  p.frames = std::move(folded.frames);
  p.stacks = std::move(folded.stacks);
  p.has_lines = false;
  restack(p, [&](uint32_t s) { return stack_map[s]; });
  std::vector<AllocationSample> allocations;
  allocations.swap(p.allocations);
  auto same = [](uint64_t v) { return v; };
  merge_allocations(p, allocations, [&](uint32_t s) { return stack_map[s]; }, same, same);
}

void apply_vm_states(Profile& p, bool as_frames) {
  uint32_t vm_frames[kVmStateCount] = {};
  if (as_frames) {
    for (VmState s : kStates) vm_frames[s] = p.frames.intern(kVmFramePath, vm_state_names(s).frame_label, 0);
  }
  std::vector<uint32_t> ids;
  for (Sample& s : p.samples) {
    if (s.vm_state == kRunning) continue;
    if (as_frames) {
      FrameSpan span = p.stacks[s.stack];
      ids.assign(1, vm_frames[s.vm_state]);
      ids.insert(ids.end(), span.begin(), span.end());
      s.stack = p.stacks.intern(ids);
    } else {
      s.label_set = p.label_sets.with(s.label_set, vm_state_label(s.vm_state));
    }
  }
}

Label vm_state_label(VmState state) {
  const VmStateNames& names = vm_state_names(state);
  return Label{label_value::symbol(names.label_key ? names.label_key : ""), label_value::string(names.label_value ? names.label_value : "")};
}

void label_vm_states(Profile& p) {
  for (Sample& s : p.samples) {
    if (s.vm_state == kRunning) continue;
    FrameSpan span = p.stacks[s.stack];
    if (!span.empty() && p.frames[span[0]].path == kVmFramePath) continue;
    s.label_set = p.label_sets.with(s.label_set, vm_state_label(s.vm_state));
  }
}

uint32_t UserLabelSets::of(const Sample& s) {
  if (s.vm_state == kRunning || s.label_set >= cache_.size()) return s.label_set;
  uint32_t& known = cache_[s.label_set];
  if (known != LabelSetTable::kNotFound) return known;
  const Label state = vm_state_label(s.vm_state);
  LabelSet user;
  for (const Label& l : p_.label_sets[s.label_set]) {
    if (!(l == state)) user.push_back(l);
  }
  uint32_t id = p_.label_sets.find(user);
  return known = id == LabelSetTable::kNotFound ? s.label_set : id;
}

VmState vm_state_of(const LabelSet& set) {
  VmState state = kRunning;
  for (const Label& l : set) {
    for (VmState st : kStates) {
      if (l == vm_state_label(st)) state = st;
    }
  }
  return state;
}

void infer_vm_states(Profile& p) {
  std::vector<int> state_of_set(p.label_sets.size(), -1);
  for (Sample& s : p.samples) {
    int& known = state_of_set[s.label_set];
    if (known < 0) known = vm_state_of(p.label_sets[s.label_set]);
    s.vm_state = static_cast<VmState>(known);
    FrameSpan span = p.stacks[s.stack];
    if (s.vm_state == kRunning && !span.empty()) {
      const Frame& leaf = p.frames[span[0]];
      if (leaf.path != kVmFramePath) continue;
      for (VmState st : kStates) {
        if (leaf.label == vm_state_names(st).frame_label) s.vm_state = st;
      }
    }
  }
}

void select_samples(Profile& p, const SampleFilter& filter) {
  std::vector<Sample> kept;
  for (const Sample& s : p.samples) {
    int64_t weight;
    if (!filter.keeps(p, s, weight)) continue;
    kept.push_back(s);
    kept.back().weight_ns = weight;
  }
  p.samples = std::move(kept);
  p.allocations.clear();
}

void aggregate(Profile& p) {
  if (!p.timestamps) return;
  p.samples = p.aggregated_samples();
  p.allocations = p.aggregated_allocations();
  p.timestamps = false;
}

void merge_child(Profile& root, const Profile& child, const std::string& pid) {
  std::vector<uint32_t> stack_map = copy_stacks(root, child, !root.has_lines);
  std::vector<uint32_t> set_map(child.label_sets.size());
  for (uint32_t i = 0; i < child.label_sets.size(); i++) {
    uint32_t set = root.label_sets.intern(child.label_sets[i]);
    set_map[i] = root.label_sets.with(set, Label{label_value::symbol(kPidLabelKey), label_value::string(pid)});
  }
  SampleAggregator agg;
  if (!root.timestamps) {
    for (const Sample& s : root.samples) agg.add(s);
  }
  // Raw samples' times move to the root's clock (each process counts from its own start), so
  // a timeline (the Firefox export) shows the processes side by side.
  int64_t root_start = root.header.start_time_ns.value_or(0), child_start = child.header.start_time_ns.value_or(0);
  int64_t offset = root_start > 0 && child_start > 0 ? child_start - root_start : 0;
  for (Sample s : child.samples) {
    s.stack = stack_map[s.stack];
    s.label_set = set_map[s.label_set];
    s.time_ns += offset;
    if (root.timestamps) root.samples.push_back(s);
    else agg.add(s);
  }
  if (!root.timestamps) root.samples = agg.take();
  if (child.has_allocations()) {
    // Retained counts are measured for the merge only when every process measured them.
    root.retained_measured = child.retained_measured && (root.retained_measured || !root.has_allocations());
    std::vector<uint64_t> type_map(child.class_names.size());
    for (uint32_t i = 0; i < child.class_names.size(); i++) type_map[i] = root.class_names.intern(child.class_names[i]);
    merge_allocations(root, child.allocations, [&](uint32_t s) { return stack_map[s]; }, [&](uint32_t s) { return set_map[s]; },
                      [&](uint64_t t) { return type_map[t]; });
    if (!root.has_allocations() && child.header.allocation_interval) root.header.allocation_interval = *child.header.allocation_interval;
  }
  ProfileHeader& rh = root.header;
  const ProfileHeader& ch = child.header;
  for (HeaderField<int64_t> ProfileHeader::*counter : kSummedCounters) {
    if (rh.*counter || ch.*counter) rh.*counter = (rh.*counter).value_or(0) + (ch.*counter).value_or(0);
  }
  // As rperf 0.11: duration_ns is the longest process's, total_duration_ns the sum. (A key
  // new to the root goes last, one it has keeps its place.)
  int64_t root_ns = rh.duration_ns.value_or(0), child_ns = ch.duration_ns.value_or(0);
  rh.total_duration_ns = rh.total_duration_ns.value_or(root_ns) + child_ns;
  rh.duration_ns = std::max(root_ns, child_ns);
  rh.process_count = rh.process_count.value_or(1) + 1;
  merge_thread_names(root, child, pid);
}

namespace {
// Per frame id: whether it is the function `t` names.
std::vector<bool> frames_of_function(const Profile& p, const StackTransform& t) {
  std::vector<bool> match(p.frames.size());
  for (uint32_t f = 0; f < p.frames.size(); f++) match[f] = same_text(p.frames[f].label, t.label) && same_text(p.frames[f].path, t.path);
  return match;
}

// Per frame id: whether it is a framework's (a gem's or the standard library's).
std::vector<bool> framework_frames(const Profile& p) {
  std::vector<bool> match(p.frames.size());
  for (uint32_t f = 0; f < p.frames.size(); f++) {
    FrameCategory c = frame_category(p.frames[f].label, p.frames[f].path);
    match[f] = c == FrameCategory::kGem || c == FrameCategory::kStdlib;
  }
  return match;
}

}  // namespace

namespace {

// The stacks through list[begin, end) (kHideIdle does nothing), each distinct stack once: p.stacks
// replaced, old stack id -> new (kStackGone).
std::vector<uint32_t> transform_stack_run(Profile& p, const std::vector<StackTransform>& list, size_t begin, size_t end) {
  // kAppFirst's frame is interned first, so every per-frame table below has a slot for it.
  uint32_t framework = UINT32_MAX;
  std::vector<bool> native;  // per frame id: a C method (kAppFirst)
  for (size_t k = begin; k < end; k++) {
    if (list[k].op != StackTransform::Op::kAppFirst || framework != UINT32_MAX) continue;
    framework = p.frames.intern(kFrameworkPath, kFrameworkFrame, 0);
    native.resize(p.frames.size());
    for (uint32_t f = 0; f < p.frames.size(); f++) native[f] = frame_category(p.frames[f].label, p.frames[f].path) == FrameCategory::kNative;
  }
  std::vector<std::vector<bool>> match(list.size());
  std::vector<uint32_t> method;
  for (size_t k = begin; k < end; k++) {
    if (list[k].op == StackTransform::Op::kAppFirst) match[k] = framework_frames(p);
    else if (list[k].op != StackTransform::Op::kRecursion) match[k] = frames_of_function(p, list[k]);
    else if (method.empty()) method = frame_methods(p).of_frame;
  }

  StackTable out;
  std::vector<uint32_t> new_id(p.stacks.size());
  std::vector<uint32_t> stack, next;
  for (uint32_t id = 0; id < p.stacks.size(); id++) {
    FrameSpan frames = p.stacks[id];
    stack.assign(frames.begin(), frames.end());  // leaf first
    bool gone = false;
    for (size_t k = begin; k < end && !gone; k++) {
      const std::vector<bool>& is = match[k];
      switch (list[k].op) {
        case StackTransform::Op::kFocus:
        case StackTransform::Op::kCallers: {
          size_t at = stack.size();  // the outermost call (leaf first: the last match)
          for (size_t i = stack.size(); i-- > 0;) {
            if (is[stack[i]]) {
              at = i;
              break;
            }
          }
          if (at == stack.size()) gone = true;
          else if (list[k].op == StackTransform::Op::kFocus) stack.resize(at + 1);
          else stack.erase(stack.begin(), stack.begin() + static_cast<std::ptrdiff_t>(at));
          break;
        }
        case StackTransform::Op::kMerge:
          stack.erase(std::remove_if(stack.begin(), stack.end(), [&](uint32_t f) { return is[f]; }), stack.end());
          break;
        case StackTransform::Op::kDrop:
          gone = std::any_of(stack.begin(), stack.end(), [&](uint32_t f) { return is[f]; });
          break;
        case StackTransform::Op::kHideIdle:  // not in a run
          break;
        case StackTransform::Op::kAppFirst: {
          // Root first: a framework frame opens a run (one [framework] frame), an app frame
          // ends it, and a C method joins the run of the framework code that called it.
          next.clear();
          bool in_run = false;
          for (size_t i = stack.size(); i-- > 0;) {
            uint32_t f = stack[i];
            bool joins = is[f] || (in_run && native[f]);
            if (!joins) next.push_back(f);
            else if (!in_run) next.push_back(framework);
            in_run = joins;
          }
          std::reverse(next.begin(), next.end());
          stack.swap(next);
          break;
        }
        case StackTransform::Op::kRecursion:
          next.clear();
          for (size_t i = 0; i < stack.size(); i++) {
            if (i == 0 || method[stack[i]] != method[stack[i - 1]]) next.push_back(stack[i]);
          }
          stack.swap(next);
          break;
      }
    }
    new_id[id] = gone ? kStackGone : out.intern(stack);
  }
  p.stacks = std::move(out);
  return new_id;
}

// The stack transforms list[begin, end) (none is kHideIdle) applied to the samples.
void transform_run(Profile& p, const std::vector<StackTransform>& list, size_t begin, size_t end) {
  if (begin == end) return;
  const std::vector<uint32_t> new_id = transform_stack_run(p, list, begin, end);
  constexpr uint32_t kGone = kStackGone;
  // The samples whose stack went go too; those that now share a key merge (unless raw).
  p.samples.erase(std::remove_if(p.samples.begin(), p.samples.end(), [&](const Sample& s) { return new_id[s.stack] == kGone; }),
                  p.samples.end());
  restack(p, [&](uint32_t s) { return new_id[s]; });
  std::vector<AllocationSample> allocations;
  allocations.swap(p.allocations);
  allocations.erase(std::remove_if(allocations.begin(), allocations.end(), [&](const AllocationSample& a) { return new_id[a.stack] == kGone; }),
                    allocations.end());
  auto same = [](uint64_t v) { return v; };
  merge_allocations(p, allocations, [&](uint32_t s) { return new_id[s]; }, same, same);
}

}  // namespace

std::vector<uint32_t> transform_stack_table(Profile& p, const std::vector<StackTransform>& list) {
  return transform_stack_run(p, list, 0, list.size());
}

bool stack_transform_op(std::string_view name, bool with_function, StackTransform::Op& op) {
  using Op = StackTransform::Op;
  static constexpr std::pair<std::string_view, Op> kOps[] = {{"focus", Op::kFocus}, {"callers", Op::kCallers}, {"merge", Op::kMerge},
                                                             {"drop", Op::kDrop},   {"recursion", Op::kRecursion}, {"idle", Op::kHideIdle},
                                                             {"app", Op::kAppFirst}};
  for (const auto& [n, o] : kOps) {
    const bool names_function = o == Op::kFocus || o == Op::kCallers || o == Op::kMerge || o == Op::kDrop;
    if (n == name && names_function == with_function) {
      op = o;
      return true;
    }
  }
  return false;
}

void transform_stacks(Profile& p, const std::vector<StackTransform>& list) {
  size_t begin = 0;
  for (size_t k = 0; k <= list.size(); k++) {
    if (k < list.size() && list[k].op != StackTransform::Op::kHideIdle) continue;
    transform_run(p, list, begin, k);
    if (k < list.size()) {
      IdleSamples idle(p);
      p.samples.erase(std::remove_if(p.samples.begin(), p.samples.end(), [&](const Sample& s) { return idle.idle(s); }), p.samples.end());
    }
    begin = k + 1;
  }
}

}  // namespace rperf
