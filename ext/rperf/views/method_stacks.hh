// A profile's samples as stacks of methods: what the call tree, the method table and the
// callgrind encoder walk. A method is (path, label) whatever the line, as ruby-prof's MethodInfo;
// a sample in a GVL/GC state gets its state as a leaf method ([GVL blocked], ...) unless its
// stack already ends in that synthetic frame (profiles recorded with vm_state_frames). Its state
// is the recorded one, else the one its labels name (as timeline_bins reads it).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "profile/idle_wait.hh"
#include "profile/profile.hh"
#include "profile/sample_filter.hh"

namespace rperf {

struct Method {
  std::string label;
  std::string path;
  int32_t line = 0;  // where it starts: the definition's first line, else the lowest sampled line, else 0
};

// One frame of a method stack: the method and the line it was at (when unknown, as in
// method-level profiles, the method's own line).
struct CallSite {
  uint32_t method;
  int32_t line;
};

// The synthetic method above every stack's outermost frame (ruby-prof's "[global]").
constexpr uint32_t kRootMethod = 0;
constexpr const char* kRootLabel = "[root]";

class MethodStacks {
 public:
  explicit MethodStacks(const Profile& p);

  // Methods by id; kRootMethod first.
  const std::vector<Method>& methods() const { return methods_; }
  std::vector<Method> take_methods() { return std::move(methods_); }
  // `s`'s stack as call sites, root first (the root method not included), into `out`.
  void stack_of(const Sample& s, std::vector<CallSite>& out) const;
  // Its methods only, appended to `out`.
  void append_methods(const Sample& s, std::vector<uint32_t>& out) const;
  // Its frames' methods leaf first, without the VM state's (the bottom-up tree's paths).
  void append_methods_leaf_first(const Sample& s, std::vector<uint32_t>& out) const;
  // Its VM state: the recorded one, else the one its labels name (vm_state_of).
  VmState state_of(const Sample& s) const {
    if (s.vm_state != kRunning || s.label_set >= state_of_set_.size()) return s.vm_state;
    return state_of_set_[s.label_set];
  }

 private:
  // Root first: (method, line) of each frame, then the VM state's leaf method (line 0) unless
  // the stack already ends in it.
  template <typename Visit>
  void for_each_method(const Sample& s, Visit&& visit) const;
  const Profile& profile_;
  std::vector<Method> methods_;
  std::vector<uint32_t> method_of_frame_;
  std::vector<int32_t> line_of_frame_;  // the frame's line, else its method's
  uint32_t vm_state_method_[kVmStateCount] = {};
  // Per label set: the state its labels name (vm_state_of), for samples with none recorded.
  std::vector<VmState> state_of_set_;
};

}  // namespace rperf
