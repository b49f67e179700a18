#include "views/call_tree.hh"

#include <algorithm>
#include <new>
#include <utility>

namespace rperf {

CallTree::CallTree(const Profile& p, const CallTreeOptions& options) : CallTree(std::make_shared<const MethodPaths>(p, options)) {}

CallTree::CallTree(std::shared_ptr<const MethodPaths> paths) : paths_(std::move(paths)) { build(); }

// One pass along the sorted paths: each path's common prefix with the previous one, where its
// nodes start, the weights before it.
void CallTree::build() {
  const MethodPaths& paths = *paths_;
  const size_t count = paths.count();
  while (leaves_ < count) leaves_ *= 2;
  min_tree_.assign(2 * leaves_, UINT32_MAX);  // leaves past the last path never end a run
  first_node_.resize(count + 1);
  weight_before_.resize(count + 1);
  uint64_t next = 1;  // node 0 is the root
  int64_t weight = 0;
  const uint32_t* previous = nullptr;
  size_t previous_size = 0;
  for (uint32_t rank = 0; rank < count; rank++) {
    const uint32_t* path = path_at(rank);
    size_t n = size_at(rank), common = 0;
    while (common < n && common < previous_size && path[common] == previous[common]) common++;
    min_tree_[leaves_ + rank] = static_cast<uint32_t>(common);
    first_node_[rank] = static_cast<uint32_t>(next);
    next += n - common;
    if (next >= kNoNode) throw std::bad_alloc();  // node ids are 32-bit
    weight_before_[rank] = weight;
    weight += paths.weight(paths.sorted()[rank]);
    previous = path;
    previous_size = n;
  }
  first_node_[count] = static_cast<uint32_t>(next);
  weight_before_[count] = weight;
  node_count_ = next;
  for (size_t i = leaves_ - 1; i >= 1; i--) min_tree_[i] = std::min(min_tree_[2 * i], min_tree_[2 * i + 1]);
}

// From the rank's leaf up, then over to the next subtree towards `right` (or left), to the
// first one holding a value below `depth`; down into it, nearest side first. None: `none`.
uint32_t CallTree::nearest_shorter(uint32_t rank, uint32_t depth, bool right, uint32_t none) const {
  size_t i = leaves_ + rank;
  for (;;) {
    if (min_tree_[i] < depth) {
      while (i < leaves_) {
        i = 2 * i + (right ? 0 : 1);
        if (min_tree_[i] >= depth) i = right ? i + 1 : i - 1;
      }
      return static_cast<uint32_t>(i - leaves_);
    }
    while (i > 1 && (i & 1) == (right ? 1 : 0)) i >>= 1;  // the far child that way (or the top): up
    if (i <= 1) return none;
    i = right ? i + 1 : i - 1;
  }
}

CallTree::Place CallTree::place(uint32_t id) const {
  auto first = first_node_.begin(), last = first_node_.begin() + static_cast<std::ptrdiff_t>(paths_->count());
  uint32_t rank = static_cast<uint32_t>(std::upper_bound(first, last, id) - first - 1);
  return {rank, common(rank) + 1 + (id - first_node_[rank])};
}

uint32_t CallTree::subtree_end(Place at) const { return first_node_[run_end(at.rank + 1, at.depth)]; }

CallTree::Node CallTree::node(uint32_t id) const {
  Node n;
  uint32_t rank = 0, depth = 0, end = static_cast<uint32_t>(paths_->count());
  if (id != kRoot) {
    Place at = place(id);
    rank = at.rank;
    depth = at.depth;
    const uint32_t* path = path_at(rank);
    n.method = path[depth - 1];
    n.depth = depth;
    n.recursive = std::find(path, path + depth - 1, n.method) != path + depth - 1;
    if (depth == 1) {
      n.parent = kRoot;
    } else if (id > first_node_[rank]) {
      n.parent = id - 1;  // made along the same path, just before
    } else {  // the first node its path made: its parent is on the common prefix, made further up
      uint32_t up = made_at(rank - 1, depth - 1);
      n.parent = first_node_[up] + (depth - 1 - common(up) - 1);
    }
    end = run_end(rank + 1, depth);
  }
  n.total_ns = weight_before_[end] - weight_before_[rank];
  // The paths ending in the node (equal ones) come first in its run.
  for (uint32_t r = rank; r < end && size_at(r) == depth; r++) n.self_ns += weight_before_[r + 1] - weight_before_[r];
  return n;
}

void CallTree::children(uint32_t id, std::vector<uint32_t>& out) const {
  struct Child {
    int64_t total_ns;
    uint32_t method;
    uint32_t id;
  };
  std::vector<Child> found;
  for (uint32_t c = id + 1, end = subtree_end(id); c < end;) {
    Place at = place(c);
    uint32_t run = run_end(at.rank + 1, at.depth);
    found.push_back(Child{weight_before_[run] - weight_before_[at.rank], path_at(at.rank)[at.depth - 1], c});
    c = first_node_[run];
  }
  const std::vector<Method>& m = methods();
  std::sort(found.begin(), found.end(), [&](const Child& x, const Child& y) {
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    const Method &mx = m[x.method], &my = m[y.method];
    if (mx.label != my.label) return mx.label < my.label;
    return mx.path < my.path;
  });
  out.resize(found.size());
  for (size_t i = 0; i < found.size(); i++) out[i] = found[i].id;
}

}  // namespace rperf
