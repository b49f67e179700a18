// The page model's C interface in WebAssembly (page_model.wasm), whose one caller is
// viewer/assets/page_model.js. One call: the page writes a request into the area
// rperf_page_request gives (an operation's name, then named values) and calls rperf_page_call;
// the operation (kOperations) reads its values by name and answers with named values, which the
// page reads the same way (PageModel.call). So each operation's inputs and results are declared
// once, here, where it reads and writes them, and the page's side of the boundary is generic.
//
// A request or an answer is a list of values, each its name (a text), its Type (uint32), its
// byte length (uint32) and its bytes; a text is a uint32 byte length and its UTF-8 (integers
// little-endian, as wasm's). Numbers read as the type the operation asks for; weights cross as
// doubles, JavaScript's numbers (exact below 2^53 ns, 104 days).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "page/page_rows.hh"
#include "page/page_views.hh"
#include "profile/label_set_match.hh"
#include "views/totals_diff.hh"

namespace {

using rperf::page::KeptRows;
using rperf::page::PageRows;
using rperf::page::RowKind;

// In page_model.js's order (its TYPES): columns of numbers, one number, texts, and rows of
// doubles (a uint32 width, then the rows' numbers one row after another).
enum Type : uint32_t { kU8, kI32, kU32, kF64, kNumber, kTexts, kRows };
template <typename T>  // int64_t and double cross as doubles
constexpr Type kTypeOf = std::is_same_v<T, uint8_t> ? kU8 : std::is_same_v<T, int32_t> ? kI32 : std::is_same_v<T, uint32_t> ? kU32 : kF64;

std::vector<std::unique_ptr<PageRows>> snapshots;  // by handle
std::vector<uint8_t> request, last_answer;

bool read_u32(const uint8_t*& at, const uint8_t* end, uint32_t& value) {
  if (end - at < 4) return false;
  std::memcpy(&value, at, 4);
  at += 4;
  return true;
}

bool read_text(const uint8_t*& at, const uint8_t* end, std::string& text) {
  uint32_t length;
  if (!read_u32(at, end, length) || static_cast<size_t>(end - at) < length) return false;
  text.assign(reinterpret_cast<const char*>(at), length);
  at += length;
  return true;
}

// The i-th number of a column of N.
template <typename N>
double nth(const uint8_t* bytes, size_t i) {
  N n;
  std::memcpy(&n, bytes + sizeof(N) * i, sizeof(N));
  return n;
}

// The i-th number of a column of `type` (kU8 to kNumber) as a double, exact for all of them.
double number_at(const uint8_t* bytes, uint32_t type, size_t i) {
  return type == kU8 ? bytes[i] : type == kI32 ? nth<int32_t>(bytes, i) : type == kU32 ? nth<uint32_t>(bytes, i) : nth<double>(bytes, i);
}

// A number as T; one out of T's range (NaN: a page's mistake) as 0, where a cast would trap.
template <typename T>
T number_as(double value) {
  if constexpr (std::is_integral_v<T>) {
    if (!(value >= double(std::numeric_limits<T>::lowest()) && value < double(std::numeric_limits<T>::max()) + 1)) return T{};
  }
  return static_cast<T>(value);
}

// One request and its answer. A value the operation asks for and the request lacks (unless
// optional) or has of another type is an error, the answer's only value.
class Call {
 public:
  std::string op;
  std::vector<uint8_t> answer = std::vector<uint8_t>(4);  // its byte length first

  bool parse(const std::vector<uint8_t>& bytes) {
    const uint8_t *at = bytes.data(), *end = at + bytes.size();
    if (!read_text(at, end, op)) return false;
    while (at < end) {
      std::string name;
      Value v;
      if (!read_text(at, end, name) || !read_u32(at, end, v.type) || !read_u32(at, end, v.size) || static_cast<size_t>(end - at) < v.size) return false;
      v.bytes = at;
      at += v.size;
      values_.emplace_back(std::move(name), v);
    }
    return true;
  }

  bool has(const std::string& name) { return find(name, true) != nullptr; }

  template <typename T>
  std::vector<T> column(const std::string& name, bool optional = false) {
    static constexpr size_t kSizes[] = {1, 4, 4, 8, 8};  // per number, by Type
    const Value* v = find(name, optional);
    if (v && v->type > kNumber) fail(op + ": " + name + " is not numbers");
    std::vector<T> out(v && v->type <= kNumber ? v->size / kSizes[v->type] : 0);
    for (size_t i = 0; i < out.size(); i++) out[i] = number_as<T>(number_at(v->bytes, v->type, i));
    return out;
  }

  template <typename T = double>
  T number(const std::string& name, bool optional = false) {
    std::vector<T> values = column<T>(name, optional);
    return values.empty() ? T{} : values[0];
  }

  // An empty column of numbers reads as no texts: the page cannot tell an empty list's type.
  std::vector<std::string> texts(const std::string& name, bool optional = false) {
    std::vector<std::string> out;
    const Value* v = find(name, optional);
    if (!v || !v->size) return out;
    if (v->type != kTexts) fail(op + ": " + name + " is not texts");
    for (const uint8_t *at = v->bytes, *end = at + v->size; ok() && at < end;) {
      if (!read_text(at, end, out.emplace_back())) fail(op + ": " + name + " ends within a text");
    }
    return out;
  }

  std::string text(const std::string& name) {
    std::vector<std::string> list = texts(name);
    if (list.size() != 1) fail(op + ": " + name + " is not one text");
    return list.empty() ? "" : list[0];
  }

  PageRows& snapshot(const std::string& name = "handle") {
    static PageRows none;
    uint32_t handle = number<uint32_t>(name);
    if (handle < snapshots.size() && snapshots[handle]) return *snapshots[handle];
    fail(op + ": no snapshot " + std::to_string(handle));
    return none;
  }

  RowKind kind(const std::string& name = "kind") {
    uint32_t kind = number<uint32_t>(name);
    if (kind < static_cast<uint32_t>(rperf::page::kRowKindCount)) return static_cast<RowKind>(kind);
    fail(op + ": no rows of kind " + std::to_string(kind));
    return RowKind::kSamples;
  }

  void fail(const std::string& message) {
    if (error_.empty()) error_ = message;
  }
  bool ok() const { return error_.empty(); }
  // The answer as sent: its values, or the error alone.
  void finish() {
    if (!ok()) {
      answer.resize(4);
      put("error", std::vector<std::string>{error_});
    }
    uint32_t size = static_cast<uint32_t>(answer.size() - 4);
    std::memcpy(answer.data(), &size, 4);
  }

  // Answers: a number, a column, texts, rows of numbers, or a column (or rows) of a list: each
  // element's `field` (a member or a function of it).
  Call& put(const char* name, double number) { return put_bytes(name, kNumber, &number, sizeof(number)); }
  template <typename T>
  Call& put(const char* name, const std::vector<T>& values) {
    if constexpr (kTypeOf<T> == kF64 && !std::is_same_v<T, double>) return put(name, std::vector<double>(values.begin(), values.end()));
    else return put_bytes(name, kTypeOf<T>, values.data(), values.size() * sizeof(T));
  }
  Call& put(const char* name, const std::vector<std::string>& texts) {
    std::vector<uint8_t> blob;
    for (const std::string& text : texts) append_text(blob, text);
    return put_bytes(name, kTexts, blob.data(), blob.size());
  }
  template <size_t N>
  Call& put(const char* name, const std::vector<std::array<double, N>>& rows) {
    std::vector<uint8_t> bytes(4 + rows.size() * sizeof(rows[0]));
    const uint32_t width = N;
    std::memcpy(bytes.data(), &width, 4);
    if (!rows.empty()) std::memcpy(bytes.data() + 4, rows.data(), rows.size() * sizeof(rows[0]));
    return put_bytes(name, kRows, bytes.data(), bytes.size());
  }
  template <typename List, typename Field>
  Call& put(const char* name, const List& list, Field field) {
    std::vector<std::decay_t<std::invoke_result_t<Field, decltype(list[0])>>> column;
    for (const auto& element : list) column.push_back(std::invoke(field, element));
    return put(name, column);
  }

 private:
  struct Value {
    uint32_t type = 0, size = 0;
    const uint8_t* bytes = nullptr;
  };
  std::vector<std::pair<std::string, Value>> values_;  // a few: found by name, in order
  std::string error_;

  const Value* find(const std::string& name, bool optional) {
    for (const auto& [given, value] : values_) {
      if (given == name) return &value;
    }
    if (!optional) fail(op + ": no " + name);
    return nullptr;
  }

  static void append_text(std::vector<uint8_t>& blob, const std::string& text) {
    uint32_t length = static_cast<uint32_t>(text.size());
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(&length);
    blob.insert(blob.end(), bytes, bytes + 4);
    blob.insert(blob.end(), text.begin(), text.end());
  }

  Call& put_bytes(const char* name, Type type, const void* data, size_t size) {
    append_text(answer, name);
    uint32_t head[2] = {type, static_cast<uint32_t>(size)};
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(head);
    answer.insert(answer.end(), bytes, bytes + sizeof(head));
    answer.insert(answer.end(), static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + size);
    return *this;
  }
};

// The filter of select, view, timeline_bins and tree_diff (SampleFilter's row filters): thread
// (absent: all), hidden_threads, label_sets (the kept ones; absent: all), range [from_ns, to_ns]
// (absent: all), hide_idle; each name after `prefix` (tree_diff's base: base_).
rperf::SampleFilter filter_of(Call& c, const std::string& prefix = "") {
  rperf::SampleFilter filter;
  filter.by_thread = c.has(prefix + "thread");
  filter.thread = c.number<uint32_t>(prefix + "thread", true);
  filter.hidden_threads = c.column<uint32_t>(prefix + "hidden_threads", true);
  std::sort(filter.hidden_threads.begin(), filter.hidden_threads.end());
  filter.by_label_sets = c.has(prefix + "label_sets");
  filter.label_sets = c.column<uint32_t>(prefix + "label_sets", true);
  std::sort(filter.label_sets.begin(), filter.label_sets.end());
  std::vector<int64_t> range = c.column<int64_t>(prefix + "range", true);
  filter.by_range = range.size() == 2;
  filter.from_ns = filter.by_range ? range[0] : 0;
  filter.to_ns = filter.by_range ? range[1] : 0;
  filter.hide_idle = c.number(prefix + "hide_idle", true) != 0;
  return filter;
}

// Rows named by the page: their indexes (rows) and kept weights (weights).
KeptRows kept_of(Call& c) { return KeptRows{c.column<uint32_t>("rows"), c.column<int64_t>("weights")}; }

// A new snapshot kept at the first free handle, answered as `handle`.
void add_snapshot(Call& c, std::unique_ptr<PageRows> s) {
  auto free = std::find(snapshots.begin(), snapshots.end(), nullptr);
  if (free == snapshots.end()) free = snapshots.insert(free, nullptr);
  *free = std::move(s);
  c.put("handle", double(free - snapshots.begin()));
}

// The transforms (`transforms`): per transform its op's name, then for an op that names a
// function its label and path.
std::vector<rperf::StackTransform> transforms_of(Call& c) {
  std::vector<std::string> texts = c.texts("transforms");
  std::vector<rperf::StackTransform> list;
  for (size_t at = 0; c.ok() && at < texts.size(); at++) {
    rperf::StackTransform& t = list.emplace_back();
    if (rperf::stack_transform_op(texts[at], false, t.op)) continue;
    if (!rperf::stack_transform_op(texts[at], true, t.op) || texts.size() - at < 3) c.fail("the page model cannot apply the transforms");
    else {
      t.label = texts[++at];
      t.path = texts[++at];
    }
  }
  return list;
}

using Frame = std::pair<std::string, std::string>;  // (label, path)

// Each operation: the values it reads, what it answers. Reads come first; one that fails gives
// an empty value (an empty snapshot, the first kind of rows), so an operation that only answers
// runs harmlessly before its answer is replaced by the error, and one that changes a snapshot
// checks c.ok() first.
const std::pair<const char*, void (*)(Call&)> kOperations[] = {
    // A new snapshot: its handle. Its tree: per node its parent (parents) and frame (frames); per
    // frame its label, path and method line (labels, paths, lines). Its label sets as the page
    // spells them: each set's pair count (pairs), then every pair's key and value (texts). A
    // profile with lines: the payload's line tree (PageRows::set_line_tree), per node
    // line_parents, line_frames (the tree's), line_lines.
    {"new", [](Call& c) {
       auto s = std::make_unique<PageRows>();
       std::vector<int32_t> parents = c.column<int32_t>("parents"), lines = c.column<int32_t>("lines");
       std::vector<uint32_t> frames = c.column<uint32_t>("frames"), pairs = c.column<uint32_t>("pairs");
       std::vector<std::string> labels = c.texts("labels"), paths = c.texts("paths"), texts = c.texts("texts");
       std::vector<rperf::LabelTexts> sets(pairs.size());
       for (size_t i = 0, at = 0; i < pairs.size() && c.ok(); i++) {
         if (texts.size() - at < size_t{pairs[i]} * 2) c.fail("the snapshot's label sets cannot be read");
         for (; c.ok() && sets[i].size() < pairs[i]; at += 2) sets[i].emplace_back(texts[at], texts[at + 1]);
       }
       s->set_frames(std::move(labels), std::move(paths), std::move(lines));
       s->set_label_sets(std::move(sets));
       if (!s->set_tree(std::move(parents), std::move(frames))) c.fail("the snapshot's tree is not a prefix tree");
       if (c.ok() && c.has("line_parents") &&
           !s->set_line_tree(c.column<int32_t>("line_parents"), c.column<uint32_t>("line_frames"), c.column<int32_t>("line_lines"))) {
         c.fail("the snapshot's line tree is not a prefix tree of its frames");
       }
       if (c.ok()) add_snapshot(c, std::move(s));
     }},
    {"delete", [](Call& c) {
       c.snapshot();
       if (c.ok()) snapshots[c.number<uint32_t>("handle")].reset();
     }},
    // The rows of `kind`: Rows' columns by their names, the optional ones as the rows have them.
    {"set_rows", [](Call& c) {
       PageRows& s = c.snapshot();
       RowKind kind = c.kind();
       rperf::page::Rows rows{c.column<uint32_t>("node"), c.column<uint32_t>("thread_seq"), c.column<uint32_t>("label_set"),
                              c.column<int64_t>("weight"), c.column<int64_t>("time_ns", true), c.column<uint8_t>("idle", true),
                              c.column<uint32_t>("class_index", true), c.column<int64_t>("retained", true), c.column<int32_t>("line_node", true)};
       if (c.ok() && !s.set_rows(kind, std::move(rows))) c.fail("the snapshot's rows are not on its tree");
     }},
    // Every label value of the snapshot (values), sorted, each once: what the page tests its
    // tagfocus regex on.
    {"label_values", [](Call& c) { c.put("values", rperf::label_values(c.snapshot().label_sets())); }},
    // The label sets (sets: their ids, ascending) the label and tag filters keep
    // (LabelSetMatch): the label key (key: none or one), its values, unset; focus (tagfocus's
    // matched values; absent: no tagfocus); each ignore pair's key and value (ignore_keys,
    // ignore_values) and whether it has one (has_value).
    {"match_label_sets", [](Call& c) {
       rperf::LabelSetMatch match;
       std::vector<std::string> key = c.texts("key"), keys = c.texts("ignore_keys"), values = c.texts("ignore_values");
       std::vector<uint8_t> has_value = c.column<uint8_t>("has_value");
       match.by_label = key.size() == 1;
       match.key = match.by_label ? key[0] : "";
       match.values = c.texts("values");
       match.unset = c.number("unset") != 0;
       match.by_focus = c.has("focus");
       match.focus_values = c.texts("focus", true);
       if (keys.size() != values.size() || keys.size() != has_value.size()) c.fail("match_label_sets: the ignore pairs differ in length");
       for (size_t i = 0; c.ok() && i < keys.size(); i++) {
         match.ignore.emplace_back(keys[i], has_value[i] ? std::optional<std::string>(values[i]) : std::nullopt);
       }
       c.put("sets", rperf::matching_label_sets(c.snapshot().label_sets(), match));
     }},
    // The rows of `kind` the filter (filter_of) keeps: their indexes (rows) and kept weights.
    {"select", [](Call& c) {
       KeptRows kept = c.snapshot().select(c.kind(), filter_of(c));
       c.put("rows", kept.rows).put("weights", kept.weights);
     }},
    // A view of the rows of `kind` the filter keeps as JSON (json; page/page_views.hh): view 0 the
    // call tree, 1 the bottom-up tree, 2 the method table, 3 the sandwich of `function` (label,
    // path), 4 the stack chart (of the filter's thread, on an axis of at least min_end_ns; its
    // cell columns: x, w, d, f, gap), 5 the label values' weights (label_values_json); max_nodes,
    // max_methods, max_arcs: ViewLimits' (absent, 0: default).
    {"view", [](Call& c) {
       PageRows& s = c.snapshot();
       RowKind kind = c.kind();
       KeptRows kept = s.select(kind, filter_of(c));
       uint32_t view = c.number<uint32_t>("view");
       std::vector<std::string> function = c.texts("function", true);
       rperf::page::ViewLimits limits;
       if (uint32_t n = c.number<uint32_t>("max_nodes", true)) limits.max_nodes = n;
       if (uint32_t n = c.number<uint32_t>("max_methods", true)) limits.max_methods = n;
       if (uint32_t n = c.number<uint32_t>("max_arcs", true)) limits.max_arcs = n;
       if (view > 5 || (view == 3 && function.size() != 2)) c.fail("the page model cannot build view " + std::to_string(view));
       if (!c.ok()) return;
       if (view == 5) {  // no profile: label sets and weights only
         c.put("json", {rperf::page::label_values_json(s, kind, kept)});
       } else if (view == 4) {
         rperf::page::StackChartView chart = rperf::page::stack_chart_view(s, kind, kept, c.number<int64_t>("min_end_ns", true));
         const rperf::StackChart& cells = chart.chart;
         c.put("json", {chart.json}).put("x", cells.x).put("w", cells.w).put("d", cells.d).put("f", cells.f).put("gap", cells.gap);
       } else {
         rperf::Profile profile = rperf::page::profile_of_rows(s, kind, kept);
         c.put("json", {view == 2   ? rperf::page::method_table_json(profile, limits)
                        : view == 3 ? rperf::page::sandwich_json(profile, function[0], function[1], limits)
                                    : rperf::page::call_tree_json(profile, view == 1, limits)});
       }
     }},
    // The Timeline's `bins` bins of the timeline rows the filter keeps, on an axis of at least
    // min_end_ns (PageRows::timeline_bins; TimelineBins' fields by their names); top: per bin
    // TimelineBins::kTopLeaves leaf names (-1: none).
    {"timeline_bins", [](Call& c) {
       rperf::TimelineBins b = c.snapshot().timeline_bins(filter_of(c), c.number<uint32_t>("bins"), c.number<int64_t>("min_end_ns", true));
       c.put("end_ns", double(b.end_ns)).put("bin_ns", b.bin_ns).put("kept_ns", double(b.kept_ns));
       c.put("threads", b.threads).put("occupancy", b.occupancy).put("leaf_names", b.leaf_names).put("top", b.top, [](const auto& leaves) {
         std::array<double, rperf::TimelineBins::kTopLeaves> top;
         top.fill(-1);
         std::copy_n(leaves.begin(), std::min(leaves.size(), top.size()), top.begin());
         return top;
       });
     }},
    // The Diff tab's flame graph (page_rows.hh's tree_diff): the rows of `kind` the filter keeps
    // against those of base_kind the base_ filter keeps in the snapshot base_handle, normalize:
    // the base scaled to this one's sum. Answers TreeDiff's fields by their names.
    {"tree_diff", [](Call& c) {
       PageRows &s = c.snapshot(), &base = c.snapshot("base_handle");
       RowKind kind = c.kind(), base_kind = c.kind("base_kind");
       rperf::page::TreeDiff d = rperf::page::tree_diff(s, kind, s.select(kind, filter_of(c)), base, base_kind,
                                                        base.select(base_kind, filter_of(c, "base_")), c.number("normalize", true) != 0);
       c.put("sum", double(d.sum)).put("base_sum", double(d.base_sum)).put("base_scale", d.base_scale);
       c.put("self_change", d.self_change);
     }},
    // The tree weights of rows of `kind` (kept_of: a selection): their sum, and per node self,
    // total and states (its self per state, kTimelineStates each).
    {"tree_weights", [](Call& c) {
       rperf::page::TreeWeights w = c.snapshot().tree_weights(c.kind(), kept_of(c));
       c.put("sum", double(w.sum)).put("self", w.self).put("total", w.total).put("states", w.state_self);
     }},
    // The flame graph's tag groups of rows of `kind` (kept_of; PageRows::tag_groups) under the
    // tagroot keys (root_keys) with each node's self time under the tagleaf keys (leaf_keys).
    // Per group: sums, under, root_frames_end, node_counts and leaf_counts; its nodes one group
    // after another (nodes; totals; states, kTimelineStates each) and its leaves likewise
    // (leaf_nodes, leaf_parents: the group's own indexes, leaf_names, leaf_values); the tagroot
    // frames: root_parents, root_names, root_values.
    {"tag_groups", [](Call& c) {
       using rperf::page::TagFrame;
       using rperf::page::TagGroup;
       rperf::page::TagGroups tags = c.snapshot().tag_groups(c.kind(), kept_of(c), c.texts("root_keys"), c.texts("leaf_keys"));
       std::vector<TagFrame> leaves;
       std::vector<uint32_t> nodes;
       std::vector<int64_t> totals, states;
       for (const TagGroup& g : tags.groups) {
         leaves.insert(leaves.end(), g.leaves.begin(), g.leaves.end());
         nodes.insert(nodes.end(), g.nodes.begin(), g.nodes.end());
         totals.insert(totals.end(), g.total.begin(), g.total.end());
         states.insert(states.end(), g.state_self.begin(), g.state_self.end());
       }
       c.put("sums", tags.groups, &TagGroup::sum).put("under", tags.groups, &TagGroup::under);
       c.put("root_frames_end", tags.groups, &TagGroup::root_frames_end);
       c.put("node_counts", tags.groups, [](const TagGroup& g) { return static_cast<uint32_t>(g.nodes.size()); });
       c.put("leaf_counts", tags.groups, [](const TagGroup& g) { return static_cast<uint32_t>(g.leaves.size()); });
       c.put("nodes", nodes).put("totals", totals).put("states", states);
       c.put("leaf_nodes", leaves, &TagFrame::node).put("leaf_parents", leaves, &TagFrame::parent);
       c.put("leaf_names", leaves, &TagFrame::name).put("leaf_values", leaves, &TagFrame::value);
       c.put("root_parents", tags.root_frames, &TagFrame::parent).put("root_names", tags.root_frames, &TagFrame::name);
       c.put("root_values", tags.root_frames, &TagFrame::value);
     }},
    // The Allocations tab's sums of allocation rows (kept_of; weights unread) of the objects asked
    // for (by_retained): sum, allocated, retained, per node self and total; node_classes: (node,
    // class, objects) each; sites: (frame, class, allocated, retained) each, at most max_sites.
    {"allocation_sums", [](Call& c) {
       rperf::page::AllocationSums sums = c.snapshot().allocation_sums(kept_of(c), c.number("by_retained") != 0, c.number<uint32_t>("max_sites"));
       c.put("sum", double(sums.weights.sum)).put("allocated", double(sums.allocated));
       c.put("retained", double(sums.retained)).put("self", sums.weights.self).put("total", sums.weights.total);
       c.put("node_classes", sums.node_classes, [](const auto& k) { return std::array<double, 3>{double(k.node), double(k.class_index), double(k.objects)}; });
       c.put("sites", sums.sites, [](const auto& t) {
         return std::array<double, 4>{double(t.frame), double(t.class_index), double(t.allocated), double(t.retained)};
       });
     }},
    // The sums per thread of rows of `kind` (kept_of), threads: per thread thread_seq, total,
    // running, GVL blocked, GVL wait, GC, idle, top frame (-1: none), its weight.
    {"thread_sums", [](Call& c) {
       c.put("threads", c.snapshot().thread_sums(c.kind(), kept_of(c)), [](const rperf::page::ThreadSums& t) {
         return std::array<double, 9>{double(t.thread_seq), double(t.total), double(t.by_state[0]), double(t.by_state[1]), double(t.by_state[2]),
                                      double(t.by_state[3]), double(t.idle), double(t.top_frame), double(t.top_frame_weight)};
       });
     }},
    // The Source tab's time per line of the file `path` in rows of `kind` (kept_of;
    // PageRows::source_lines): lines: (line, self, total) each; kept_ns: the rows' weight.
    {"source_lines", [](Call& c) {
       rperf::SourceLines source = c.snapshot().source_lines(c.kind(), kept_of(c), c.text("path"));
       c.put("lines", source.lines, [](const rperf::LineWeight& l) { return std::array<double, 3>{double(l.line), double(l.self_ns), double(l.total_ns)}; });
       c.put("kept_ns", double(source.kept_ns));
     }},
    // The snapshot through the Viewer's transforms (transforms_of) as a new snapshot with every
    // row moved to its new node (page/page_rows.hh transform_snapshot): its handle, and of its
    // tree what the page draws: TransformedTree's frames (labels, paths), frame_lines,
    // frame_categories, parents and node_frames; total_weight: its time samples' weight.
    {"transform", [](Call& c) {
       PageRows& base = c.snapshot();
       std::vector<rperf::StackTransform> list = transforms_of(c);
       if (!c.ok()) return;
       rperf::page::TransformedSnapshot t = rperf::page::transform_snapshot(base, list);
       const rperf::page::TransformedTree& tree = t.tree;
       const std::vector<int64_t>& weights = t.rows.rows(RowKind::kSamples).weight;
       c.put("total_weight", double(std::accumulate(weights.begin(), weights.end(), int64_t{0})));
       c.put("labels", tree.frames, &Frame::first).put("paths", tree.frames, &Frame::second);
       c.put("frame_lines", tree.frame_lines).put("frame_categories", tree.frame_categories).put("parents", tree.parents);
       c.put("node_frames", tree.node_frames);
       add_snapshot(c, std::make_unique<PageRows>(std::move(t.rows)));
     }},
    // The rows of `kind` of the snapshot base_handle moved into `handle`, a transform of it
    // (PageRows::move_rows): a timeline loaded after the transform.
    {"move_rows", [](Call& c) {
       PageRows &s = c.snapshot(), &base = c.snapshot("base_handle");
       RowKind kind = c.kind();
       if (c.ok() && !s.move_rows(base, kind)) c.fail("move_rows: the snapshot is not a transform of snapshot " + std::to_string(c.number<uint32_t>("base_handle")));
     }},
    // The snapshot's rows of `kind` as it keeps them: Rows' columns by their names, the optional
    // ones empty where the rows have none.
    {"rows", [](Call& c) {
       const rperf::page::Rows& r = c.snapshot().rows(c.kind());
       c.put("node", r.node).put("thread_seq", r.thread_seq).put("label_set", r.label_set).put("weight", r.weight);
       c.put("time_ns", r.time_ns).put("idle", r.idle).put("class_index", r.class_index).put("retained", r.retained).put("line_node", r.line_node);
     }},
    // rperf 0.11's names-only samples made the model's stack tree (page/page_rows.hh): per sample
    // depths, weights and sets, then every stack's names, root first (names). Answers its frames
    // (labels, paths), per node parents, node_frames, per sample row_nodes, row_weights, row_sets.
    {"names_tree", [](Call& c) {
       std::optional<rperf::StackTree> named =
           rperf::page::names_tree(c.column<uint32_t>("depths"), c.column<int64_t>("weights"), c.column<uint32_t>("sets"), c.texts("names"));
       if (!named) c.fail("names_tree: the samples' columns differ in length or their names run out");
       if (!c.ok()) return;
       using Row = rperf::StackTree::Row;
       const rperf::StackTree& tree = *named;
       c.put("labels", tree.frames, &Frame::first).put("paths", tree.frames, &Frame::second);
       c.put("parents", tree.parents).put("node_frames", tree.node_frames).put("row_nodes", tree.rows, &Row::node);
       c.put("row_weights", tree.rows, &Row::weight_ns).put("row_sets", tree.rows, &Row::label_set);
     }},
    // The Diff table: two method tables ranked by change (views/totals_diff.hh, `rperf diff`'s),
    // each its entries' after_self, after_total and after_names (name, file, name...; before_
    // likewise), the before's weights times before_scale. rows: TotalsDiffRow's target, base,
    // base_self, target_self, base_total, target_total.
    {"diff_totals", [](Call& c) {
       auto rows_of = [&](const std::string& side) {
         std::vector<double> self = c.column<double>(side + "_self"), total = c.column<double>(side + "_total");
         std::vector<std::string> names = c.texts(side + "_names");
         if (total.size() != self.size() || names.size() != 2 * self.size()) c.fail("diff_totals: the " + side + " table's columns differ in length");
         std::vector<rperf::FunctionRow> rows;
         for (size_t i = 0; c.ok() && i < self.size(); i++) rows.push_back({names[2 * i], names[2 * i + 1], self[i], total[i]});
         return rows;
       };
       c.put("rows", rperf::diff_totals(rows_of("before"), rows_of("after"), c.number("before_scale")), [](const rperf::TotalsDiffRow& r) {
         return std::array<double, 6>{double(r.target), double(r.base), r.base_self, r.target_self, r.base_total, r.target_total};
       });
     }},
};

}  // namespace

extern "C" {

// The area of `bytes` the page writes its next request into.
uint8_t* rperf_page_request(uint32_t bytes) {
  request.resize(bytes);
  return request.data();
}

// Runs the request's operation: its answer (a uint32 byte length, then its values), kept until
// the next call.
const uint8_t* rperf_page_call() {
  Call call;
  auto named = [&](const auto& operation) { return call.op == operation.first; };
  auto operation = call.parse(request) ? std::find_if(std::begin(kOperations), std::end(kOperations), named) : nullptr;
  if (!operation) call.fail("the page model cannot read the request");
  else if (operation == std::end(kOperations)) call.fail("the page model has no operation " + call.op);
  else operation->second(call);
  call.finish();
  last_answer = std::move(call.answer);
  return last_answer.data();
}

}  // extern "C"
