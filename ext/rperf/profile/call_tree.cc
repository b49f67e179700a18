#include "profile/call_tree.hh"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace rperf {

// Each kept sample's methods, root first (its [thread N] method first when threads are
// separate), in one array: the tree is built from them sorted, so that every call path is one
// contiguous run and each node is made once, when its run starts (no per-frame lookup).
struct CallTree::MethodPaths {
  std::vector<uint32_t> methods;
  std::vector<size_t> offsets{0};  // path i is methods[offsets[i], offsets[i + 1])
  std::vector<int64_t> weights;
  const uint32_t* begin(uint32_t i) const { return methods.data() + offsets[i]; }
  size_t size(uint32_t i) const { return offsets[i + 1] - offsets[i]; }
};

CallTree::CallTree(const Profile& p, const CallTreeOptions& options) {
  nodes_.push_back(Node{});  // the root
  recursive_.push_back(false);
  add_paths(method_paths(p, options));
  link_children();
}

uint32_t CallTree::depth(uint32_t id) const {
  uint32_t d = 0;
  for (; id != kRoot; id = nodes_[id].parent) d++;
  return d;
}

CallTree::MethodPaths CallTree::method_paths(const Profile& p, const CallTreeOptions& options) {
  MethodStacks stacks(p);
  methods_ = stacks.take_methods();  // stack_of needs only its frame mapping from here on
  std::unordered_map<uint32_t, uint32_t> thread_methods;  // thread_seq -> its [thread N] method
  MethodPaths paths;
  // Sized once: growing these (and the nodes, at most one per method here) copies and
  // faults in hundreds of MB on large profiles.
  size_t upper_bound = 0;
  for (const Sample& s : p.samples) upper_bound += p.stacks[s.stack].size() + 2;  // + thread and VM-state methods
  paths.methods.reserve(upper_bound);
  paths.offsets.reserve(p.samples.size() + 1);
  paths.weights.reserve(p.samples.size());
  std::vector<CallSite> sites;
  for (const Sample& s : p.samples) {
    if (!options.filter.keeps(p, s)) continue;
    if (options.separate_threads) {
      auto found = thread_methods.find(s.thread_seq);
      if (found == thread_methods.end()) {
        found = thread_methods.emplace(s.thread_seq, static_cast<uint32_t>(methods_.size())).first;
        methods_.push_back(Method{"[thread " + std::to_string(s.thread_seq) + "]", std::string(), 0});
      }
      paths.methods.push_back(found->second);
    }
    stacks.stack_of(s, sites);
    for (const CallSite& site : sites) paths.methods.push_back(site.method);
    paths.offsets.push_back(paths.methods.size());
    paths.weights.push_back(s.weight_ns);
  }
  return paths;
}

void CallTree::add_paths(const MethodPaths& paths) {
  // Sorted lexicographically (a prefix first). The first two methods, packed into one key,
  // decide most comparisons without reading the paths (0: no method there).
  std::vector<std::pair<uint64_t, uint32_t>> order(paths.weights.size());
  for (uint32_t i = 0; i < order.size(); i++) {
    uint64_t first = paths.size(i) > 0 ? paths.begin(i)[0] + 1ull : 0, second = paths.size(i) > 1 ? paths.begin(i)[1] + 1ull : 0;
    order[i] = {(first << 32) | second, i};
  }
  std::sort(order.begin(), order.end(), [&](const std::pair<uint64_t, uint32_t>& a, const std::pair<uint64_t, uint32_t>& b) {
    if (a.first != b.first) return a.first < b.first;
    return std::lexicographical_compare(paths.begin(a.second), paths.begin(a.second) + paths.size(a.second), paths.begin(b.second),
                                        paths.begin(b.second) + paths.size(b.second));
  });

  nodes_.reserve(paths.methods.size() + 1);
  recursive_.reserve(paths.methods.size() + 1);
  std::vector<uint32_t> path;                          // the nodes of the previous path, depth 1 first
  std::vector<uint32_t> on_path(methods_.size(), 0);  // per method: how often it is on `path`
  const uint32_t* previous = nullptr;
  for (const auto& [key, i] : order) {
    (void)key;
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
    int64_t weight = paths.weights[i];
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
void CallTree::link_children() {
  // Counted at [parent + 2], summed into starts at [parent + 1], which then serve as fill
  // cursors and end up as the ends: [parent + 1] is the end of parent's list, [0] stays 0.
  child_offsets_.assign(nodes_.size() + 2, 0);
  for (uint32_t i = 1; i < nodes_.size(); i++) child_offsets_[nodes_[i].parent + 2]++;
  for (size_t i = 2; i < child_offsets_.size(); i++) child_offsets_[i] += child_offsets_[i - 1];
  child_ids_.resize(nodes_.size() - 1);
  for (uint32_t i = 1; i < nodes_.size(); i++) child_ids_[child_offsets_[nodes_[i].parent + 1]++] = i;
  child_offsets_.pop_back();
  auto heavier = [&](uint32_t a, uint32_t b) {
    const Node &x = nodes_[a], &y = nodes_[b];
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    const Method &mx = methods_[x.method], &my = methods_[y.method];
    if (mx.label != my.label) return mx.label < my.label;
    return mx.path < my.path;
  };
  for (size_t i = 0; i < nodes_.size(); i++) {
    if (child_offsets_[i + 1] - child_offsets_[i] > 1) std::sort(child_ids_.begin() + child_offsets_[i], child_ids_.begin() + child_offsets_[i + 1], heavier);
  }
}

}  // namespace rperf
