// Ruby binding of the sampler: start/stop/snapshot of the one session, thread labels, defer.
// Validation of user arguments happens in lib/rperf (Settings); these are the private layer
// under it.
#include <ruby/ruby.h>
#include <ruby/vm.h>

#include <pthread.h>
#include <cstdio>

#include <new>
#include <string>
#include <vector>

#include "ruby/profile_binding.hh"
#include "ruby/values.hh"
#include "sampler/profile_builder.hh"
#include "sampler/session.hh"
#include "util/clock.hh"
#include "util/fault_injection.hh"

namespace rperf {

namespace {

VALUE g_marker = Qnil;  // holds the frame VALUEs of the live session alive and pinned
VALUE g_owner = Qnil;   // the running session's Ruby object (Native.session), marked by g_marker
Session* g_abandoned = nullptr;  // sessions a forked child inherited and must not free
// Each session's serial (from 1), in the tokens merge_labels hands out, so a label block that
// outlives its session restores its labels by value, not by an id of another session's table.
uint32_t g_session_serial = 0;
// The last stopped session's label sets, kept until the next stop: a block that began in it and
// ends in a session started inside the block restores its labels from there.
LabelSetTable* g_stopped_label_sets = nullptr;
uint32_t g_stopped_serial = 0;

void marker_mark(void*) {
  rb_gc_mark(g_owner);
  if (g_session) g_session->mark();
}
// GC compaction: the frames and classes it marks are pinned; the sampled objects of allocation
// profiling are not marked at all (they must be free to die), so their addresses follow moves.
void marker_compact(void*) { update_moved_objects(); }

// Not write-barrier protected on purpose: the frame table grows without write barriers, so
// the incremental marker must rescan this object at the end of every mark phase.
const rb_data_type_t kMarkerType = {"rperf/marker", {marker_mark, nullptr, nullptr, marker_compact, {nullptr}}, nullptr, nullptr, 0};

// One option of Native.start's Hash; a missing one keeps the default.
VALUE start_option(VALUE options, const char* name) { return rb_hash_lookup2(options, ID2SYM(rb_intern(name)), Qundef); }

// Thread.list -> [[thread, native id, name], ...] of every other thread whose id is known, and
// [self, 0, name] last: start's Ruby calls, made before any session state exists.
VALUE thread_list_for_start() {
  VALUE list = rb_funcall(rb_cThread, rb_intern("list"), 0);
  VALUE self = rb_thread_current(), out = rb_ary_new();
  ID native_thread_id = rb_intern("native_thread_id"), name = rb_intern("name");
  for (long i = 0; i < RARRAY_LEN(list); i++) {
    VALUE th = RARRAY_AREF(list, i);
    if (th == self) continue;
    VALUE tid = rb_funcall(th, native_thread_id, 0);
    if (FIXNUM_P(tid) && FIX2LONG(tid) > 0) rb_ary_push(out, rb_ary_new_from_args(3, th, tid, rb_funcall(th, name, 0)));
  }
  rb_ary_push(out, rb_ary_new_from_args(3, self, INT2FIX(0), rb_funcall(self, name, 0)));
  return out;
}

std::string string_or_empty(VALUE v) {
  return RB_TYPE_P(v, T_STRING) ? std::string(RSTRING_PTR(v), static_cast<size_t>(RSTRING_LEN(v))) : std::string();
}

// The session made, published and started (no Ruby call). nil, or why the timer did not start.
VALUE start_session(const SessionOptions& o, VALUE thread_ids, VALUE owner) {
  bool started = false;
  char reason[256] = "";
  without_cxx_exceptions([&] {
    std::vector<ExistingThread> others;
    long count = RARRAY_LEN(thread_ids) - 1;  // the last is the caller's own
    for (long i = 0; i < count; i++) {
      VALUE e = RARRAY_AREF(thread_ids, i);
      others.push_back({RARRAY_AREF(e, 0), static_cast<pid_t>(FIX2LONG(RARRAY_AREF(e, 1))), string_or_empty(RARRAY_AREF(e, 2))});
    }
    std::string own_name = string_or_empty(RARRAY_AREF(RARRAY_AREF(thread_ids, count), 2));
    Session* s = new Session(o);  // the ring's buffers are allocated here
    g_session = s;
    g_owner = owner;
    g_session_serial++;
    std::string message;
    started = s->start(others, &message);
    if (started && !own_name.empty()) {
      if (ThreadState* ts = s->current_thread_state(false)) s->thread_named(ts, own_name);
    }
    if (!started) {
      g_session = nullptr;
      g_owner = Qnil;
      delete s;
      snprintf(reason, sizeof reason, "%s", message.c_str());
    }
  });
  return started ? Qnil : rb_str_new_cstr(reason);
}

// Native.start(options, owner): options {frequency:, mode: :cpu|:wall, aggregate:, signal:
// nil|false|Integer, defer:, max_depth:, lines:, forked_child:, allocation_interval:
// nil|Integer, max_label_sets:, capture: :signal|:postponed, retained: (FREEOBJ followed for
// the retained estimate), overhead_target: nil|Float (the overhead budget)}, validated by Rperf::Settings
// (unknown keys are a programming error); `owner`: the Ruby session object (Native.session).
//
// Safe from any number of threads: every Ruby call (option conversions, Thread.list, thread
// ids), each a point where another thread may run and start or stop a session, comes before
// the "already running" check; from that check until g_session is published nothing calls
// Ruby, so no other thread runs in between (the GVL is held throughout).
VALUE native_start(VALUE, VALUE options, VALUE owner) {
  Check_Type(options, T_HASH);
  static const char* const kKeys[] = {"frequency", "mode", "aggregate", "signal", "defer", "max_depth", "lines", "forked_child", "allocation_interval", "max_label_sets", "capture", "retained", "overhead_target"};
  VALUE keys = rb_funcall(options, rb_intern("keys"), 0);
  for (long i = 0; i < RARRAY_LEN(keys); i++) {
    VALUE key = RARRAY_AREF(keys, i);
    bool known = false;
    for (const char* k : kKeys) known = known || key == ID2SYM(rb_intern(k));
    if (!known) rb_raise(rb_eArgError, "rperf: unknown start option %" PRIsVALUE, rb_inspect(key));
  }
  SessionOptions o;
  VALUE v;
  if ((v = start_option(options, "frequency")) != Qundef) o.frequency = NUM2INT(v);
  if ((v = start_option(options, "mode")) != Qundef) {
    if (v != ID2SYM(rb_intern("wall")) && v != ID2SYM(rb_intern("cpu"))) rb_raise(rb_eArgError, "rperf: mode must be :cpu or :wall");
    o.wall = v == ID2SYM(rb_intern("wall"));
  }
  if ((v = start_option(options, "aggregate")) != Qundef) o.aggregate = RTEST(v);
  // nil: the default signal; false: no signal (the timer thread sleeps); else that signal.
  if ((v = start_option(options, "signal")) != Qundef && !NIL_P(v)) o.signal = v == Qfalse ? 0 : NUM2INT(v);
  if ((v = start_option(options, "defer")) != Qundef) o.defer = RTEST(v);
  if ((v = start_option(options, "max_depth")) != Qundef) o.max_depth = NUM2INT(v);
  if ((v = start_option(options, "lines")) != Qundef) o.lines = RTEST(v);
  if ((v = start_option(options, "forked_child")) != Qundef) o.forked_child = RTEST(v);
  if ((v = start_option(options, "allocation_interval")) != Qundef && !NIL_P(v)) o.allocation_interval = NUM2UINT(v);
  if ((v = start_option(options, "max_label_sets")) != Qundef) o.max_label_sets = NUM2UINT(v);
  if ((v = start_option(options, "retained")) != Qundef) o.retained = RTEST(v);
  if ((v = start_option(options, "overhead_target")) != Qundef && !NIL_P(v)) o.overhead_target = NUM2DBL(v);
  // :signal: the GVL holder's signal handler samples (Session::capture_in_handler); :postponed.
  if ((v = start_option(options, "capture")) != Qundef) {
    if (v != ID2SYM(rb_intern("signal")) && v != ID2SYM(rb_intern("postponed"))) rb_raise(rb_eArgError, "rperf: capture must be :signal or :postponed");
    o.signal_capture = v == ID2SYM(rb_intern("signal"));
  }
  VALUE thread_ids = thread_list_for_start();
  // The last Ruby call is behind us: from here until g_session is published, no other thread runs.
  if (g_session) rb_raise(rb_eRuntimeError, "Rperf is already running");
  VALUE error = start_session(o, thread_ids, owner);
  RB_GC_GUARD(thread_ids);  // holds the threads start adopted
  if (!NIL_P(error)) rb_raise(rb_eRuntimeError, "rperf: cannot start the sampling timer: %" PRIsVALUE, error);
  // Ruby 3.3 delivers a postponed job triggered from our (non-Ruby) timer thread to the
  // Ractor's running_ec, which can still name the last thread that blocked; a thread switch
  // point makes it name this thread again. With other threads the ticks are forwarded to the
  // GVL holder, which triggers the job itself: no pass then, which would hand the GVL to a
  // busy thread for up to a time slice (100 ms).
  if (!Session::forward_ticks.load(std::memory_order_relaxed)) rb_thread_schedule();
  return Qtrue;
}

VALUE build(Session& s, bool clear, VALUE vm_state_frames) {
  ProfileHolder* h = new_profile_holder();
  VALUE obj = wrap_profile(h);  // owns h from here: an exception cannot leak it
  BuildOptions bo;
  bo.clear = clear;
  bo.vm_state_frames = RTEST(vm_state_frames);
  without_cxx_exceptions([&] { build_profile(s, bo, h->profile); });
  return obj;
}

// Native.stop(vm_state_frames) -> [Native::Profile (line level), owner] or nil when not
// running. Nothing here calls Ruby code between reading g_session and clearing it (building
// the profile makes Strings and Arrays only), so a stop on another thread cannot interleave:
// it finds the session running, or gone.
VALUE native_stop(VALUE, VALUE vm_state_frames) {
  Session* s = g_session;
  if (!s) return Qnil;
  s->stop();
  VALUE profile = build(*s, false, vm_state_frames);  // frames still marked: g_session is set
  VALUE owner = g_owner;
  g_session = nullptr;
  g_owner = Qnil;
  delete g_stopped_label_sets;
  g_stopped_label_sets = new (std::nothrow) LabelSetTable();
  if (g_stopped_label_sets) *g_stopped_label_sets = std::move(s->label_sets);
  g_stopped_serial = g_session_serial;
  delete s;
  return rb_assoc_new(profile, owner);
}

// Native.session -> the owner given to Native.start of the running session (nil when none).
VALUE native_session(VALUE) { return g_session ? g_owner : Qnil; }

// Native.snapshot(clear, vm_state_frames) -> Native::Profile or nil when not running.
VALUE native_snapshot(VALUE, VALUE clear, VALUE vm_state_frames) {
  Session* s = g_session;
  if (!s) return Qnil;
  if (!s->opts.aggregate) rb_raise(rb_eRuntimeError, "snapshot requires aggregate mode (aggregate: true)");
  without_cxx_exceptions([&] { s->close_intervals_for_snapshot(); });
  VALUE profile = build(*s, RTEST(clear), vm_state_frames);
  // A new interval: the label sets no sample refers to any more are freed (a long-running
  // app's table stays as large as the labels in use, issue 30.9).
  if (RTEST(clear)) without_cxx_exceptions([&] { s->release_unused_label_sets(); });
  return profile;
}

// Native.thread_named(thread): Thread#name= (ThreadNameHook) gave `thread` a name (nil: none);
// the session records it for the thread's samples. Ruby's call (Thread#name) comes first, as
// in the label calls; a thread with no state (the session has not seen it) is skipped.
VALUE native_thread_named(VALUE, VALUE thread) {
  if (!rb_obj_is_kind_of(thread, rb_cThread)) rb_raise(rb_eTypeError, "rperf: a Thread expected");
  VALUE name = rb_funcall(thread, rb_intern("name"), 0);
  if (!g_session || !on_main_ractor()) return Qnil;
  // A rename makes no thread state: a state starts the thread's timeline, which is the hooks'
  // business (a deferred session's paused threads must stay unobserved).
  without_cxx_exceptions([&] {
    if (ThreadState* ts = g_session->thread_state(thread)) g_session->thread_named(ts, string_or_empty(name));
  });
  RB_GC_GUARD(name);
  return Qnil;
}

VALUE native_running_p(VALUE) { return g_session ? Qtrue : Qfalse; }

// Native.start_allocations(own_source_prefix): allocation sampling begins (the last step of
// Rperf.start); allocations made by rperf's own Ruby files (under the prefix) are not sampled.
VALUE native_start_allocations(VALUE, VALUE own_source_prefix) {
  StringValue(own_source_prefix);
  const char* ptr = RSTRING_PTR(own_source_prefix);
  const size_t len = static_cast<size_t>(RSTRING_LEN(own_source_prefix));
  if (g_session) without_cxx_exceptions([&] { g_session->start_allocations(std::string(ptr, len)); });
  return Qnil;
}

// Native.allocation_hooks -> the allocation events hooked now: [] (no allocations: N, or not
// started yet), [:newobj], or [:newobj, :freeobj] (retained: true).
VALUE native_allocation_hooks(VALUE) {
  VALUE events = rb_ary_new();
  if (g_session && g_session->newobj_hooked()) rb_ary_push(events, ID2SYM(rb_intern("newobj")));
  if (g_session && g_session->freeobj_hooked()) rb_ary_push(events, ID2SYM(rb_intern("freeobj")));
  return events;
}

// ---- labels: interned in the session's LabelSetTable ------------------------------------
// Ruby code may stop the session (and free it and its thread states): a binding function makes
// its Ruby calls (to_s, to_int) first and looks up g_session only after the last one.

[[noreturn]] void raise_label_error(VALUE pairs, long bad) {
  VALUE key = RARRAY_AREF(pairs, 2 * bad), value = RARRAY_AREF(pairs, 2 * bad + 1);
  rb_raise(rb_eArgError, "rperf: label keys must be valid UTF-8 (got %" PRIsVALUE " => %" PRIsVALUE ")", rb_inspect(key), rb_inspect(value));
}

// A label set id of the running session as handed to Ruby: the session's serial above its id.
VALUE label_token(uint32_t id) { return ULL2NUM((static_cast<uint64_t>(g_session_serial) << 32) | id); }

// Reused by every label change, so that a label block allocates nothing here once warm: only
// the main Ractor calls the binding (GVL held) and no Ruby code runs while they are in use.
struct LabelScratch {
  std::vector<LabelEdit> edits;
  LabelSet set;
};
LabelScratch& label_scratch() {
  static LabelScratch* scratch = new LabelScratch();  // never destroyed: no exit-time destructor
  return *scratch;
}

// Native.merge_labels(hash, pin) -> a token of the previous label set (for label_set_id=), nil
// when no session took the labels (none runs, or a value's to_s stopped it). Sets
// the current thread's labels to its current ones merged with `hash` (nil values delete keys).
// `pin`: a block will restore the previous set, which stays alive until then. A key that is not
// valid UTF-8 is refused (ArgumentError) and nothing changes: stop, snapshot and labels could
// not make it a Symbol (issue 30.2).
// The labels of `hash` merged into the thread's and interned (merge_labels' C++ part, no Ruby
// call). `items`: `pairs` keys and values read in place or label_pairs' Array's.
struct MergeResult {
  LabelCheck check = LabelCheck::kOk;
  long bad = -1;
  bool no_thread_state = false;
  bool ran = false;
  uint32_t previous = 0;
};
void merge_label_items(const VALUE* items, long pairs, VALUE pin, MergeResult& r) {
  without_cxx_exceptions([&] {
    LabelScratch& scratch = label_scratch();
    scratch.edits.clear();
    r.check = read_label_items(items, pairs, true, true, scratch.edits, r.bad);
    if (r.check != LabelCheck::kOk || !g_session) return;  // stopped by a to_s: as when not running
    ThreadState* ts = g_session->current_thread_state(true);
    if (!ts) {
      r.no_thread_state = true;
      return;
    }
    r.previous = ts->timeline.label_set();
    scratch.set = g_session->label_sets[r.previous];
    apply_label_edits(scratch.edits, scratch.set);
    const uint32_t id = g_session->label_sets.intern_bounded(scratch.set, g_session->opts.max_label_sets);
    if (RTEST(pin)) g_session->label_sets.pin(r.previous);
    g_session->set_label(ts, id);  // the one change to the thread's state (closes its interval)
    r.ran = true;
  });
}

// Plain keys and values read in place (no Array, no Ruby call), in a frame of its own that
// never raises: a frame a Ruby exception jumps out of keeps ASan's poison on its arrays (Ruby's
// longjmp is not intercepted), which a later frame at that depth then trips. false: nothing was
// changed and the general path decides (and raises).
__attribute__((noinline)) bool merge_plain_labels(VALUE hash, VALUE pin, VALUE& token) {
  InlineLabelPairs in_place;
  if (!inline_label_pairs(hash, in_place)) return false;
  MergeResult r;
  merge_label_items(in_place.items, in_place.pairs, pin, r);
  if (r.check != LabelCheck::kOk || r.no_thread_state) return false;  // nothing changed
  token = r.ran ? label_token(r.previous) : Qnil;
  RB_GC_GUARD(hash);  // holds what in_place read
  return true;
}

VALUE native_merge_labels(VALUE, VALUE hash, VALUE pin) {
  Check_Type(hash, T_HASH);
  if (!g_session) return Qnil;
  VALUE token;
  if (merge_plain_labels(hash, pin, token)) return token;
  VALUE pairs = label_pairs(hash);  // every Ruby call of this function
  MergeResult r;
  // No Ruby object is made in the merge (no GC, so no compaction): the Array's storage stays put.
  merge_label_items(RARRAY_CONST_PTR(pairs), RARRAY_LEN(pairs) / 2, pin, r);
  if (r.no_thread_state) rb_memerror();
  if (r.check != LabelCheck::kOk) raise_label_error(pairs, r.bad);
  RB_GC_GUARD(pairs);
  return r.ran ? label_token(r.previous) : Qnil;  // nil: nothing to restore
}

// Native.label_set_id = token (of merge_labels): the current thread's labels back to that set,
// releasing its pin. A token of the session stopped last (the session was restarted since)
// restores the same labels by value; of an older one, nothing changes. A plain id (no serial)
// names a set of the running session.
VALUE native_set_label_set(VALUE, VALUE token) {
  if (NIL_P(token)) return token;
  const uint64_t t = NUM2ULL(token);  // may call to_int: before the session is looked up
  if (!g_session) return token;
  const uint32_t serial = static_cast<uint32_t>(t >> 32), id = static_cast<uint32_t>(t);
  LabelSetTable& table = g_session->label_sets;
  bool unknown = false;
  without_cxx_exceptions([&] {
    uint32_t set;
    if (serial == 0 || serial == g_session_serial) {
      if (id >= table.size() || table.released(id)) {
        unknown = true;
        return;
      }
      if (serial) table.unpin(id);
      set = id;
    } else if (serial == g_stopped_serial && g_stopped_label_sets && id < g_stopped_label_sets->size()) {
      set = table.intern_bounded((*g_stopped_label_sets)[id], g_session->opts.max_label_sets);
    } else {
      return;
    }
    ThreadState* ts = g_session->current_thread_state(true);
    if (ts) g_session->set_label(ts, set);
  });
  if (unknown) rb_raise(rb_eArgError, "rperf: no label set %u", id);
  return token;
}

VALUE native_label_set_id(VALUE) {
  ThreadState* ts = g_session ? g_session->current_thread_state(false) : nullptr;
  return UINT2NUM(ts ? ts->timeline.label_set() : 0);
}

// Native.label_set_count -> the sets the running session's table holds (0 when not running).
VALUE native_label_set_count(VALUE) { return SIZET2NUM(g_session ? g_session->label_sets.held() : 0); }

// The label sets read below are the session's own: label_set_to_ruby only makes Strings,
// Symbols, Integers and a Hash (no Ruby code runs that could free them), and no C++ object
// is alive while it may raise (NoMemoryError).
VALUE empty_labels() { return rb_hash_freeze(rb_hash_new()); }

// Native.labels -> the current thread's labels (a frozen Hash).
VALUE native_labels(VALUE) {
  ThreadState* ts = g_session ? g_session->current_thread_state(false) : nullptr;
  if (!ts) return empty_labels();
  return label_set_to_ruby(g_session->label_sets[ts->timeline.label_set()]);
}

VALUE native_label_sets(VALUE) {
  VALUE out = rb_ary_new();
  if (!g_session) return rb_ary_push(out, empty_labels());
  // A released id (snapshot(clear: true) freed its set) reads nil.
  for (uint32_t i = 0; i < g_session->label_sets.size(); i++) {
    rb_ary_push(out, g_session->label_sets.released(i) ? Qnil : label_set_to_ruby(g_session->label_sets[i]));
  }
  return out;
}

// ---- defer / fork ------------------------------------------------------------------------

// profile blocks pause and resume sampling only in a deferred session; in a continuous one
// they just label (sampling never stops when a block ends).
VALUE native_profile_inc(VALUE) {
  if (!g_session) return Qfalse;
  if (!g_session->opts.defer) return Qtrue;
  if (g_session->profile_refcount++ == 0) g_session->resume();
  return Qtrue;
}

VALUE native_profile_dec(VALUE) {
  if (g_session && !g_session->opts.defer) return Qtrue;
  if (!g_session || g_session->profile_refcount <= 0) return Qfalse;
  if (--g_session->profile_refcount == 0) g_session->pause();
  return Qtrue;
}

// Native.after_fork_child -> the inherited session's owner (nil when none ran).
VALUE native_after_fork_child(VALUE) {
  if (!g_session) return Qnil;
  g_session->after_fork_child();
  // Deliberately never freed: the parent's worker may have held the ring, the stack store or
  // its maps mid-update at fork time, so the child must not touch (or free) them. Kept on a
  // list so the memory stays reachable (and leak checkers see it as intended).
  g_session->abandoned_next = g_abandoned;
  g_abandoned = g_session;
  g_session = nullptr;
  VALUE owner = g_owner;
  g_owner = Qnil;
  return owner;
}

// Native.suspend_for_exec / Native.resume_after_failed_exec: see Session::suspend_for_exec.
VALUE native_suspend_for_exec(VALUE) {
  if (g_session) g_session->suspend_for_exec();
  return Qnil;
}

// true, or the reason the timer could not start again (the session then takes no more ticks).
VALUE native_resume_after_failed_exec(VALUE) {
  if (!g_session) return Qtrue;
  bool ok = true;
  char reason[256] = "";
  without_cxx_exceptions([&] {
    std::string error;
    ok = g_session->resume_after_failed_exec(&error);
    snprintf(reason, sizeof reason, "%s", error.c_str());
  });
  return ok ? Qtrue : rb_str_new_cstr(reason);
}

// Native.sampling_paths -> [ticks sampled in the signal handler, by the postponed job] of the
// running session (nil when none): which path capture: took.
VALUE native_sampling_paths(VALUE) {
  if (!g_session) return Qnil;
  uint64_t handler = g_session->handler_samples;
  return rb_assoc_new(ULL2NUM(handler), ULL2NUM(g_session->sampling_count - handler));
}

// Native.count_export_time(ns): CPU the caller spent encoding an interval for export
// (Rperf::Continuous), counted as the profiler's own for the overhead budget. GVL held.
VALUE native_count_export_time(VALUE, VALUE ns) {
  const int64_t spent = NUM2LL(ns);
  if (g_session && spent > 0) g_session->export_time_ns += spent;
  return Qnil;
}

// Native.sampling_interval_ns -> the running session's tick interval now (the overhead budget
// changes it), nil when none.
VALUE native_sampling_interval_ns(VALUE) { return g_session ? LL2NUM(g_session->timer.interval_ns()) : Qnil; }

VALUE native_monotonic_ns(VALUE) { return LL2NUM(monotonic_ns()); }

VALUE native_default_signal(VALUE) { return INT2NUM(Timer::default_signal()); }

// Native.inject_allocation_failures(site, count), tests only: the next `count` passes through
// `site` (:drain, :take_samples) fail with std::bad_alloc (util/fault_injection.hh).
VALUE native_inject_allocation_failures(VALUE, VALUE site, VALUE count) {
  FaultSite where;
  if (site == ID2SYM(rb_intern("drain"))) where = FaultSite::kDrain;
  else if (site == ID2SYM(rb_intern("take_samples"))) where = FaultSite::kTakeSamples;
  else rb_raise(rb_eArgError, "rperf: no fault site %" PRIsVALUE, site);
  fault_budget(where).store(NUM2UINT(count), std::memory_order_relaxed);
  return Qnil;
}

}  // namespace

void init_session_binding(VALUE native) {
  init_session_globals();
  // Every fork, also one that bypasses Process._fork, silences the inherited session in the
  // child at once: its hooks would otherwise feed a ring whose worker thread is not there.
  pthread_atfork(nullptr, nullptr, [] {
    if (g_session) g_session->mark_forked();
  });
  // A VM being destroyed (a session left running past the at_exit handlers) is no place for
  // a stack walk: ticks go back to the postponed job, which the dying VM ignores.
  ruby_vm_at_exit([](ruby_vm_t*) {
    Session::signal_capture.store(false, std::memory_order_relaxed);
    Session::clear_gvl_holder();
  });
  // Ruby calls dmark only for a non-NULL data pointer.
  static int marker_data;
  g_marker = TypedData_Wrap_Struct(rb_cObject, &kMarkerType, &marker_data);
  rb_gc_register_mark_object(g_marker);

  rb_define_singleton_method(native, "start", RUBY_METHOD_FUNC(native_start), 2);
  rb_define_singleton_method(native, "session", RUBY_METHOD_FUNC(native_session), 0);
  rb_define_singleton_method(native, "stop", RUBY_METHOD_FUNC(native_stop), 1);
  rb_define_singleton_method(native, "snapshot", RUBY_METHOD_FUNC(native_snapshot), 2);
  rb_define_singleton_method(native, "running?", RUBY_METHOD_FUNC(native_running_p), 0);
  rb_define_singleton_method(native, "start_allocations", RUBY_METHOD_FUNC(native_start_allocations), 1);
  rb_define_singleton_method(native, "allocation_hooks", RUBY_METHOD_FUNC(native_allocation_hooks), 0);
  rb_define_singleton_method(native, "merge_labels", RUBY_METHOD_FUNC(native_merge_labels), 2);
  rb_define_singleton_method(native, "label_set_id=", RUBY_METHOD_FUNC(native_set_label_set), 1);
  rb_define_singleton_method(native, "label_set_id", RUBY_METHOD_FUNC(native_label_set_id), 0);
  rb_define_singleton_method(native, "labels", RUBY_METHOD_FUNC(native_labels), 0);
  rb_define_singleton_method(native, "thread_named", RUBY_METHOD_FUNC(native_thread_named), 1);
  rb_define_singleton_method(native, "label_sets", RUBY_METHOD_FUNC(native_label_sets), 0);
  rb_define_singleton_method(native, "label_set_count", RUBY_METHOD_FUNC(native_label_set_count), 0);
  rb_define_singleton_method(native, "profile_inc", RUBY_METHOD_FUNC(native_profile_inc), 0);
  rb_define_singleton_method(native, "profile_dec", RUBY_METHOD_FUNC(native_profile_dec), 0);
  rb_define_singleton_method(native, "after_fork_child", RUBY_METHOD_FUNC(native_after_fork_child), 0);
  rb_define_singleton_method(native, "suspend_for_exec", RUBY_METHOD_FUNC(native_suspend_for_exec), 0);
  rb_define_singleton_method(native, "resume_after_failed_exec", RUBY_METHOD_FUNC(native_resume_after_failed_exec), 0);
  rb_define_singleton_method(native, "sampling_paths", RUBY_METHOD_FUNC(native_sampling_paths), 0);
  rb_define_singleton_method(native, "count_export_time", RUBY_METHOD_FUNC(native_count_export_time), 1);
  rb_define_singleton_method(native, "sampling_interval_ns", RUBY_METHOD_FUNC(native_sampling_interval_ns), 0);
  rb_define_singleton_method(native, "monotonic_ns", RUBY_METHOD_FUNC(native_monotonic_ns), 0);
  rb_define_singleton_method(native, "default_signal", RUBY_METHOD_FUNC(native_default_signal), 0);
  rb_define_singleton_method(native, "inject_allocation_failures", RUBY_METHOD_FUNC(native_inject_allocation_failures), 2);
}

}  // namespace rperf
