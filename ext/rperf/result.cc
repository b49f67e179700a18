#include "result.hh"

#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <ruby/encoding.h>

#include "clock.hh"

namespace rperf {

namespace {

VALUE sym(const char* name) { return ID2SYM(rb_intern(name)); }

// Our own copy (callers may mutate it without touching the iseq), tagged UTF-8 like source
// code; invalid bytes are replaced by the encoders.
VALUE utf8_copy(VALUE str) { return rb_utf8_str_new(RSTRING_PTR(str), RSTRING_LEN(str)); }

// Resolves frames to Ruby arrays and stacks to shared frame lists. With `lines` false, frames
// of the same method are one frame (method-level, the compatible default).
class Resolver {
 public:
  Resolver(const StackStore& store, bool lines)
      : store_(store), lines_(lines), frames_(rb_ary_new()), stack_values_(rb_ary_new()), start_lines_(rb_ary_new()) {}

  // Leaf-first list of frame indexes for a stack.
  const std::vector<uint32_t>& stack(uint32_t stack_id) {
    scratch_.clear();
    if (stack_id == StackStore::kRoot) return scratch_;
    std::vector<uint32_t> ids;
    store_.frames_of(stack_id, ids);
    for (uint32_t id : ids) scratch_.push_back(frame_index(id));
    return scratch_;
  }

  VALUE frames_array(const std::vector<uint32_t>& idxs) {
    auto it = stack_arrays_.find(idxs);
    if (it != stack_arrays_.end()) return rb_ary_entry(stack_values_, it->second);
    VALUE ary = rb_ary_new_capa(static_cast<long>(idxs.size()));
    for (uint32_t i : idxs) rb_ary_push(ary, rb_ary_entry(frames_, i));
    rb_ary_freeze(ary);
    stack_arrays_.emplace(idxs, static_cast<long>(RARRAY_LEN(stack_values_)));
    rb_ary_push(stack_values_, ary);
    return ary;
  }

  size_t unique_frames() const { return static_cast<size_t>(RARRAY_LEN(frames_)); }
  // [[path, label, first_line], ...] of the Ruby methods seen (pprof's Function.start_line).
  VALUE start_lines() const { return start_lines_; }
  size_t unique_stacks() const { return stack_arrays_.size(); }

 private:
  uint32_t frame_index(uint32_t frame_id) {
    // A copy: resolving allocates, a GC hook may intern frames, and the table may move.
    const FrameKey key = store_.frame(frame_id);
    std::pair<uint64_t, int32_t> k{key.method, lines_ ? key.line : 0};
    auto it = index_.find(k);
    if (it != index_.end()) return it->second;
    uint32_t idx = static_cast<uint32_t>(RARRAY_LEN(frames_));
    rb_ary_push(frames_, make_frame(key));
    index_.emplace(k, idx);
    return idx;
  }

  VALUE make_frame(FrameKey key) {
    VALUE path, label;
    if (key.method == 0) {
      path = rb_str_new_cstr("");
      label = rb_str_new_cstr("[truncated]");
    } else {
      VALUE frame = static_cast<VALUE>(key.method);
      path = rb_profile_frame_path(frame);
      path = NIL_P(path) ? rb_str_new_cstr("<C method>") : utf8_copy(path);
      label = rb_profile_frame_full_label(frame);
      label = NIL_P(label) ? rb_str_new_cstr("<unknown>") : utf8_copy(label);
      VALUE first = rb_profile_frame_first_lineno(frame);
      if (FIXNUM_P(first) && FIX2INT(first) > 0 && started_.insert(key.method).second) {
        rb_ary_push(start_lines_, rb_ary_new_from_args(3, path, label, first));
      }
    }
    rb_obj_freeze(path);
    rb_obj_freeze(label);
    VALUE ary = lines_ ? rb_ary_new_from_args(3, path, label, INT2NUM(key.line)) : rb_ary_new_from_args(2, path, label);
    return rb_ary_freeze(ary);
  }

  struct PairHash {
    size_t operator()(const std::pair<uint64_t, int32_t>& p) const {
      return mix64(p.first ^ (static_cast<uint64_t>(static_cast<uint32_t>(p.second)) << 40));
    }
  };
  struct VecHash {
    size_t operator()(const std::vector<uint32_t>& v) const {
      uint64_t h = v.size();
      for (uint32_t x : v) h = mix64(h ^ x);
      return h;
    }
  };

  const StackStore& store_;
  bool lines_;
  VALUE frames_;
  VALUE stack_values_;  // the Resolver lives on the C stack, so GC sees these arrays
  VALUE start_lines_;
  std::unordered_set<uint64_t> started_;
  std::unordered_map<std::pair<uint64_t, int32_t>, uint32_t, PairHash> index_;
  std::unordered_map<std::vector<uint32_t>, long, VecHash> stack_arrays_;
  std::vector<uint32_t> scratch_;
};

}  // namespace

VALUE build_result(Session& s, const ResultOptions& opts) {
  s.drain();
  // Take the aggregate out under the consumer lock; resolve without it (Ruby allocation can
  // run GC, whose hooks keep producing into the ring meanwhile).
  std::unordered_map<AggregateKey, AggregateValue, AggregateKeyHash> table;
  std::vector<SampleRecord> raw;
  pthread_mutex_lock(&s.consumer_mutex);
  table = s.aggregator.table();
  raw = s.aggregator.raw();
  pthread_mutex_unlock(&s.consumer_mutex);
  if (opts.clear) s.clear_aggregate();

  int64_t now = monotonic_ns();
  VALUE result = rb_hash_new();
  rb_hash_aset(result, sym("mode"), sym(s.opts.wall ? "wall" : "cpu"));
  rb_hash_aset(result, sym("frequency"), INT2NUM(s.opts.frequency));
  rb_hash_aset(result, sym("trigger_count"), ULL2NUM(s.timer.trigger_count()));
  rb_hash_aset(result, sym("sampling_count"), ULL2NUM(s.sampling_count));
  rb_hash_aset(result, sym("sampling_time_ns"), LL2NUM(s.sampling_time_ns));
  uint64_t dropped = s.dropped_samples.load();
  if (dropped) rb_hash_aset(result, sym("dropped_samples"), ULL2NUM(dropped));
  rb_hash_aset(result, sym("detected_thread_count"), UINT2NUM(s.threads.detected()));
  rb_hash_aset(result, sym("start_time_ns"), LL2NUM(s.start_realtime_ns));
  rb_hash_aset(result, sym("duration_ns"), LL2NUM(now - s.start_mono_ns));
  rb_hash_aset(result, sym("max_depth"), INT2NUM(s.opts.max_depth));

  Resolver resolver(s.stacks, opts.lines);
  VALUE samples = rb_ary_new();
  rb_hash_aset(result, sym(s.opts.aggregate ? "aggregated_samples" : "raw_samples"), samples);
  if (s.opts.aggregate) {
    // Method-level output merges stacks that differ only in line numbers.
    std::map<std::tuple<std::vector<uint32_t>, uint32_t, uint32_t, uint8_t>, int64_t> merged;
    for (const auto& [key, value] : table) {
      merged[{resolver.stack(key.stack), key.thread_seq, key.label_set, key.vm_state}] += value.weight_ns;
    }
    for (const auto& [key, weight] : merged) {
      const auto& [frames, seq, label_set, vm_state] = key;
      VALUE entry = rb_ary_new_capa(5);
      rb_ary_push(entry, resolver.frames_array(frames));
      rb_ary_push(entry, LL2NUM(weight));
      rb_ary_push(entry, UINT2NUM(seq));
      rb_ary_push(entry, UINT2NUM(label_set));
      rb_ary_push(entry, INT2FIX(vm_state));
      rb_ary_push(samples, entry);
    }
  } else {
    for (const SampleRecord& r : raw) {
      VALUE entry = rb_ary_new_capa(6);
      rb_ary_push(entry, resolver.frames_array(resolver.stack(r.stack)));
      rb_ary_push(entry, LL2NUM(r.weight_ns));
      rb_ary_push(entry, UINT2NUM(r.thread_seq));
      rb_ary_push(entry, UINT2NUM(r.label_set));
      rb_ary_push(entry, INT2FIX(r.vm_state));
      rb_ary_push(entry, LL2NUM(r.time_ns));
      rb_ary_push(samples, entry);
    }
  }
  rb_hash_aset(result, sym("unique_frames"), SIZET2NUM(resolver.unique_frames()));
  rb_hash_aset(result, sym("function_start_lines"), resolver.start_lines());
  rb_hash_aset(result, sym("unique_stacks"), SIZET2NUM(resolver.unique_stacks()));
  RB_GC_GUARD(samples);

  if (opts.clear) {
    s.timer.reset_trigger_count();
    s.sampling_count = 0;
    s.sampling_time_ns = 0;
    s.dropped_samples.store(0);
    s.start_mono_ns = now;
    s.start_realtime_ns = realtime_ns();
  }
  return result;
}

}  // namespace rperf
