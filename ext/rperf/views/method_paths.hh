// A profile's samples as stacks of methods: what the call tree, the method table and the
// callgrind encoder walk. A method is (path, label) whatever the line, as ruby-prof's MethodInfo;
// a sample in a GVL/GC state gets its state as a leaf method ([GVL blocked], ...) unless its
// stack already ends in that synthetic frame (profiles recorded with vm_state_frames). Its state
// is the recorded one, else the one its labels name (as timeline_bins reads it).
//
// MethodPaths: a profile's kept samples as such paths of method ids, root first, sorted (one
// per distinct stack, thread when separate and VM state, the samples' weights summed): what
// both the call tree and the method table are built from. The method table reads the paths
// directly, so a table-only view never materialises the tree (on the 100k-stack benchmark
// profile the tree's ~4M nodes were most of the table's cost).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

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

struct CallTreeOptions {
  bool separate_threads = false;
  // Bottom-up: each stack leaf first, so the roots are the functions that were running and each
  // child is a caller of the one above. A VM state is no frame there (it would sit at the
  // wrong end): its time stays with the function it was in.
  bool inverted = false;
  SampleFilter filter;
};

class MethodPaths {
 public:
  MethodPaths(const Profile& p, const CallTreeOptions& options);

  // Methods by id; kRootMethod first, then the profile's, then one [thread N] per thread
  // when threads are separate.
  const std::vector<Method>& methods() const { return methods_; }
  size_t count() const { return weights_.size(); }
  // Path i's methods (its [thread N] method first when threads are separate).
  const uint32_t* begin(uint32_t i) const { return methods_on_paths_.data() + offsets_[i]; }
  size_t size(uint32_t i) const { return offsets_[i + 1] - offsets_[i]; }
  int64_t weight(uint32_t i) const { return weights_[i]; }
  // Path ids in lexicographic order of their methods (a prefix first): every call path is one
  // contiguous run, and the tree's depth-first node order is the order of first appearance.
  const std::vector<uint32_t>& sorted() const { return sorted_; }
  int64_t total_ns() const { return total_ns_; }
  size_t method_count_on_paths() const { return methods_on_paths_.size(); }

 private:
  void collect(const Profile& p, const CallTreeOptions& options);
  void sort();

  std::vector<Method> methods_;
  std::vector<uint32_t> methods_on_paths_;
  std::vector<size_t> offsets_{0};  // path i is methods_on_paths_[offsets_[i], offsets_[i + 1])
  std::vector<int64_t> weights_;
  std::vector<uint32_t> sorted_;
  int64_t total_ns_ = 0;
};

}  // namespace rperf
