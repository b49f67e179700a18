// The method view of a call tree (ruby-prof's MethodInfo): one entry per method across all its
// call sites. Self adds up the samples ending in the method; total counts each sample once
// however deep the method recurses in it (as the tree's nodes without the method among their
// ancestors add up). Callers and callees are arcs between methods, each weighing the samples in
// which the caller called the callee directly, once per sample: without recursion a method's
// callers add up to its total and its callees to its total minus its self; with recursion arcs
// overlap. Built from the method paths alone: the tree is not needed (see method_paths.hh).
#pragma once
#include <cstdint>
#include <vector>

#include "profile/call_tree.hh"

namespace rperf {

class MethodTable {
 public:
  struct Entry {
    int64_t self_ns = 0;
    int64_t total_ns = 0;
    bool recursive = false;  // called itself, directly or not
  };
  struct Arc {
    uint32_t caller;
    uint32_t callee;
    int64_t ns;
  };
  struct ArcRange {  // arc ids, heaviest first
    const uint32_t* first;
    const uint32_t* last;
    const uint32_t* begin() const { return first; }
    const uint32_t* end() const { return last; }
    size_t size() const { return static_cast<size_t>(last - first); }
  };

  explicit MethodTable(const MethodPaths& paths);
  explicit MethodTable(const CallTree& tree) : MethodTable(tree.paths()) {}

  // By method id (MethodPaths::methods()); the root's entry stays empty (it is no method).
  const std::vector<Entry>& entries() const { return entries_; }
  const std::vector<Arc>& arcs() const { return arcs_; }
  ArcRange callers(uint32_t method) const { return range(by_callee_, callee_offsets_, method); }
  ArcRange callees(uint32_t method) const { return range(by_caller_, caller_offsets_, method); }

 private:
  static ArcRange range(const std::vector<uint32_t>& ids, const std::vector<uint32_t>& offsets, uint32_t method) {
    return {ids.data() + offsets[method], ids.data() + offsets[method + 1]};
  }
  void add_samples(const MethodPaths& paths, std::vector<uint32_t>& calls_per_caller);
  void add_arcs(const MethodPaths& paths, const std::vector<uint32_t>& calls_per_caller);
  void index_arcs(size_t method_count);
  void sort_heaviest_first(std::vector<uint32_t>& ids, const std::vector<uint32_t>& offsets) const;

  std::vector<Entry> entries_;
  std::vector<Arc> arcs_;
  std::vector<uint32_t> by_caller_, caller_offsets_;  // arc ids grouped by caller
  std::vector<uint32_t> by_callee_, callee_offsets_;  // arc ids grouped by callee
};

}  // namespace rperf
