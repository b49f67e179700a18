// The page model's C interface in WebAssembly (page_model.wasm, loaded by viewer.js). A snapshot
// of the page is a handle (rperf_page_new). The page writes a call's columns into one scratch
// area (rperf_page_scratch), then calls; results stay in the handle until its next call of the
// same kind and are read from the pointers below. Weights cross as
// doubles: JavaScript's numbers (exact below 2^53 ns, 104 days).
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "page/page_rows.hh"

namespace {

using rperf::page::KeptRows;
using rperf::page::PageRows;
using rperf::page::RowKind;
using rperf::page::ThreadSums;
using rperf::page::TreeWeights;

struct Snapshot {
  PageRows rows;
  KeptRows kept;
  TreeWeights weights;
  std::vector<double> self, total, state_self, kept_weights, threads;
};

std::vector<std::unique_ptr<Snapshot>> snapshots;
std::vector<uint64_t> scratch;  // 8-byte aligned for the page's Float64Array columns

Snapshot* snapshot(uint32_t handle) { return handle < snapshots.size() ? snapshots[handle].get() : nullptr; }

// Reads `n` values of T from the scratch area at byte `offset`, advancing it.
template <typename T>
std::vector<T> column(size_t& offset, size_t n) {
  std::vector<T> out(n);
  const char* base = reinterpret_cast<const char*>(scratch.data());
  if (n) std::memcpy(out.data(), base + offset, n * sizeof(T));
  offset += (n * sizeof(T) + 7) / 8 * 8;
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

// Scratch: parents int32[nodes], frames uint32[nodes].
int rperf_page_set_tree(uint32_t handle, uint32_t nodes) {
  Snapshot* s = snapshot(handle);
  if (!s) return 0;
  size_t offset = 0;
  std::vector<int32_t> parents = column<int32_t>(offset, nodes);
  std::vector<uint32_t> frames = column<uint32_t>(offset, nodes);
  return s->rows.set_tree(std::move(parents), std::move(frames));
}

// Scratch: each label set's VM state, uint8[sets].
int rperf_page_set_states(uint32_t handle, uint32_t sets) {
  Snapshot* s = snapshot(handle);
  if (!s) return 0;
  size_t offset = 0;
  std::vector<uint8_t> raw = column<uint8_t>(offset, sets);
  std::vector<rperf::VmState> states(raw.size());
  for (size_t i = 0; i < raw.size(); i++) states[i] = raw[i] < rperf::kVmStateCount ? static_cast<rperf::VmState>(raw[i]) : rperf::kRunning;
  s->rows.set_label_set_states(std::move(states));
  return 1;
}

// Scratch: node uint32[n], thread uint32[n], label set uint32[n], weight float64[n], then
// time float64[n] if has_time, idle uint8[n] if has_idle.
int rperf_page_set_rows(uint32_t handle, uint32_t kind, uint32_t n, int has_time, int has_idle) {
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
  return s->rows.set_rows(static_cast<RowKind>(kind), std::move(rows));
}

// The rows of `kind` the filter keeps; scratch: hidden threads uint32[hidden_count] (sorted),
// then kept label sets uint32[set_count] (sorted). Returns how many; read them with
// rperf_page_kept_rows / rperf_page_kept_weights.
uint32_t rperf_page_select(uint32_t handle, uint32_t kind, int by_thread, uint32_t thread, uint32_t hidden_count,
                           int by_sets, uint32_t set_count, int by_range, double from_ns, double to_ns, int hide_idle) {
  Snapshot* s = snapshot(handle);
  if (!s || !valid_kind(kind)) return 0;
  size_t offset = 0;
  rperf::SampleFilter filter;
  filter.by_thread = by_thread != 0;
  filter.thread = thread;
  filter.hidden_threads = column<uint32_t>(offset, hidden_count);
  filter.by_label_sets = by_sets != 0;
  filter.label_sets = column<uint32_t>(offset, set_count);
  filter.by_range = by_range != 0;
  filter.from_ns = static_cast<int64_t>(from_ns);
  filter.to_ns = static_cast<int64_t>(to_ns);
  filter.hide_idle = hide_idle != 0;
  s->rows.select(static_cast<RowKind>(kind), filter, s->kept);
  s->kept_weights = as_double(s->kept.weights);
  return static_cast<uint32_t>(s->kept.rows.size());
}

const uint32_t* rperf_page_kept_rows(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->kept.rows.data() : nullptr;
}

const double* rperf_page_kept_weights(uint32_t handle) {
  Snapshot* s = snapshot(handle);
  return s ? s->kept_weights.data() : nullptr;
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

}  // extern "C"
