#include "profile/idle_wait.hh"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "profile/label_value.hh"
#include "profile/thread_index.hh"
#include "profile/transform.hh"

namespace rperf {

namespace {

// The frames the rule names, by label (as Ruby 3.3 gives them: rb_profile_frame_full_label).
enum class FrameKind : uint8_t { kOther, kWaitPrimitive, kWaitOnAnother, kPassThrough };

constexpr std::string_view kWaitPrimitives[] = {
    "Kernel#sleep", "Thread.stop", "Thread::Queue#pop", "Thread::SizedQueue#pop", "Thread::ConditionVariable#wait",
    "Thread::Mutex#sleep", "MonitorMixin::ConditionVariable#wait", "Monitor#wait_for_cond", "IO.select", "Kernel#select",
    "IO#wait_readable", "IO#wait", "NIO::Selector#select", "TCPServer#accept", "UNIXServer#accept", "Socket#accept",
};
constexpr std::string_view kWaitsOnAnother[] = {
    "Thread#join", "Thread#value", "Process.wait", "Process.wait2", "Process.waitpid", "Process.waitpid2", "Process.waitall",
    "Process::Status.wait",
};
// Frames a thread's loop waits through without leaving it (rule 4c), besides blocks of methods
// already on the stack.
constexpr std::string_view kPassThrough[] = {
    "Kernel#loop", "Kernel#catch", "Thread::Mutex#synchronize", "Monitor#synchronize", "MonitorMixin#mon_synchronize",
};

constexpr std::string_view kMainLabel = "<main>";
constexpr double kHomeShare = 0.9;
constexpr double kWaitingShare = 0.5;

template <size_t N>
bool listed(const std::string_view (&list)[N], std::string_view label) {
  return std::find(std::begin(list), std::end(list), label) != std::end(list);
}

FrameKind kind_of(const Frame& f) {
  if (listed(kWaitPrimitives, f.label)) return FrameKind::kWaitPrimitive;
  if (listed(kWaitsOnAnother, f.label)) return FrameKind::kWaitOnAnother;
  if (listed(kPassThrough, f.label)) return FrameKind::kPassThrough;
  return FrameKind::kOther;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// A label without the "block in " / "block (N levels) in " Ruby puts before a block's method.
std::string_view method_label(std::string_view label) {
  if (starts_with(label, "block in ")) return label.substr(9);
  if (starts_with(label, "block (")) {
    size_t at = label.find(" levels) in ");
    if (at != std::string_view::npos) return label.substr(at + 12);
  }
  return label;
}

// A stack's frames root first, without the VM-state leaf of vm_state_frames.
struct RootFirst {
  FrameSpan stack;
  size_t size;
  RootFirst(const Profile& p, FrameSpan s) : stack(s), size(s.size()) {
    if (size > 0 && p.frames[s[0]].path == kVmFramePath) size--;
  }
  uint32_t operator[](size_t i) const { return stack[stack.size() - 1 - i]; }
};

// A thread's home (idle_wait.hh, rule 4c): the frames from its root that hold kHomeShare of its
// time, as line-less frame ids (a method's frames at different lines are one).
std::vector<uint32_t> home_of(const Profile& p, const std::vector<std::pair<uint32_t, double>>& stack_weights,
                              const std::vector<uint32_t>& method_frame) {
  double total = 0;
  for (const auto& [stack, weight] : stack_weights) total += weight;
  std::vector<uint32_t> home;
  if (total <= 0) return home;
  std::vector<std::pair<uint32_t, double>> live = stack_weights;
  std::unordered_map<uint32_t, double> by_frame;
  for (size_t depth = 0;; depth++) {
    by_frame.clear();
    for (const auto& [stack, weight] : live) {
      RootFirst frames(p, p.stacks[stack]);
      if (depth < frames.size) by_frame[method_frame[frames[depth]]] += weight;
    }
    auto best = std::max_element(by_frame.begin(), by_frame.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (best == by_frame.end() || best->second < kHomeShare * total) return home;
    uint32_t frame = best->first;
    home.push_back(frame);
    live.erase(std::remove_if(live.begin(), live.end(),
                              [&](const std::pair<uint32_t, double>& e) {
                                RootFirst frames(p, p.stacks[e.first]);
                                return depth >= frames.size || method_frame[frames[depth]] != frame;
                              }),
               live.end());
  }
}

}  // namespace

IdleSamples::IdleSamples(const Profile& p) {
  std::vector<FrameKind> kind(p.frames.size());
  std::vector<uint32_t> method_frame(p.frames.size());  // frame id -> its (path, label)'s, any line
  {
    std::unordered_map<std::string, uint32_t> ids;
    for (uint32_t f = 0; f < p.frames.size(); f++) {
      const Frame& frame = p.frames[f];
      kind[f] = kind_of(frame);
      method_frame[f] = ids.emplace(frame.path + '\0' + frame.label, static_cast<uint32_t>(ids.size())).first->second;
    }
  }

  // Each stack's wait, and for a primitive's the length of the frames from the root that must be
  // the thread's home: the stack without its leaf primitives and the pass-through frames above.
  wait_of_stack_.assign(p.stacks.size(), StackWait::kNone);
  std::vector<uint32_t> caller_size(p.stacks.size(), 0);
  for (uint32_t id = 0; id < p.stacks.size(); id++) {
    RootFirst frames(p, p.stacks[id]);
    if (frames.size == 0) continue;
    FrameKind leaf = kind[frames[frames.size - 1]];
    if (leaf == FrameKind::kWaitOnAnother) wait_of_stack_[id] = StackWait::kOnAnother;
    if (leaf != FrameKind::kWaitPrimitive || p.frames[frames[0]].label == kTruncatedFrame) continue;
    size_t n = frames.size;
    while (n > 0 && kind[frames[n - 1]] == FrameKind::kWaitPrimitive) n--;
    auto passes_through = [&](size_t i) {
      if (kind[frames[i]] == FrameKind::kPassThrough) return true;
      const Frame& f = p.frames[frames[i]];
      std::string_view method = method_label(f.label);
      for (size_t j = 0; j < i; j++) {
        const Frame& outer = p.frames[frames[j]];
        if (outer.path == f.path && method_label(outer.label) == method) return true;
      }
      return false;
    };
    while (n > 1 && passes_through(n - 1)) n--;
    wait_of_stack_[id] = StackWait::kPrimitive;
    caller_size[id] = static_cast<uint32_t>(n);
  }

  state_of_set_.reserve(p.label_sets.size());
  labelled_set_.reserve(p.label_sets.size());
  process_of_set_.reserve(p.label_sets.size());
  std::unordered_map<std::string, uint32_t> processes;  // %pid value -> 1, 2, ... (0: the root's)
  for (uint32_t i = 0; i < p.label_sets.size(); i++) {
    const LabelSet& set = p.label_sets[i];
    state_of_set_.push_back(vm_state_of(set));
    bool labelled = false;
    uint32_t process = 0;
    for (const Label& l : set) {
      std::string key = label_value::to_s(l.key);
      if (key == kPidLabelKey) process = processes.emplace(l.value, static_cast<uint32_t>(processes.size() + 1)).first->second;
      labelled = labelled || !starts_with(key, "%");
    }
    labelled_set_.push_back(labelled);
    process_of_set_.push_back(process);
  }

  // The homes of the threads with a primitive's wait, from all of their samples. A thread is its
  // thread_seq in its process (a child's merged samples carry %pid: their seqs are its own).
  std::unordered_map<uint64_t, uint32_t> threads;  // thread_key -> t
  std::vector<uint64_t> key_of;
  std::vector<bool> waits, works_labelled;
  for (const Sample& s : p.samples) {
    auto [at, added] = threads.emplace(thread_key(s), static_cast<uint32_t>(key_of.size()));
    uint32_t t = at->second;
    if (added) {
      key_of.push_back(thread_key(s));
      waits.push_back(false);
      works_labelled.push_back(false);
    }
    if (unlabelled_wait(s) == StackWait::kPrimitive) waits[t] = true;
    if (s.label_set < labelled_set_.size() && labelled_set_[s.label_set]) works_labelled[t] = true;
  }
  if (std::none_of(waits.begin(), waits.end(), [](bool w) { return w; })) return;
  // Per thread: stack -> its weight, and that of its samples in an unlabelled wait off the GVL.
  std::vector<std::unordered_map<uint32_t, std::pair<double, double>>> weight_of(key_of.size());
  for (const Sample& s : p.samples) {
    uint32_t t = threads[thread_key(s)];
    if (!waits[t]) continue;
    double weight = std::max(static_cast<double>(s.weight_ns), 0.0);
    std::pair<double, double>& w = weight_of[t][s.stack];
    w.first += weight;
    if (unlabelled_wait(s) == StackWait::kPrimitive) w.second += weight;
  }
  for (uint32_t t = 0; t < key_of.size(); t++) {
    if (!waits[t]) continue;
    std::vector<std::pair<uint32_t, double>> stacks;
    double total = 0, idle_total = 0;
    for (const auto& [stack, weights] : weight_of[t]) {
      stacks.emplace_back(stack, weights.first);
      total += weights.first;
    }
    std::vector<uint32_t> home = works_labelled[t] ? std::vector<uint32_t>() : home_of(p, stacks, method_frame);
    std::vector<uint32_t> idle_stacks;
    for (const auto& entry : stacks) {
      uint32_t stack = entry.first;
      if (wait_of_stack_[stack] != StackWait::kPrimitive) continue;
      RootFirst frames(p, p.stacks[stack]);
      // The main thread is the program: only rule 4a makes its waits idle.
      if (p.frames[frames[0]].label == kMainLabel) continue;
      // Between units of labelled work (4b), or at the top of the thread's loop (4c).
      size_t callers = caller_size[stack];
      bool idle = works_labelled[t] || home.size() >= callers;
      for (size_t i = 0; idle && !works_labelled[t] && i < callers; i++) idle = home[i] == method_frame[frames[i]];
      if (!idle) continue;
      idle_stacks.push_back(stack);
      idle_total += weight_of[t][stack].second;
    }
    // A thread waits for work when that is most of what it does: a thread busy more than half
    // of its time keeps its waits (they swamp nothing, and may be its work's).
    if (idle_total < kWaitingShare * total) continue;
    if (!idle_stacks.empty()) idle_stacks_of_thread_[key_of[t]].insert(idle_stacks.begin(), idle_stacks.end());
  }
}

uint64_t IdleSamples::thread_key(const Sample& s) const {
  uint64_t process = s.label_set < process_of_set_.size() ? process_of_set_[s.label_set] : 0;
  return process << 32 | s.thread_seq;
}

IdleSamples::StackWait IdleSamples::unlabelled_wait(const Sample& s) const {
  if (s.stack >= wait_of_stack_.size() || wait_of_stack_[s.stack] == StackWait::kNone) return StackWait::kNone;
  bool known_set = s.label_set < state_of_set_.size();
  VmState state = s.vm_state != kRunning || !known_set ? s.vm_state : state_of_set_[s.label_set];
  if (state != kGvlBlocked || (known_set && labelled_set_[s.label_set])) return StackWait::kNone;
  return wait_of_stack_[s.stack];
}

bool IdleSamples::idle(const Sample& s) const {
  switch (unlabelled_wait(s)) {
    case StackWait::kNone: return false;
    case StackWait::kOnAnother: return true;
    case StackWait::kPrimitive: {
      auto at = idle_stacks_of_thread_.find(thread_key(s));
      return at != idle_stacks_of_thread_.end() && at->second.count(s.stack) > 0;
    }
  }
  return false;
}

std::vector<ThreadIdleTotal> thread_idle_totals(const Profile& p) {
  IdleSamples idle(p);
  std::vector<std::string> ractor_of_set(p.label_sets.size());
  for (uint32_t i = 0; i < p.label_sets.size(); i++) {
    for (const Label& l : p.label_sets[i]) {
      if (label_value::to_s(l.key) == kRactorLabelKey) ractor_of_set[i] = label_value::to_s(l.value);
    }
  }
  std::vector<ThreadIdleTotal> out;
  ThreadIndex index;  // thread_seq -> into out
  for (const Sample& s : p.samples) {
    bool added;
    uint32_t i = index.find_or_add(s.thread_seq, added);
    if (added) out.push_back(ThreadIdleTotal{s.thread_seq, 0, 0, {}});
    if (out[i].ractor.empty() && s.label_set < ractor_of_set.size()) out[i].ractor = ractor_of_set[s.label_set];
    out[i].total_ns += s.weight_ns;
    if (idle.idle(s)) out[i].idle_ns += s.weight_ns;
  }
  std::sort(out.begin(), out.end(), [](const ThreadIdleTotal& a, const ThreadIdleTotal& b) { return a.thread_seq < b.thread_seq; });
  return out;
}

}  // namespace rperf
