// Allocation sampling (internal NEWOBJ/FREEOBJ events, through session.cc's vm_event_hook). Internal event hooks run inside
// the object allocator and the GC: they must not call Ruby methods, allocate Ruby objects or
// raise, and the new object is not initialised yet (only its class pointer and type flags are
// set: rb_class_name and friends are not allowed here, the class VALUE is kept and named at
// stop/snapshot). So the hooks:
//   NEWOBJ   counts down a random geometric gap (nothing more for unsampled allocations); for a
//            sampled one, walks the stack with rb_profile_frames into the sample ring (as a time
//            sample does), records the class, the thread's labels and a weight of N objects, and
//            (retained: true) tracks the object's address in the live table;
//   FREEOBJ  (retained: true only) forgets the address when it was tracked (one hash probe
//            otherwise). Ruby calls it for every freed object, sampled or not: that dispatch,
//            not the probe, is what the retained estimate costs, so it is hooked only when asked.
// The worker aggregates the records by (stack, thread, labels, class); the live table says
// which of them are still alive (retained) when the profile is taken.
//
// GC compaction moves objects without a FREEOBJ/NEWOBJ pair: their tracked addresses would go
// stale (and a later object at the old address would be mistaken for them). The sampled
// objects must not be pinned or marked (that would keep them alive: nothing would ever die),
// so the table follows the moves instead: the session's marker object has a dcompact
// function, which the GC calls in its reference-updating phase, when every moved object's old
// slot still names its new address (rb_gc_location); the table is re-keyed there, without
// allocating (update_moved_objects). Objects only move into slots already swept, so a
// FREEOBJ for a dead object never refers to an address a moved sampled object now has.
#include "sampler/session.hh"  // ruby/ruby.h first
#include "util/clock.hh"

#include <ruby/ractor.h>

#include <cstring>

namespace rperf {

namespace {
constexpr uint32_t kNoSample = 0xffffffffu;

// The class of a new object, or 0 for internal objects: hidden ones (no class yet) and T_IMEMO,
// whose class field holds VM data instead of a class.
VALUE class_of_new_object(VALUE obj) { return RB_BUILTIN_TYPE(obj) == RUBY_T_IMEMO ? 0 : RBASIC_CLASS(obj); }
}  // namespace

void newobj_event(rb_trace_arg_t* arg) {
  Session* s = g_session;
  if (!s || !s->alloc.sampling || !s->active()) return;
  AllocationTracking& a = s->alloc;
  if (--a.countdown != 0) return;
  a.countdown = a.gaps.next();
  s->sample_allocation(rb_tracearg_object(arg));
}

void freeobj_event(rb_trace_arg_t* arg) {
  Session* s = g_session;
  if (!s || s->alloc.live.size() == 0) return;
  s->alloc.live.erase(static_cast<uint64_t>(rb_tracearg_object(arg)));
}

void update_moved_objects() {
  Session* s = g_session;
  // Only while FREEOBJ is seen: after stop, tracked addresses may be freed slots (even of
  // pages given back to the OS), which rb_gc_location must not read.
  if (!s || !s->freeobj_hooked() || s->alloc.live.size() == 0 || getpid() != s->pid) return;
  s->alloc.live.rekey([](uint64_t address) { return static_cast<uint64_t>(rb_gc_location(static_cast<VALUE>(address))); });
}

void Session::sample_allocation(VALUE obj) {
  // Another Ractor's thread allocates in parallel with the main Ractor's GVL holder, the sample
  // ring's one producer: its allocations are not sampled (see on_main_ractor).
  if (!on_main_ractor()) return;
  ProducerScope producer;
  const int64_t t0 = monotonic_ns();  // hook_time_ns counts the sampled allocations' work
  ThreadState* ts = current_thread_state(true);
  int depth = ts ? walk_stack() : -1;
  if (depth == Charge::kNoRoom) {
    // The ring is full: at small N the allocations outrun the worker's drain (every 10 ms; at
    // N = 1 millions of records a second). This thread drains it rather than drop the sample.
    drain();
    depth = walk_stack();
  }
  if (depth >= 0 && allocated_by_rperf(depth)) {
    hook_time_ns += monotonic_ns() - t0;
    return;
  }
  if (depth < 0 || (opts.retained && !alloc.live.reserve_one())) {
    alloc.dropped++;
    hook_time_ns += monotonic_ns() - t0;
    return;
  }
  SampleRecord r;
  r.kind = SampleRecord::kAllocation;
  r.thread_seq = ts->seq;
  r.label_set = ts->timeline.label_set();
  r.run = static_cast<uint32_t>(depth);
  r.weight_ns = alloc.gaps.interval();
  if (!opts.aggregate) r.time_ns = t0 - start_mono_ns;
  r.klass = static_cast<uint64_t>(class_of_new_object(obj));
  r.slot = opts.retained ? alloc.live.insert(static_cast<uint64_t>(obj)) : LiveObjects::kNoSlot;
  bool pushed = ring.push(r);
  if (!pushed) {
    drain();  // the walked frames stay unpublished at the ring's head meanwhile
    pushed = ring.push(r);
  }
  if (!pushed) {
    if (opts.retained) alloc.live.erase(static_cast<uint64_t>(obj));
    alloc.dropped++;
  } else {
    alloc.sample_count++;
  }
  hook_time_ns += monotonic_ns() - t0;
}

bool Session::allocated_by_rperf(int depth) {
  if (own_source_prefix_.empty()) return false;
  int32_t* lines = nullptr;
  const uint64_t* frames = ring.frame_slots(&lines);  // what walk_stack just wrote, leaf first
  for (int k = 0; k < depth; k++) {
    if (frames[k] == 0) break;
    // An existing String for a Ruby frame (nil for a C method's): nothing is allocated here.
    VALUE path = rb_profile_frame_path(static_cast<VALUE>(frames[k]));
    if (!RB_TYPE_P(path, T_STRING)) continue;
    return static_cast<size_t>(RSTRING_LEN(path)) >= own_source_prefix_.size() &&
           std::memcmp(RSTRING_PTR(path), own_source_prefix_.data(), own_source_prefix_.size()) == 0;
  }
  return false;
}

void Session::consume_allocation(const SampleRecord& r, const SampleRing::Run& run) {
  StackPath& path = alloc.paths[r.thread_seq];
  uint32_t stack = path.apply(stacks, r.run, [&](uint32_t k) { return std::make_pair(run.method(k), run.line(k)); });
  AllocationSample sample;
  sample.stack = stack;
  sample.thread_seq = r.thread_seq;
  sample.label_set = r.label_set;
  sample.type = r.klass;
  sample.count = r.weight_ns;
  sample.time_ns = r.time_ns;
  uint32_t index;
  if (opts.aggregate) {
    index = alloc.aggregated.add(sample);
  } else {
    index = static_cast<uint32_t>(alloc.raw.size());
    alloc.raw.push_back(sample);
  }
  if (r.slot == LiveObjects::kNoSlot) return;
  if (r.slot >= alloc.slot_sample.size()) alloc.slot_sample.resize(r.slot + 1, kNoSample);
  alloc.slot_sample[r.slot] = index;
}

void Session::take_allocations(bool clear, std::vector<AllocationSample>& out) {
  if (!opts.aggregate) {
    out.clear();
    out.reserve(alloc.raw.size());
    if (clear) move_all(alloc.raw, out);
    else out.assign(alloc.raw.begin(), alloc.raw.end());
  } else {
    out = clear ? alloc.aggregated.take() : alloc.aggregated.samples();
  }
  // Every tracked object's record was drained (the GVL is held: no allocation since), so each
  // live slot names its sample.
  const int64_t weight = opts.allocation_interval;
  alloc.live.each([&](uint64_t, uint32_t slot) {
    if (slot < alloc.slot_sample.size() && alloc.slot_sample[slot] < out.size()) out[alloc.slot_sample[slot]].retained += weight;
  });
  if (clear) {  // the next interval reports its own allocations and what survives of them
    for (const AllocationSample& a : out) alloc.resolving.push_back(a.type);
    alloc.raw.clear();
    alloc.slot_sample.clear();
    alloc.live.clear();
  }
}

}  // namespace rperf
