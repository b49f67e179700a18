// The page model's C interface in WebAssembly (page_model.wasm, loaded by viewer.js). A snapshot
// of the page is a handle (rperf_page_new). The page writes a call's columns into one scratch
// area (rperf_page_scratch), then calls; results stay in the handle until its next call of the
// same kind and are read from the pointers below. Weights cross as doubles: JavaScript's
// numbers (exact below 2^53 ns, 104 days).
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "page/names_tree.hh"
#include "page/page_rows.hh"
#include "page/page_views.hh"
#include "page/transformed_tree.hh"
#include "profile/label_set_match.hh"
#include "views/totals_diff.hh"

namespace {

using rperf::page::KeptRows;
using rperf::page::PageRows;
using rperf::page::RowKind;
using rperf::page::ThreadSums;
using rperf::page::TreeWeights;

struct Snapshot {
  PageRows rows;
  std::vector<double> allocation_header, node_classes, sites;
  rperf::SampleFilter filter;  // rperf_page_filter's
  std::vector<uint32_t> matched_sets;
  std::vector<uint8_t> values_blob;  // label_values' texts
  KeptRows kept;
  rperf::TimelineBins bins;
  std::vector<double> bins_header;
  std::vector<uint32_t> bins_top;
  std::vector<uint8_t> bins_names;
  TreeWeights weights;
  std::vector<double> self, total, state_self, kept_weights, threads;
  std::string view;  // rperf_page_view's JSON
  std::vector<double> chart_cells;  // the stack chart's cell columns (rperf_page_view 4)
  std::vector<double> tree_diff;    // rperf_page_tree_diff's
  rperf::SourceLines source;  // rperf_page_source_lines'
  std::vector<double> source_table;
  rperf::page::TransformedTree transformed;  // rperf_page_transform's
  std::vector<uint8_t> transformed_frames;   // its frames' texts
};

std::vector<std::unique_ptr<Snapshot>> snapshots;

// rperf_page_names_tree's result, until its next call.
struct NamesTree {
  std::vector<uint8_t> frames_blob;  // each frame's label and path (texts)
  std::vector<int32_t> parents;
  std::vector<uint32_t> node_frames, row_nodes, row_sets;
  std::vector<double> row_weights;
  uint32_t frame_count = 0;
} names;

std::vector<double> diff_rows;  // rperf_page_diff_totals', until its next call
std::vector<uint64_t> scratch;  // 8-byte aligned for the page's Float64Array columns

Snapshot* snapshot(uint32_t handle) { return handle < snapshots.size() ? snapshots[handle].get() : nullptr; }

// Reads `n` values of T from the scratch area at byte `offset`, advancing it. A column past the
// area's end (a page that did not write it) reads as zeros, which the setters refuse.
template <typename T>
std::vector<T> column(size_t& offset, size_t n) {
  std::vector<T> out(n);
  const size_t bytes = n * sizeof(T);
  if (n && offset <= scratch.size() * 8 && bytes <= scratch.size() * 8 - offset) {
    std::memcpy(out.data(), reinterpret_cast<const char*>(scratch.data()) + offset, bytes);
  }
  offset += (bytes + 7) / 8 * 8;
  return out;
}

std::vector<int64_t> as_int64(const std::vector<double>& values) {
  std::vector<int64_t> out(values.size());
  for (size_t i = 0; i < values.size(); i++) out[i] = static_cast<int64_t>(values[i]);
  return out;
}

std::vector<double> as_double(const std::vector<int64_t>& values) {
  return std::vector<double>(values.begin(), values.end());
}

// Rows named by the page: indexes uint32[n], then weights float64[n].
KeptRows scratch_rows(size_t n) {
  size_t offset = 0;
  KeptRows rows;
  rows.rows = column<uint32_t>(offset, n);
  rows.weights = as_int64(column<double>(offset, n));
  return rows;
}

// Texts in a blob: each a uint32 byte length (little-endian, as wasm) and its bytes. Reads
// `count` of them from `blob` at `at`, advancing it; false when the blob ends first.
bool read_texts(const std::vector<uint8_t>& blob, size_t& at, size_t count, std::vector<std::string>& out) {
  for (size_t i = 0; i < count; i++) {
    uint32_t length;
    if (blob.size() - at < sizeof(length)) return false;
    std::memcpy(&length, blob.data() + at, sizeof(length));
    at += sizeof(length);
    if (blob.size() - at < length) return false;
    out.emplace_back(reinterpret_cast<const char*>(blob.data() + at), length);
    at += length;
  }
  return true;
}

void append_text(std::vector<uint8_t>& blob, const std::string& text) {
  uint32_t length = static_cast<uint32_t>(text.size());
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(&length);
  blob.insert(blob.end(), bytes, bytes + sizeof(length));
  blob.insert(blob.end(), text.begin(), text.end());
}

bool valid_kind(uint32_t kind) { return kind < static_cast<uint32_t>(rperf::page::kRowKindCount); }

}  // namespace

extern "C" {

// A scratch area of at least `bytes`, columns placed at multiples of 8 bytes.
void* rperf_page_scratch(uint32_t bytes) {
  if (scratch.size() * 8 < bytes) scratch.resize((bytes + 7) / 8);
  return scratch.data();
}

uint32_t rperf_page_new() {
  for (uint32_t i = 0; i < snapshots.size(); i++) {
    if (!snapshots[i]) {
      snapshots[i] = std::make_unique<Snapshot>();
      return i;
    }
  }
  snapshots.push_back(std::make_unique<Snapshot>());
  return static_cast<uint32_t>(snapshots.size() - 1);
}

void rperf_page_delete(uint32_t handle) {
  if (handle < snapshots.size()) snapshots[handle].reset();
}

// Scratch: parents int32[nodes], frames uint32[nodes], each frame's method line
// int32[frame_count], then a blob of blob_bytes: each frame's label and path (texts, read_texts).
int rperf_page_set_tree(uint32_t handle, uint32_t nodes, uint32_t frame_count, uint32_t blob_bytes) {
  Snapshot* s = snapshot(handle);
  if (!s) return 0;
  size_t offset = 0;
  std::vector<int32_t> parents = column<int32_t>(offset, nodes);
  std::vector<uint32_t> frames = column<uint32_t>(offset, nodes);
  std::vector<int32_t> lines = column<int32_t>(offset, frame_count);
  std::vector<uint8_t> blob = column<uint8_t>(offset, blob_bytes);
  std::vector<std::string> texts, labels, paths;
  size_t at = 0;
  if (!read_texts(blob, at, size_t{frame_count} * 2, texts)) return 0;
  for (size_t i = 0; i < texts.size(); i += 2) {
    labels.push_back(std::move(texts[i]));
    paths.push_back(std::move(texts[i + 1]));
  }
  s->rows.set_frames(std::move(labels), std::move(paths), std::move(lines));
  return s->rows.set_tree(std::move(parents), std::move(frames));
}

// The payload's line tree (a profile with lines: PageRows::set_line_tree); scratch: parent
// int32[nodes], tree frame uint32[nodes], line int32[nodes]. After set_tree, before set_rows.
int rperf_page_set_line_tree(uint32_t handle, uint32_t nodes) {
  Snapshot* s = snapshot(handle);
  if (!s) return 0;
  size_t offset = 0;
  std::vector<int32_t> parents = column<int32_t>(offset, nodes);
  std::vector<uint32_t> frames = column<uint32_t>(offset, nodes);
  std::vector<int32_t> lines = column<int32_t>(offset, nodes);
  return s->rows.set_line_tree(std::move(parents), std::move(frames), std::move(lines));
}

// Scratch: node uint32[n], thread uint32[n], label set uint32[n], weight float64[n], then
// time float64[n] if has_time, idle uint8[n] if has_idle, class uint32[n] and retained
// float64[n] if has_classes (allocation rows), line-level leaf int32[n] if has_lines.
int rperf_page_set_rows(uint32_t handle, uint32_t kind, uint32_t n, int has_time, int has_idle, int has_classes, int has_lines) {
  Snapshot* s = snapshot(handle);
  if (!s || !valid_kind(kind)) return 0;
  size_t offset = 0;
  rperf::page::Rows rows;
  rows.node = column<uint32_t>(offset, n);
  rows.thread_seq = column<uint32_t>(offset, n);
  rows.label_set = column<uint32_t>(offset, n);
  rows.weight = as_int64(column<double>(offset, n));
  if (has_time) rows.time_ns = as_int64(column<double>(offset, n));
  if (has_idle) rows.idle = column<uint8_t>(offset, n);
  if (has_classes) {
    rows.class_index = column<uint32_t>(offset, n);
    rows.retained = as_int64(column<double>(offset, n));
  }
  if (has_lines) rows.line_node = column<int32_t>(offset, n);
  return s->rows.set_rows(static_cast<RowKind>(kind), std::move(rows));
}

// The snapshot's label sets as the page spells them; scratch: each set's pair count
// uint32[sets], then a blob of blob_bytes: each pair's key and value (texts, read_texts).
int rperf_page_set_label_sets(uint32_t handle, uint32_t sets, uint32_t blob_bytes) {
  Snapshot* s = snapshot(handle);
  if (!s) return 0;
  size_t offset = 0;
  std::vector<uint32_t> pairs = column<uint32_t>(offset, sets);
  std::vector<uint8_t> blob = column<uint8_t>(offset, blob_bytes);
  std::vector<rperf::LabelTexts> label_sets;
  size_t at = 0;
  for (uint32_t count : pairs) {
    std::vector<std::string> texts;
    if (!read_texts(blob, at, size_t{count} * 2, texts)) return 0;
    rperf::LabelTexts set;
    for (size_t i = 0; i + 1 < texts.size(); i += 2) set.emplace_back(std::move(texts[i]), std::move(texts[i + 1]));
    label_sets.push_back(std::move(set));
  }
  s->rows.set_label_sets(std::move(label_sets));
  return 1;
}

// Every label value of the snapshot, sorted, each once (what the page tests its tagfocus regex
// on): returns how many; rperf_page_label_values_blob / _bytes: their texts.
uint32_t rperf_page_label_values(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  if (!s) return 0;
  std::vector<std::string> values = rperf::label_values(s->rows.label_sets());
  s->values_blob.clear();
  for (const std::string& v : values) append_text(s->values_blob, v);
  return static_cast<uint32_t>(values.size());
}

const uint8_t* rperf_page_label_values_blob(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->values_blob.data() : nullptr;
}

uint32_t rperf_page_label_values_bytes(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? static_cast<uint32_t>(s->values_blob.size()) : 0;
}

// The label sets the label and tag filters keep (LabelSetMatch); scratch: whether each ignore
// pair has a value uint8[ignore_count], then a blob of blob_bytes: the label key (when
// by_label), its values, the focus values, then each ignore pair's key and value (an empty text
// when it has none). Returns how many; rperf_page_matched_sets: their ids, ascending.
uint32_t rperf_page_match_label_sets(uint32_t handle, int by_label, int unset, uint32_t value_count, int by_focus,
                                     uint32_t focus_count, uint32_t ignore_count, uint32_t blob_bytes) {
  Snapshot* s = snapshot(handle);
  if (!s) return 0;
  size_t offset = 0;
  std::vector<uint8_t> has_value = column<uint8_t>(offset, ignore_count);
  std::vector<uint8_t> blob = column<uint8_t>(offset, blob_bytes);
  rperf::LabelSetMatch match;
  std::vector<std::string> key, ignore;
  size_t at = 0;
  bool read = read_texts(blob, at, by_label ? 1 : 0, key) && read_texts(blob, at, value_count, match.values) &&
              read_texts(blob, at, focus_count, match.focus_values) && read_texts(blob, at, size_t{ignore_count} * 2, ignore);
  s->matched_sets.clear();
  if (!read) return 0;
  match.by_label = by_label != 0;
  if (match.by_label) match.key = key[0];
  match.unset = unset != 0;
  match.by_focus = by_focus != 0;
  for (size_t i = 0; i < ignore_count; i++) {
    std::optional<std::string> value;
    if (has_value[i]) value = ignore[2 * i + 1];
    match.ignore.emplace_back(ignore[2 * i], value);
  }
  s->matched_sets = rperf::matching_label_sets(s->rows.label_sets(), match);
  return static_cast<uint32_t>(s->matched_sets.size());
}

const uint32_t* rperf_page_matched_sets(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->matched_sets.data() : nullptr;
}

// The filter of the next rperf_page_select and rperf_page_timeline_bins (SampleFilter's row
// filters); scratch: hidden threads uint32[hidden_count] (sorted), then kept label sets
// uint32[set_count] (sorted).
int rperf_page_filter(uint32_t handle, int by_thread, uint32_t thread, uint32_t hidden_count, int by_sets, uint32_t set_count,
                      int by_range, double from_ns, double to_ns, int hide_idle) {
  Snapshot* s = snapshot(handle);
  if (!s) return 0;
  size_t offset = 0;
  rperf::SampleFilter& filter = s->filter;
  filter.by_thread = by_thread != 0;
  filter.thread = thread;
  filter.hidden_threads = column<uint32_t>(offset, hidden_count);
  filter.by_label_sets = by_sets != 0;
  filter.label_sets = column<uint32_t>(offset, set_count);
  filter.by_range = by_range != 0;
  filter.from_ns = static_cast<int64_t>(from_ns);
  filter.to_ns = static_cast<int64_t>(to_ns);
  filter.hide_idle = hide_idle != 0;
  return 1;
}

// The rows of `kind` the filter keeps: returns how many; read them with rperf_page_kept_rows /
// rperf_page_kept_weights.
uint32_t rperf_page_select(uint32_t handle, uint32_t kind) {
  Snapshot* s = snapshot(handle);
  if (!s || !valid_kind(kind)) return 0;
  s->rows.select(static_cast<RowKind>(kind), s->filter, s->kept);
  s->kept_weights = as_double(s->kept.weights);
  return static_cast<uint32_t>(s->kept.rows.size());
}

// A view of the rows of `kind` the filter keeps, as JSON (page/page_views.hh): view 0 the call
// tree, 1 the bottom-up tree, 2 the method table, 3 the sandwich of the function whose label and
// path are the scratch's blob of blob_bytes (texts), 4 the stack chart (of the filter's thread,
// on an axis of at least min_end_ns; its cells: rperf_page_chart_cells), 5 the label values'
// weights (label_values_json); max_nodes, max_methods,
// max_arcs: ViewLimits' (0: the default). Returns its bytes; rperf_page_view_json: them.
uint32_t rperf_page_view(uint32_t handle, uint32_t kind, uint32_t view, uint32_t blob_bytes, uint32_t max_nodes, uint32_t max_methods,
                         uint32_t max_arcs, double min_end_ns) {
  Snapshot* s = snapshot(handle);
  if (!s || !valid_kind(kind)) return 0;
  size_t offset = 0;
  std::vector<uint8_t> blob = column<uint8_t>(offset, blob_bytes);
  KeptRows kept;
  s->rows.select(static_cast<RowKind>(kind), s->filter, kept);
  if (view == 5) {  // no profile: label sets and weights only
    s->view = rperf::page::label_values_json(s->rows, static_cast<RowKind>(kind), kept);
    return static_cast<uint32_t>(s->view.size());
  }
  rperf::Profile profile = rperf::page::profile_of_rows(s->rows, static_cast<RowKind>(kind), kept, view == 4);
  rperf::page::ViewLimits limits;
  if (max_nodes) limits.max_nodes = max_nodes;
  if (max_methods) limits.max_methods = max_methods;
  if (max_arcs) limits.max_arcs = max_arcs;
  std::vector<std::string> function;
  size_t at = 0;
  switch (view) {
    case 0: s->view = rperf::page::call_tree_json(profile, false, limits); break;
    case 1: s->view = rperf::page::call_tree_json(profile, true, limits); break;
    case 2: s->view = rperf::page::method_table_json(profile, limits); break;
    case 3:
      if (!read_texts(blob, at, 2, function)) return 0;
      s->view = rperf::page::sandwich_json(profile, function[0], function[1], limits);
      break;
    case 4: {
      rperf::page::StackChartView chart = rperf::page::stack_chart_view(profile, static_cast<int64_t>(min_end_ns));
      s->view = std::move(chart.json);
      s->chart_cells = std::move(chart.cells);
      break;
    }
    default: return 0;
  }
  return static_cast<uint32_t>(s->view.size());
}

const char* rperf_page_view_json(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->view.data() : nullptr;
}

// The last stack chart's cell columns (page_views.hh's StackChartView), `cells` each.
const double* rperf_page_chart_cells(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->chart_cells.data() : nullptr;
}

// The Timeline's bins of the timeline rows the filter keeps (PageRows::timeline_bins): returns
// how many threads. rperf_page_bins_header: end_ns, bin_ns, kept_ns, leaf name count;
// rperf_page_bins_threads: thread_seqs; rperf_page_bins_occupancy: ns per (thread, state, bin);
// rperf_page_bins_top: per bin TimelineBins::kTopLeaves leaf names (UINT32_MAX: none);
// rperf_page_bins_names_blob / _bytes: the leaf names (texts).
uint32_t rperf_page_timeline_bins(uint32_t handle, uint32_t bins, double min_end_ns) {
  Snapshot* s = snapshot(handle);
  if (!s) return 0;
  s->bins = s->rows.timeline_bins(s->filter, bins, static_cast<int64_t>(min_end_ns));
  const rperf::TimelineBins& b = s->bins;
  s->bins_header = {static_cast<double>(b.end_ns), b.bin_ns, static_cast<double>(b.kept_ns), static_cast<double>(b.leaf_names.size())};
  s->bins_top.assign(size_t{b.bins} * rperf::TimelineBins::kTopLeaves, UINT32_MAX);
  for (uint32_t i = 0; i < b.bins; i++) {
    for (size_t k = 0; k < b.top[i].size(); k++) s->bins_top[i * rperf::TimelineBins::kTopLeaves + k] = b.top[i][k];
  }
  s->bins_names.clear();
  for (const std::string& name : b.leaf_names) append_text(s->bins_names, name);
  return static_cast<uint32_t>(b.threads.size());
}

const double* rperf_page_bins_header(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->bins_header.data() : nullptr;
}

const uint32_t* rperf_page_bins_threads(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->bins.threads.data() : nullptr;
}

const double* rperf_page_bins_occupancy(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->bins.occupancy.data() : nullptr;
}

const uint32_t* rperf_page_bins_top(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->bins_top.data() : nullptr;
}

const uint8_t* rperf_page_bins_names_blob(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->bins_names.data() : nullptr;
}

uint32_t rperf_page_bins_names_bytes(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? static_cast<uint32_t>(s->bins_names.size()) : 0;
}

const uint32_t* rperf_page_kept_rows(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->kept.rows.data() : nullptr;
}

const double* rperf_page_kept_weights(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->kept_weights.data() : nullptr;
}

// The Diff tab's flame graph (page_rows.hh's tree_diff): the rows of `kind` this snapshot's
// filter keeps against those of base_kind base_handle's filter keeps, normalize: the base scaled
// to this one's sum. Returns the node count (-1: no such snapshot or kind);
// rperf_page_tree_diff_table: sum, base sum, base scale, then per node its self change.
int32_t rperf_page_tree_diff(uint32_t handle, uint32_t kind, uint32_t base_handle, uint32_t base_kind, int normalize) {
  Snapshot* s = snapshot(handle);
  Snapshot* base = snapshot(base_handle);
  if (!s || !base || !valid_kind(kind) || !valid_kind(base_kind)) return -1;
  KeptRows kept, base_kept;
  s->rows.select(static_cast<RowKind>(kind), s->filter, kept);
  base->rows.select(static_cast<RowKind>(base_kind), base->filter, base_kept);
  rperf::page::TreeDiff d =
      rperf::page::tree_diff(s->rows, static_cast<RowKind>(kind), kept, base->rows, static_cast<RowKind>(base_kind), base_kept, normalize != 0);
  s->tree_diff = {static_cast<double>(d.sum), static_cast<double>(d.base_sum), d.base_scale};
  s->tree_diff.insert(s->tree_diff.end(), d.self_change.begin(), d.self_change.end());
  return static_cast<int32_t>(d.self_change.size());
}

const double* rperf_page_tree_diff_table(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->tree_diff.data() : nullptr;
}

// The tree weights of rows of `kind`; scratch: their indexes uint32[n], then their (kept)
// weights float64[n] (a selection, or a part of one: a flame graph's tag group). Returns the
// sum; per node: rperf_page_self, rperf_page_total and rperf_page_state_self (4 per node).
double rperf_page_tree_weights(uint32_t handle, uint32_t kind, uint32_t n) {
  Snapshot* s = snapshot(handle);
  if (!s || !valid_kind(kind)) return 0;
  KeptRows rows = scratch_rows(n);
  s->rows.tree_weights(static_cast<RowKind>(kind), rows, s->weights);
  s->self = as_double(s->weights.self);
  s->total = as_double(s->weights.total);
  s->state_self = as_double(s->weights.state_self);
  return static_cast<double>(s->weights.sum);
}

const double* rperf_page_self(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->self.data() : nullptr;
}

const double* rperf_page_total(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->total.data() : nullptr;
}

const double* rperf_page_state_self(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->state_self.data() : nullptr;
}

// The Allocations tab's sums of allocation rows (scratch as rperf_page_tree_weights'; their
// weights are not read): returns the sum of the objects asked for. rperf_page_self /
// rperf_page_total: per node; rperf_page_allocation_header: allocated, retained, node-class
// count, site count; rperf_page_node_classes: (node, class, objects) each;
// rperf_page_allocation_sites: (frame, class, allocated, retained) each, at most max_sites.
double rperf_page_allocation_sums(uint32_t handle, uint32_t n, int by_retained, uint32_t max_sites) {
  Snapshot* s = snapshot(handle);
  if (!s) return 0;
  rperf::page::AllocationSums sums;
  s->rows.allocation_sums(scratch_rows(n), by_retained != 0, max_sites, sums);
  s->self = as_double(sums.weights.self);
  s->total = as_double(sums.weights.total);
  s->allocation_header = {static_cast<double>(sums.allocated), static_cast<double>(sums.retained),
                          static_cast<double>(sums.node_classes.size()), static_cast<double>(sums.sites.size())};
  s->node_classes.clear();
  for (const auto& c : sums.node_classes) {
    s->node_classes.insert(s->node_classes.end(), {static_cast<double>(c.node), static_cast<double>(c.class_index), static_cast<double>(c.objects)});
  }
  s->sites.clear();
  for (const auto& site : sums.sites) {
    s->sites.insert(s->sites.end(), {static_cast<double>(site.frame), static_cast<double>(site.class_index),
                                     static_cast<double>(site.allocated), static_cast<double>(site.retained)});
  }
  return static_cast<double>(sums.weights.sum);
}

const double* rperf_page_allocation_header(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->allocation_header.data() : nullptr;
}

const double* rperf_page_node_classes(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->node_classes.data() : nullptr;
}

const double* rperf_page_allocation_sites(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->sites.data() : nullptr;
}

// The sums per thread of rows of `kind` (scratch as rperf_page_tree_weights'); returns how many
// threads. rperf_page_thread_table: per
// thread 9 doubles: thread_seq, total, running, GVL blocked, GVL wait, GC, idle, top frame (-1:
// none), its weight.
uint32_t rperf_page_thread_sums(uint32_t handle, uint32_t kind, uint32_t n) {
  Snapshot* s = snapshot(handle);
  if (!s || !valid_kind(kind)) return 0;
  std::vector<ThreadSums> sums;
  s->rows.thread_sums(static_cast<RowKind>(kind), scratch_rows(n), sums);
  s->threads.clear();
  for (const ThreadSums& t : sums) {
    s->threads.insert(s->threads.end(), {static_cast<double>(t.thread_seq), static_cast<double>(t.total),
                                         static_cast<double>(t.by_state[0]), static_cast<double>(t.by_state[1]),
                                         static_cast<double>(t.by_state[2]), static_cast<double>(t.by_state[3]),
                                         static_cast<double>(t.idle), static_cast<double>(t.top_frame),
                                         static_cast<double>(t.top_frame_weight)});
  }
  return static_cast<uint32_t>(sums.size());
}

const double* rperf_page_thread_table(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->threads.data() : nullptr;
}

// The Source tab's time per line of one file in rows of `kind` the page names (PageRows::
// source_lines); scratch: rows uint32[n], their kept weights float64[n], then the file's path
// (blob_bytes of UTF-8). Returns how many lines have time; rperf_page_source_table: per line 3
// doubles (line, self, total); rperf_page_source_kept_ns: the rows' weight.
int32_t rperf_page_source_lines(uint32_t handle, uint32_t kind, uint32_t n, uint32_t blob_bytes) {
  Snapshot* s = snapshot(handle);
  if (!s || !valid_kind(kind)) return -1;
  size_t offset = 0;
  KeptRows kept;
  kept.rows = column<uint32_t>(offset, n);
  kept.weights = as_int64(column<double>(offset, n));
  std::vector<uint8_t> blob = column<uint8_t>(offset, blob_bytes);
  s->source = s->rows.source_lines(static_cast<RowKind>(kind), kept, std::string(blob.begin(), blob.end()));
  s->source_table.clear();
  for (const rperf::LineWeight& l : s->source.lines) {
    s->source_table.insert(s->source_table.end(), {static_cast<double>(l.line), static_cast<double>(l.self_ns), static_cast<double>(l.total_ns)});
  }
  return static_cast<int32_t>(s->source.lines.size());
}

const double* rperf_page_source_table(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->source_table.data() : nullptr;
}

double rperf_page_source_kept_ns(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? static_cast<double>(s->source.kept_ns) : 0;
}

// The snapshot's tree through the Viewer's transforms, in order (page/transformed_tree.hh).
// Scratch: a blob of blob_bytes: per transform its op's name, then, for an op that names a
// function, its label and path (texts). Returns the new tree's node count (-1: the blob ends
// early or names no op). rperf_page_transformed_parents / _node_frames: per new node;
// _node_map: per old node its new node (-1: gone); _frames_blob / _frames_bytes / _frame_count:
// the frames (label, path texts); _frame_lines, _frame_categories: per frame.
int32_t rperf_page_transform(uint32_t handle, uint32_t count, uint32_t blob_bytes) {
  Snapshot* s = snapshot(handle);
  if (!s) return -1;
  size_t offset = 0;
  std::vector<uint8_t> blob = column<uint8_t>(offset, blob_bytes);
  std::vector<rperf::StackTransform> list(count);
  size_t at = 0;
  for (rperf::StackTransform& t : list) {
    std::vector<std::string> texts;
    if (!read_texts(blob, at, 1, texts)) return -1;
    if (!rperf::stack_transform_op(texts[0], false, t.op)) {
      if (!rperf::stack_transform_op(texts[0], true, t.op) || !read_texts(blob, at, 2, texts)) return -1;
      t.label = std::move(texts[1]);
      t.path = std::move(texts[2]);
    }
  }
  s->transformed = rperf::page::transform_tree(s->rows, list);
  s->transformed_frames.clear();
  for (const auto& [label, path] : s->transformed.frames) {
    append_text(s->transformed_frames, label);
    append_text(s->transformed_frames, path);
  }
  return static_cast<int32_t>(s->transformed.parents.size());
}

const int32_t* rperf_page_transformed_parents(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->transformed.parents.data() : nullptr;
}

const uint32_t* rperf_page_transformed_node_frames(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->transformed.node_frames.data() : nullptr;
}

const int32_t* rperf_page_transformed_node_map(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->transformed.node_map.data() : nullptr;
}

const uint8_t* rperf_page_transformed_frames_blob(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->transformed_frames.data() : nullptr;
}

uint32_t rperf_page_transformed_frames_bytes(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? static_cast<uint32_t>(s->transformed_frames.size()) : 0;
}

uint32_t rperf_page_transformed_frame_count(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? static_cast<uint32_t>(s->transformed.frames.size()) : 0;
}

const int32_t* rperf_page_transformed_frame_lines(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->transformed.frame_lines.data() : nullptr;
}

const uint8_t* rperf_page_transformed_frame_categories(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->transformed.frame_categories.data() : nullptr;
}

// rperf 0.11's names-only samples made the model's stack tree (page/names_tree.hh); scratch:
// each sample's stack depth uint32[n], weight float64[n], label set uint32[n], then a blob of
// blob_bytes: every stack's names, root first (texts). Returns the node count (-1: the blob
// ends early). rperf_page_names_frames_blob / _bytes / _count: the frames (label, path texts);
// rperf_page_names_parents / _node_frames: per node; rperf_page_names_row_nodes /
// _row_weights / _row_sets: per sample, in order.
int32_t rperf_page_names_tree(uint32_t n, uint32_t blob_bytes) {
  size_t offset = 0;
  std::vector<uint32_t> depths = column<uint32_t>(offset, n);
  std::vector<double> weights = column<double>(offset, n);
  std::vector<uint32_t> sets = column<uint32_t>(offset, n);
  std::vector<uint8_t> blob = column<uint8_t>(offset, blob_bytes);
  std::vector<rperf::page::NamesSample> samples(n);
  size_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (!read_texts(blob, at, depths[i], samples[i].stack)) return -1;
    samples[i].weight = static_cast<int64_t>(weights[i]);
    samples[i].label_set = sets[i];
  }
  rperf::StackTree tree = rperf::page::names_tree(samples);
  names = NamesTree();
  for (const auto& [label, path] : tree.frames) {
    append_text(names.frames_blob, label);
    append_text(names.frames_blob, path);
  }
  names.frame_count = static_cast<uint32_t>(tree.frames.size());
  names.parents = tree.parents;
  names.node_frames = tree.node_frames;
  for (const rperf::StackTree::Row& r : tree.rows) {
    names.row_nodes.push_back(r.node);
    names.row_weights.push_back(static_cast<double>(r.weight_ns));
    names.row_sets.push_back(r.label_set);
  }
  return static_cast<int32_t>(names.parents.size());
}

const uint8_t* rperf_page_names_frames_blob() { return names.frames_blob.data(); }
uint32_t rperf_page_names_frames_bytes() { return static_cast<uint32_t>(names.frames_blob.size()); }
uint32_t rperf_page_names_frames_count() { return names.frame_count; }
const int32_t* rperf_page_names_parents() { return names.parents.data(); }
const uint32_t* rperf_page_names_node_frames() { return names.node_frames.data(); }
const uint32_t* rperf_page_names_row_nodes() { return names.row_nodes.data(); }
const double* rperf_page_names_row_weights() { return names.row_weights.data(); }
const uint32_t* rperf_page_names_row_sets() { return names.row_sets.data(); }

// The Diff table: two method tables side by side, ranked by change (views/totals_diff.hh,
// as `rperf diff`); the before's weights times `before_scale`. Scratch: the after table's self
// float64[after_count] and total float64[after_count], the before's the same, then a blob of
// blob_bytes: each after entry's name and file (texts), then each before entry's. Returns how
// many rows (-1: the blob ends early); rperf_page_diff_rows: per row 6 doubles: the after
// entry's index (-1: none), the before's, before self, after self, before total, after total.
int32_t rperf_page_diff_totals(uint32_t after_count, uint32_t before_count, uint32_t blob_bytes, double before_scale) {
  size_t offset = 0;
  std::vector<double> after_self = column<double>(offset, after_count), after_total = column<double>(offset, after_count);
  std::vector<double> before_self = column<double>(offset, before_count), before_total = column<double>(offset, before_count);
  std::vector<uint8_t> blob = column<uint8_t>(offset, blob_bytes);
  std::vector<std::string> after_names, before_names;
  size_t at = 0;
  if (!read_texts(blob, at, size_t{after_count} * 2, after_names) || !read_texts(blob, at, size_t{before_count} * 2, before_names)) return -1;
  auto rows_of = [](const std::vector<std::string>& names, const std::vector<double>& self, const std::vector<double>& total) {
    std::vector<rperf::FunctionRow> rows(self.size());
    for (size_t i = 0; i < rows.size(); i++) rows[i] = rperf::FunctionRow{names[2 * i], names[2 * i + 1], self[i], total[i]};
    return rows;
  };
  std::vector<rperf::TotalsDiffRow> rows =
      rperf::diff_totals(rows_of(before_names, before_self, before_total), rows_of(after_names, after_self, after_total), before_scale);
  diff_rows.clear();
  for (const rperf::TotalsDiffRow& r : rows) {
    diff_rows.insert(diff_rows.end(), {static_cast<double>(r.target), static_cast<double>(r.base), r.base_self, r.target_self, r.base_total, r.target_total});
  }
  return static_cast<int32_t>(rows.size());
}

const double* rperf_page_diff_rows() { return diff_rows.data(); }

}  // extern "C"
