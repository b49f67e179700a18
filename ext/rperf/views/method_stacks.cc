#include "views/method_stacks.hh"

#include <algorithm>

#include "profile/frame_methods.hh"
#include "profile/label_value.hh"
#include "profile/transform.hh"

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

}  // namespace rperf
