// A profile's kept samples as paths of method ids, root first, sorted (one per distinct stack,
// thread when separate and VM state, the samples' weights summed): what both the call tree
// and the method table are built from. The method table reads the paths directly, so a
// table-only view never materialises the tree (on the 100k-stack benchmark profile the tree's
// ~4M nodes were most of the table's cost).
#pragma once
#include <cstdint>
#include <vector>

#include "profile/profile.hh"
#include "views/method_stacks.hh"

namespace rperf {

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
