// The call tree, the bottom-up tree, the method table and the sandwich of the rows a filter
// keeps: the rows made a Profile (their stacks read off the page's tree, each method at its line,
// each row's VM state from its label set) and asked of the model's CallTree and MethodTable, the
// code `rperf report --tree/--graph` runs. Each view is JSON in the shape the page draws.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "page/page_rows.hh"
#include "profile/profile.hh"
#include "views/stack_chart.hh"

namespace rperf::page {

// What a tree or a table sends: calls and methods above min_percent of the total (doubled until
// at most max_nodes calls remain), at most max_methods methods by total and as many by self,
// each with its max_arcs heaviest callers and callees.
struct ViewLimits {
  double min_percent = 0.1;
  size_t max_nodes = 20000;
  size_t max_methods = 2000;
  size_t max_arcs = 20;
};

// The kept rows of `kind` as a profile of their own: rows of one stack, thread and VM state merged.
Profile profile_of_rows(const PageRows& rows, RowKind kind, const KeptRows& kept);

// {total_ns, min_percent, node_count, methods: [[name, path, line], ...], nodes: [[parent,
// method, total_ns, self_ns, recursive], ...]}: depth first, heaviest child first.
std::string call_tree_json(const Profile& p, bool inverted, const ViewLimits& limits);
// {total_ns, min_percent, max_methods, max_arcs, method_count, methods, entries: [[method,
// self_ns, total_ns, recursive, callers, callees, caller_count, callee_count], ...]}.
std::string method_table_json(const Profile& p, const ViewLimits& limits);
// {method: [name, path], total_ns, callers: tree, callees: tree}: the samples with the function
// cut at its outermost call (callers read bottom-up), each tree with its methods' categories.
std::string sandwich_json(const Profile& p, const std::string& label, const std::string& path, const ViewLimits& limits);

// The label filter and tag menus: per key of the kept rows' label sets (by key), [key, [[value,
// weight], ...] heaviest first, the weight of the rows without the key] (views/label_state_totals).
std::string label_values_json(const PageRows& rows, RowKind kind, const KeptRows& kept);

// The stack chart (views/stack_chart.hh) of the kept rows' (timeline rows') first thread (the filter's),
// merged from the rows themselves, on an axis of at least min_end_ns: json {thread, total_ns,
// samples, end_ns, cells, frames: [[name, path, category], ...]} and the chart, whose cell
// columns (x, w, d, f: -1 - state for a VM state's leaf, gap) the page gets as numbers, not JSON
// text: a big thread's columns are millions of digits the page would print and parse again.
struct StackChartView {
  std::string json;
  StackChart chart;
};
StackChartView stack_chart_view(const PageRows& rows, RowKind kind, const KeptRows& kept, int64_t min_end_ns);

}  // namespace rperf::page
