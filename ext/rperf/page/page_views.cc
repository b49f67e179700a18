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

void append_int(std::string& out, int64_t v) { out += std::to_string(v); }

// [[name, path, line], ...]
void append_methods(std::string& out, const std::vector<Method>& methods, const std::vector<uint32_t>& ids) {
  out += '[';
  for (size_t i = 0; i < ids.size(); i++) {
    const Method& m = methods[ids[i]];
    if (i) out += ',';
    out += '[';
    append_json_string(out, m.label);
    out += ',';
    append_json_string(out, m.path);
    out += ',';
    append_int(out, m.line);
    out += ']';
  }
  out += ']';
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
  while (!todo.empty()) {
    auto [id, parent] = todo.back();
    todo.pop_back();
    if (count >= max_nodes) {
      if (truncate) break;
      return false;
    }
    CallTree::Node n = tree.node(id);
    uint32_t& method = index_of[n.method];
    if (method == UINT32_MAX) {
      method = static_cast<uint32_t>(methods.size());
      methods.push_back(n.method);
    }
    if (count) nodes += ',';
    nodes += '[';
    append_int(nodes, parent);
    nodes += ',';
    append_int(nodes, method);
    nodes += ',';
    append_int(nodes, n.total_ns);
    nodes += ',';
    append_int(nodes, n.self_ns);
    nodes += n.recursive ? ",1]" : ",0]";
    int64_t self = static_cast<int64_t>(count++);
    tree.children(id, children);
    for (size_t i = children.size(); i-- > 0;) {
      if (tree.node(children[i]).total_ns >= min_ns) todo.emplace_back(children[i], self);
    }
  }
  nodes += ']';
  return true;
}

std::string tree_json(const CallTree& tree, const ViewLimits& limits, bool categories) {
  int64_t total = tree.total_ns();
  double percent = limits.min_percent;
  std::string nodes;
  std::vector<uint32_t> methods;
  for (;;) {
    int64_t min_ns = min_ns_of(total, percent);
    if (walk(tree, min_ns, limits.max_nodes, false, nodes, methods)) break;
    if (min_ns_of(total, percent * 2) <= min_ns) {  // the threshold cannot rise (a total of 0)
      walk(tree, min_ns, limits.max_nodes, true, nodes, methods);
      break;
    }
    percent *= 2;
  }
  std::string out = "{\"total_ns\":" + std::to_string(total) + ",\"min_percent\":";
  char buf[32];
  snprintf(buf, sizeof(buf), "%.15g", percent);
  out += buf;
  out += ",\"node_count\":" + std::to_string(tree.size()) + ",\"methods\":";
  append_methods(out, tree.methods(), methods);
  out += ",\"nodes\":" + nodes;
  if (categories) {
    out += ",\"categories\":[";
    for (size_t i = 0; i < methods.size(); i++) {
      const Method& m = tree.methods()[methods[i]];
      if (i) out += ',';
      append_json_string(out, frame_category_name(frame_category(m.label, m.path)));
    }
    out += ']';
  }
  return out + '}';
}

void append_arcs(std::string& out, const std::vector<std::pair<uint32_t, int64_t>>& arcs) {
  out += '[';
  for (size_t i = 0; i < arcs.size(); i++) {
    if (i) out += ',';
    out += '[' + std::to_string(arcs[i].first) + ',' + std::to_string(arcs[i].second) + ']';
  }
  out += ']';
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
      id = p.frames.intern(rows.frame_path(f), f < rows.frame_labels().size() ? rows.frame_labels()[f] : std::string(), 0);
      p.frames.at(id).start_line = rows.frame_line(f);
    }
    return id;
  };
  std::vector<uint32_t> stack_of(rows.node_count(), UINT32_MAX);
  std::vector<uint32_t> leaf_first;
  std::vector<VmState> states;
  for (const LabelTexts& set : rows.label_sets()) states.push_back(vm_state_of_texts(set));
  SampleAggregator merged;  // a range's timeline rows repeat few stacks
  for (size_t k = 0; k < kept.rows.size(); k++) {
    uint32_t i = kept.rows[k];
    uint32_t& stack = stack_of[r.node[i]];
    if (stack == UINT32_MAX) {
      leaf_first.clear();
      for (int32_t n = static_cast<int32_t>(r.node[i]); n >= 0; n = rows.parent(n)) leaf_first.push_back(frame(rows.frame_of(n)));
      stack = p.stacks.intern(leaf_first);
    }
    Sample s;
    s.stack = stack;
    s.thread_seq = r.thread_seq[i];
    s.vm_state = r.label_set[i] < states.size() ? states[r.label_set[i]] : kRunning;
    s.weight_ns = kept.weights[k];
    merged.add(s);
  }
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
  char buf[32];
  snprintf(buf, sizeof(buf), "%.15g", limits.min_percent);
  std::string out = "{\"total_ns\":" + std::to_string(total) + ",\"min_percent\":" + buf + ",\"max_methods\":" +
                    std::to_string(limits.max_methods) + ",\"max_arcs\":" + std::to_string(limits.max_arcs) +
                    ",\"method_count\":" + std::to_string(view.method_count) + ",\"methods\":";
  append_methods(out, tree.methods(), view.methods);
  out += ",\"entries\":[";
  for (size_t i = 0; i < view.rows.size(); i++) {
    const MethodTable::View::Row& row = view.rows[i];
    if (i) out += ',';
    out += '[' + std::to_string(row.method) + ',' + std::to_string(row.self_ns) + ',' + std::to_string(row.total_ns) +
           (row.recursive ? ",1," : ",0,");
    append_arcs(out, row.callers);
    out += ',';
    append_arcs(out, row.callees);
    out += ',' + std::to_string(row.caller_count) + ',' + std::to_string(row.callee_count) + ']';
  }
  return out + "]}";
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
  std::string out = "{\"method\":[";
  append_json_string(out, label);
  out += ',';
  append_json_string(out, path);
  out += "],\"total_ns\":" + std::to_string(callees.total_ns()) + ",\"callers\":" + tree_json(callers, limits, true) +
         ",\"callees\":" + tree_json(callees, limits, true) + '}';
  return out;
}

std::string label_values_json(const PageRows& rows, RowKind kind, const KeptRows& kept) {
  const Rows& r = rows.rows(kind);
  std::vector<uint32_t> sets;
  sets.reserve(kept.rows.size());
  for (uint32_t i : kept.rows) sets.push_back(i < r.size() ? r.label_set[i] : UINT32_MAX);
  std::string out = "[";
  for (const LabelKeyTotal& k : label_key_totals(rows.label_sets(), sets, kept.weights)) {
    if (out.size() > 1) out += ',';
    out += '[';
    append_json_string(out, k.key);
    out += ",[";
    for (size_t i = 0; i < k.values.size(); i++) {
      if (i) out += ',';
      out += '[';
      append_json_string(out, k.values[i].first);
      out += ',' + std::to_string(k.values[i].second) + ']';
    }
    out += "]," + std::to_string(k.unset) + ']';
  }
  return out + ']';
}

StackChartView stack_chart_view(const PageRows& rows, RowKind kind, const KeptRows& kept, int64_t min_end_ns) {
  // The merge straight from the rows: the kept rows of the first kept thread (the filter's), in
  // time order, each row's frames read off the tree (once per run of rows of one node).
  const Rows& r = rows.rows(kind);
  StackChartView out;
  StackChart& c = out.chart;
  int64_t end_ns = std::max<int64_t>(min_end_ns, 1);
  std::vector<uint32_t> order;  // indexes into kept
  order.reserve(kept.rows.size());
  bool any = false;
  for (size_t k = 0; k < kept.rows.size() && k < kept.weights.size(); k++) {
    const uint32_t i = kept.rows[k];
    if (i >= r.size()) continue;
    const int64_t time = r.time_ns.empty() ? 0 : r.time_ns[i];
    end_ns = std::max(end_ns, time);
    if (any && r.thread_seq[i] > c.thread) continue;
    if (!any || r.thread_seq[i] < c.thread) order.clear();
    any = true;
    c.thread = r.thread_seq[i];
    order.push_back(static_cast<uint32_t>(k));
  }
  auto time_of = [&](uint32_t k) { return r.time_ns.empty() ? 0 : r.time_ns[kept.rows[k]]; };
  auto earlier = [&](uint32_t a, uint32_t b) { return time_of(a) < time_of(b); };
  if (!std::is_sorted(order.begin(), order.end(), earlier)) std::stable_sort(order.begin(), order.end(), earlier);
  StackChartBuilder builder(c);
  std::vector<int32_t> frame_of(rows.frame_labels().size(), -1);  // payload frame -> chart frame
  std::vector<uint32_t> leaf_first;  // payload frames
  int64_t last_node = -1;
  for (uint32_t k : order) {
    const uint32_t i = kept.rows[k];
    if (kept.weights[k] <= 0) continue;
    if (r.node[i] != last_node) {
      last_node = r.node[i];
      leaf_first.clear();
      for (int32_t n = static_cast<int32_t>(r.node[i]); n >= 0; n = rows.parent(n)) leaf_first.push_back(rows.frame_of(n));
      std::vector<int32_t>& path = builder.path();
      path.clear();
      for (size_t d = leaf_first.size(); d-- > 0;) {  // root first, as the model interns them
        const uint32_t f = leaf_first[d];
        if (f >= frame_of.size()) frame_of.resize(f + 1, -1);
        if (frame_of[f] < 0) frame_of[f] = builder.frame(f < rows.frame_labels().size() ? rows.frame_labels()[f] : std::string(), rows.frame_path(f));
        path.push_back(frame_of[f]);
      }
    }
    builder.add(kept.weights[k], time_of(k), rows.state_of(r.label_set[i]));
  }
  builder.finish();
  out.json = "{\"thread\":" + std::to_string(c.thread) + ",\"total_ns\":" + std::to_string(c.total_ns) +
             ",\"samples\":" + std::to_string(c.samples) + ",\"end_ns\":" + std::to_string(end_ns) +
             ",\"cells\":" + std::to_string(c.x.size()) + ",\"frames\":[";
  for (size_t i = 0; i < c.frames.size(); i++) {
    const auto& [label, path] = c.frames[i];
    if (i) out.json += ',';
    out.json += '[';
    append_json_string(out.json, label);
    out.json += ',';
    append_json_string(out.json, path);
    out.json += ',';
    append_json_string(out.json, frame_category_name(frame_category(label, path)));
    out.json += ']';
  }
  out.json += "]}";
  return out;
}

}  // namespace rperf::page
