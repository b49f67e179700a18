#include "page/page_rows.hh"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

namespace rperf::page {

bool PageRows::set_tree(std::vector<int32_t> parents, std::vector<uint32_t> frames) {
  bool fits = frames.size() == parents.size();
  for (size_t i = 0; fits && i < parents.size(); i++) fits = parents[i] >= -1 && parents[i] < static_cast<int64_t>(i);
  for (Rows& r : rows_) r = Rows();  // rows of another tree
  if (!fits) {
    parents_.clear();
    frames_.clear();
    return false;
  }
  parents_ = std::move(parents);
  frames_ = std::move(frames);
  return true;
}

void PageRows::set_label_sets(std::vector<LabelTexts> sets) {
  label_sets_ = std::move(sets);
  states_.clear();
  for (const LabelTexts& set : label_sets_) states_.push_back(timeline_state(set));
}

bool PageRows::set_rows(RowKind kind, Rows rows) {
  Rows& slot = rows_[static_cast<int>(kind)];
  size_t n = rows.size();
  bool columns_fit = rows.thread_seq.size() == n && rows.label_set.size() == n && rows.weight.size() == n &&
                     (rows.time_ns.empty() || rows.time_ns.size() == n) && (rows.idle.empty() || rows.idle.size() == n) &&
                     (rows.class_index.empty() || rows.class_index.size() == n) && (rows.retained.empty() || rows.retained.size() == n) &&
                     (rows.line_node.empty() || rows.line_node.size() == n);
  bool nodes_fit = std::all_of(rows.node.begin(), rows.node.end(), [&](uint32_t node) { return node < parents_.size(); }) &&
                   std::all_of(rows.line_node.begin(), rows.line_node.end(),
                               [&](int32_t node) { return node >= -1 && node < static_cast<int64_t>(line_parents_.size()); });
  if (!columns_fit || !nodes_fit) {
    slot = Rows();
    return false;
  }
  slot = std::move(rows);
  return true;
}

bool PageRows::set_line_tree(std::vector<int32_t> parents, std::vector<uint32_t> frames, std::vector<int32_t> lines) {
  bool fits = frames.size() == parents.size() && lines.size() == parents.size();
  for (size_t i = 0; fits && i < parents.size(); i++) fits = parents[i] >= -1 && parents[i] < static_cast<int64_t>(i) && frames[i] < frame_labels_.size();
  if (!fits) {
    line_parents_.clear();
    line_frames_.clear();
    line_lines_.clear();
    return false;
  }
  line_parents_ = std::move(parents);
  line_frames_ = std::move(frames);
  line_lines_ = std::move(lines);
  return true;
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
  for (size_t k = 0; k < kept.rows.size() && k < kept.weights.size(); k++) {
    uint32_t i = kept.rows[k];
    if (i >= r.size()) continue;
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
    p.samples.push_back(Sample{id, r.thread_seq[i], r.label_set[i], kRunning, kept.weights[k], 0});
  }
  return rperf::source_lines(p, SampleFilter(), path);
}

void PageRows::select(RowKind kind, const SampleFilter& filter, KeptRows& out) const {
  const Rows& r = rows(kind);
  out.rows.clear();
  out.weights.clear();
  if (filter.by_range && r.time_ns.empty()) return;
  for (size_t i = 0; i < r.size(); i++) {
    int64_t weight;
    bool idle = !r.idle.empty() && r.idle[i];
    int64_t time = r.time_ns.empty() ? 0 : r.time_ns[i];
    if (!filter.keeps_row(r.thread_seq[i], r.label_set[i], idle, time, r.weight[i], weight)) continue;
    out.rows.push_back(static_cast<uint32_t>(i));
    out.weights.push_back(weight);
  }
}

void PageRows::tree_weights(RowKind kind, const KeptRows& kept, TreeWeights& out) const {
  const Rows& r = rows(kind);
  size_t n = parents_.size();
  out.self.assign(n, 0);
  out.state_self.assign(n * kTimelineStates, 0);
  out.sum = 0;
  for (size_t k = 0; k < kept.rows.size() && k < kept.weights.size(); k++) {
    uint32_t i = kept.rows[k];
    if (i >= r.size()) continue;
    uint32_t node = r.node[i];
    out.self[node] += kept.weights[k];
    out.state_self[node * kTimelineStates + state_of(r.label_set[i])] += kept.weights[k];
  }
  // Parents come before their children: one pass from the last node up adds each subtree.
  out.total = out.self;
  for (size_t i = n; i-- > 0;) {
    if (parents_[i] >= 0) out.total[parents_[i]] += out.total[i];
    else out.sum += out.total[i];
  }
}

void PageRows::thread_sums(RowKind kind, const KeptRows& kept, std::vector<ThreadSums>& out) const {
  const Rows& r = rows(kind);
  std::map<uint32_t, ThreadSums> by_thread;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> by_leaf;  // (thread, frame) -> weight
  for (size_t k = 0; k < kept.rows.size() && k < kept.weights.size(); k++) {
    uint32_t i = kept.rows[k];
    if (i >= r.size()) continue;
    ThreadSums& t = by_thread[r.thread_seq[i]];
    t.thread_seq = r.thread_seq[i];
    int64_t w = kept.weights[k];
    t.total += w;
    t.by_state[state_of(r.label_set[i])] += w;
    if (!r.idle.empty() && r.idle[i]) t.idle += w;
    by_leaf[{r.thread_seq[i], frames_[r.node[i]]}] += w;
  }
  for (const auto& [key, weight] : by_leaf) {
    ThreadSums& t = by_thread[key.first];
    if (weight > t.top_frame_weight) {  // the first frame (lowest id) among equals
      t.top_frame = key.second;
      t.top_frame_weight = weight;
    }
  }
  out.clear();
  for (const auto& entry : by_thread) out.push_back(entry.second);
}

void PageRows::allocation_sums(const KeptRows& kept, bool by_retained, size_t max_sites, AllocationSums& out) const {
  const Rows& r = rows(RowKind::kAllocations);
  out = AllocationSums();
  KeptRows asked;  // the kept rows weighing the objects asked for
  std::map<std::pair<uint32_t, uint32_t>, size_t> site_index;  // (frame, class) -> into out.sites
  std::map<uint32_t, std::vector<std::pair<uint32_t, int64_t>>> classes_of_node;
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
    auto& classes = classes_of_node[r.node[i]];
    auto c = std::find_if(classes.begin(), classes.end(), [&](const auto& e) { return e.first == cls; });
    if (c == classes.end()) classes.emplace_back(cls, objects);
    else c->second += objects;
  }
  tree_weights(RowKind::kAllocations, asked, out.weights);
  out.weights.sum = by_retained ? out.retained : out.allocated;
  for (const auto& [node, classes] : classes_of_node) {
    for (const auto& [cls, objects] : classes) out.node_classes.push_back(AllocationSums::NodeClass{node, cls, objects});
  }
  auto asked_of = [&](const AllocationSums::Site& site) { return by_retained ? site.retained : site.allocated; };
  std::stable_sort(out.sites.begin(), out.sites.end(), [&](const AllocationSums::Site& a, const AllocationSums::Site& b) {
    return asked_of(a) != asked_of(b) ? asked_of(a) > asked_of(b) : a.allocated > b.allocated;
  });
  if (out.sites.size() > max_sites) out.sites.resize(max_sites);
}

TimelineBins PageRows::timeline_bins(const SampleFilter& filter, uint32_t bins, int64_t min_end_ns) const {
  const Rows& r = rows(RowKind::kTimeline);
  int64_t end_ns = min_end_ns;
  for (int64_t t : r.time_ns) end_ns = std::max(end_ns, t);
  TimelineBinner binner(bins, end_ns);
  std::vector<uint32_t> name_of_frame(frame_labels_.size(), UINT32_MAX);
  auto leaf_name = [&](uint32_t node) {
    uint32_t frame = frames_[node];
    if (frame >= frame_labels_.size()) return binner.leaf_name(std::string());
    uint32_t& known = name_of_frame[frame];
    if (known == UINT32_MAX) known = binner.leaf_name(frame_labels_[frame]);
    return known;
  };
  if (r.time_ns.empty()) return binner.finish();
  for (size_t i = 0; i < r.size(); i++) {
    int64_t kept;
    bool idle = !r.idle.empty() && r.idle[i];
    if (r.weight[i] <= 0 || !filter.keeps_row(r.thread_seq[i], r.label_set[i], idle, r.time_ns[i], r.weight[i], kept)) continue;
    binner.add(r.thread_seq[i], state_of(r.label_set[i]), r.time_ns[i], r.weight[i], kept, filter, [&] { return leaf_name(r.node[i]); });
  }
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
  TreeWeights mine, theirs;
  after.tree_weights(kind, kept, mine);
  base.tree_weights(base_kind, base_kept, theirs);
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

}  // namespace rperf::page
