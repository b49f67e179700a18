#include "profile/stack_tree.hh"

#include <algorithm>
#include <numeric>

#include "util/hash_index.hh"

namespace rperf {

namespace {

class TreeBuilder {
 public:
  TreeBuilder(const Profile& p, StackTree& tree) : p_(p), tree_(tree), frame_of_(p.frames.size(), kUnknown) {}

  uint32_t name(const std::string& label, const std::string& path) {
    uint32_t id = names_.intern(path, label, 0);
    if (id == tree_.frames.size()) tree_.frames.emplace_back(label, path);
    return id;
  }

  void reserve(size_t nodes) {
    tree_.parents.reserve(nodes);
    tree_.node_frames.reserve(nodes);
    nodes_.reserve(nodes);
  }

  uint32_t node(int32_t parent, uint32_t frame) {
    uint64_t hash = mix64((static_cast<uint64_t>(parent + 1) << 32) | frame);
    uint32_t id = nodes_.find(hash, [&](uint32_t n) { return tree_.parents[n] == parent && tree_.node_frames[n] == frame; });
    if (id != HashIndex::kNotFound) return id;
    id = static_cast<uint32_t>(tree_.parents.size());
    tree_.parents.push_back(parent);
    tree_.node_frames.push_back(frame);
    nodes_.insert(hash, id);
    return id;
  }

  // The leaf node of a stack already in the tree, or -1; adds nothing.
  int32_t find(FrameSpan frames) {
    if (frames.empty()) return tree_.no_frames_node;
    int32_t parent = -1;
    for (size_t i = frames.size(); i-- > 0;) {
      uint32_t f = known_frame(frames[i]);
      if (f == HashIndex::kNotFound) return -1;
      uint64_t hash = mix64((static_cast<uint64_t>(parent + 1) << 32) | f);
      uint32_t id = nodes_.find(hash, [&](uint32_t n) { return tree_.parents[n] == parent && tree_.node_frames[n] == f; });
      if (id == HashIndex::kNotFound) return -1;
      parent = static_cast<int32_t>(id);
    }
    return parent;
  }

  // The leaf node of a stack (frame ids leaf first), walked from the root.
  uint32_t leaf(FrameSpan frames) {
    if (frames.empty()) {
      if (tree_.no_frames_node < 0) tree_.no_frames_node = static_cast<int32_t>(node(-1, name(StackTree::kNoFramesLabel, "")));
      return static_cast<uint32_t>(tree_.no_frames_node);
    }
    int32_t parent = -1;
    for (size_t i = frames.size(); i-- > 0;) parent = static_cast<int32_t>(node(parent, frame(frames[i])));
    return static_cast<uint32_t>(parent);
  }

 private:
  static constexpr uint32_t kUnknown = UINT32_MAX;

  // The tree's frame of a profile frame when the tree has it, else kNotFound (nothing added).
  uint32_t known_frame(uint32_t id) const {
    if (frame_of_[id] != kUnknown) return frame_of_[id];
    return names_.find(p_.frames[id].path, p_.frames[id].label, 0);
  }

  uint32_t frame(uint32_t id) {
    uint32_t& known = frame_of_[id];
    if (known == kUnknown) known = name(p_.frames[id].label, p_.frames[id].path);
    return known;
  }

  const Profile& p_;
  StackTree& tree_;
  FrameTable names_;               // (path, label) at line 0: one entry per method-level frame
  std::vector<uint32_t> frame_of_;  // profile frame id -> tree frame id
  HashIndex nodes_;  // (parent, frame) -> node
};

}  // namespace

StackTree build_stack_tree(const Profile& p, const std::vector<Sample>& samples, size_t max_samples, bool raw) {
  StackTree tree;
  TreeBuilder builder(p, tree);
  size_t kept = samples.size();
  if (samples.size() > max_samples) {
    tree.order.resize(samples.size());
    std::iota(tree.order.begin(), tree.order.end(), 0u);
    std::stable_sort(tree.order.begin(), tree.order.end(), [&](uint32_t a, uint32_t b) { return samples[a].weight_ns > samples[b].weight_ns; });
    kept = max_samples;
  }
  tree.kept_nodes.reserve(kept);
  size_t frames = 0;  // at most one node per kept frame: sized once
  for (size_t k = 0; k < kept; k++) frames += p.stacks[samples[tree.order.empty() ? k : tree.order[k]].stack].size() + 1;
  builder.reserve(frames + 1);
  for (size_t k = 0; k < kept; k++) {
    const Sample& s = samples[tree.order.empty() ? k : tree.order[k]];
    tree.kept_nodes.push_back(builder.leaf(p.stacks[s.stack]));
  }
  if (kept < samples.size()) tree.pruned_node = static_cast<int32_t>(builder.node(-1, builder.name(StackTree::kPrunedLabel, StackTree::kPrunedPath)));
  if (raw) {
    // Raw samples repeat few stacks: each stack is walked once.
    std::vector<int64_t> node_of_stack(p.stacks.size(), -2);
    tree.raw_nodes.reserve(p.samples.size());
    for (const Sample& s : p.samples) {
      int64_t& node = node_of_stack[s.stack];
      if (node == -2) {
        int32_t found = builder.find(p.stacks[s.stack]);
        node = found >= 0 ? found : tree.pruned_node >= 0 ? tree.pruned_node : static_cast<int32_t>(builder.leaf(p.stacks[s.stack]));
      }
      tree.raw_nodes.push_back(static_cast<uint32_t>(node));
    }
  }
  return tree;
}

}  // namespace rperf
