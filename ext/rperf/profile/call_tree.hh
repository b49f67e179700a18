// The call tree of a profile (ruby-prof's CallTree, built from sampled stacks): a node per call
// path, one child per method under each parent. A node's total is the weight of the samples
// passing through it, its self the weight of those ending in it. Recursion makes deeper nodes
// of the same method (flagged `recursive`); the tree itself never has cycles.
//
// The root is the synthetic method [root]; with separate threads its children are one
// [thread N] node per thread. Samples in a GVL/GC state end in their state's leaf method.
#pragma once
#include <cstdint>
#include <vector>

#include "profile/method_stacks.hh"
#include "profile/profile.hh"

namespace rperf {

struct CallTreeOptions {
  bool separate_threads = false;
  SampleFilter filter;
};

class CallTree {
 public:
  static constexpr uint32_t kNoNode = 0xffffffffu;
  static constexpr uint32_t kRoot = 0;

  struct Node {
    uint32_t method = kRootMethod;
    uint32_t parent = kNoNode;
    uint32_t depth = 0;          // the root's is 0
    uint32_t first_child = 0;    // children are child_ids()[first_child, first_child + child_count)
    uint32_t child_count = 0;
    bool recursive = false;      // its method is also one of its ancestors'
    int64_t total_ns = 0;
    int64_t self_ns = 0;
  };

  CallTree(const Profile& p, const CallTreeOptions& options);

  const std::vector<Method>& methods() const { return methods_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(uint32_t id) const { return nodes_[id]; }
  // A node's children, heaviest first (ties by label, then path).
  const uint32_t* children_begin(uint32_t id) const { return child_ids_.data() + nodes_[id].first_child; }
  const uint32_t* children_end(uint32_t id) const { return children_begin(id) + nodes_[id].child_count; }
  int64_t total_ns() const { return nodes_[kRoot].total_ns; }

 private:
  struct MethodPaths;
  MethodPaths method_paths(const Profile& p, const CallTreeOptions& options);
  void add_paths(const MethodPaths& paths);
  void link_children();

  std::vector<Method> methods_;
  std::vector<Node> nodes_;  // in depth-first order (a parent before its children)
  std::vector<uint32_t> child_ids_;
};

}  // namespace rperf
