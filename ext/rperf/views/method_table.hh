// The method view of a call tree (ruby-prof's MethodInfo): one entry per method across all its
// call sites. Self adds up the samples ending in the method; total counts each sample once
// however deep the method recurses in it (as the tree's nodes without the method among their
// ancestors add up). Callers and callees are arcs between methods, each weighing the samples in
// which the caller called the callee directly, once per sample: without recursion a method's
// callers add up to its total and its callees to its total minus its self; with recursion arcs
// overlap. Built from the method paths alone: the tree is not needed (see method_paths.hh).
// The entries are made with the table, the arcs when first asked for (a table asked only for
// its entries, as MethodTable.new is, skips them: on the 100k-stack benchmark profile they are
// ~50 MB of fresh memory, and writing fresh memory costs a page fault per 4 KB).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "views/call_tree.hh"

namespace rperf {

class MethodTable {
 public:
  struct Entry {
    int64_t self_ns = 0;
    int64_t total_ns = 0;
    bool recursive = false;  // called itself, directly or not
  };
  // A method's callers or callees: (method, ns), heaviest first.
  using Arcs = std::vector<std::pair<uint32_t, int64_t>>;
  struct MethodArcs {
    Arcs callers, callees;
    size_t caller_count = 0, callee_count = 0;  // all of them (the lists may be cut)
  };

  explicit MethodTable(std::shared_ptr<const MethodPaths> paths);
  explicit MethodTable(const CallTree& tree) : MethodTable(tree.shared_paths()) {}

  // By method id (MethodPaths::methods()); the root's entry stays empty (it is no method).
  const std::vector<Entry>& entries() const { return entries_; }
  // Every method's arcs (arcs_of all of them) are made by the first of these (std::bad_alloc
  // leaves them to the next call).
  const Arcs& callers(uint32_t method) const { return all_arcs()[method].callers; }
  const Arcs& callees(uint32_t method) const { return all_arcs()[method].callees; }
  void make_arcs() const { all_arcs(); }

  // The sampled methods (not the root; some time), heaviest total first, then self, then label
  // and path (as String#<=>): the order of the method view (`rperf report --graph`, the
  // Viewer's methods tab).
  std::vector<uint32_t> order(const std::vector<Method>& methods) const;
  // Of `ordered` (order()), those with a total of at least min_ns that are among the
  // max_methods heaviest by total or the max_methods heaviest by self (ties: the earlier in
  // `ordered`), in `ordered`'s order: what the Viewer's methods tab sends, so both of its sort
  // orders are right as far as they go.
  std::vector<uint32_t> heaviest(const std::vector<uint32_t>& ordered, int64_t min_ns, size_t max_methods) const;

  // The arcs of `methods`: one read of the paths that keeps only the calls into or out of them
  // (the Viewer's methods tab sends at most 20 callers and callees of its heaviest methods: on
  // the 100k-stack benchmark profile, 4M calls, making every arc took 0.50 s CPU, a few 0.0x s).
  // Heaviest first, ties by caller id (callers) or by first appearance in the sorted paths
  // (callees).
  // Each side keeps its `limit` heaviest arcs (a partial sort: the tab sends 20 of a heavy
  // method's hundreds) and counts them all.
  std::vector<MethodArcs> arcs_of(const std::vector<uint32_t>& methods, size_t limit = SIZE_MAX) const;

  // What the Viewer's methods tab shows (page/page_views.cc): the heaviest()
  // entries of at least min_ns, each with its max_arcs heaviest callers and callees of at least
  // min_ns and how many it has; every method named is listed once, in order of first use (an
  // entry's method, then its callers', then its callees'), and rows refer to it by that index.
  struct View {
    struct Row {
      uint32_t method;  // into methods
      int64_t self_ns, total_ns;
      bool recursive;
      Arcs callers, callees;              // (index into methods, ns)
      size_t caller_count, callee_count;  // all of them
    };
    std::vector<uint32_t> methods;  // method ids
    std::vector<Row> rows;
    size_t method_count = 0;  // of the whole table
  };
  View view(const std::vector<Method>& methods, int64_t min_ns, size_t max_methods, size_t max_arcs) const;
  // The memory held (the arcs' once made), without making them.
  size_t bytes() const;

 private:
  const std::vector<MethodArcs>& all_arcs() const {
    std::call_once(arcs_made_, [this] {
      std::vector<uint32_t> every(entries_.size());
      for (uint32_t m = 0; m < every.size(); m++) every[m] = m;
      all_arcs_ = arcs_of(every);
      arcs_ready_ = true;
    });
    return all_arcs_;
  }
  void add_samples();

  std::shared_ptr<const MethodPaths> paths_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> calls_per_caller_;  // [caller + 1]: its calls, each counted once per sample
  std::vector<uint32_t> calls_per_callee_;  // [callee + 1]: the calls into it, the same way
  std::vector<uint8_t> path_repeats_;       // per path: a method is on it twice (a call may repeat)
  mutable std::once_flag arcs_made_;
  mutable std::atomic<bool> arcs_ready_{false};
  mutable std::vector<MethodArcs> all_arcs_;  // by method, once made
};

}  // namespace rperf
