// GVL events (Ruby's internal thread event hooks), fed to the thread's timeline
// (sampler/thread_timeline.hh: what each event charges):
//   SUSPENDED walks the releasing thread's stack (the off-GVL interval is charged to it);
//   READY     (no GVL) records when the thread started waiting for the GVL;
//   RESUMED   closes the off-GVL interval;
//   STARTED   (on the creating thread, GVL held) creates the new thread's state, so that its
//             CPU time counts from zero;
//   EXITED    (no GVL) reads the thread's clock and queues its state for freeing; the last
//             interval is closed when the state is reaped.
// RESUMED and SUSPENDED also tell the timer which thread holds the GVL (Session::gvl_holder):
// its tick is forwarded to that thread, so the postponed job runs where Ruby runs.
// SUSPENDED runs on the releasing thread before the GVL is handed over (thread_pthread.c),
// so capturing the stack and interning it there is as safe as in the postponed job.
#include <algorithm>

#include "util/clock.hh"
#include "sampler/session.hh"

namespace rperf {

namespace {

void on_suspended(Session& s, VALUE thread) {
  if (rb_thread_current() != thread) return;  // only the releasing thread's own stack is readable
  int64_t t0 = monotonic_ns();
  Session::clear_gvl_holder();
  ThreadState* ts = s.current_thread_state(true);
  if (!ts) return;  // out of memory: dropped (counted)
  ts->timeline.suspended(s.mode_now(), t0, s.walk_stack(), s);
  s.hook_time_ns += monotonic_ns() - t0;
}

// RESUMED runs on the thread that now holds the GVL.
void on_resumed(Session& s, VALUE thread) {
  int64_t t0 = monotonic_ns();
  ThreadState* ts = s.thread_state(thread);
  if (!ts) ts = s.current_thread_state(true);  // first sight: counted from here
  else if (ts->born) s.own_thread_state();
  if (!ts) return;  // out of memory: dropped (counted)
  s.reap_threads();  // the signal path takes no postponed jobs, which reap too
  if (!ts->ending) Session::publish_gvl_holder(ts);
  ts->timeline.resumed(s.opts.wall ? t0 : thread_cpu_ns(), t0, s);
  s.hook_time_ns += monotonic_ns() - t0;
}

rb_internal_thread_event_hook_t* g_gvl_hook = nullptr;

void gvl_event(Session* s, rb_event_flag_t event, VALUE thread) {
  // Only the main Ractor's threads get states (see on_main_ractor). READY may run on Ruby's
  // timer thread, and EXITED only retires an existing state (lock-free): neither needs it.
  switch (event) {
    case RUBY_INTERNAL_THREAD_EVENT_SUSPENDED:
      if (s->active() && on_main_ractor()) on_suspended(*s, thread);
      break;
    case RUBY_INTERNAL_THREAD_EVENT_RESUMED:
      if (s->active() && on_main_ractor()) on_resumed(*s, thread);
      break;
    case RUBY_INTERNAL_THREAD_EVENT_STARTED:  // on the creating thread, GVL held
      // A Ractor's first thread is created by a main Ractor thread: it is RactorThreads'.
      if (s->active() && on_main_ractor() && !of_another_ractor(thread)) s->thread_born(thread);
      break;
    case RUBY_INTERNAL_THREAD_EVENT_EXITED:
      if (ThreadState* ts = s->thread_state(thread)) {
        // On the exiting thread: its clock is readable only here. The interval since its
        // last event is recorded when its state is reaped, under the GVL.
        if (s->active() && !ts->born) {
          ts->exit_wall_ns = monotonic_ns();
          ts->exit_ns = s->opts.wall ? ts->exit_wall_ns : thread_cpu_ns();
        }
        Session::release_gvl_holder(ts);
        s->threads.retire(ts);
      }
      break;
    default:
      break;
  }
}

// Another Ractor's thread (the hook is process-wide): sampler/ractor_threads.hh. STARTED there
// waits for the thread's first RESUMED, on the thread itself.
void ractor_thread_event(Session* s, rb_event_flag_t event, VALUE thread) {
  switch (event) {
    case RUBY_INTERNAL_THREAD_EVENT_RESUMED:
      s->ractors.resumed(thread);
      break;
    case RUBY_INTERNAL_THREAD_EVENT_SUSPENDED:
      s->ractors.suspended(thread);
      break;
    default:
      break;
  }
}

void gvl_event_hook(rb_event_flag_t event, const rb_internal_thread_event_data_t* data, void*) {
  Session* s = g_session;
  if (!s) return;
  VALUE thread = data->thread;
  // Ruby's timer thread (READY) must not read a Thread object during GC: compaction's read
  // barrier faults on a moved-from page and its handler needs an execution context (seen under
  // ASan stress). That READY is lost (wall mode: the GVL wait after it counts as blocked).
  if (event == RUBY_INTERNAL_THREAD_EVENT_READY && !ruby_native_thread_p() && rb_during_gc()) return;
  // Neither need run in the thread's Ractor: a Ractor thread is known by its state under the
  // Ractor key (READY: only from a Ruby thread, the check above being a narrow one; a Ractor
  // thread woken by the timer thread loses its READY time).
  if (event == RUBY_INTERNAL_THREAD_EVENT_EXITED) {
    if (rb_internal_thread_specific_get(thread, g_ractor_thread_key)) s->ractors.exited(thread);
  } else if (event == RUBY_INTERNAL_THREAD_EVENT_READY) {
    if (s->opts.wall && ruby_native_thread_p() && rb_internal_thread_specific_get(thread, g_ractor_thread_key)) s->ractors.ready(thread);
  } else if (!on_main_ractor()) {
    if (ruby_native_thread_p()) ractor_thread_event(s, event, thread);
    return;
  }
  // READY (maybe on Ruby's timer thread) only stores an atomic: no scope for it.
  if (event != RUBY_INTERNAL_THREAD_EVENT_READY) {
    ProducerScope producer;
    gvl_event(s, event, thread);
    return;
  }
  if (s->active() && s->opts.wall) {
    if (ThreadState* ts = s->thread_state(thread)) ts->timeline.ready(monotonic_ns());
  }
}
}  // namespace

void install_gvl_hook() {
  if (g_gvl_hook) return;
  g_gvl_hook = rb_internal_thread_add_event_hook(
      gvl_event_hook,
      RUBY_INTERNAL_THREAD_EVENT_STARTED | RUBY_INTERNAL_THREAD_EVENT_READY | RUBY_INTERNAL_THREAD_EVENT_RESUMED |
          RUBY_INTERNAL_THREAD_EVENT_SUSPENDED | RUBY_INTERNAL_THREAD_EVENT_EXITED,
      nullptr);
}

void remove_gvl_hook() {
  if (g_gvl_hook) rb_internal_thread_remove_event_hook(g_gvl_hook);
  g_gvl_hook = nullptr;
}

}  // namespace rperf
