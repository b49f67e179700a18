// GC events (internal events, through session.cc's vm_event_hook). GC time is attributed to the stack of the thread that
// triggered it, split at the real phase boundary, and counted exactly once (the thread's
// timeline, sampler/thread_timeline.hh, charges each slice):
//   GC_ENTER    walks the stack and closes the thread's running interval;
//   GC_START    a new cycle begins: its slices are marking until END_MARK;
//   GC_END_MARK closes a %GC=mark interval inside the slice;
//   GC_EXIT     closes the rest of the slice as mark (incremental marking) or sweep.
// Nothing here allocates Ruby objects.
#include "util/clock.hh"
#include "sampler/session.hh"

namespace rperf {

void gc_event(rb_event_flag_t event) {
  Session* s = g_session;
  if (!s || !s->active() || !on_main_ractor()) return;
  ProducerScope producer;
  GcTracking& gc = s->gc;
  int64_t t0 = monotonic_ns();
  switch (event) {
    case RUBY_INTERNAL_EVENT_GC_ENTER: {
      ThreadState* ts = s->current_thread_state(true);
      if (!ts) return;  // out of memory: this GC is not attributed (counted as dropped)
      ts->timeline.gc_enter(s->mode_now(), t0, s->walk_stack(), *s);
      gc.thread = ts;
      break;
    }
    case RUBY_INTERNAL_EVENT_GC_START:
      gc.marking = true;
      return;
    case RUBY_INTERNAL_EVENT_GC_END_SWEEP:
      gc.marking = false;
      return;
    case RUBY_INTERNAL_EVENT_GC_END_MARK:
      if (gc.thread) gc.thread->timeline.gc_end_mark(s->mode_now(), t0, *s);
      gc.marking = false;
      if (!gc.thread) return;
      break;
    case RUBY_INTERNAL_EVENT_GC_EXIT:
      if (!gc.thread) return;
      gc.thread->timeline.gc_exit(s->mode_now(), t0, gc.marking, *s);  // the next interval starts after GC
      gc.thread = nullptr;
      break;
    default:
      return;
  }
  s->hook_time_ns += monotonic_ns() - t0;
}

}  // namespace rperf
