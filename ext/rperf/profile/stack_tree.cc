#include "profile/stack_tree.hh"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "profile/frame_methods.hh"
#include "profile/idle_wait.hh"
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

  // Each tree frame's method line (StackTree::frame_lines): its method's (frame_methods).
  void method_lines() {
    FrameMethods methods = frame_methods(p_);
    tree_.frame_lines.assign(tree_.frames.size(), 0);
    for (uint32_t i = 0; i < p_.frames.size(); i++) {
      uint32_t id = names_.find(p_.frames[i].path, p_.frames[i].label, 0);
      if (id != HashIndex::kNotFound) tree_.frame_lines[id] = methods.lines[methods.of_frame[i]];
    }
  }

  void reserve(size_t nodes) {
    tree_.parents.reserve(nodes);
    tree_.node_frames.reserve(nodes);
    nodes_.reserve(nodes);
  }

  static uint64_t node_hash(int32_t parent, uint32_t frame) { return mix64((static_cast<uint64_t>(parent + 1) << 32) | frame); }

  uint32_t node(int32_t parent, uint32_t frame) { return node(parent, frame, node_hash(parent, frame)); }

  uint32_t node(int32_t parent, uint32_t frame, uint64_t hash) {
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
      uint64_t hash = node_hash(parent, f);
      uint32_t id = nodes_.find(hash, [&](uint32_t n) { return tree_.parents[n] == parent && tree_.node_frames[n] == f; });
      if (id == HashIndex::kNotFound) return -1;
      parent = static_cast<int32_t>(id);
    }
    return parent;
  }

  // The leaf node of each stack, into `leaves`: kBatch stacks walked from the root side by side,
  // each step's slot prefetched a round before it is read, so their cache misses overlap (a
  // stack's steps depend on each other, different stacks' do not). On the 100k-stack benchmark
  // profile (no shared prefixes, 800k nodes of 20,000 stacks) Native::Profile#stack_tree took
  // 0.17-0.22 CPU-s instead of 0.21-0.27 one stack at a time (interleaved, min of 8, under load).
  template <typename StackAt>
  void leaves(size_t count, StackAt&& stack_at, std::vector<uint32_t>& leaves) {
    constexpr size_t kBatch = 8;
    struct Walk {
      size_t index;      // into leaves
      FrameSpan frames;  // leaf first
      size_t depth;      // frames still to walk (from frames[depth - 1] to frames[0])
      int32_t parent;
      uint32_t frame;    // the next step's tree frame
      uint64_t hash;     // and its hash
    };
    leaves.resize(count);
    Walk walks[kBatch];
    size_t active = 0, next = 0;
    auto prepare = [&](Walk& w) {
      w.frame = frame(w.frames[w.depth - 1]);
      w.hash = node_hash(w.parent, w.frame);
      nodes_.prefetch(w.hash);
    };
    auto start = [&](Walk& w) {  // false when no stack is left to walk
      while (next < count) {
        size_t i = next++;
        FrameSpan frames = stack_at(i);
        if (frames.empty()) {
          leaves[i] = leaf(frames);
          continue;
        }
        w = Walk{i, frames, frames.size(), -1, 0, 0};
        prepare(w);
        return true;
      }
      return false;
    };
    while (active < kBatch && start(walks[active])) active++;
    while (active > 0) {
      for (size_t a = 0; a < active;) {
        Walk& w = walks[a];
        w.parent = static_cast<int32_t>(node(w.parent, w.frame, w.hash));
        if (--w.depth > 0) {
          prepare(w);
          a++;
          continue;
        }
        leaves[w.index] = static_cast<uint32_t>(w.parent);
        if (!start(w)) w = walks[--active];  // the last walk takes this one's place
        else a++;
      }
    }
  }

  // The line-level leaf of a stack (StackTree::line_parents), -1 for an empty one; each stack
  // walked once.
  int32_t line_leaf(uint32_t stack) {
    if (line_of_stack_.size() <= stack) line_of_stack_.resize(p_.stacks.size(), -2);
    int32_t& known = line_of_stack_[stack];
    if (known != -2) return known;
    FrameSpan frames = p_.stacks[stack];
    int32_t parent = -1;
    for (size_t i = frames.size(); i-- > 0;) {
      uint32_t f = frame(frames[i]);
      int32_t line = p_.frames[frames[i]].line;
      uint64_t hash = mix64(node_hash(parent, f) ^ static_cast<uint32_t>(line));
      uint32_t id = line_nodes_.find(hash, [&](uint32_t n) {
        return tree_.line_parents[n] == parent && tree_.line_frames[n] == f && tree_.line_lines[n] == line;
      });
      if (id == HashIndex::kNotFound) {
        id = static_cast<uint32_t>(tree_.line_parents.size());
        tree_.line_parents.push_back(parent);
        tree_.line_frames.push_back(f);
        tree_.line_lines.push_back(line);
        line_nodes_.insert(hash, id);
      }
      parent = static_cast<int32_t>(id);
    }
    return known = parent;
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
  HashIndex line_nodes_;  // (parent, frame, line) -> line node
  std::vector<int32_t> line_of_stack_;  // profile stack -> its line leaf (-2: not yet walked)
};

}  // namespace

namespace {

// The rows of the kept samples, then the pruned ones folded (StackTree::rows).
void make_rows(StackTree& tree, const std::vector<Sample>& samples, const IdleSamples* idle) {
  auto sample_at = [&](size_t k) -> const Sample& { return samples[tree.order.empty() ? k : tree.order[k]]; };
  auto idle_of = [&](const Sample& s) { return idle && idle->idle(s); };
  size_t kept = tree.kept_nodes.size();
  tree.rows.reserve(kept + 8);
  for (size_t k = 0; k < kept; k++) {
    const Sample& s = sample_at(k);
    tree.rows.push_back({tree.kept_nodes[k], s.weight_ns, s.thread_seq, s.label_set, idle_of(s)});
  }
  std::unordered_map<uint64_t, size_t> folded;  // (thread, label set, idle) -> its row
  for (size_t k = kept; k < samples.size(); k++) {
    const Sample& s = sample_at(k);
    bool is_idle = idle_of(s);
    tree.pruned_samples++;
    tree.pruned_weight_ns += s.weight_ns;
    uint64_t group = (static_cast<uint64_t>(s.thread_seq) << 33) | (static_cast<uint64_t>(s.label_set) << 1) | (is_idle ? 1 : 0);
    auto found = folded.find(group);
    if (found != folded.end()) {
      tree.rows[found->second].weight_ns += s.weight_ns;
    } else {
      folded.emplace(group, tree.rows.size());
      tree.rows.push_back({static_cast<uint32_t>(tree.pruned_node), s.weight_ns, s.thread_seq, s.label_set, is_idle});
    }
  }
  for (const Sample& s : samples) tree.total_weight_ns += s.weight_ns;
}

// The timeline's rows (StackTree::timeline): one per raw sample, merged per time slot until
// they fit, in time order.
// With `lines`: each row's line-level leaf (a merged row keeps its first sample's).
void make_timeline(StackTree& tree, const Profile& p, size_t max_rows, const IdleSamples* idle, TreeBuilder* lines) {
  using Row = StackTree::TimelineRow;
  std::vector<Row> rows;
  rows.reserve(p.samples.size());
  for (size_t i = 0; i < p.samples.size(); i++) {
    const Sample& s = p.samples[i];
    rows.push_back({tree.raw_nodes[i], s.weight_ns, s.thread_seq, s.label_set, s.time_ns, idle && idle->idle(s), lines ? lines->line_leaf(s.stack) : -1});
  }
  int64_t quantum = 0;
  while (rows.size() > max_rows) {
    quantum = quantum == 0 ? 1000000 : quantum * 2;
    std::vector<Row> merged;
    HashIndex index;
    index.reserve(rows.size());
    auto slot_of = [&](int64_t time) { return time - ((time % quantum) + quantum) % quantum; };
    auto key_hash = [&](const Row& r) {
      uint64_t h = mix64((static_cast<uint64_t>(r.node) << 32) | r.thread_seq);
      h = mix64(h ^ ((static_cast<uint64_t>(r.label_set) << 1) | (r.idle ? 1 : 0)));
      return mix64(h ^ static_cast<uint64_t>(slot_of(r.time_ns)));
    };
    for (const Row& r : rows) {
      uint64_t hash = key_hash(r);
      int64_t slot = slot_of(r.time_ns);
      uint32_t id = index.find(hash, [&](uint32_t m) {
        const Row& o = merged[m];
        return o.node == r.node && o.thread_seq == r.thread_seq && o.label_set == r.label_set && o.idle == r.idle && slot_of(o.time_ns) == slot;
      });
      if (id == HashIndex::kNotFound) {
        index.insert(hash, static_cast<uint32_t>(merged.size()));
        merged.push_back(r);
        continue;
      }
      merged[id].weight_ns += r.weight_ns;
      merged[id].time_ns = std::max(merged[id].time_ns, r.time_ns);
    }
    rows = std::move(merged);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.time_ns < b.time_ns; });
  tree.timeline = std::move(rows);
  tree.timeline_quantum_ns = quantum;
}

}  // namespace

StackTree build_stack_tree(const Profile& p, const std::vector<Sample>& samples, const StackTreeOptions& options) {
  StackTree tree;
  TreeBuilder builder(p, tree);
  size_t max_samples = options.max_samples;
  // The indices of `count` rows heaviest first (ties in their order) when over max_samples,
  // else none (every row kept in its order).
  auto heaviest_first = [&](size_t count, auto&& weight_of) {
    std::vector<uint32_t> order;
    if (count <= max_samples) return order;
    order.resize(count);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return weight_of(a) > weight_of(b); });
    return order;
  };
  auto pruned_node = [&] {
    if (tree.pruned_node < 0) tree.pruned_node = static_cast<int32_t>(builder.node(-1, builder.name(StackTree::kPrunedLabel, StackTree::kPrunedPath)));
    return static_cast<uint32_t>(tree.pruned_node);
  };
  tree.order = heaviest_first(samples.size(), [&](uint32_t i) { return samples[i].weight_ns; });
  size_t kept = std::min(samples.size(), max_samples);
  auto stack_at = [&](size_t k) { return p.stacks[samples[tree.order.empty() ? k : tree.order[k]].stack]; };
  size_t frames = 0;  // at most one node per kept frame: sized once
  for (size_t k = 0; k < kept; k++) frames += stack_at(k).size() + 1;
  builder.reserve(frames + 1);
  builder.leaves(kept, stack_at, tree.kept_nodes);
  if (kept < samples.size()) pruned_node();
  make_rows(tree, samples, options.idle);
  if (options.lines) {
    tree.row_line_nodes.assign(tree.rows.size(), -1);
    for (size_t k = 0; k < kept; k++) tree.row_line_nodes[k] = builder.line_leaf(samples[tree.order.empty() ? k : tree.order[k]].stack);
  }
  if (options.raw) {
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
    make_timeline(tree, p, options.max_timeline, options.idle, options.lines ? &builder : nullptr);
  }
  if (options.allocations) {
    const std::vector<AllocationSample>& sites = *options.allocations;
    std::vector<uint32_t> order = heaviest_first(sites.size(), [&](uint32_t i) { return sites[i].count; });
    auto site_at = [&](size_t k) -> const AllocationSample& { return sites[order.empty() ? k : order[k]]; };
    std::vector<uint32_t> class_index;  // class_names id -> into allocation_classes
    auto klass = [&](uint64_t type) {
      if (type >= class_index.size()) class_index.resize(type + 1, UINT32_MAX);
      uint32_t& index = class_index[type];
      if (index == UINT32_MAX) {
        index = static_cast<uint32_t>(tree.allocation_classes.size());
        tree.allocation_classes.push_back(static_cast<uint32_t>(type));
      }
      return index;
    };
    size_t kept_sites = std::min(sites.size(), max_samples);
    for (size_t k = 0; k < kept_sites; k++) {
      const AllocationSample& a = site_at(k);
      tree.allocation_rows.push_back({builder.leaf(p.stacks[a.stack]), a.count, a.thread_seq, a.label_set, klass(a.type), a.retained});
    }
    std::unordered_multimap<uint64_t, size_t> folded;  // hash of (thread, label set, class) -> its rows
    for (size_t k = kept_sites; k < sites.size(); k++) {
      const AllocationSample& a = site_at(k);
      tree.pruned_allocations++;
      tree.pruned_objects += a.count;
      uint64_t group = mix64((static_cast<uint64_t>(a.thread_seq) << 32) | a.label_set) ^ a.type;
      size_t row = SIZE_MAX;
      auto [first, last] = folded.equal_range(group);
      for (auto it = first; it != last && row == SIZE_MAX; ++it) {
        const StackTree::AllocationRow& r = tree.allocation_rows[it->second];
        if (r.thread_seq == a.thread_seq && r.label_set == a.label_set && tree.allocation_classes[r.class_index] == a.type) row = it->second;
      }
      if (row == SIZE_MAX) {
        folded.emplace(group, tree.allocation_rows.size());
        tree.allocation_rows.push_back({pruned_node(), 0, a.thread_seq, a.label_set, klass(a.type), 0});
        row = tree.allocation_rows.size() - 1;
      }
      tree.allocation_rows[row].objects += a.count;
      tree.allocation_rows[row].retained += a.retained;
    }
    for (const AllocationSample& a : sites) {
      tree.allocated += a.count;
      tree.retained += a.retained;
    }
  }
  builder.method_lines();
  return tree;
}

}  // namespace rperf
