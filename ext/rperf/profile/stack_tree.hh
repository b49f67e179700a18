// The Viewer's prefix tree of stacks (lib/rperf/viewer/payload.rb sends it): method-level
// frames ((label, path) whatever the line), root side first, one node per distinct path. The
// heaviest `max_samples` samples get a node each (their leaf); the others are folded by the
// caller into one "[pruned]" root node, interned here after the kept samples' nodes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.hh"

namespace rperf {

struct StackTree {
  static constexpr const char* kPrunedLabel = "[pruned]";
  static constexpr const char* kPrunedPath = "<rperf>";
  static constexpr const char* kNoFramesLabel = "(no Ruby frames)";  // an empty stack's root frame

  std::vector<std::pair<std::string, std::string>> frames;  // (label, path), in order of first use
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
  size_t pruned_samples = 0;
  int64_t pruned_weight_ns = 0;
  int64_t total_weight_ns = 0;  // of every sample
};

class IdleSamples;
// `idle`: marks the rows' idleness (none marked without it).
StackTree build_stack_tree(const Profile& p, const std::vector<Sample>& samples, size_t max_samples, bool raw = false,
                           const IdleSamples* idle = nullptr);

}  // namespace rperf
