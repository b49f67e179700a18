// The call tree of a profile (ruby-prof's CallTree, built from sampled stacks): a node per call
// path, one child per method under each parent. A node's total is the weight of the samples
// passing through it, its self the weight of those ending in it. Recursion makes deeper nodes
// of the same method (flagged `recursive`); the tree itself never has cycles.
//
// The root is the synthetic method [root]; with separate threads its children are one
// [thread N] node per thread. Samples in a GVL/GC state end in their state's leaf method.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "profile/method_paths.hh"
#include "profile/profile.hh"

namespace rperf {

class CallTree {
 public:
  static constexpr uint32_t kNoNode = 0xffffffffu;
  static constexpr uint32_t kRoot = 0;

  // 24 bytes: large profiles make millions (their memory, written once, is most of the cost).
  struct Node {
    uint32_t method = kRootMethod;
    uint32_t parent = kNoNode;
    int64_t total_ns = 0;
    int64_t self_ns = 0;
  };

  CallTree(const Profile& p, const CallTreeOptions& options);
  explicit CallTree(std::shared_ptr<const MethodPaths> paths);

  const MethodPaths& paths() const { return *paths_; }
  const std::vector<Method>& methods() const { return paths_->methods(); }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(uint32_t id) const { return nodes_[id]; }
  // Its method is also one of its ancestors'.
  bool recursive(uint32_t id) const { return recursive_[id]; }
  uint32_t depth(uint32_t id) const;  // the root's is 0
  // A node's children, heaviest first (ties by label, then path).
  const uint32_t* children_begin(uint32_t id) const { return child_ids_.data() + child_offsets_[id]; }
  const uint32_t* children_end(uint32_t id) const { return child_ids_.data() + child_offsets_[id + 1]; }
  size_t child_count(uint32_t id) const { return child_offsets_[id + 1] - child_offsets_[id]; }
  int64_t total_ns() const { return nodes_[kRoot].total_ns; }

 private:
  void add_paths();
  void link_children();

  std::shared_ptr<const MethodPaths> paths_;
  std::vector<Node> nodes_;  // in depth-first order (a parent before its children)
  std::vector<bool> recursive_;
  std::vector<uint32_t> child_offsets_;  // node i's children are child_ids_[child_offsets_[i], child_offsets_[i + 1])
  std::vector<uint32_t> child_ids_;
};

}  // namespace rperf
