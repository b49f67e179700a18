#include "profile/method_stacks.hh"

#include <algorithm>

#include "profile/label_value.hh"
#include "profile/transform.hh"

namespace rperf {

MethodStacks::MethodStacks(const Profile& p) : profile_(p) {
  FrameTable index;  // (path, label) with line 0: one entry per method, same ids as methods_
  auto intern = [&](const std::string& path, const std::string& label) {
    uint32_t id = index.intern(path, label, 0);
    if (id == methods_.size()) methods_.push_back(Method{label, path, 0});
    return id;
  };
  intern(std::string(), kRootLabel);
  method_of_frame_.resize(p.frames.size());
  std::vector<int32_t> lowest_line;
  for (uint32_t i = 0; i < p.frames.size(); i++) {
    const Frame& f = p.frames[i];
    uint32_t m = intern(f.path, f.label);
    method_of_frame_[i] = m;
    lowest_line.resize(methods_.size(), 0);
    if (f.line > 0 && (lowest_line[m] == 0 || f.line < lowest_line[m])) lowest_line[m] = f.line;
    if (f.start_line > 0) methods_[m].line = f.start_line;
  }
  lowest_line.resize(methods_.size(), 0);
  for (size_t m = 0; m < methods_.size(); m++) {
    if (methods_[m].line == 0) methods_[m].line = lowest_line[m];
  }
  line_of_frame_.resize(p.frames.size());
  for (uint32_t i = 0; i < p.frames.size(); i++) line_of_frame_[i] = p.frames[i].line ? p.frames[i].line : methods_[method_of_frame_[i]].line;
  // VM-state leaves only for the states that occur: no empty entries in the views.
  state_of_set_.reserve(p.label_sets.size());
  for (uint32_t i = 0; i < p.label_sets.size(); i++) state_of_set_.push_back(vm_state_of(p.label_sets[i]));
  for (const Sample& s : p.samples) {
    VmState st = state_of(s);
    if (st != kRunning && !vm_state_method_[st]) vm_state_method_[st] = intern(kVmFramePath, vm_state_names(st).frame_label);
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

}  // namespace rperf
