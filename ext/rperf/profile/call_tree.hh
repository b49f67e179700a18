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
#include <mutex>
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
  bool recursive(uint32_t id) const { return recursive_[id] != 0; }
  uint32_t depth(uint32_t id) const;  // the root's is 0
  // A node's children, heaviest first (ties by label, then path). Linked on first use: a tree
  // asked only for its size and totals skips it (0.08-0.15 s of the ~0.6 s CPU that the
  // 100k-stack benchmark profile's tree takes).
  const uint32_t* children_begin(uint32_t id) const { return linked().child_ids.data() + linked().child_offsets[id]; }
  const uint32_t* children_end(uint32_t id) const { return linked().child_ids.data() + linked().child_offsets[id + 1]; }
  size_t child_count(uint32_t id) const { return linked().child_offsets[id + 1] - linked().child_offsets[id]; }
  int64_t total_ns() const { return nodes_[kRoot].total_ns; }

 private:
  struct Children {
    std::vector<uint32_t> child_offsets;  // node i's children are child_ids[child_offsets[i], child_offsets[i + 1])
    std::vector<uint32_t> child_ids;
  };
  void add_paths();
  const Children& linked() const {
    std::call_once(children_linked_, [this] { link_children(); });
    return children_;
  }
  void link_children() const;

  std::shared_ptr<const MethodPaths> paths_;
  std::vector<Node> nodes_;  // in depth-first order (a parent before its children)
  std::vector<uint8_t> recursive_;  // bytes, not std::vector<bool>: millions of appends of a bit each cost more
  mutable std::once_flag children_linked_;
  mutable Children children_;
};

}  // namespace rperf
