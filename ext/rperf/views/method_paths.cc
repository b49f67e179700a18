#include "views/method_paths.hh"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "profile/frame_methods.hh"
#include "profile/label_value.hh"
#include "profile/transform.hh"
#include "util/hash_index.hh"

namespace rperf {

MethodStacks::MethodStacks(const Profile& p) : profile_(p) {
  FrameMethods fm = frame_methods(p);
  methods_.reserve(fm.first_frame.size() + 1);
  methods_.push_back(Method{kRootLabel, std::string(), 0});
  for (size_t m = 0; m < fm.first_frame.size(); m++) {
    const Frame& f = p.frames[fm.first_frame[m]];
    methods_.push_back(Method{f.label, f.path, fm.lines[m]});
  }
  method_of_frame_.resize(p.frames.size());
  line_of_frame_.resize(p.frames.size());
  for (uint32_t i = 0; i < p.frames.size(); i++) {
    method_of_frame_[i] = fm.of_frame[i] + 1;  // after kRootMethod
    line_of_frame_[i] = p.frames[i].line ? p.frames[i].line : methods_[method_of_frame_[i]].line;
  }
  // VM-state leaves only for the states that occur: no empty entries in the views. A profile
  // recorded with vm_state_frames has the state's frame already: its method is that one.
  state_of_set_.reserve(p.label_sets.size());
  for (uint32_t i = 0; i < p.label_sets.size(); i++) state_of_set_.push_back(vm_state_of(p.label_sets[i]));
  for (const Sample& s : p.samples) {
    VmState st = state_of(s);
    if (st == kRunning || vm_state_method_[st]) continue;
    const char* label = vm_state_names(st).frame_label;
    for (uint32_t i = 0; i < p.frames.size() && !vm_state_method_[st]; i++) {
      if (p.frames[i].path == kVmFramePath && p.frames[i].label == label) vm_state_method_[st] = method_of_frame_[i];
    }
    if (vm_state_method_[st]) continue;
    vm_state_method_[st] = static_cast<uint32_t>(methods_.size());
    methods_.push_back(Method{label, kVmFramePath, 0});
  }
}

template <typename Visit>
void MethodStacks::for_each_method(const Sample& s, Visit&& visit) const {
  FrameSpan frames = profile_.stacks[s.stack];
  for (size_t i = frames.size(); i-- > 0;) visit(method_of_frame_[frames[i]], line_of_frame_[frames[i]]);
  if (VmState st = state_of(s); st != kRunning) {
    uint32_t vm = vm_state_method_[st];
    if (frames.size() == 0 || method_of_frame_[frames[0]] != vm) visit(vm, 0);
  }
}

void MethodStacks::stack_of(const Sample& s, std::vector<CallSite>& out) const {
  out.clear();
  for_each_method(s, [&](uint32_t method, int32_t line) { out.push_back(CallSite{method, line}); });
}

void MethodStacks::append_methods(const Sample& s, std::vector<uint32_t>& out) const {
  for_each_method(s, [&](uint32_t method, int32_t) { out.push_back(method); });
}

void MethodStacks::append_methods_leaf_first(const Sample& s, std::vector<uint32_t>& out) const {
  for (uint32_t frame : profile_.stacks[s.stack]) out.push_back(method_of_frame_[frame]);
}

MethodPaths::MethodPaths(const Profile& p, const CallTreeOptions& options) {
  collect(p, options);
  sort();
}

void MethodPaths::collect(const Profile& p, const CallTreeOptions& options) {
  MethodStacks stacks(p);
  methods_ = stacks.take_methods();  // append_methods needs only its frame mapping from here on
  std::unordered_map<uint32_t, uint32_t> thread_methods;  // thread_seq -> its [thread N] method
  // Sized once: growing these copies and faults in hundreds of MB on large profiles.
  size_t upper_bound = 0;
  for (const Sample& s : p.samples) upper_bound += p.stacks[s.stack].size() + 2;  // + thread and VM-state methods
  methods_on_paths_.reserve(upper_bound);
  offsets_.reserve(p.samples.size() + 1);
  weights_.reserve(p.samples.size());
  // One path per distinct (stack, thread when separate, VM state): the samples that share them
  // share the path, their weights summed. A raw profile's 500,000 samples of 200 stacks made
  // 500,000 paths (CallTree.build 0.65 s of a served Viewer payload's 1.5 s).
  // A path's key, by path id (the index of its weight); looked up in a flat table (a node-based
  // std::unordered_map's allocation and freeing of 100,000 nodes was a tenth of a call tree of
  // the benchmark profile).
  struct Key {
    uint32_t stack, thread;
    VmState state;
    bool operator==(const Key& o) const { return stack == o.stack && thread == o.thread && state == o.state; }
  };
  std::vector<Key> keys;
  keys.reserve(p.samples.size());
  HashIndex path_of;
  path_of.reserve(p.samples.size());
  for (const Sample& s : p.samples) {
    int64_t weight;
    if (!options.filter.keeps(p, s, weight)) continue;
    const Key key{s.stack, options.separate_threads ? s.thread_seq : 0, options.inverted ? kRunning : stacks.state_of(s)};
    const uint64_t hash = mix64((static_cast<uint64_t>(key.stack) << 32 | key.thread) ^ (static_cast<uint64_t>(key.state) << 61));
    const uint32_t known = path_of.find(hash, [&](uint32_t id) { return keys[id] == key; });
    if (known != HashIndex::kNotFound) {
      weights_[known] += weight;
      total_ns_ += weight;
      continue;
    }
    path_of.insert(hash, static_cast<uint32_t>(keys.size()));
    keys.push_back(key);
    if (options.separate_threads) {
      auto found = thread_methods.find(s.thread_seq);
      if (found == thread_methods.end()) {
        found = thread_methods.emplace(s.thread_seq, static_cast<uint32_t>(methods_.size())).first;
        methods_.push_back(Method{"[thread " + std::to_string(s.thread_seq) + "]", std::string(), 0});
      }
      methods_on_paths_.push_back(found->second);
    }
    if (options.inverted) stacks.append_methods_leaf_first(s, methods_on_paths_);
    else stacks.append_methods(s, methods_on_paths_);
    offsets_.push_back(methods_on_paths_.size());
    weights_.push_back(weight);
    total_ns_ += weight;
  }
}

void MethodPaths::sort() {
  // The first two methods, packed into one key, decide most comparisons without reading the
  // paths (0: no method there).
  std::vector<std::pair<uint64_t, uint32_t>> order(count());
  for (uint32_t i = 0; i < order.size(); i++) {
    uint64_t first = size(i) > 0 ? begin(i)[0] + 1ull : 0, second = size(i) > 1 ? begin(i)[1] + 1ull : 0;
    order[i] = {(first << 32) | second, i};
  }
  std::sort(order.begin(), order.end(), [&](const std::pair<uint64_t, uint32_t>& a, const std::pair<uint64_t, uint32_t>& b) {
    if (a.first != b.first) return a.first < b.first;
    return std::lexicographical_compare(begin(a.second), begin(a.second) + size(a.second), begin(b.second), begin(b.second) + size(b.second));
  });
  sorted_.resize(order.size());
  for (size_t k = 0; k < order.size(); k++) sorted_[k] = order[k].second;
}

}  // namespace rperf
