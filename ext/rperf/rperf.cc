// Ruby binding: Init_rperf and argument conversion. Validation of user arguments happens in
// lib/rperf.rb; these methods are the private `_c_*` layer under it.
#include <ruby/ruby.h>

#include <string>

#include "clock.hh"
#include "result.hh"
#include "session.hh"

using namespace rperf;

namespace rperf {
void init_encode_binding(VALUE native);
void init_load_binding(VALUE native);
}

namespace {

VALUE g_marker = Qnil;  // holds the frame VALUEs of the live session alive and pinned

void marker_mark(void*) {
  if (g_session) g_session->mark();
}

// Not write-barrier protected on purpose: the frame table grows without write barriers, so
// the incremental marker must rescan this object at the end of every mark phase.
const rb_data_type_t kMarkerType = {"rperf/marker", {marker_mark, nullptr, nullptr, nullptr, {nullptr}}, nullptr, nullptr, 0};

VALUE rperf_start(VALUE, VALUE freq, VALUE wall, VALUE aggregate, VALUE signal, VALUE defer, VALUE max_depth) {
  if (g_session) rb_raise(rb_eRuntimeError, "Rperf is already running");
  SessionOptions o;
  o.frequency = NUM2INT(freq);
  o.wall = RTEST(wall);
  o.aggregate = RTEST(aggregate);
  o.signal = NUM2INT(signal);
  o.defer = RTEST(defer);
  o.max_depth = NUM2INT(max_depth);
  Session* s = new Session(o);
  g_session = s;
  std::string error;
  if (!s->start(&error)) {
    g_session = nullptr;
    s->threads.free_all();
    delete s;
    rb_raise(rb_eRuntimeError, "rperf: cannot start the sampling timer: %s", error.c_str());
  }
  return Qtrue;
}

VALUE rperf_stop(VALUE, VALUE lines) {
  Session* s = g_session;
  if (!s) return Qnil;
  s->stop();
  ResultOptions ro;
  ro.lines = RTEST(lines);
  VALUE result = build_result(*s, ro);  // frames still marked: g_session is set
  g_session = nullptr;
  delete s;
  return result;
}

VALUE rperf_snapshot(VALUE, VALUE clear, VALUE lines) {
  Session* s = g_session;
  if (!s) return Qnil;
  if (!s->opts.aggregate) rb_raise(rb_eRuntimeError, "snapshot requires aggregate mode (aggregate: true)");
  ResultOptions ro;
  ro.lines = RTEST(lines);
  ro.clear = RTEST(clear);
  return build_result(*s, ro);
}

VALUE rperf_running_p(VALUE) { return g_session ? Qtrue : Qfalse; }

VALUE rperf_set_label(VALUE, VALUE id) {
  if (g_session) g_session->current_thread_state(true)->label_set = NUM2UINT(id);
  return id;
}

VALUE rperf_get_label(VALUE) {
  ThreadState* ts = g_session ? g_session->current_thread_state(false) : nullptr;
  return UINT2NUM(ts ? ts->label_set : 0);
}

VALUE rperf_profile_inc(VALUE) {
  if (!g_session) return Qfalse;
  if (g_session->profile_refcount++ == 0) g_session->resume();
  return Qtrue;
}

VALUE rperf_profile_dec(VALUE) {
  if (!g_session || g_session->profile_refcount <= 0) return Qfalse;
  if (--g_session->profile_refcount == 0) g_session->pause();
  return Qtrue;
}

VALUE rperf_after_fork_child(VALUE) {
  if (!g_session) return Qfalse;
  g_session->after_fork_child();
  // Deliberately leaked: the parent's worker may have held the ring or the aggregator mid-update
  // at fork time, so the child must not touch (or free) them.
  g_session = nullptr;
  return Qtrue;
}

VALUE rperf_monotonic_ns(VALUE) { return LL2NUM(monotonic_ns()); }

VALUE rperf_default_signal(VALUE) { return INT2NUM(Timer::default_signal()); }

}  // namespace

extern "C" __attribute__((visibility("default"))) void Init_rperf() {
  init_session_globals();
  // Ruby calls dmark only for a non-NULL data pointer.
  static int marker_data;
  g_marker = TypedData_Wrap_Struct(rb_cObject, &kMarkerType, &marker_data);
  rb_gc_register_mark_object(g_marker);

  VALUE mRperf = rb_define_module("Rperf");
  VALUE mNative = rb_define_module_under(mRperf, "Native");
  rb_define_singleton_method(mNative, "start", RUBY_METHOD_FUNC(rperf_start), 6);
  rb_define_singleton_method(mNative, "stop", RUBY_METHOD_FUNC(rperf_stop), 1);
  rb_define_singleton_method(mNative, "snapshot", RUBY_METHOD_FUNC(rperf_snapshot), 2);
  rb_define_singleton_method(mNative, "running?", RUBY_METHOD_FUNC(rperf_running_p), 0);
  rb_define_singleton_method(mNative, "set_label", RUBY_METHOD_FUNC(rperf_set_label), 1);
  rb_define_singleton_method(mNative, "get_label", RUBY_METHOD_FUNC(rperf_get_label), 0);
  rb_define_singleton_method(mNative, "profile_inc", RUBY_METHOD_FUNC(rperf_profile_inc), 0);
  rb_define_singleton_method(mNative, "profile_dec", RUBY_METHOD_FUNC(rperf_profile_dec), 0);
  rb_define_singleton_method(mNative, "after_fork_child", RUBY_METHOD_FUNC(rperf_after_fork_child), 0);
  rb_define_singleton_method(mNative, "monotonic_ns", RUBY_METHOD_FUNC(rperf_monotonic_ns), 0);
  rb_define_singleton_method(mNative, "default_signal", RUBY_METHOD_FUNC(rperf_default_signal), 0);
  init_encode_binding(mNative);
  init_load_binding(mNative);
}
