// The call tree of a profile (ruby-prof's CallTree, built from sampled stacks): a node per call
// path, one child per method under each parent. A node's total is the weight of the samples
// passing through it, its self the weight of those ending in it. Recursion makes deeper nodes
// of the same method (flagged `recursive`); the tree itself never has cycles.
//
// The root is the synthetic method [root]; with separate threads its children are one
// [thread N] node per thread. Samples in a GVL/GC state end in their state's leaf method.
//
// The tree is read off the sorted method paths (method_paths.hh) and stores nothing per node:
// along the sorted paths, each path makes the nodes below its common prefix with the previous
// one, in depth-first order, so a node is (the path that made it, a depth), and its samples are
// one run of consecutive paths. Per path the tree keeps where its nodes start and that common
// prefix (with a min-tree over it to find a run's end, or an ancestor's path, in O(log paths)),
// and the running sum of the weights. Writing fresh memory costs a page fault per 4 KB, about
// 15 us on the 2-core VM the benchmarks run on: the 100k-stack benchmark profile's ~4M nodes of
// 24 bytes took ~0.5 s of faults alone, where these arrays take ~2 MB.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "profile/profile.hh"
#include "views/method_paths.hh"

namespace rperf {

class CallTree {
 public:
  static constexpr uint32_t kNoNode = 0xffffffffu;
  static constexpr uint32_t kRoot = 0;

  struct Node {
    uint32_t method = kRootMethod;
    uint32_t parent = kNoNode;
    int64_t total_ns = 0;
    int64_t self_ns = 0;
    uint32_t depth = 0;      // the root's is 0
    bool recursive = false;  // its method is also one of its ancestors'
  };

  CallTree(const Profile& p, const CallTreeOptions& options);
  explicit CallTree(std::shared_ptr<const MethodPaths> paths);

  const MethodPaths& paths() const { return *paths_; }
  const std::shared_ptr<const MethodPaths>& shared_paths() const { return paths_; }
  const std::vector<Method>& methods() const { return paths_->methods(); }
  // Node ids are 0 (the root) to size() - 1, in depth-first order (a parent before its children).
  size_t size() const { return node_count_; }
  Node node(uint32_t id) const;  // O(log paths + depth)
  // A node's children, heaviest first (ties by label, then path), into `out` (replaced).
  // O(children x log paths).
  void children(uint32_t id, std::vector<uint32_t>& out) const;
  int64_t total_ns() const { return weight_before_.back(); }
  // The memory the tree holds besides its paths.
  size_t bytes() const { return (first_node_.capacity() + min_tree_.capacity()) * sizeof(uint32_t) + weight_before_.capacity() * sizeof(int64_t); }

 private:
  // Where node `id` (not the root) was made: the rank of its path in sorted order, its depth.
  struct Place {
    uint32_t rank;
    uint32_t depth;
  };
  Place place(uint32_t id) const;
  const uint32_t* path_at(uint32_t rank) const { return paths_->begin(paths_->sorted()[rank]); }
  size_t size_at(uint32_t rank) const { return paths_->size(paths_->sorted()[rank]); }
  uint32_t common(uint32_t rank) const { return min_tree_[leaves_ + rank]; }
  // The first rank >= `rank` (`right`) or the last <= `rank` whose common prefix is shorter
  // than `depth`, else `none`.
  uint32_t nearest_shorter(uint32_t rank, uint32_t depth, bool right, uint32_t none) const;
  // The first rank >= `rank` whose common prefix is shorter than `depth` (else the path count):
  // the end of the run of paths through a node at `depth` made at a rank below.
  uint32_t run_end(uint32_t rank, uint32_t depth) const {
    const uint32_t count = static_cast<uint32_t>(paths_->count());
    return rank >= count ? count : nearest_shorter(rank, depth, true, count);
  }
  // The last rank <= `rank` whose common prefix is shorter than `depth`: where the node at
  // `depth` on the path at `rank` was made (rank 0's common prefix is 0: there is always one
  // for depth >= 1).
  uint32_t made_at(uint32_t rank, uint32_t depth) const { return nearest_shorter(rank, depth, false, 0); }
  // The node after `id`'s subtree, given its place.
  uint32_t subtree_end(Place at) const;
  uint32_t subtree_end(uint32_t id) const { return id == kRoot ? static_cast<uint32_t>(node_count_) : subtree_end(place(id)); }
  void build();

  std::shared_ptr<const MethodPaths> paths_;
  size_t node_count_ = 1;
  std::vector<uint32_t> first_node_;     // by rank: the first node its path made (the next rank's when none)
  std::vector<int64_t> weight_before_;   // by rank: the weight of the paths ranked before it; [count] is the total
  size_t leaves_ = 1;                    // a power of two >= the path count
  std::vector<uint32_t> min_tree_;       // [leaves_ + rank]: the rank's common prefix with the previous path; [i]: min of [2i], [2i + 1]
};

}  // namespace rperf
