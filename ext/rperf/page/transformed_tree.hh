// The page's tree of stacks through the Viewer's transforms (focus / merge / drop a function,
// collapse recursion, app code first): each node's stack transformed by the model
// (profile/transform.hh's transform_stack_table, the one implementation) and made a node of a new
// prefix tree, so the page maps its rows (time, timeline, allocations) to the new nodes and
// every view, served or `--html` alike, shows the transformed stacks.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "page/page_rows.hh"
#include "profile/transform.hh"

namespace rperf::page {

struct TransformedTree {
  std::vector<std::pair<std::string, std::string>> frames;  // (label, path)
  std::vector<int32_t> frame_lines;                         // the old frame's method line (0: a new frame)
  std::vector<uint8_t> frame_categories;                    // profile/frame_category.hh's, per frame
  std::vector<int32_t> parents;                             // per new node; -1: a root
  std::vector<uint32_t> node_frames;                        // per new node
  std::vector<int32_t> node_map;                            // per old node: its new node, -1: gone
};

// A stack that merge leaves empty is the "(no Ruby frames)" root, as the payload's.
TransformedTree transform_tree(const PageRows& rows, const std::vector<StackTransform>& list);

}  // namespace rperf::page
