#include "page/page_views.hh"

#include <cmath>
#include <cstdio>

#include "io/encoders.hh"
#include "profile/frame_category.hh"
#include "profile/transform.hh"
#include "views/call_tree.hh"
#include "views/label_state_totals.hh"
#include "views/method_table.hh"
#include "views/stack_chart.hh"

namespace rperf::page {

namespace {

// The VM state a label set names (%GVL=blocked|wait, %GC=mark|sweep), else running.
VmState vm_state_of_texts(const LabelTexts& set) {
  for (int st = kGvlBlocked; st < kVmStateCount; st++) {
    const VmStateNames& names = vm_state_names(static_cast<VmState>(st));
    for (const auto& [key, value] : set) {
      if (key == names.label_key && value == names.label_value) return static_cast<VmState>(st);
    }
  }
  return kRunning;
}

// `list` as a JSON array, each element written by each(element).
template <typename List, typename Each>
void append_list(std::string& out, const List& list, Each each) {
  out += '[';
  for (auto element = std::begin(list); element != std::end(list); ++element) {
    if (element != std::begin(list)) out += ',';
    each(*element);
  }
  out += ']';
}

void append_strings(std::string& out, std::initializer_list<std::string> texts) {
  append_list(out, texts, [&](const std::string& text) { append_json_string(out, text); });
}

// [[name, path, line], ...]
void append_methods(std::string& out, const std::vector<Method>& methods, const std::vector<uint32_t>& ids) {
  append_list(out, ids, [&](uint32_t id) {
    out += '[';
    append_json_string(out, methods[id].label);
    out += ',';
    append_json_string(out, methods[id].path);
    out += ',' + std::to_string(methods[id].line) + ']';
  });
}

std::string percent_text(double percent) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.15g", percent);
  return buf;
}

int64_t min_ns_of(int64_t total, double percent) { return static_cast<int64_t>(std::ceil(static_cast<double>(total) * percent / 100.0)); }

// The calls of at least min_ns, depth first, heaviest child first, into `nodes` and `methods`
// (each method once, in order of first use); false when there are more than max_nodes (truncate:
// the first max_nodes).
bool walk(const CallTree& tree, int64_t min_ns, size_t max_nodes, bool truncate, std::string& nodes, std::vector<uint32_t>& methods) {
  nodes = "[";
  methods.clear();
  std::vector<uint32_t> index_of(tree.methods().size(), UINT32_MAX);
  std::vector<std::pair<uint32_t, int64_t>> todo{{CallTree::kRoot, -1}};  // (node, parent's index)
  std::vector<uint32_t> children;
  size_t count = 0;
  while (!todo.empty() && count < max_nodes) {
    auto [id, parent] = todo.back();
    todo.pop_back();
    CallTree::Node n = tree.node(id);
    uint32_t& method = index_of[n.method];
    if (method == UINT32_MAX) {
      method = static_cast<uint32_t>(methods.size());
      methods.push_back(n.method);
    }
    nodes += (count ? ",[" : "[") + std::to_string(parent) + ',' + std::to_string(method) + ',' + std::to_string(n.total_ns) + ',' +
             std::to_string(n.self_ns) + (n.recursive ? ",1]" : ",0]");
    int64_t self = static_cast<int64_t>(count++);
    tree.children(id, children);
    for (size_t i = children.size(); i-- > 0;) {
      if (tree.node(children[i]).total_ns >= min_ns) todo.emplace_back(children[i], self);
    }
  }
  nodes += ']';
  return todo.empty() || truncate;
}

std::string tree_json(const CallTree& tree, const ViewLimits& limits, bool categories) {
  int64_t total = tree.total_ns();
  double percent = limits.min_percent;
  std::string nodes;
  std::vector<uint32_t> methods;
  for (;; percent *= 2) {
    const int64_t min_ns = min_ns_of(total, percent);
    const bool last = min_ns_of(total, percent * 2) <= min_ns;  // the threshold cannot rise (a total of 0)
    if (walk(tree, min_ns, limits.max_nodes, last, nodes, methods)) break;
  }
  std::string out = "{\"total_ns\":" + std::to_string(total) + ",\"min_percent\":" + percent_text(percent) +
                    ",\"node_count\":" + std::to_string(tree.size()) + ",\"methods\":";
  append_methods(out, tree.methods(), methods);
  out += ",\"nodes\":" + nodes;
  if (categories) {
    out += ",\"categories\":";
    append_list(out, methods, [&](uint32_t id) {
      append_json_string(out, frame_category_name(frame_category(tree.methods()[id].label, tree.methods()[id].path)));
    });
  }
  return out + '}';
}

void append_arcs(std::string& out, const std::vector<std::pair<uint32_t, int64_t>>& arcs) {
  append_list(out, arcs, [&](const auto& arc) { out += '[' + std::to_string(arc.first) + ',' + std::to_string(arc.second) + ']'; });
}

}  // namespace

Profile profile_of_rows(const PageRows& rows, RowKind kind, const KeptRows& kept) {
  Profile p;
  const Rows& r = rows.rows(kind);
  std::vector<uint32_t> frame_ids(rows.frame_labels().size(), UINT32_MAX);
  auto frame = [&](uint32_t f) {
    if (f >= frame_ids.size()) frame_ids.resize(f + 1, UINT32_MAX);
    uint32_t& id = frame_ids[f];
    if (id == UINT32_MAX) {
      id = p.frames.intern(rows.frame_path(f), rows.frame_label(f), 0);
      p.frames.at(id).start_line = rows.frame_line(f);
    }
    return id;
  };
  std::vector<uint32_t> stack_of(rows.node_count(), UINT32_MAX);
  std::vector<uint32_t> leaf_first;
  std::vector<VmState> states;
  for (const LabelTexts& set : rows.label_sets()) states.push_back(vm_state_of_texts(set));
  SampleAggregator merged;  // a range's timeline rows repeat few stacks
  rows.for_kept(kind, kept, [&](uint32_t i, int64_t weight) {
    uint32_t& stack = stack_of[r.node[i]];
    if (stack == UINT32_MAX) {
      leaf_first.clear();
      for (int32_t n = static_cast<int32_t>(r.node[i]); n >= 0; n = rows.parent(n)) leaf_first.push_back(frame(rows.frame_of(n)));
      stack = p.stacks.intern(leaf_first);
    }
    // Of no label set: the rows' sets are the page's, their VM state what the views use of them.
    merged.add(Sample{stack, r.thread_seq[i], 0, r.label_set[i] < states.size() ? states[r.label_set[i]] : kRunning, weight, 0});
  });
  p.samples = merged.take();
  return p;
}

std::string call_tree_json(const Profile& p, bool inverted, const ViewLimits& limits) {
  CallTreeOptions options;
  options.inverted = inverted;
  return tree_json(CallTree(p, options), limits, false);
}

std::string method_table_json(const Profile& p, const ViewLimits& limits) {
  CallTree tree(p, CallTreeOptions());
  MethodTable table(tree);
  int64_t total = tree.total_ns();
  MethodTable::View view = table.view(tree.methods(), min_ns_of(total, limits.min_percent), limits.max_methods, limits.max_arcs);
  std::string out = "{\"total_ns\":" + std::to_string(total) + ",\"min_percent\":" + percent_text(limits.min_percent) + ",\"max_methods\":" +
                    std::to_string(limits.max_methods) + ",\"max_arcs\":" + std::to_string(limits.max_arcs) +
                    ",\"method_count\":" + std::to_string(view.method_count) + ",\"methods\":";
  append_methods(out, tree.methods(), view.methods);
  out += ",\"entries\":";
  append_list(out, view.rows, [&](const MethodTable::View::Row& row) {
    out += '[' + std::to_string(row.method) + ',' + std::to_string(row.self_ns) + ',' + std::to_string(row.total_ns) +
           (row.recursive ? ",1," : ",0,");
    append_arcs(out, row.callers);
    out += ',';
    append_arcs(out, row.callees);
    out += ',' + std::to_string(row.caller_count) + ',' + std::to_string(row.callee_count) + ']';
  });
  return out + '}';
}

std::string sandwich_json(const Profile& p, const std::string& label, const std::string& path, const ViewLimits& limits) {
  auto cut = [&](StackTransform::Op op) {
    Profile copy = p;
    StackTransform t;
    t.op = op;
    t.label = label;
    t.path = path;
    transform_stacks(copy, {t});
    return copy;
  };
  CallTreeOptions bottom_up;
  bottom_up.inverted = true;
  CallTree callees(cut(StackTransform::Op::kFocus), CallTreeOptions());
  CallTree callers(cut(StackTransform::Op::kCallers), bottom_up);
  std::string out = "{\"method\":";
  append_strings(out, {label, path});
  out += ",\"total_ns\":" + std::to_string(callees.total_ns()) + ",\"callers\":" + tree_json(callers, limits, true) +
         ",\"callees\":" + tree_json(callees, limits, true) + '}';
  return out;
}

std::string label_values_json(const PageRows& rows, RowKind kind, const KeptRows& kept) {
  const Rows& r = rows.rows(kind);
  std::vector<uint32_t> sets;
  sets.reserve(kept.rows.size());
  for (uint32_t i : kept.rows) sets.push_back(i < r.size() ? r.label_set[i] : UINT32_MAX);
  std::string out;
  append_list(out, label_key_totals(rows.label_sets(), sets, kept.weights), [&](const LabelKeyTotal& k) {
    out += '[';
    append_json_string(out, k.key);
    out += ',';
    append_list(out, k.values, [&](const auto& value) {
      out += '[';
      append_json_string(out, value.first);
      out += ',' + std::to_string(value.second) + ']';
    });
    out += ',' + std::to_string(k.unset) + ']';
  });
  return out;
}

StackChartView stack_chart_view(const PageRows& rows, RowKind kind, const KeptRows& kept, int64_t min_end_ns) {
  // The merge straight from the rows: the kept rows of the first kept thread (the filter's), in
  // time order, each row's frames read off the tree (once per run of rows of one node).
  const Rows& r = rows.rows(kind);
  StackChartView out;
  StackChart& c = out.chart;
  int64_t end_ns = std::max<int64_t>(min_end_ns, 1);
  std::vector<std::pair<uint32_t, int64_t>> order;  // (row, kept weight)
  order.reserve(kept.rows.size());
  rows.for_kept(kind, kept, [&](uint32_t i, int64_t weight) {
    end_ns = std::max(end_ns, r.time_at(i));
    if (!order.empty() && r.thread_seq[i] > c.thread) return;
    if (order.empty() || r.thread_seq[i] < c.thread) order.clear();
    c.thread = r.thread_seq[i];
    order.emplace_back(i, weight);
  });
  auto earlier = [&](const auto& a, const auto& b) { return r.time_at(a.first) < r.time_at(b.first); };
  if (!std::is_sorted(order.begin(), order.end(), earlier)) std::stable_sort(order.begin(), order.end(), earlier);
  StackChartBuilder builder(c);
  std::vector<int32_t> frame_of(rows.frame_labels().size(), -1);  // payload frame -> chart frame
  std::vector<uint32_t> leaf_first;  // payload frames
  int64_t last_node = -1;
  for (const auto& [i, weight] : order) {
    if (weight <= 0) continue;
    if (r.node[i] != last_node) {
      last_node = r.node[i];
      leaf_first.clear();
      for (int32_t n = static_cast<int32_t>(r.node[i]); n >= 0; n = rows.parent(n)) leaf_first.push_back(rows.frame_of(n));
      std::vector<int32_t>& path = builder.path();
      path.clear();
      for (size_t d = leaf_first.size(); d-- > 0;) {  // root first, as the model interns them
        const uint32_t f = leaf_first[d];
        if (f >= frame_of.size()) frame_of.resize(f + 1, -1);
        if (frame_of[f] < 0) frame_of[f] = builder.frame(rows.frame_label(f), rows.frame_path(f));
        path.push_back(frame_of[f]);
      }
    }
    builder.add(weight, r.time_at(i), rows.state_of(r.label_set[i]));
  }
  builder.finish();
  out.json = "{\"thread\":" + std::to_string(c.thread) + ",\"total_ns\":" + std::to_string(c.total_ns) +
             ",\"samples\":" + std::to_string(c.samples) + ",\"end_ns\":" + std::to_string(end_ns) +
             ",\"cells\":" + std::to_string(c.x.size()) + ",\"frames\":";
  append_list(out.json, c.frames, [&](const auto& frame) {
    append_strings(out.json, {frame.first, frame.second, frame_category_name(frame_category(frame.first, frame.second))});
  });
  out.json += '}';
  return out;
}

}  // namespace rperf::page
