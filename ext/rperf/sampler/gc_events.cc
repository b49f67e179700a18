// GC events (internal tracepoint). GC time is attributed to the stack of the thread that
// triggered it, split at the real phase boundary, and counted exactly once:
//   GC_ENTER    closes the thread's running interval (so the next sample starts after GC);
//   GC_START    a new cycle begins: its slices are marking until END_MARK;
//   GC_END_MARK closes a %GC=mark interval inside the slice;
//   GC_EXIT     closes the rest of the slice as mark (incremental marking) or sweep.
// Nothing here allocates Ruby objects.
#include "util/clock.hh"
#include "sampler/session.hh"

namespace rperf {

void gc_event_hook(VALUE tpval, void*) {
  Session* s = g_session;
  if (!s || !s->active() || !on_main_ractor()) return;
  rb_event_flag_t event = rb_tracearg_event_flag(rb_tracearg_from_tracepoint(tpval));
  GcTracking& gc = s->gc;
  int64_t t0 = monotonic_ns();
  switch (event) {
    case RUBY_INTERNAL_EVENT_GC_ENTER: {
      ThreadState* ts = s->current_thread_state(true);
      if (!ts) return;  // out of memory: this GC is not attributed (counted as dropped)
      int64_t now = s->mode_now();
      int depth = s->walk_stack();
      if (s->refresh_epoch(ts, now)) s->close_interval(ts, depth, kRunning, now, t0);
      else s->record(ts, depth, kRunning, 0, t0);  // the stack only
      ts->last_ns = now;
      gc.in_gc = true;
      gc.thread = ts;
      gc.last_ns = now;
      break;
    }
    case RUBY_INTERNAL_EVENT_GC_START:
      gc.marking = true;
      return;
    case RUBY_INTERNAL_EVENT_GC_END_SWEEP:
      gc.marking = false;
      return;
    case RUBY_INTERNAL_EVENT_GC_END_MARK:
    case RUBY_INTERNAL_EVENT_GC_EXIT: {
      if (!gc.in_gc || !gc.thread) {
        if (event == RUBY_INTERNAL_EVENT_GC_END_MARK) gc.marking = false;
        else gc.in_gc = false;
        return;
      }
      int64_t now = s->mode_now();
      VmState phase = (event == RUBY_INTERNAL_EVENT_GC_END_MARK || gc.marking) ? kGcMark : kGcSweep;
      s->record(gc.thread, -1, phase, now - gc.last_ns, t0);  // on the stack GC_ENTER recorded
      gc.last_ns = now;
      if (event == RUBY_INTERNAL_EVENT_GC_END_MARK) {
        gc.marking = false;
      } else {
        gc.thread->last_ns = now;  // the next running interval starts after GC
        gc.in_gc = false;
        gc.thread = nullptr;
      }
      break;
    }
    default:
      return;
  }
  s->hook_time_ns += monotonic_ns() - t0;
}

}  // namespace rperf
