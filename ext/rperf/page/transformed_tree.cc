#include "page/transformed_tree.hh"

#include <unordered_map>

#include "profile/frame_category.hh"
#include "profile/stack_tree.hh"

namespace rperf::page {

TransformedTree transform_tree(const PageRows& rows, const std::vector<StackTransform>& list) {
  // The tree's frames and each node's stack (leaf first) in a profile of their own.
  Profile p;
  const std::vector<std::string>& labels = rows.frame_labels();
  std::vector<uint32_t> frame_id(labels.size());
  std::vector<int32_t> line_of;  // per profile frame
  for (uint32_t f = 0; f < labels.size(); f++) {
    frame_id[f] = p.frames.intern(rows.frame_path(f), labels[f], 0);
    if (line_of.size() <= frame_id[f]) line_of.resize(frame_id[f] + 1, rows.frame_line(f));
  }
  const size_t nodes = rows.node_count();
  std::vector<uint32_t> stack_of(nodes);
  std::vector<uint32_t> stack;
  for (uint32_t n = 0; n < nodes; n++) {
    stack.clear();
    for (int32_t at = static_cast<int32_t>(n); at >= 0; at = rows.parent(static_cast<uint32_t>(at))) {
      uint32_t f = rows.frame_of(static_cast<uint32_t>(at));
      stack.push_back(f < frame_id.size() ? frame_id[f] : p.frames.intern("", "?", 0));
    }
    stack_of[n] = p.stacks.intern(stack);
  }
  const std::vector<uint32_t> new_stack = transform_stack_table(p, list);

  TransformedTree out;
  // Each new stack once: its node in the new tree, made root first.
  std::unordered_map<uint64_t, uint32_t> child;  // (parent + 1) << 32 | frame -> node
  auto node = [&](int32_t parent, uint32_t frame) {
    uint64_t key = (static_cast<uint64_t>(parent + 1) << 32) | frame;
    auto [it, made] = child.try_emplace(key, static_cast<uint32_t>(out.parents.size()));
    if (made) {
      out.parents.push_back(parent);
      out.node_frames.push_back(frame);
    }
    return it->second;
  };
  constexpr int32_t kNone = -1;
  std::vector<int32_t> node_of_stack(p.stacks.size(), kNone);
  out.node_map.assign(nodes, kNone);
  for (uint32_t n = 0; n < nodes; n++) {
    uint32_t s = new_stack[stack_of[n]];
    if (s == kStackGone) continue;
    if (node_of_stack[s] == kNone) {
      FrameSpan frames = p.stacks[s];
      int32_t at = kNone;
      if (frames.empty()) at = static_cast<int32_t>(node(kNone, p.frames.intern("", StackTree::kNoFramesLabel, 0)));
      for (size_t i = frames.size(); i-- > 0;) at = static_cast<int32_t>(node(at, frames[i]));
      node_of_stack[s] = at;
    }
    out.node_map[n] = node_of_stack[s];
  }
  for (uint32_t f = 0; f < p.frames.size(); f++) {
    const Frame& frame = p.frames[f];
    out.frames.emplace_back(frame.label, frame.path);
    out.frame_lines.push_back(f < line_of.size() ? line_of[f] : 0);
    out.frame_categories.push_back(static_cast<uint8_t>(frame_category(frame.label, frame.path)));
  }
  return out;
}

}  // namespace rperf::page
