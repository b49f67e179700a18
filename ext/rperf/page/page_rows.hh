// The Viewer page's rows and what its views ask of them. The payload (Viewer::Payload, from
// profile/stack_tree.hh) gives the page a prefix tree of stacks and rows at its nodes: the time
// samples, the timeline's raw samples (with their times) and the allocation sites. The page's
// filters (thread, hidden threads, label sets, time range, idle) select rows with the same
// SampleFilter the server selects samples with (the label sets they keep: label_set_match), and
// the flame graph, the icicle, the threads table, the timeline and the diff sum the kept rows
// here (the timeline with the server's TimelineBinner). Compiled to WebAssembly for the page
// (page/wasm_exports.cc), so a `--html` file without a server filters as the server does;
// Ruby-independent and unit-tested under GoogleTest.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profile/label_set_match.hh"
#include "profile/sample_filter.hh"
#include "profile/stack_tree.hh"
#include "profile/transform.hh"
#include "views/source_lines.hh"
#include "profile/vm_state.hh"
#include "views/timeline_bins.hh"

namespace rperf::page {

// The payload's kinds of rows.
enum class RowKind : uint8_t { kSamples = 0, kTimeline = 1, kAllocations = 2 };
constexpr int kRowKindCount = 3;

// One kind of rows, as columns. Rows without times (the time samples, allocations) have an
// empty time_ns; rows of which none is idle may have an empty `idle`.
struct Rows {
  std::vector<uint32_t> node, thread_seq, label_set;
  std::vector<int64_t> weight;  // ns (time rows) or objects (allocation rows)
  std::vector<int64_t> time_ns;
  std::vector<uint8_t> idle;
  // Allocation rows only: each site's class (the payload's allocation classes) and the objects
  // still alive at the end (`weight`: those allocated).
  std::vector<uint32_t> class_index;
  std::vector<int64_t> retained;
  // With the payload's line tree (a profile with lines): each row's line-level leaf, -1: none.
  std::vector<int32_t> line_node;
  size_t size() const { return node.size(); }
  bool idle_at(size_t i) const { return !idle.empty() && idle[i]; }
  int64_t time_at(size_t i) const { return time_ns.empty() ? 0 : time_ns[i]; }
};

// The rows a filter keeps, in their order, and how much of each (a time range keeps a part).
struct KeptRows {
  std::vector<uint32_t> rows;
  std::vector<int64_t> weights;
};

// Weights on the tree: each node's own (its rows') and its subtree's, its own split by state.
struct TreeWeights {
  std::vector<int64_t> self, total;
  std::vector<int64_t> state_self;  // kTimelineStates per node
  int64_t sum = 0;                  // of every root's total
};

// Per thread, in thread order: what the Threads tab shows of the kept rows.
struct ThreadSums {
  uint32_t thread_seq = 0;
  int64_t total = 0;
  int64_t by_state[kTimelineStates] = {0, 0, 0, 0};
  int64_t idle = 0;
  // Its heaviest leaf function: the frame (the payload's) its kept rows spend most at.
  int64_t top_frame = -1;
  int64_t top_frame_weight = 0;
};

// The Allocations tab's sums of kept allocation rows.
struct AllocationSums {
  int64_t allocated = 0, retained = 0;
  TreeWeights weights;  // of the objects asked for (allocated or retained) on the tree
  // Per node, its objects per class (those asked for; nodes ascending, classes in order of first
  // row): the flame graph's class leaves.
  struct NodeClass {
    uint32_t node, class_index;
    int64_t objects;
  };
  std::vector<NodeClass> node_classes;
  // Per (leaf frame, class), however reached: the table's sites, heaviest first by the objects
  // asked for, then by allocated; at most the limit asked for.
  struct Site {
    uint32_t frame, class_index;
    int64_t allocated = 0, retained = 0;
  };
  std::vector<Site> sites;
};

// The Diff tab's flame graph: two snapshots' kept rows on the after's tree.
struct TreeDiff {
  int64_t sum = 0, base_sum = 0;
  double base_scale = 1;  // normalized: the base scaled to the after's sum
  // Per node of the after's tree: its self weight minus the base's at the same stack (scaled).
  std::vector<double> self_change;
};

// The flame graph's "[key: value]" frames (rperf 0.11.1's tagroot and tagleaf), each named by a
// key and its value in a kept row's label set (label_sets(); a key the set lacks: no frame). A
// frame is under another (parent) or, parent -1, at its anchor: the flame graph's root for the
// tagroot frames, its node for a group's tagleaf frames. Siblings of one name are one frame;
// frames come in order of the first row that has them, as the page drew them.
struct TagFrame {
  int32_t parent = -1;
  uint32_t node = 0;  // a tagleaf frame's: the node whose self time it splits
  std::string name;
  int64_t value = 0;
};

// The kept rows of one tagroot path (all of them without tagroot keys): its tree weights, as
// far as the flame graph draws them, and its tagleaf frames.
struct TagGroup {
  int32_t under = -1;            // its path's last tagroot frame, -1: the root (a row without the keys)
  uint32_t root_frames_end = 0;  // the tagroot frames made once it joined, its path's new ones last
  int64_t sum = 0;
  // The nodes of total > 0 (those drawn), ascending: each one's total and self per state.
  std::vector<uint32_t> nodes;
  std::vector<int64_t> total, state_self;  // state_self: kTimelineStates per node
  std::vector<TagFrame> leaves;            // parents index its own leaves
};

// The groups in order of their first kept row, and the tagroot frames they hang from.
struct TagGroups {
  std::vector<TagFrame> root_frames;
  std::vector<TagGroup> groups;
};

class PageRows;
TreeDiff tree_diff(const PageRows& after, RowKind kind, const KeptRows& kept, const PageRows& base, RowKind base_kind,
                   const KeptRows& base_kept, bool normalize);

class PageRows {
 public:
  // parents: per node, its parent's index (-1: a root); a parent comes before its children.
  // frames: per node, its frame (the payload's frames). Returns false (and keeps nothing) when a
  // parent does not come first or the columns differ in length.
  bool set_tree(std::vector<int32_t> parents, std::vector<uint32_t> frames);
  // The label sets as the page spells them (Payload's label_sets); each one's state is read from
  // them (timeline_state).
  void set_label_sets(std::vector<LabelTexts> sets);
  const std::vector<LabelTexts>& label_sets() const { return label_sets_; }
  // Each frame's label, path and method line (the payload's frames and frame_lines): the
  // Timeline's leaf names, the call trees' methods.
  void set_frames(std::vector<std::string> labels, std::vector<std::string> paths, std::vector<int32_t> lines) {
    frame_labels_ = std::move(labels);
    frame_paths_ = std::move(paths);
    frame_lines_ = std::move(lines);
  }
  const std::vector<std::string>& frame_labels() const { return frame_labels_; }
  // A frame's label and path: empty for one the frames lack.
  const std::string& frame_label(uint32_t frame) const { return frame < frame_labels_.size() ? frame_labels_[frame] : kNone; }
  const std::string& frame_path(uint32_t frame) const { return frame < frame_paths_.size() ? frame_paths_[frame] : kNone; }
  int32_t frame_line(uint32_t frame) const { return frame < frame_lines_.size() ? frame_lines_[frame] : 0; }
  int32_t parent(uint32_t node) const { return parents_[node]; }
  uint32_t frame_of(uint32_t node) const { return frames_[node]; }
  // The payload's line tree (StackTree::line_parents, line_frames, line_lines: a profile recorded
  // with lines): per line node its parent, tree frame and line. Returns false (and keeps
  // nothing) when a parent does not come first or a frame is not the tree's.
  bool set_line_tree(std::vector<int32_t> parents, std::vector<uint32_t> frames, std::vector<int32_t> lines);
  const std::vector<int32_t>& line_parents() const { return line_parents_; }
  const std::vector<uint32_t>& line_frames() const { return line_frames_; }
  const std::vector<int32_t>& line_lines() const { return line_lines_; }
  // Returns false (and keeps nothing) when a row's node or a column's length is out of place.
  bool set_rows(RowKind kind, Rows rows);
  // A transformed snapshot's (transform_snapshot): per node of its base's tree, its node here
  // (-1: gone), kept so that base rows read later (a big timeline) move here too. Returns false
  // (and keeps nothing) when a node is not this tree's.
  bool set_base_nodes(std::vector<int32_t> node_map);
  // The rows of `kind` of this transformed snapshot's base, each at its node here (rows whose
  // node is gone are left out), in their order with their other columns as they are: weights,
  // times, idle marks (a wait does not change with how its stack is drawn), classes and
  // line-level leaves (the recorded stacks, on the base's line tree this snapshot carries).
  // Returns false (and keeps none) when `base` is not of the tree the base nodes are of.
  bool move_rows(const PageRows& base, RowKind kind);

  size_t node_count() const { return parents_.size(); }
  const Rows& rows(RowKind kind) const { return rows_[static_cast<int>(kind)]; }
  // Each kept row of `kind` the rows have: each(its index, its kept weight).
  template <typename Each>
  void for_kept(RowKind kind, const KeptRows& kept, Each each) const {
    const Rows& r = rows(kind);
    for (size_t k = 0; k < kept.rows.size() && k < kept.weights.size(); k++) {
      if (kept.rows[k] < r.size()) each(kept.rows[k], kept.weights[k]);
    }
  }

  // The rows of `kind` the filter keeps (SampleFilter::keeps_row). A time range needs times:
  // rows without them keep none under one.
  KeptRows select(RowKind kind, const SampleFilter& filter) const;
  // The weights of rows of `kind` (`kept.rows`, each with its kept weight) on the tree.
  TreeWeights tree_weights(RowKind kind, const KeptRows& kept) const;
  // The flame graph's tag groups of kept rows of `kind`: grouped by the "[key: value]" path of
  // root_keys (each row under its groups' frames), each node's self time split by the path of
  // leaf_keys.
  TagGroups tag_groups(RowKind kind, const KeptRows& kept, const std::vector<std::string>& root_keys,
                       const std::vector<std::string>& leaf_keys) const;
  // The kept rows' sums per thread.
  std::vector<ThreadSums> thread_sums(RowKind kind, const KeptRows& kept) const;
  // The sums of kept allocation rows; by_retained: of the objects still alive, else of those
  // allocated; at most `max_sites` sites.
  AllocationSums allocation_sums(const KeptRows& kept, bool by_retained, size_t max_sites) const;
  // The Timeline's bins of the timeline rows the filter keeps (as the server's bin_timeline of
  // the samples): `bins` slices of [0, max(min_end_ns, the last row's time)].
  TimelineBins timeline_bins(const SampleFilter& filter, uint32_t bins, int64_t min_end_ns) const;
  // Per node, the node of `base`'s tree at the same stack (each frame by its label and path), -1:
  // none. The Diff tab's flame graph.
  std::vector<int32_t> nodes_in(const PageRows& base) const;
  // The Source tab's time per line of `path` in kept rows of `kind`, by the model's
  // source_lines over the rows' line-level stacks (a row without one counts in kept_ns only);
  // no lines without the line tree.
  SourceLines source_lines(RowKind kind, const KeptRows& kept, const std::string& path) const;
  // A label set's state (timeline_state of its labels).
  TimelineState state_of(uint32_t label_set) const {
    return label_set < states_.size() ? states_[label_set] : kTimelineRunning;
  }

 private:
  inline static const std::string kNone;
  std::vector<int32_t> parents_;
  std::vector<uint32_t> frames_;
  std::vector<std::string> frame_labels_, frame_paths_;
  std::vector<int32_t> frame_lines_;
  std::vector<LabelTexts> label_sets_;
  std::vector<int32_t> line_parents_, line_lines_;
  std::vector<uint32_t> line_frames_;
  std::vector<TimelineState> states_;
  std::vector<int32_t> base_nodes_;
  Rows rows_[kRowKindCount];
};

// The page's tree of stacks through the Viewer's transforms (focus / merge / drop a function,
// collapse recursion, app code first): each node's stack transformed by the model
// (profile/transform.hh's transform_stack_table, the one implementation) and made a node of a new
// prefix tree, on which transform_snapshot moves the rows (time, timeline, allocations), so
// every view, served or `--html` alike, shows the transformed stacks.
struct TransformedTree {
  std::vector<std::pair<std::string, std::string>> frames;  // (label, path)
  std::vector<int32_t> frame_lines;                         // the old frame's method line (0: a new frame)
  std::vector<uint8_t> frame_categories;                    // profile/frame_category.hh's, per frame
  std::vector<int32_t> parents;                             // per new node; -1: a root
  std::vector<uint32_t> node_frames;                        // per new node
  std::vector<int32_t> node_map;                            // per old node: its new node, -1: gone
  std::vector<uint32_t> frame_map;                          // per old frame: the new frame of its label and path
};

// A stack that merge leaves empty is the "(no Ruby frames)" root, as the payload's.
TransformedTree transform_tree(const PageRows& rows, const std::vector<StackTransform>& list);

// The snapshot `base` through the transforms, as a snapshot of its own: its tree (what the page
// draws) and, on it, base's label sets, base's line tree (its frames those of the new tree, so
// the Source tab reads each moved row's recorded line-level stack) and every row of base moved
// to its new node (PageRows::move_rows).
struct TransformedSnapshot {
  TransformedTree tree;
  PageRows rows;
};
TransformedSnapshot transform_snapshot(const PageRows& base, const std::vector<StackTransform>& list);

// rperf 0.11's names-only samples (Rperf::Viewer.samples_to_json: each a stack of names, root
// first, a weight and a label set id), which a page's custom data source
// (window.RPERF_DATA_SOURCE) may hand it, made the model's stack tree (build_stack_tree) with one
// row per sample in its order, as the server makes a payload's: the page builds no tree itself.
// Per sample its depth (0: no Ruby frames), weight and label set, then every stack's names in
// turn; none when the columns differ in length or the names run out. Frames are (name, no
// path); every sample is thread 0's.
std::optional<StackTree> names_tree(const std::vector<uint32_t>& depths, const std::vector<int64_t>& weights,
                                    const std::vector<uint32_t>& sets, const std::vector<std::string>& names);

}  // namespace rperf::page
