#include "profile/method_table.hh"

#include <algorithm>
#include <utility>

namespace rperf {

MethodTable::MethodTable(const CallTree& tree) {
  const std::vector<CallTree::Node>& nodes = tree.nodes();
  entries_.assign(tree.methods().size(), Entry{});
  for (uint32_t i = 1; i < nodes.size(); i++) {
    const CallTree::Node& n = nodes[i];
    Entry& e = entries_[n.method];
    e.self_ns += n.self_ns;
    if (n.recursive) e.recursive = true;
    else e.total_ns += n.total_ns;
  }

  // Arcs: depth first, an arc adds a node's total only when it is not already on the path
  // (the outermost call of a pair counts the samples of the deeper ones).
  HashIndex arc_index;
  std::vector<uint32_t> active;  // per arc: how often it is on the current path
  struct Step {
    uint32_t node;
    uint32_t arc;  // kNoNode for the root's children (the root is no caller)
    bool exit;
  };
  std::vector<Step> todo{{CallTree::kRoot, CallTree::kNoNode, false}};
  while (!todo.empty()) {
    Step step = todo.back();
    todo.pop_back();
    if (step.exit) {
      if (step.arc != CallTree::kNoNode) active[step.arc]--;
      continue;
    }
    const CallTree::Node& n = nodes[step.node];
    if (step.arc != CallTree::kNoNode && active[step.arc]++ == 0) arcs_[step.arc].ns += n.total_ns;
    todo.push_back({step.node, step.arc, true});
    for (const uint32_t* c = tree.children_begin(step.node); c != tree.children_end(step.node); c++) {
      uint32_t arc = CallTree::kNoNode;
      if (step.node != CallTree::kRoot) {
        uint32_t caller = n.method, callee = nodes[*c].method;
        uint64_t h = mix64((static_cast<uint64_t>(caller) << 32) | callee);
        arc = arc_index.find(h, [&](uint32_t a) { return arcs_[a].caller == caller && arcs_[a].callee == callee; });
        if (arc == HashIndex::kNotFound) {
          arc = static_cast<uint32_t>(arcs_.size());
          arcs_.push_back(Arc{caller, callee, 0});
          active.push_back(0);
          arc_index.insert(h, arc);
        }
      }
      todo.push_back({*c, arc, false});
    }
  }
  index_arcs(entries_.size());
}

void MethodTable::index_arcs(size_t method_count) {
  auto group = [&](std::vector<uint32_t>& ids, std::vector<uint32_t>& offsets, uint32_t Arc::*key) {
    offsets.assign(method_count + 1, 0);
    for (const Arc& a : arcs_) offsets[a.*key + 1]++;
    for (size_t m = 0; m < method_count; m++) offsets[m + 1] += offsets[m];
    ids.assign(arcs_.size(), 0);
    std::vector<uint32_t> filled(offsets.begin(), offsets.end() - 1);
    for (uint32_t a = 0; a < arcs_.size(); a++) ids[filled[arcs_[a].*key]++] = a;
    for (size_t m = 0; m < method_count; m++) {
      std::sort(ids.begin() + offsets[m], ids.begin() + offsets[m + 1], [&](uint32_t x, uint32_t y) {
        return arcs_[x].ns != arcs_[y].ns ? arcs_[x].ns > arcs_[y].ns : x < y;
      });
    }
  };
  group(by_caller_, caller_offsets_, &Arc::caller);
  group(by_callee_, callee_offsets_, &Arc::callee);
}

}  // namespace rperf
