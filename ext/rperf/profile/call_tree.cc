#include "profile/call_tree.hh"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace rperf {

namespace {
uint64_t child_key_hash(uint32_t parent, uint32_t method) { return mix64((static_cast<uint64_t>(parent) << 32) | method); }
}  // namespace

CallTree::CallTree(const Profile& p, const CallTreeOptions& options) {
  MethodStacks stacks(p);
  nodes_.push_back(Node{});  // the root
  std::unordered_map<uint32_t, uint32_t> thread_methods;  // thread_seq -> its [thread N] method
  std::vector<CallSite> sites;
  // on_path[m] == sample_no: method m is on the path walked for the current sample, so a node
  // created for it now is recursive. Stamps instead of clearing a set per sample.
  std::vector<uint64_t> on_path(stacks.methods().size(), 0);
  uint64_t sample_no = 0;
  methods_ = stacks.take_methods();  // stack_of needs only its frame mapping from here on
  for (const Sample& s : p.samples) {
    if (!options.filter.keeps(p, s)) continue;
    sample_no++;
    stacks.stack_of(s, sites);
    uint32_t at = kRoot;
    nodes_[at].total_ns += s.weight_ns;
    if (options.separate_threads) {
      auto found = thread_methods.find(s.thread_seq);
      if (found == thread_methods.end()) {
        found = thread_methods.emplace(s.thread_seq, static_cast<uint32_t>(methods_.size())).first;
        methods_.push_back(Method{"[thread " + std::to_string(s.thread_seq) + "]", std::string(), 0});
        on_path.push_back(0);
      }
      at = child(at, found->second, on_path, sample_no);
      nodes_[at].total_ns += s.weight_ns;
    }
    for (const CallSite& site : sites) {
      at = child(at, site.method, on_path, sample_no);
      nodes_[at].total_ns += s.weight_ns;
      on_path[site.method] = sample_no;
    }
    nodes_[at].self_ns += s.weight_ns;
  }
  child_index_ = HashIndex();
  link_children();
}

uint32_t CallTree::child(uint32_t parent, uint32_t method, const std::vector<uint64_t>& on_path, uint64_t sample_no) {
  uint64_t h = child_key_hash(parent, method);
  uint32_t id = child_index_.find(h, [&](uint32_t i) { return nodes_[i].parent == parent && nodes_[i].method == method; });
  if (id != HashIndex::kNotFound) return id;
  id = static_cast<uint32_t>(nodes_.size());
  Node n;
  n.method = method;
  n.parent = parent;
  n.depth = nodes_[parent].depth + 1;
  n.recursive = on_path[method] == sample_no;
  nodes_.push_back(n);
  child_index_.insert(h, id);
  return id;
}

// Children lists, each node's contiguous in child_ids_ (grouped by parent), heaviest first.
void CallTree::link_children() {
  for (uint32_t i = 1; i < nodes_.size(); i++) nodes_[nodes_[i].parent].child_count++;
  uint32_t offset = 0;
  for (Node& n : nodes_) {
    n.first_child = offset;
    offset += n.child_count;
  }
  child_ids_.assign(offset, 0);
  std::vector<uint32_t> filled(nodes_.size(), 0);
  for (uint32_t i = 1; i < nodes_.size(); i++) {
    const Node& parent = nodes_[nodes_[i].parent];
    child_ids_[parent.first_child + filled[nodes_[i].parent]++] = i;
  }
  auto heavier = [&](uint32_t a, uint32_t b) {
    const Node &x = nodes_[a], &y = nodes_[b];
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    const Method &mx = methods_[x.method], &my = methods_[y.method];
    if (mx.label != my.label) return mx.label < my.label;
    return mx.path < my.path;
  };
  for (const Node& n : nodes_) {
    if (n.child_count > 1) std::sort(child_ids_.begin() + n.first_child, child_ids_.begin() + n.first_child + n.child_count, heavier);
  }
}

}  // namespace rperf
