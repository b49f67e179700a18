// The Viewer's prefix tree of stacks and the rows on it (lib/rperf/viewer/payload.rb sends
// them): method-level frames ((label, path) whatever the line), root side first, one node per
// distinct path. The heaviest `max_samples` samples get a node each (their leaf); the others are
// folded into one "[pruned]" root node, interned after the kept samples' nodes. The timeline's
// raw samples and the allocation samples are rows on the same tree.
#pragma once
#include <cstdint>
#include <cstddef>
#include <string>
#include <vector>

#include "profile/profile.hh"

namespace rperf {

struct StackTree {
  static constexpr const char* kPrunedLabel = "[pruned]";
  static constexpr const char* kPrunedPath = "<rperf>";
  static constexpr const char* kNoFramesLabel = "(no Ruby frames)";  // an empty stack's root frame

  std::vector<std::pair<std::string, std::string>> frames;  // (label, path), in order of first use
  // Per frame, its method's line as MethodStacks reads it (a frame's start_line, else the lowest
  // sampled line, else 0): the page's call trees name methods as the server's did.
  std::vector<int32_t> frame_lines;
  std::vector<int32_t> parents;                             // per node; -1: a root frame
  std::vector<uint32_t> node_frames;                        // per node, into frames
  // Sample indices, heaviest first (ties in their order), when there are more than
  // max_samples; empty when every sample is kept (in its own order).
  std::vector<uint32_t> order;
  std::vector<uint32_t> kept_nodes;  // the leaf node of each kept sample, in kept order
  int32_t pruned_node = -1;          // when samples were left out
  int32_t no_frames_node = -1;       // when a kept sample has no frame
  // With `raw`: the node of each raw sample (the profile's samples, one per tick), for the
  // timeline: its stack's node when in the tree, else the [pruned] node (else a new node).
  std::vector<uint32_t> raw_nodes;

  // The rows the Viewer sends: each kept sample (in kept order) at its leaf, then the pruned
  // samples folded into the [pruned] node per (thread, label set, idle), in order of first
  // appearance among them (heaviest first), so filters and totals still add up.
  struct Row {
    uint32_t node;
    int64_t weight_ns;
    uint32_t thread_seq;
    uint32_t label_set;
    bool idle;  // in a known idle wait (profile/idle_wait.hh), when asked
  };
  std::vector<Row> rows;
  // With `lines` (a profile recorded with lines: true), for the Source tab: each kept sample's
  // stack at line level, a prefix tree of (tree frame, line) nodes, root side first; per row its
  // leaf, -1 for a folded row (the timeline's rows: TimelineRow::line_node). Without lines: all
  // empty.
  std::vector<int32_t> line_parents;
  std::vector<uint32_t> line_frames;
  std::vector<int32_t> line_lines;
  std::vector<int32_t> row_line_nodes;
  size_t pruned_samples = 0;
  int64_t pruned_weight_ns = 0;
  int64_t total_weight_ns = 0;  // of every sample

  // With `raw`: the timeline's rows, one per raw sample at its node (raw_nodes), in time order.
  // Beyond max_timeline rows, rows of one node, thread, label set and idleness in one time slot
  // are merged, the slot doubling from 1 ms until they fit (timeline_quantum_ns; 0: none merged).
  // A merged row ends at its last sample's time and weighs them all.
  struct TimelineRow {
    uint32_t node;
    int64_t weight_ns;
    uint32_t thread_seq;
    uint32_t label_set;  // the sample's own (its VM state's label included)
    int64_t time_ns;
    bool idle;
    int32_t line_node = -1;  // with lines: its raw sample's line-level leaf
  };
  std::vector<TimelineRow> timeline;
  int64_t timeline_quantum_ns = 0;

  // With `allocations`: as the time rows, by objects allocated: the heaviest max_samples sites at
  // their leaf, the rest folded into the [pruned] node per (thread, label set, class).
  struct AllocationRow {
    uint32_t node;
    int64_t objects;
    uint32_t thread_seq;
    uint32_t label_set;
    uint32_t class_index;  // into allocation_classes
    int64_t retained;
  };
  std::vector<AllocationRow> allocation_rows;
  std::vector<uint32_t> allocation_classes;  // Profile::class_names ids, in order of first use
  size_t pruned_allocations = 0;
  int64_t pruned_objects = 0;
  int64_t allocated = 0, retained = 0;  // of every allocation sample
};

class IdleSamples;
struct StackTreeOptions {
  size_t max_samples = SIZE_MAX;
  bool raw = false;  // the profile's samples are raw: raw_nodes and the timeline's rows
  size_t max_timeline = SIZE_MAX;
  bool lines = false;  // the line-level tree (the profile has lines)
  const IdleSamples* idle = nullptr;  // marks the rows' idleness (none marked without it)
  const std::vector<AllocationSample>* allocations = nullptr;  // aggregated, as shown
};
// `samples`: the aggregated samples as shown (rows refer to them in that order).
StackTree build_stack_tree(const Profile& p, const std::vector<Sample>& samples, const StackTreeOptions& options);

}  // namespace rperf
