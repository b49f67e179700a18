#include "page/page_rows.hh"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "profile/frame_category.hh"

namespace rperf::page {

namespace {

// Each parent before its child (-1: a root).
bool is_prefix_tree(const std::vector<int32_t>& parents) {
  for (size_t i = 0; i < parents.size(); i++) {
    if (parents[i] < -1 || parents[i] >= static_cast<int64_t>(i)) return false;
  }
  return true;
}

// "[key: value]" per key of `keys` the label set has (none without a set), in the keys' order.
std::vector<std::string> tag_path(const LabelTexts* set, const std::vector<std::string>& keys) {
  std::vector<std::string> path;
  for (size_t k = 0; set && k < keys.size(); k++) {
    auto pair = std::find_if(set->begin(), set->end(), [&](const auto& kv) { return kv.first == keys[k]; });
    if (pair != set->end()) path.push_back("[" + keys[k] + ": " + pair->second + "]");
  }
  return path;
}

// Tag frames made along paths, siblings of one name merged: the flame graph's tag frames.
class TagFrameMaker {
 public:
  explicit TagFrameMaker(std::vector<TagFrame>& frames) : frames_(frames) {}
  // Adds value to each frame of `path` from node's anchor down, making the ones missing; the
  // last one (-1: an empty path).
  int32_t add(uint32_t node, const std::vector<std::string>& path, int64_t value) {
    int32_t at = -1;
    for (const std::string& name : path) {
      auto [known, made] = index_.try_emplace(Key{node, at, name}, static_cast<int32_t>(frames_.size()));
      if (made) frames_.push_back(TagFrame{at, node, name, 0});
      at = known->second;
      frames_[at].value += value;
    }
    return at;
  }

 private:
  using Key = std::tuple<uint32_t, int32_t, std::string>;  // (node, parent, name)
  std::vector<TagFrame>& frames_;
  std::map<Key, int32_t> index_;
};

}  // namespace

bool PageRows::set_tree(std::vector<int32_t> parents, std::vector<uint32_t> frames) {
  const bool fits = frames.size() == parents.size() && is_prefix_tree(parents);
  for (Rows& r : rows_) r = Rows();  // rows of another tree
  parents_ = fits ? std::move(parents) : std::vector<int32_t>();
  frames_ = fits ? std::move(frames) : std::vector<uint32_t>();
  return fits;
}

void PageRows::set_label_sets(std::vector<LabelTexts> sets) {
  label_sets_ = std::move(sets);
  states_.clear();
  for (const LabelTexts& set : label_sets_) states_.push_back(timeline_state(set));
}

bool PageRows::set_rows(RowKind kind, Rows rows) {
  const size_t n = rows.size();
  auto fits = [&](const auto& column) { return column.empty() || column.size() == n; };  // the optional ones
  const bool columns_fit = rows.thread_seq.size() == n && rows.label_set.size() == n && rows.weight.size() == n && fits(rows.time_ns) &&
                           fits(rows.idle) && fits(rows.class_index) && fits(rows.retained) && fits(rows.line_node);
  const bool nodes_fit = std::all_of(rows.node.begin(), rows.node.end(), [&](uint32_t node) { return node < parents_.size(); }) &&
                         std::all_of(rows.line_node.begin(), rows.line_node.end(),
                                     [&](int32_t node) { return node >= -1 && node < static_cast<int64_t>(line_parents_.size()); });
  rows_[static_cast<int>(kind)] = columns_fit && nodes_fit ? std::move(rows) : Rows();
  return columns_fit && nodes_fit;
}

bool PageRows::set_base_nodes(std::vector<int32_t> node_map) {
  const bool fits = std::all_of(node_map.begin(), node_map.end(), [&](int32_t node) { return node >= -1 && node < static_cast<int64_t>(parents_.size()); });
  base_nodes_ = fits ? std::move(node_map) : std::vector<int32_t>();
  return fits;
}

bool PageRows::move_rows(const PageRows& base, RowKind kind) {
  if (base.node_count() != base_nodes_.size()) {
    rows_[static_cast<int>(kind)] = Rows();
    return false;
  }
  const Rows& from = base.rows(kind);
  Rows to;
  // The optional columns stay absent where the base's are.
  auto keep = [](const auto& column, auto& into, size_t i) {
    if (!column.empty()) into.push_back(column[i]);
  };
  for (size_t i = 0; i < from.size(); i++) {
    const int32_t node = base_nodes_[from.node[i]];
    if (node < 0) continue;
    to.node.push_back(static_cast<uint32_t>(node));
    to.thread_seq.push_back(from.thread_seq[i]);
    to.label_set.push_back(from.label_set[i]);
    to.weight.push_back(from.weight[i]);
    keep(from.time_ns, to.time_ns, i);
    keep(from.idle, to.idle, i);
    keep(from.class_index, to.class_index, i);
    keep(from.retained, to.retained, i);
    keep(from.line_node, to.line_node, i);
  }
  return set_rows(kind, std::move(to));
}

bool PageRows::set_line_tree(std::vector<int32_t> parents, std::vector<uint32_t> frames, std::vector<int32_t> lines) {
  const bool fits = frames.size() == parents.size() && lines.size() == parents.size() && is_prefix_tree(parents) &&
                    std::all_of(frames.begin(), frames.end(), [&](uint32_t f) { return f < frame_labels_.size(); });
  line_parents_ = fits ? std::move(parents) : std::vector<int32_t>();
  line_frames_ = fits ? std::move(frames) : std::vector<uint32_t>();
  line_lines_ = fits ? std::move(lines) : std::vector<int32_t>();
  return fits;
}

SourceLines PageRows::source_lines(RowKind kind, const KeptRows& kept, const std::string& path) const {
  // The kept rows as a profile at line level: each line node a frame, each row a sample.
  Profile p;
  p.has_lines = !line_parents_.empty();
  const Rows& r = rows(kind);
  std::vector<uint32_t> frame_of(line_parents_.size());
  for (size_t n = 0; n < line_parents_.size(); n++) frame_of[n] = p.frames.intern(frame_path(line_frames_[n]), frame_labels_[line_frames_[n]], line_lines_[n]);
  std::vector<int64_t> stack_of(line_parents_.size(), -1);
  std::vector<uint32_t> stack;
  const uint32_t empty = p.stacks.intern(stack);
  for_kept(kind, kept, [&](uint32_t i, int64_t weight) {
    int32_t leaf = r.line_node.empty() ? -1 : r.line_node[i];
    uint32_t id = empty;
    if (leaf >= 0) {
      if (stack_of[leaf] < 0) {
        stack.clear();
        for (int32_t at = leaf; at >= 0; at = line_parents_[at]) stack.push_back(frame_of[at]);
        stack_of[leaf] = p.stacks.intern(stack);
      }
      id = static_cast<uint32_t>(stack_of[leaf]);
    }
    p.samples.push_back(Sample{id, r.thread_seq[i], r.label_set[i], kRunning, weight, 0});
  });
  return rperf::source_lines(p, SampleFilter(), path);
}

KeptRows PageRows::select(RowKind kind, const SampleFilter& filter) const {
  const Rows& r = rows(kind);
  KeptRows out;
  if (filter.by_range && r.time_ns.empty()) return out;
  for (size_t i = 0; i < r.size(); i++) {
    int64_t weight;
    if (!filter.keeps_row(r.thread_seq[i], r.label_set[i], r.idle_at(i), r.time_at(i), r.weight[i], weight)) continue;
    out.rows.push_back(static_cast<uint32_t>(i));
    out.weights.push_back(weight);
  }
  return out;
}

TreeWeights PageRows::tree_weights(RowKind kind, const KeptRows& kept) const {
  const Rows& r = rows(kind);
  TreeWeights out;
  out.self.assign(parents_.size(), 0);
  out.state_self.assign(parents_.size() * kTimelineStates, 0);
  for_kept(kind, kept, [&](uint32_t i, int64_t weight) {
    out.self[r.node[i]] += weight;
    out.state_self[r.node[i] * kTimelineStates + state_of(r.label_set[i])] += weight;
  });
  // Parents come before their children: one pass from the last node up adds each subtree.
  out.total = out.self;
  for (size_t i = parents_.size(); i-- > 0;) {
    if (parents_[i] >= 0) out.total[parents_[i]] += out.total[i];
    else out.sum += out.total[i];
  }
  return out;
}

TagGroups PageRows::tag_groups(RowKind kind, const KeptRows& kept, const std::vector<std::string>& root_keys,
                               const std::vector<std::string>& leaf_keys) const {
  const Rows& r = rows(kind);
  auto set_at = [&](uint32_t set) { return set < label_sets_.size() ? &label_sets_[set] : nullptr; };
  // Each group's rows (in kept order) and path; a label set's group is found once.
  std::vector<KeptRows> members(root_keys.empty() ? 1 : 0);
  std::vector<std::vector<std::string>> paths(members.size());
  std::map<std::vector<std::string>, size_t> group_of_path;
  std::unordered_map<uint32_t, size_t> group_of_set;
  for_kept(kind, kept, [&](uint32_t i, int64_t weight) {
    size_t group = 0;
    if (!root_keys.empty()) {
      auto known = group_of_set.find(r.label_set[i]);
      if (known == group_of_set.end()) {
        std::vector<std::string> path = tag_path(set_at(r.label_set[i]), root_keys);
        auto [found, made] = group_of_path.try_emplace(path, members.size());
        if (made) {
          members.emplace_back();
          paths.push_back(std::move(path));
        }
        known = group_of_set.emplace(r.label_set[i], found->second).first;
      }
      group = known->second;
    }
    members[group].rows.push_back(i);
    members[group].weights.push_back(weight);
  });
  TagGroups out;
  TagFrameMaker root_frames(out.root_frames);
  for (size_t g = 0; g < members.size(); g++) {
    const TreeWeights w = tree_weights(kind, members[g]);
    TagGroup& group = out.groups.emplace_back();
    group.sum = w.sum;
    group.under = root_frames.add(0, paths[g], w.sum);
    group.root_frames_end = static_cast<uint32_t>(out.root_frames.size());
    for (uint32_t node = 0; node < w.total.size(); node++) {
      if (w.total[node] <= 0) continue;
      group.nodes.push_back(node);
      group.total.push_back(w.total[node]);
      auto states = w.state_self.begin() + node * kTimelineStates;
      group.state_self.insert(group.state_self.end(), states, states + kTimelineStates);
    }
    if (leaf_keys.empty()) continue;
    // The self time per (node, label set) in order of first row: the frames come in the rows' order.
    std::vector<std::pair<uint64_t, int64_t>> stacks;
    std::unordered_map<uint64_t, size_t> stack_at;
    for_kept(kind, members[g], [&](uint32_t i, int64_t weight) {
      uint64_t key = (uint64_t{r.node[i]} << 32) | r.label_set[i];
      auto [at, made] = stack_at.try_emplace(key, stacks.size());
      if (made) stacks.emplace_back(key, 0);
      stacks[at->second].second += weight;
    });
    std::unordered_map<uint32_t, std::vector<std::string>> leaf_paths;  // per label set
    TagFrameMaker leaves(group.leaves);
    for (const auto& [key, weight] : stacks) {
      uint32_t set = static_cast<uint32_t>(key);
      auto path = leaf_paths.find(set);
      if (path == leaf_paths.end()) path = leaf_paths.emplace(set, tag_path(set_at(set), leaf_keys)).first;
      leaves.add(static_cast<uint32_t>(key >> 32), path->second, weight);
    }
  }
  return out;
}

std::vector<ThreadSums> PageRows::thread_sums(RowKind kind, const KeptRows& kept) const {
  const Rows& r = rows(kind);
  std::map<uint32_t, ThreadSums> by_thread;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> by_leaf;  // (thread, frame) -> weight
  for_kept(kind, kept, [&](uint32_t i, int64_t w) {
    ThreadSums& t = by_thread[r.thread_seq[i]];
    t.thread_seq = r.thread_seq[i];
    t.total += w;
    t.by_state[state_of(r.label_set[i])] += w;
    if (r.idle_at(i)) t.idle += w;
    by_leaf[{r.thread_seq[i], frames_[r.node[i]]}] += w;
  });
  for (const auto& [key, weight] : by_leaf) {
    ThreadSums& t = by_thread[key.first];
    if (weight > t.top_frame_weight) {  // the first frame (lowest id) among equals
      t.top_frame = key.second;
      t.top_frame_weight = weight;
    }
  }
  std::vector<ThreadSums> out;
  for (const auto& entry : by_thread) out.push_back(entry.second);
  return out;
}

AllocationSums PageRows::allocation_sums(const KeptRows& kept, bool by_retained, size_t max_sites) const {
  const Rows& r = rows(RowKind::kAllocations);
  AllocationSums out;
  KeptRows asked;  // the kept rows weighing the objects asked for
  std::map<std::pair<uint32_t, uint32_t>, size_t> site_index;  // (frame, class) -> into out.sites
  std::map<std::pair<uint32_t, uint32_t>, size_t> node_class_index;  // (node, class) -> into out.node_classes
  for (uint32_t i : kept.rows) {
    if (i >= r.size()) continue;
    int64_t allocated = r.weight[i];
    int64_t retained = r.retained.empty() ? 0 : r.retained[i];
    uint32_t cls = r.class_index.empty() ? 0 : r.class_index[i];
    out.allocated += allocated;
    out.retained += retained;
    auto [it, added] = site_index.emplace(std::make_pair(frames_[r.node[i]], cls), out.sites.size());
    if (added) out.sites.push_back(AllocationSums::Site{frames_[r.node[i]], cls, 0, 0});
    out.sites[it->second].allocated += allocated;
    out.sites[it->second].retained += retained;
    int64_t objects = by_retained ? retained : allocated;
    if (objects == 0) continue;
    asked.rows.push_back(i);
    asked.weights.push_back(objects);
    auto [nc, fresh] = node_class_index.emplace(std::make_pair(r.node[i], cls), out.node_classes.size());
    if (fresh) out.node_classes.push_back(AllocationSums::NodeClass{r.node[i], cls, 0});
    out.node_classes[nc->second].objects += objects;
  }
  out.weights = tree_weights(RowKind::kAllocations, asked);
  out.weights.sum = by_retained ? out.retained : out.allocated;
  std::stable_sort(out.node_classes.begin(), out.node_classes.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  auto asked_of = [&](const AllocationSums::Site& site) { return by_retained ? site.retained : site.allocated; };
  std::stable_sort(out.sites.begin(), out.sites.end(), [&](const AllocationSums::Site& a, const AllocationSums::Site& b) {
    return asked_of(a) != asked_of(b) ? asked_of(a) > asked_of(b) : a.allocated > b.allocated;
  });
  if (out.sites.size() > max_sites) out.sites.resize(max_sites);
  return out;
}

TimelineBins PageRows::timeline_bins(const SampleFilter& filter, uint32_t bins, int64_t min_end_ns) const {
  const Rows& r = rows(RowKind::kTimeline);
  int64_t end_ns = min_end_ns;
  for (int64_t t : r.time_ns) end_ns = std::max(end_ns, t);
  TimelineBinner binner(bins, end_ns);
  std::vector<uint32_t> name_of_frame(frame_labels_.size() + 1, UINT32_MAX);  // the last: of a frame the frames lack
  auto leaf_name = [&](uint32_t node) {
    const uint32_t frame = std::min(frames_[node], static_cast<uint32_t>(frame_labels_.size()));
    uint32_t& known = name_of_frame[frame];
    if (known == UINT32_MAX) known = binner.leaf_name(frame_label(frame));
    return known;
  };
  for_kept(RowKind::kTimeline, r.time_ns.empty() ? KeptRows() : select(RowKind::kTimeline, filter), [&](uint32_t i, int64_t kept) {
    if (r.weight[i] <= 0) return;
    binner.add(r.thread_seq[i], state_of(r.label_set[i]), r.time_ns[i], r.weight[i], kept, filter, [&] { return leaf_name(r.node[i]); });
  });
  return binner.finish();
}

std::vector<int32_t> PageRows::nodes_in(const PageRows& base) const {
  // Each of this tree's frames as the base's (by label and path), then each node under its
  // parent's counterpart: parents come first.
  std::unordered_map<std::string, uint32_t> base_frame_of;
  auto frame_key = [](const std::string& label, const std::string& path) { return label + '\0' + path; };
  for (uint32_t f = 0; f < base.frame_labels_.size(); f++) base_frame_of.emplace(frame_key(base.frame_labels_[f], base.frame_path(f)), f);
  std::vector<int64_t> frame_map(frame_labels_.size(), -1);
  for (uint32_t f = 0; f < frame_labels_.size(); f++) {
    auto it = base_frame_of.find(frame_key(frame_labels_[f], frame_path(f)));
    if (it != base_frame_of.end()) frame_map[f] = it->second;
  }
  std::map<std::pair<int32_t, uint32_t>, int32_t> base_child;  // (parent, frame) -> node
  for (size_t i = 0; i < base.parents_.size(); i++) base_child.emplace(std::make_pair(base.parents_[i], base.frames_[i]), static_cast<int32_t>(i));
  std::vector<int32_t> out(parents_.size(), -1);
  for (size_t i = 0; i < parents_.size(); i++) {
    int32_t parent = parents_[i] < 0 ? -1 : out[parents_[i]];
    int64_t frame = frames_[i] < frame_map.size() ? frame_map[frames_[i]] : -1;
    if ((parents_[i] >= 0 && parent < 0) || frame < 0) continue;
    auto it = base_child.find({parent, static_cast<uint32_t>(frame)});
    if (it != base_child.end()) out[i] = it->second;
  }
  return out;
}

TreeDiff tree_diff(const PageRows& after, RowKind kind, const KeptRows& kept, const PageRows& base, RowKind base_kind,
                   const KeptRows& base_kept, bool normalize) {
  const TreeWeights mine = after.tree_weights(kind, kept), theirs = base.tree_weights(base_kind, base_kept);
  TreeDiff out;
  out.sum = mine.sum;
  out.base_sum = theirs.sum;
  if (normalize && theirs.sum > 0) out.base_scale = static_cast<double>(mine.sum) / static_cast<double>(theirs.sum);
  std::vector<int32_t> map = after.nodes_in(base);
  out.self_change.resize(map.size());
  for (size_t i = 0; i < map.size(); i++) {
    out.self_change[i] = static_cast<double>(mine.self[i]) - (map[i] >= 0 ? static_cast<double>(theirs.self[map[i]]) * out.base_scale : 0);
  }
  return out;
}

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
  out.frame_map = frame_id;
  for (uint32_t f = 0; f < p.frames.size(); f++) {
    const Frame& frame = p.frames[f];
    out.frames.emplace_back(frame.label, frame.path);
    out.frame_lines.push_back(f < line_of.size() ? line_of[f] : 0);
    out.frame_categories.push_back(static_cast<uint8_t>(frame_category(frame.label, frame.path)));
  }
  return out;
}

TransformedSnapshot transform_snapshot(const PageRows& base, const std::vector<StackTransform>& list) {
  TransformedSnapshot out{transform_tree(base, list), PageRows()};
  const TransformedTree& tree = out.tree;
  PageRows& shown = out.rows;
  std::vector<std::string> labels, paths;
  for (const auto& [label, path] : tree.frames) {
    labels.push_back(label);
    paths.push_back(path);
  }
  shown.set_frames(std::move(labels), std::move(paths), tree.frame_lines);
  shown.set_label_sets(base.label_sets());
  // transform_tree makes a prefix tree of base's nodes: these cannot be refused.
  shown.set_tree(tree.parents, tree.node_frames);
  shown.set_base_nodes(tree.node_map);
  std::vector<uint32_t> line_frames;
  for (uint32_t f : base.line_frames()) line_frames.push_back(tree.frame_map[f]);
  shown.set_line_tree(base.line_parents(), std::move(line_frames), base.line_lines());
  for (int k = 0; k < kRowKindCount; k++) shown.move_rows(base, static_cast<RowKind>(k));
  return out;
}

std::optional<StackTree> names_tree(const std::vector<uint32_t>& depths, const std::vector<int64_t>& weights,
                                    const std::vector<uint32_t>& sets, const std::vector<std::string>& names) {
  if (weights.size() != depths.size() || sets.size() != depths.size()) return std::nullopt;
  Profile p;
  std::vector<uint32_t> frames;  // leaf first
  for (size_t i = 0, at = 0; i < depths.size(); at += depths[i++]) {
    if (names.size() - at < depths[i]) return std::nullopt;
    frames.clear();
    for (size_t d = depths[i]; d-- > 0;) frames.push_back(p.frames.intern(std::string(), names[at + d], 0));
    p.samples.push_back(Sample{p.stacks.intern(frames), 0, sets[i], kRunning, weights[i], 0});
  }
  return build_stack_tree(p, p.samples, StackTreeOptions());
}

}  // namespace rperf::page
