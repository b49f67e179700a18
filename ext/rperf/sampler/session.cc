#include "sampler/session.hh"

#include <algorithm>

#include "util/clock.hh"

namespace rperf {

Session* g_session = nullptr;
rb_internal_thread_specific_key_t g_thread_key;
rb_postponed_job_handle_t g_sample_job;

namespace {
void sample_job(void*) {
  if (g_session && g_session->active()) g_session->sample_current_thread();
}
void trigger_sample() { rb_postponed_job_trigger(g_sample_job); }  // async-signal-safe
void worker_drain(void* ctx) { static_cast<Session*>(ctx)->drain(); }
}  // namespace

void init_session_globals() {
  g_thread_key = rb_internal_thread_specific_key_create();
  g_sample_job = rb_postponed_job_preregister(0, sample_job, nullptr);
}

Session::Session(const SessionOptions& o) : opts(o) {
  frame_buf.resize(opts.max_depth + 1);
  line_buf.resize(opts.max_depth + 1);
}

Session::~Session() { pthread_mutex_destroy(&consumer_mutex); }

int64_t Session::mode_now() const { return opts.wall ? monotonic_ns() : thread_cpu_ns(); }

bool Session::start(std::string* error) {
  start_mono_ns = monotonic_ns();
  start_realtime_ns = realtime_ns();
  floor_wall_ns = start_mono_ns;
  paused_ = opts.defer;
  running_ = true;
  // The starting thread's interval begins now, not at its first sample.
  ThreadState* ts = current_thread_state(true);
  ts->last_ns = mode_now();

  VALUE state = rb_gc_latest_gc_info(ID2SYM(rb_intern("state")));
  gc.marking = state == ID2SYM(rb_intern("marking"));

  Timer::Options topts;
  topts.frequency = opts.frequency;
  topts.signal = opts.signal < 0 ? Timer::default_signal() : opts.signal;
  topts.armed = !opts.defer;
  install_hooks();
  if (!timer.start(topts, trigger_sample, worker_drain, this, error)) {
    remove_hooks();
    running_ = false;
    rb_internal_thread_specific_set(rb_thread_current(), g_thread_key, nullptr);
    return false;
  }
  return true;
}

void Session::install_hooks() {
  install_gvl_hook();
  gc_tracepoint_ = rb_tracepoint_new(0,
                                     RUBY_INTERNAL_EVENT_GC_ENTER | RUBY_INTERNAL_EVENT_GC_EXIT |
                                         RUBY_INTERNAL_EVENT_GC_START | RUBY_INTERNAL_EVENT_GC_END_MARK |
                                         RUBY_INTERNAL_EVENT_GC_END_SWEEP,
                                     gc_event_hook, nullptr);
  rb_gc_register_address(&gc_tracepoint_);
  rb_tracepoint_enable(gc_tracepoint_);
}

void Session::remove_hooks() {
  remove_gvl_hook();
  remove_gc_hook();
}

void Session::remove_gc_hook() {
  if (gc_tracepoint_ != Qnil) {
    rb_tracepoint_disable(gc_tracepoint_);
    rb_gc_unregister_address(&gc_tracepoint_);
    gc_tracepoint_ = Qnil;
  }
}

void Session::stop() {
  if (!running_) return;
  if (!paused_) close_all_intervals();
  timer.stop();  // joins the worker, which drains one last time
  remove_hooks();
  running_ = false;
  drain();
  // Clear the thread-specific pointers of live threads before freeing their states.
  VALUE list = rb_funcall(rb_cThread, rb_intern("list"), 0);
  for (long i = 0; i < RARRAY_LEN(list); i++) rb_internal_thread_specific_set(RARRAY_AREF(list, i), g_thread_key, nullptr);
  threads.free_all();
}

// Stop/pause: the current thread's running interval and the off-GVL intervals of threads that
// are blocked right now end here, so every thread's weights add up to its observed time.
void Session::close_all_intervals() {
  int64_t t0 = monotonic_ns();
  ThreadState* self = current_thread_state(true);
  // The caller's own stack is rperf's stop/profile code: the tail interval goes to the stack the
  // thread was last seen in, when there is one.
  uint32_t stack = self->cache.last() != StackStore::kRoot ? self->cache.last() : capture_stack(self);
  if (refresh_epoch(self, mode_now())) close_interval(self, stack, kRunning, mode_now(), t0);
  threads.each([&](ThreadState* ts) {
    if (ts == self || !ts->off_gvl || ts->retired.load()) return;
    if (!opts.wall && ts->epoch != epoch) return;  // its CPU baseline predates the last resume
    // Another thread's CPU clock is readable through its clock id; an exited thread's is not.
    int64_t now = t0;
    if (!opts.wall) {
      timespec cpu;
      if (clock_gettime(ts->cpu_clock, &cpu) != 0) return;
      now = static_cast<int64_t>(cpu.tv_sec) * 1000000000LL + cpu.tv_nsec;
    }
    close_off_gvl_interval(ts, now, t0);
    ts->last_ns = now;
    ts->suspended_wall_ns = t0;
    ts->ready_wall_ns.store(0, std::memory_order_relaxed);
  });
  sampling_time_ns += monotonic_ns() - t0;
}

void Session::close_off_gvl_interval(ThreadState* ts, int64_t now, int64_t wall_now) {
  if (ts->suspended_stack == kNoStack) return;
  if (!opts.wall) {
    record(ts, ts->suspended_stack, kRunning, now - ts->last_ns, wall_now);
    return;
  }
  int64_t from = std::max(ts->suspended_wall_ns, floor_wall_ns);
  int64_t ready = ts->ready_wall_ns.load(std::memory_order_acquire);
  ready = std::min(std::max(ready, from), wall_now);  // READY not seen (or before a resume): all blocked
  record(ts, ts->suspended_stack, kGvlBlocked, ready - from, wall_now);
  record(ts, ts->suspended_stack, kGvlWait, wall_now - ready, wall_now);
}

void Session::pause() {
  if (!running_ || paused_) return;
  close_all_intervals();
  paused_ = true;
  timer.disarm();
}

void Session::resume() {
  if (!running_ || !paused_) return;
  epoch++;
  floor_wall_ns = monotonic_ns();
  ThreadState* ts = current_thread_state(true);
  ts->last_ns = mode_now();
  ts->epoch = epoch;
  paused_ = false;
  timer.arm();
}

void Session::after_fork_child() {
  // The worker thread and the POSIX timer do not exist in the child, and the worker may have
  // been inside the aggregator when the parent forked: abandon them instead of cleaning up.
  timer.abandon_after_fork();
  // The GVL hook stays installed (inert while no session runs, reused by the next one):
  // removing it takes Ruby's hook rwlock for writing, and another thread of the parent may
  // have held it for reading at the moment of fork, which would leave the child stuck.
  remove_gc_hook();
  rb_internal_thread_specific_set(rb_thread_current(), g_thread_key, nullptr);
  running_ = false;
}

ThreadState* Session::thread_state(VALUE thread) const {
  return static_cast<ThreadState*>(rb_internal_thread_specific_get(thread, g_thread_key));
}

ThreadState* Session::current_thread_state(bool create) {
  VALUE thread = rb_thread_current();
  ThreadState* ts = thread_state(thread);
  if (ts || !create) return ts;
  threads.reap_retired();
  ts = threads.create(opts.max_depth);
  ts->epoch = epoch;
  ts->last_ns = mode_now();
  rb_internal_thread_specific_set(thread, g_thread_key, ts);
  return ts;
}

bool Session::refresh_epoch(ThreadState* ts, int64_t now) {
  if (ts->epoch == epoch) return true;
  ts->epoch = epoch;
  ts->off_gvl = false;
  ts->suspended_stack = kNoStack;
  if (opts.wall) {
    ts->last_ns = floor_wall_ns;
    return true;
  }
  ts->last_ns = now;  // another thread's CPU clock at resume time is not known here
  return false;
}

uint32_t Session::capture_stack(ThreadState* ts) {
  const int limit = opts.max_depth + 1;
  int n = rb_profile_frames(0, limit, frame_buf.data(), line_buf.data());
  if (n == limit) {  // deeper than max_depth: keep the leaf side, mark the cut at the root
    frame_buf[n - 1] = 0;
    line_buf[n - 1] = 0;
  }
  static_assert(sizeof(VALUE) == sizeof(uint64_t), "VALUE must be 64-bit");
  return ts->cache.intern(stacks, reinterpret_cast<const uint64_t*>(frame_buf.data()), line_buf.data(), n);
}

void Session::record(ThreadState* ts, uint32_t stack, VmState state, int64_t weight, int64_t wall_now) {
  if (weight <= 0 || stack == kNoStack) return;
  Sample r{stack, ts->seq, ts->label_set, state, weight, wall_now - start_mono_ns};
  if (!ring.push(r)) dropped_samples.fetch_add(1, std::memory_order_relaxed);
}

void Session::close_interval(ThreadState* ts, uint32_t stack, VmState state, int64_t now, int64_t wall_now) {
  int64_t from = ts->last_ns;
  if (opts.wall) from = std::max(from, floor_wall_ns);
  record(ts, stack, state, now - from, wall_now);
  ts->last_ns = now;
}

void Session::sample_current_thread() {
  int64_t t0 = monotonic_ns();
  threads.reap_retired();  // one atomic exchange; frees states of threads that exited
  ThreadState* ts = current_thread_state(true);
  int64_t now = opts.wall ? t0 : thread_cpu_ns();
  if (refresh_epoch(ts, now)) close_interval(ts, capture_stack(ts), kRunning, now, t0);
  sampling_count++;
  sampling_time_ns += monotonic_ns() - t0;
}

void Session::drain() {
  pthread_mutex_lock(&consumer_mutex);
  ring.drain([this](const Sample& r) {
    if (opts.aggregate) aggregated.add(r);
    else raw.push_back(r);
  });
  pthread_mutex_unlock(&consumer_mutex);
}

std::vector<Sample> Session::take_samples(bool clear) {
  drain();
  pthread_mutex_lock(&consumer_mutex);
  std::vector<Sample> out;
  if (!opts.aggregate) out = clear ? std::move(raw) : raw;
  else out = clear ? aggregated.take() : aggregated.samples();
  if (clear) raw.clear();
  pthread_mutex_unlock(&consumer_mutex);
  return out;
}

void Session::mark() {
  for (const FrameKey& f : stacks.frames()) {
    if (f.method != 0) rb_gc_mark(static_cast<VALUE>(f.method));  // rb_gc_mark pins: no moves
  }
}

}  // namespace rperf
