#include "profile/method_table.hh"

#include <algorithm>

namespace rperf {

namespace {
// True when the call from `node`'s parent to it (caller -> callee methods) happens higher up on
// its path too: that outer call counted these samples already. Only a recursive caller (its
// method among its ancestors) can repeat a call, so the walk up is rare.
bool outer_call_counted(const CallTree& tree, uint32_t node) {
  const CallTree::Node& n = tree.node(node);
  const CallTree::Node& parent = tree.node(n.parent);
  if (!tree.recursive(n.parent)) return false;
  for (uint32_t up = n.parent; up != CallTree::kRoot; up = tree.node(up).parent) {
    const CallTree::Node& u = tree.node(up);
    if (u.method == n.method && u.parent != CallTree::kRoot && tree.node(u.parent).method == parent.method) return true;
  }
  return false;
}
}  // namespace

MethodTable::MethodTable(const CallTree& tree) {
  const std::vector<CallTree::Node>& nodes = tree.nodes();
  const size_t method_count = tree.methods().size();
  entries_.assign(method_count, Entry{});
  // Entries, and how many calls each method made (nodes under a node of it), in one pass in
  // depth-first order: a node's parent was read just before, nothing is looked up at random.
  std::vector<uint32_t> start(method_count + 1, 0);
  for (uint32_t i = 1; i < nodes.size(); i++) {
    const CallTree::Node& n = nodes[i];
    Entry& e = entries_[n.method];
    e.self_ns += n.self_ns;
    if (tree.recursive(i)) e.recursive = true;
    else e.total_ns += n.total_ns;
    if (n.parent != CallTree::kRoot) start[nodes[n.parent].method + 1]++;
  }
  for (size_t m = 0; m < method_count; m++) start[m + 1] += start[m];

  // The calls grouped by caller, each with the time it adds to its arc (none when an outer
  // call of the same pair counted it), then added up per callee through a per-method slot.
  struct Call {
    uint32_t callee;
    int64_t ns;
  };
  std::vector<Call> calls(start.back());
  std::vector<uint32_t> next(start.begin(), start.end() - 1);
  for (uint32_t i = 1; i < nodes.size(); i++) {
    const CallTree::Node& n = nodes[i];
    if (n.parent == CallTree::kRoot) continue;
    calls[next[nodes[n.parent].method]++] = Call{n.method, outer_call_counted(tree, i) ? 0 : n.total_ns};
  }
  std::vector<uint32_t> arc_of_callee(method_count, 0);
  std::vector<uint32_t> caller_of_slot(method_count, CallTree::kNoNode);
  for (uint32_t caller = 0; caller < method_count; caller++) {
    for (uint32_t k = start[caller]; k < start[caller + 1]; k++) {
      const Call& c = calls[k];
      if (caller_of_slot[c.callee] != caller) {
        caller_of_slot[c.callee] = caller;
        arc_of_callee[c.callee] = static_cast<uint32_t>(arcs_.size());
        arcs_.push_back(Arc{caller, c.callee, 0});
      }
      arcs_[arc_of_callee[c.callee]].ns += c.ns;
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
