#include "profile/call_tree.hh"

#include <algorithm>

namespace rperf {

CallTree::CallTree(const Profile& p, const CallTreeOptions& options) : CallTree(std::make_shared<const MethodPaths>(p, options)) {}

CallTree::CallTree(std::shared_ptr<const MethodPaths> paths) : paths_(std::move(paths)) {
  nodes_.push_back(Node{});  // the root
  recursive_.push_back(false);
  add_paths();
}

uint32_t CallTree::depth(uint32_t id) const {
  uint32_t d = 0;
  for (; id != kRoot; id = nodes_[id].parent) d++;
  return d;
}

// Along the sorted paths, each node is made once, when its call path's run starts (no
// per-frame lookup).
void CallTree::add_paths() {
  const MethodPaths& paths = *paths_;
  nodes_.reserve(paths.method_count_on_paths() + 1);
  recursive_.reserve(paths.method_count_on_paths() + 1);
  std::vector<uint32_t> path;                          // the nodes of the previous path, depth 1 first
  std::vector<uint32_t> on_path(methods().size(), 0);  // per method: how often it is on `path`
  const uint32_t* previous = nullptr;
  for (uint32_t i : paths.sorted()) {
    const uint32_t* methods = paths.begin(i);
    size_t n = paths.size(i), common = 0;
    while (common < n && common < path.size() && methods[common] == previous[common]) common++;
    for (; path.size() > common; path.pop_back()) on_path[nodes_[path.back()].method]--;
    for (size_t d = common; d < n; d++) {
      uint32_t method = methods[d];
      recursive_.push_back(on_path[method] > 0);
      on_path[method]++;
      nodes_.push_back(Node{method, path.empty() ? kRoot : path.back(), 0, 0});
      path.push_back(static_cast<uint32_t>(nodes_.size() - 1));
    }
    int64_t weight = paths.weight(i);
    nodes_[kRoot].total_ns += weight;
    for (uint32_t id : path) nodes_[id].total_ns += weight;
    nodes_[path.empty() ? kRoot : path.back()].self_ns += weight;
    previous = methods;
  }
  if (nodes_.capacity() > 2 * nodes_.size()) {  // paths shared much: give back the rest
    nodes_.shrink_to_fit();
    recursive_.shrink_to_fit();
  }
}

// Children lists, each node's contiguous in child_ids_ (grouped by parent), heaviest first.
void CallTree::link_children() const {
  std::vector<uint32_t>& offsets = children_.child_offsets;
  std::vector<uint32_t>& ids = children_.child_ids;
  // Counted at [parent + 2], summed into starts at [parent + 1], which then serve as fill
  // cursors and end up as the ends: [parent + 1] is the end of parent's list, [0] stays 0.
  offsets.assign(nodes_.size() + 2, 0);
  for (uint32_t i = 1; i < nodes_.size(); i++) offsets[nodes_[i].parent + 2]++;
  for (size_t i = 2; i < offsets.size(); i++) offsets[i] += offsets[i - 1];
  ids.resize(nodes_.size() - 1);
  for (uint32_t i = 1; i < nodes_.size(); i++) ids[offsets[nodes_[i].parent + 1]++] = i;
  offsets.pop_back();
  auto heavier = [&](uint32_t a, uint32_t b) {
    const Node &x = nodes_[a], &y = nodes_[b];
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    const Method &mx = methods()[x.method], &my = methods()[y.method];
    if (mx.label != my.label) return mx.label < my.label;
    return mx.path < my.path;
  };
  for (size_t i = 0; i < nodes_.size(); i++) {
    if (offsets[i + 1] - offsets[i] > 1) std::sort(ids.begin() + offsets[i], ids.begin() + offsets[i + 1], heavier);
  }
}

}  // namespace rperf
