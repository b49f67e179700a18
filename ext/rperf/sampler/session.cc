#include "sampler/session.hh"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "sampler/charge_ring.hh"
#include "sampler/vm_frames.hh"
#include "util/clock.hh"
#include "util/fault_injection.hh"
#include "util/scoped_lock.hh"

namespace rperf {

Session* g_session = nullptr;
rb_internal_thread_specific_key_t g_thread_key;
rb_postponed_job_handle_t g_sample_job;

std::atomic<pid_t> Session::gvl_holder{0};
std::atomic<ThreadState*> Session::gvl_holder_state{nullptr};
std::atomic<int> Session::producing{0};
std::atomic<bool> Session::signal_capture{false};

// Relaxed atomics plus signal fences: the handler that reads these runs on the thread that
// wrote them (a handler on another thread finds the id is not its own and stops there).
ProducerScope::ProducerScope() {
  Session::producing.fetch_add(1, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
}
ProducerScope::~ProducerScope() {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  Session::producing.fetch_sub(1, std::memory_order_relaxed);
}

void Session::publish_gvl_holder(ThreadState* ts) {
  gvl_holder_state.store(ts, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  gvl_holder.store(ts->tid, std::memory_order_relaxed);
}

void Session::clear_gvl_holder() {
  gvl_holder.store(0, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  gvl_holder_state.store(nullptr, std::memory_order_relaxed);
}

void Session::release_gvl_holder(const ThreadState* ts) {
  ThreadState* expected = const_cast<ThreadState*>(ts);
  if (gvl_holder_state.load(std::memory_order_relaxed) != ts) return;
  pid_t tid = ts->tid;
  gvl_holder.compare_exchange_strong(tid, 0, std::memory_order_relaxed);
  gvl_holder_state.compare_exchange_strong(expected, nullptr, std::memory_order_relaxed);
}
std::atomic<bool> Session::forward_ticks{false};
std::atomic<bool> Session::job_requested{false};
std::atomic<bool> Session::tick_reads_cpu{false};

namespace {
// The CPU clock of the thread that held the GVL at the last tick, published by the timer
// thread under a sequence lock (written in a signal handler: no mutex).
std::atomic<uint32_t> g_tick_seq{0};
std::atomic<pid_t> g_tick_tid{0};
std::atomic<int64_t> g_tick_cpu{0};

void sample_job(void*) {
  if (!g_session || !g_session->active() || !on_main_ractor()) return;
  if (Session::job_requested.exchange(false, std::memory_order_relaxed)) g_session->sample_current_thread();
}
// The tick (async-signal-safe): on the GVL holder under capture: :signal the handler samples
// it there; else (or when a condition for that fails) the postponed job does.
void on_tick(pid_t self) {
  if (self > 0 && Session::signal_capture.load(std::memory_order_relaxed) && Session::capture_in_handler(self)) return;
  Session::job_requested.store(true, std::memory_order_relaxed);
  rb_postponed_job_trigger(g_sample_job);
}
// On the timer thread at each tick (async-signal-safe). Returns the tick's target: the GVL
// holder when more than one Ruby thread may run, else none (the postponed job then finds the
// only thread by itself); or, in cpu mode, Timer::kSkipTick when the holder's CPU clock has not
// moved since the previous tick read it: it was descheduled in between, and that tick (queued,
// or already sampled) covers it, so there is nothing to charge. On a loaded machine a tick
// would otherwise reach the thread for every period it waited, each a signal, a clock read and
// a walk for a few nanoseconds of weight.
pid_t tick_target() {
  pid_t holder = Session::gvl_holder.load(std::memory_order_relaxed);
  if (holder > 0 && Session::tick_reads_cpu.load(std::memory_order_relaxed)) {
    timespec cpu;
    if (clock_gettime(thread_cpu_clock(holder), &cpu) == 0) {
      const int64_t cpu_ns = static_cast<int64_t>(cpu.tv_sec) * 1000000000LL + cpu.tv_nsec;
      // Only this (timer) thread writes them: plain loads of its own last writes.
      if (g_tick_tid.load(std::memory_order_relaxed) == holder && g_tick_cpu.load(std::memory_order_relaxed) == cpu_ns) {
        return Timer::kSkipTick;
      }
      uint32_t seq = g_tick_seq.load(std::memory_order_relaxed);
      g_tick_seq.store(seq + 1, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_release);
      g_tick_tid.store(holder, std::memory_order_relaxed);
      g_tick_cpu.store(cpu_ns, std::memory_order_relaxed);
      g_tick_seq.store(seq + 2, std::memory_order_release);
    }
  }
  return Session::forward_ticks.load(std::memory_order_relaxed) ? holder : 0;
}
void thread_end_hook(VALUE, void*) {
  if (g_session && on_main_ractor()) g_session->thread_ending();
}
void worker_drain(void* ctx) { static_cast<Session*>(ctx)->drain(); }
int64_t spent_off_timer(void* ctx) {
  const Session* s = static_cast<const Session*>(ctx);
  return s->sampling_time_ns.total() + s->hook_time_ns.total() + s->export_time_ns.total();
}
}  // namespace

int64_t Session::own_cpu_ns() const { return timer.cpu_ns() + spent_off_timer(const_cast<Session*>(this)); }

int64_t Session::tick_cpu_ns(pid_t tid) {
  uint32_t before = g_tick_seq.load(std::memory_order_acquire);
  if (before & 1) return -1;
  pid_t t = g_tick_tid.load(std::memory_order_relaxed);
  int64_t cpu = g_tick_cpu.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (g_tick_seq.load(std::memory_order_relaxed) != before || t != tid || tid == 0) return -1;
  return cpu;
}

namespace {
int g_main_ractor_mark;
rb_ractor_local_key_t g_main_ractor_key;
void no_objects(void*) {}  // the value is a static: nothing to mark, nothing to free
const rb_ractor_local_storage_type kMainRactorMark = {no_objects, no_objects};
}  // namespace

// The main Ractor's value is read from a cache in the key (no table lookup). Ruby's own timer
// thread (no execution context) runs some hooks too: it is no Ractor's.
bool on_main_ractor() {
  return ruby_native_thread_p() && rb_ractor_local_storage_ptr(g_main_ractor_key) == &g_main_ractor_mark;
}

void init_session_globals() {
  g_main_ractor_key = rb_ractor_local_storage_ptr_newkey(&kMainRactorMark);
  rb_ractor_local_storage_ptr_set(g_main_ractor_key, &g_main_ractor_mark);  // Init_rperf: main Ractor
  g_thread_key = rb_internal_thread_specific_key_create();
  g_sample_job = rb_postponed_job_preregister(0, sample_job, nullptr);
  init_ractor_globals();
}

Session::Session(const SessionOptions& o)
    : opts(o), ring(1 << 14, 1 << 17, static_cast<uint32_t>(o.max_depth + 1), o.lines), ractors(o.wall, o.max_depth, o.lines, dropped_samples) {
  ractors.threads.number_after(threads);
  if (o.allocation_interval > 0) {
    alloc.gaps = GeometricGaps(o.allocation_interval, static_cast<uint64_t>(monotonic_ns()) ^ (static_cast<uint64_t>(getpid()) << 40));
    alloc.countdown = alloc.gaps.next();
  }
}

Session::~Session() { pthread_mutex_destroy(&consumer_mutex); }

int64_t Session::mode_now() const { return opts.wall ? monotonic_ns() : thread_cpu_ns(); }

bool Session::start(const std::vector<ExistingThread>& others, std::string* error) {
  // A scope left open by a Ruby exception (a longjmp past its destructor) would only have
  // disabled capture in the handler; a new session starts from a known state.
  producing.store(0, std::memory_order_relaxed);
  ProducerScope producer;
  start_mono_ns = monotonic_ns();
  stopped_mono_ns = 0;
  start_realtime_ns = realtime_ns();
  paused_ = opts.defer;
  running_ = true;
  pid = getpid();
  // The starting thread's interval begins now, not at its first sample.
  ThreadState* ts = current_thread_state(true);
  if (!ts) {
    running_ = false;
    *error = "out of memory";
    return false;
  }
  // A forked child's thread CPU clock starts at zero at fork: the CPU it spent since (returning
  // from fork, copy-on-write faults, restarting the session) is the child's and is counted.
  ts->timeline.start_running(opts.forked_child && !opts.wall ? 0 : mode_now());
  adopt_existing_threads(others);
  publish_gvl_holder(ts);
  // The signal path needs vm_frames.hh's reading of the stack to agree with rb_profile_frames
  // here (Native.start's caller: Ruby frames under a C frame); else ticks use the job.
  // Other Ractors' threads are sampled in the handler whatever the capture: they need it too.
  vm_layout_ok_ = ts->vm_thread && vm::layout_matches(ts->vm_thread);
  if (opts.signal_capture && !vm_layout_ok_) opts.signal_capture = false;
  tick_reads_cpu.store(!opts.wall, std::memory_order_relaxed);
  update_forwarding();

  VALUE state = rb_gc_latest_gc_info(ID2SYM(rb_intern("state")));
  gc.marking = state == ID2SYM(rb_intern("marking"));

  Timer::Options topts;
  topts.frequency = opts.frequency;
  topts.signal = opts.signal < 0 ? Timer::default_signal() : opts.signal;
  topts.armed = !opts.defer;
  topts.target = tick_target;
  topts.extra_targets = RactorThreads::running_tids;
  topts.extra_tick = RactorThreads::tick_in_handler;
  if (!opts.defer) ractors.start_recording(vm_layout_ok_, false, start_mono_ns);
  topts.overhead_target = opts.overhead_target;
  topts.own_time = spent_off_timer;
  install_hooks();
  signal_capture.store(opts.signal_capture && topts.signal > 0, std::memory_order_relaxed);
  job_requested.store(false, std::memory_order_relaxed);  // a job still pending from a stopped session
  interval_start = IntervalStart{0, 0, 0, clock_ns(CLOCK_PROCESS_CPUTIME_ID)};
  if (!timer.start(topts, on_tick, worker_drain, this, error)) {
    signal_capture.store(false, std::memory_order_relaxed);
    remove_hooks();
    running_ = false;
    forget_threads();
    return false;
  }
  return true;
}

namespace {
// The VM's events, in one hook registered the way TracePoint registers its own (a raw hook:
// Ruby passes the event's data): Ruby walks its hook list for every allocation, and a
// TracePoint would add, per event, a call through tp_call_trace with a typed-data check and a
// thread-local read to find the event. Callgrind, 560,000 allocations at N = 1024: 31
// instructions per allocation here beside Ruby's list walk; 74 with NEWOBJ in a TracePoint of its
// own (its call, and one more step of the walk for the GC events' TracePoint); stackprof's 65.
void vm_event_hook(VALUE, rb_trace_arg_t* arg) {
  rb_event_flag_t event = rb_tracearg_event_flag(arg);
  if (event == RUBY_INTERNAL_EVENT_NEWOBJ) return newobj_event(arg);
  if (event == RUBY_INTERNAL_EVENT_FREEOBJ) return freeobj_event(arg);
  gc_event(event);
}

rb_event_hook_func_t vm_event_hook_func() {
  // A raw hook's signature differs from rb_event_hook_func_t's (RUBY_EVENT_HOOK_FLAG_RAW_ARG
  // tells Ruby); through void(*)() the cast is the documented one.
  return reinterpret_cast<rb_event_hook_func_t>(reinterpret_cast<void (*)()>(vm_event_hook));
}
}  // namespace

void Session::install_hooks() {
  install_gvl_hook();
  // NEWOBJ is counted from start_allocations (rperf's own start-up is not profiled); FREEOBJ
  // finds nothing to forget before it.
  vm_events_ = RUBY_INTERNAL_EVENT_GC_ENTER | RUBY_INTERNAL_EVENT_GC_EXIT | RUBY_INTERNAL_EVENT_GC_START |
               RUBY_INTERNAL_EVENT_GC_END_MARK | RUBY_INTERNAL_EVENT_GC_END_SWEEP;
  if (opts.allocation_interval > 0) vm_events_ |= RUBY_INTERNAL_EVENT_NEWOBJ;
  if (opts.allocation_interval > 0 && opts.retained) vm_events_ |= RUBY_INTERNAL_EVENT_FREEOBJ;
  rb_add_event_hook2(vm_event_hook_func(), vm_events_, Qnil,
                     static_cast<rb_event_hook_flag_t>(RUBY_EVENT_HOOK_FLAG_SAFE | RUBY_EVENT_HOOK_FLAG_RAW_ARG));
  if (opts.signal_capture) {
    // Not an ISEQ event: enabling it leaves YJIT's code in place.
    thread_end_tracepoint_ = rb_tracepoint_new(0, RUBY_EVENT_THREAD_END, thread_end_hook, nullptr);
    rb_gc_register_address(&thread_end_tracepoint_);
    rb_tracepoint_enable(thread_end_tracepoint_);
  }
}

void Session::start_allocations(std::string own_source_prefix) {
  own_source_prefix_ = std::move(own_source_prefix);
  if (running_ && !forked_ && opts.allocation_interval > 0) alloc.sampling = true;
}

void Session::remove_hooks() {
  remove_gvl_hook();
  remove_gc_hook();
}

void Session::remove_gc_hook() {
  alloc.sampling = false;
  if (vm_events_ != 0) {
    rb_remove_event_hook(vm_event_hook_func());
    vm_events_ = 0;
  }
  if (thread_end_tracepoint_ != Qnil) {
    rb_tracepoint_disable(thread_end_tracepoint_);
    rb_gc_unregister_address(&thread_end_tracepoint_);
    thread_end_tracepoint_ = Qnil;
  }
}

void Session::stop() {
  if (!running_) return;
  ProducerScope producer;
  signal_capture.store(false, std::memory_order_relaxed);
  if (!paused_) close_all_intervals();
  ractors.stop_recording();
  stopped_mono_ns = monotonic_ns();
  timer.stop();  // joins the worker, which drains one last time
  remove_hooks();
  reap_threads();  // the last intervals of threads that exited (running_ still true)
  running_ = false;
  drain();
  forget_threads();
}

void Session::suspend_for_exec() {
  if (!running_ || forked_ || !timer.running()) return;
  timer.stop();  // joins the worker (it drains once more) and discards queued ticks
  exec_suspended_ = true;
}

bool Session::resume_after_failed_exec(std::string* error) {
  if (!exec_suspended_) return true;
  exec_suspended_ = false;
  return timer.restart(error);
}

// Stop/pause/snapshot: the current thread's running interval and the off-GVL intervals of
// threads that are blocked right now end here, so every thread's weights add up to its
// observed time.
void Session::close_all_intervals() {
  ProducerScope producer;
  int64_t t0 = monotonic_ns();
  ThreadState* self = current_thread_state(true);
  // The caller's own stack is rperf's stop/profile code: the tail interval goes to the stack the
  // thread was last seen in, when there is one.
  if (self) {  // nullptr only when out of memory
    int depth = self->timeline.needs_walk() ? walk_stack() : Charge::kCurrentStack;
    self->timeline.close_own(mode_now(), t0, depth, *this);
  }
  threads.each([&](ThreadState* ts) {
    if (ts == self || ts->retired.load() || ts->timeline.phase() != ThreadPhase::kOffGvl) return;
    int64_t now = opts.wall ? t0 : cpu_clock_of(ts);
    if (now >= 0) ts->timeline.close_off_gvl(now, t0, *this);
  });
  ractors.close_intervals(t0);
  hook_time_ns += monotonic_ns() - t0;
}

// Another thread's CPU clock is readable through its clock id; an exited thread's is not.
int64_t Session::cpu_clock_of(const ThreadState* ts) const {
  timespec cpu;
  if (clock_gettime(ts->cpu_clock, &cpu) != 0) return -1;
  return static_cast<int64_t>(cpu.tv_sec) * 1000000000LL + cpu.tv_nsec;
}

void Session::pause() {
  if (!running_ || paused_) return;
  ProducerScope producer;
  close_all_intervals();
  ractors.stop_recording();
  paused_ = true;
  timer.disarm();
}

void Session::resume() {
  if (!running_ || !paused_) return;
  ProducerScope producer;
  ThreadState* self = current_thread_state(true);
  if (!self) return;  // out of memory: stays paused
  // While paused the hooks were inert: nothing is known of the other threads until their next
  // event. The resuming thread holds the GVL: it runs from now.
  threads.each([&](ThreadState* ts) {
    if (ts != self) ts->timeline.unobserve();
  });
  self->timeline.start_running(mode_now());
  if (!self->ending) publish_gvl_holder(self);
  paused_ = false;
  ractors.start_recording(vm_layout_ok_, true, start_mono_ns);
  timer.arm();
}

// Clears the thread-specific pointers of the threads it knows (each live one has a state,
// also a Ractor's first thread, which Thread.list does not show), then frees every state
// (hooks removed). No Ruby call: a concurrent start or stop cannot run in the middle.
void Session::forget_threads() {
  forward_ticks.store(false);
  tick_reads_cpu.store(false);
  clear_gvl_holder();
  threads.each([](ThreadState* ts) {
    if (!ts->retired.load() && ts->thread) rb_internal_thread_specific_set(static_cast<VALUE>(ts->thread), g_thread_key, nullptr);
  });
  threads.free_all();
  ractors.forget();
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
  RactorThreads::reset_after_fork();
  running_ = false;
  signal_capture.store(false, std::memory_order_relaxed);
  clear_gvl_holder();
}

ThreadState* Session::thread_state(VALUE thread) const {
  return static_cast<ThreadState*>(rb_internal_thread_specific_get(thread, g_thread_key));
}

ThreadState* Session::current_thread_state(bool create) {
  ProducerScope producer;
  VALUE thread = rb_thread_current();
  ThreadState* ts = thread_state(thread);
  if (ts) {
    if (ts->born) own_thread_state();
    return ts;
  }
  if (!create) return nullptr;
  reap_threads();
  ts = threads.create(0, opts.wall);
  if (!ts) {  // out of memory: this event is dropped, the next one tries again
    dropped_samples.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  ts->timeline.start_running(mode_now());  // first seen on its own thread, holding the GVL
  set_thread(ts, thread);
  update_forwarding();
  return ts;
}

ThreadState* Session::own_thread_state() {
  ThreadState* ts = thread_state(rb_thread_current());
  if (ts && ts->born) {
    ts->born = false;
    pthread_getcpuclockid(pthread_self(), &ts->cpu_clock);
    ts->tid = static_cast<pid_t>(syscall(SYS_gettid));
  }
  return ts;
}

void Session::thread_born(VALUE thread) {
  ProducerScope producer;
  if (thread_state(thread)) return;
  reap_threads();
  ThreadState* ts = threads.create(-1, opts.wall);
  if (!ts) return;  // out of memory: adopted at its first event instead
  ts->born = true;
  // No stack yet: in cpu mode its clock starts at zero, so everything it burns is counted; in
  // wall mode it counts from its first event (RESUMED).
  ts->timeline.unobserve(opts.wall ? -1 : 0);
  set_thread(ts, thread);
  update_forwarding();
}

void Session::set_thread(ThreadState* ts, VALUE thread) {
  ts->thread = static_cast<uintptr_t>(thread);
  ts->vm_thread = RTYPEDDATA_GET_DATA(thread);
  rb_internal_thread_specific_set(thread, g_thread_key, ts);
}

// Threads that exist at start count from start: the caller holds the GVL, so each of them
// is off it, at a stack we cannot know (nothing is recorded for its time off the GVL in wall
// mode; in cpu mode what it burns from now on goes to its first sampled stack).
void Session::adopt_existing_threads(const std::vector<ExistingThread>& others) {
  for (const ExistingThread& other : others) {
    if (other.tid <= 0 || thread_state(other.thread)) continue;
    ThreadState* ts = threads.create(other.tid, opts.wall);
    if (!ts) continue;  // out of memory: adopted at its first event instead
    ts->timeline.unobserve(opts.wall ? -1 : cpu_clock_of(ts));
    set_thread(ts, other.thread);
  }
  // Their names as read at start (a thread adopted later, at its first event, is named at
  // its next Thread#name=).
  for (const ExistingThread& other : others) {
    if (other.name.empty()) continue;
    if (ThreadState* ts = thread_state(other.thread)) thread_names_.push_back(ThreadName{ts->seq, other.name, 0, {}});
  }
}

void Session::thread_named(ThreadState* ts, std::string name) {
  for (auto it = thread_names_.rbegin(); it != thread_names_.rend(); ++it) {
    if (it->thread_seq != ts->seq) continue;
    if (it->name == name) return;
    break;
  }
  if (name.empty() && std::none_of(thread_names_.begin(), thread_names_.end(), [&](const ThreadName& n) { return n.thread_seq == ts->seq; })) return;
  thread_names_.push_back(ThreadName{ts->seq, std::move(name), monotonic_ns(), {}});
}

std::vector<ThreadName> Session::thread_names_since(int64_t since_mono_ns) const {
  std::vector<ThreadName> out = thread_names_;
  for (ThreadName& n : out) n.time_ns = n.time_ns > since_mono_ns ? n.time_ns - since_mono_ns : 0;
  return out;
}

// capture: :signal forwards every tick, also with one thread: the sample is taken where Ruby runs.
void Session::update_forwarding() { forward_ticks.store(threads.live() > 1 || opts.signal_capture, std::memory_order_relaxed); }

void Session::reap_threads() {
  bool any = false;
  ProducerScope producer;
  threads.reap_retired([&](ThreadState* ts) {
    any = true;
    release_gvl_holder(ts);  // before it is freed
    if (ts->exit_ns != 0 && active()) ts->timeline.exited(ts->exit_ns, ts->exit_wall_ns, *this);
    SampleRecord r;
    r.kind = SampleRecord::kThreadGone;
    r.thread_seq = ts->seq;
    ring.push(r);  // when full, the worker keeps that thread's path until stop
    if (gc.thread == ts) gc.thread = nullptr;
  });
  if (any) update_forwarding();
}

int Session::walk_stack(VALUE leaf) {
  int32_t* lines = nullptr;
  uint64_t* slots = ring.frame_slots(&lines);
  if (!slots) return Charge::kNoRoom;  // the frame ring is full
  static_assert(sizeof(VALUE) == sizeof(uint64_t), "VALUE must be 64-bit");
  const int limit = opts.max_depth + 1;
  const int k = leaf ? 1 : 0;
  if (leaf) {
    slots[0] = leaf;
    if (opts.lines) lines[0] = 0;  // its pc was never written: no line is known
  }
  int n = k + rb_profile_frames(0, limit - k, reinterpret_cast<VALUE*>(slots + k), opts.lines ? lines + k : nullptr);
  if (n == limit) {  // deeper than max_depth: keep the leaf side, mark the cut at the root
    slots[n - 1] = kTruncatedMethod;
    if (opts.lines) lines[n - 1] = 0;
  }
  return n;
}

bool Session::charge(uint32_t thread_seq, const Charge& c) {
  return push_charge(ring, dropped_samples, start_mono_ns, thread_seq, c);
}

void Session::set_label(ThreadState* ts, uint32_t label_set) {
  ProducerScope producer;
  if (!active()) {
    ts->timeline.relabel(label_set);
    return;
  }
  int64_t wall = monotonic_ns();
  int64_t now = opts.wall ? wall : thread_cpu_ns();
  int depth = ts->timeline.needs_walk() && label_set != ts->timeline.label_set() ? walk_stack() : Charge::kCurrentStack;
  ts->timeline.set_label(label_set, now, wall, depth, *this);
}

void Session::sample_current_thread() {
  ProducerScope producer;
  int64_t t0 = monotonic_ns();
  reap_threads();
  ThreadState* ts = current_thread_state(true);
  if (!ts) return;  // out of memory: counted in dropped_samples
  int64_t now = t0;
  if (!opts.wall) {
    // The tick's reading of this thread's CPU clock when it is the latest thing known of it;
    // else (another thread's tick, or an event since) our own.
    now = tick_cpu_ns(ts->tid);
    if (now <= ts->timeline.since()) now = thread_cpu_ns();
  }
  ts->timeline.tick(now, t0, walk_stack(), *this);
  sampling_count++;
  sampling_time_ns += monotonic_ns() - t0;
}

void Session::thread_ending() {
  ProducerScope producer;
  ThreadState* ts = thread_state(rb_thread_current());
  if (!ts) return;
  ts->ending = true;
  release_gvl_holder(ts);
}

// The signal handler's sample (capture: :signal). It walks the stack with rb_profile_frames
// from inside a signal handler, which is safe only while ALL of these hold; each is checked
// here, in this order, with loads only (no lock, no allocation, no Ruby call that allocates or
// raises), and any failure leaves the tick to the postponed job:
//  1. The handler runs on the thread that holds the GVL. The timer forwarded the tick to
//     `self` (rt_tgsigqueueinfo delivers to exactly that thread), and `gvl_holder` is `self`:
//     only this thread can have written its own id there (RESUMED/start/resume, on itself), and
//     it clears it before releasing the GVL (SUSPENDED) or exiting (EXITED, reap). So no other
//     thread runs Ruby or rperf's producer code now, and `gvl_holder_state` is this thread's
//     live state. Only main-Ractor threads are ever named: the main Ractor's stack and GVL.
//  2. Not inside rperf's own producer code (ProducerScope): the timeline and the ring have
//     one producer at a time, and the handler must not re-enter an event half done.
//  3. Not during GC (rb_during_gc: a load of the VM's objspace flag): objects may be moving
//     (compaction) or being marked; the marker reads the ring then. GC on another Ractor also
//     needs this thread at a barrier, which it cannot reach while in the handler. A tick in
//     this thread's GC (between its GC_ENTER and GC_EXIT events) needs no sample at all: those
//     events charge the interval (GC states, the stack walked at entry) and close it at exit,
//     so the tick is done; a postponed job would only set the interrupt flag, making YJIT code
//     exit to the interpreter, to sample the few microseconds after GC (YJIT share on the
//     block workload at 10 kHz: 98.7% with the job).
//  4. Not mid frame push: Ruby 3.3/3.4 publish a frame only when it is complete
//     (vm_push_frame: atomic_signal_fence before `ec->cfp = cfp`; YJIT stores ec->cfp after
//     the frame and its jit_return), and a pop is one store. rb_profile_frames reads the
//     execution context through the same thread-local Ruby's async-signal-safe
//     rb_postponed_job_trigger reads, and only loads from the frames.
//  5. Not in thread teardown: after THREAD_END Ruby frees/clears the thread's VM stack
//     (vm_stack and cfp are cleared by two stores); thread_ending() unnames the thread first.
//  6. A frame was found (depth > 0): none at thread start; the job then decides.
// The frame VALUEs written to the ring are iseqs/method entries of live frames (so alive now)
// and pinned by the session's marker from the next GC on, until the worker interns them
// (the marker is not write-barrier protected: an incremental mark rescans it at its end).
bool Session::capture_in_handler(pid_t self) {
  if (producing.load(std::memory_order_relaxed) != 0) return false;                  // 2
  if (gvl_holder.load(std::memory_order_relaxed) != self) return false;              // 1
  std::atomic_signal_fence(std::memory_order_seq_cst);
  ThreadState* ts = gvl_holder_state.load(std::memory_order_relaxed);
  Session* s = g_session;
  if (ts == nullptr || s == nullptr || !s->active() || ts->ending) return false;     // 1, 5
  if (ts->timeline.phase() == ThreadPhase::kInGc) return true;                       // 3
  if (rb_during_gc()) return false;                                                  // 3
  return s->sample_in_handler(ts);
}

bool Session::sample_in_handler(ThreadState* ts) {
  ThreadPhase phase = ts->timeline.phase();
  if (phase == ThreadPhase::kInGc || phase == ThreadPhase::kExited) return false;
  int64_t now = 0;
  if (!opts.wall) {
    now = tick_cpu_ns(ts->tid);  // the timer's latest reading of this thread's clock
    // Not after the interval's start: a tick that waited in the queue while the thread was
    // descheduled, behind one already sampled with that latest reading (or an event since).
    // The CPU burned since then stays in the open interval, charged by the next event, so the
    // weights still add up; sampling here would read the clock again (a system call) and walk
    // the stack for almost no weight.
    if (now >= 0 && now <= ts->timeline.since() && phase == ThreadPhase::kRunning) return true;
  }
  int64_t t0 = monotonic_ns();
  if (opts.wall) now = t0;
  else if (now <= ts->timeline.since()) now = thread_cpu_ns();  // no reading of this thread
  int depth = walk_stack(ts->vm_thread ? vm::skipped_top_frame(ts->vm_thread) : 0);
  if (depth == 0) return false;  // 6
  ts->timeline.tick(now, t0, depth, *this);
  sampling_count++;
  handler_samples++;
  sampling_time_ns += monotonic_ns() - t0;
  return true;
}

void Session::drain() {
  ScopedLock lock(consumer_mutex);
  auto consume = [this](const SampleRecord& r, const SampleRing::Run& run) {
    // On the worker thread an exception would end the process: out of memory drops the record.
    try {
      maybe_inject_bad_alloc(FaultSite::kDrain);
      if (r.kind == SampleRecord::kThreadGone) {
        paths.erase(r.thread_seq);
        alloc.paths.erase(r.thread_seq);
        return;
      }
      if (r.kind == SampleRecord::kAllocation) {
        consume_allocation(r, run);
        return;
      }
      StackPath& path = paths[r.thread_seq];
      uint32_t stack = path.current();
      if (r.kind == SampleRecord::kStack) {
        stack = path.apply(stacks, r.run, [&](uint32_t k) { return std::make_pair(run.method(k), run.line(k)); });
      }
      if (r.weight_ns <= 0) return;
      Sample sample{stack, r.thread_seq, r.label_set, r.vm_state, r.weight_ns, r.time_ns};
      if (opts.aggregate) aggregated.add(sample);
      else raw.push_back(sample);
    } catch (const std::bad_alloc&) {
      if (r.kind == SampleRecord::kAllocation) alloc.dropped++;
      else dropped_samples.fetch_add(1, std::memory_order_relaxed);
    }
  };
  ring.drain(consume);
  ractors.ring.drain(consume);  // its own thread_seqs: the stacks' paths stay apart
}

// Under the consumer lock (RAII: released when a copy below throws bad_alloc, which the binding
// turns into NoMemoryError; the samples stay in the session for the next call).
std::vector<Sample> Session::take_samples(bool clear, StackStore* store_copy, std::vector<AllocationSample>* allocations) {
  drain();
  std::deque<Sample> taken;  // the raw samples, copied after the lock: the worker waits for it
  std::vector<Sample> out;
  {
    ScopedLock lock(consumer_mutex);
    maybe_inject_bad_alloc(FaultSite::kTakeSamples);
    if (store_copy) *store_copy = stacks;
    if (!opts.aggregate && clear) out.reserve(raw.size());  // a bad_alloc leaves every sample in place
    if (allocations) take_allocations(clear, *allocations);
    if (!opts.aggregate) {
      if (clear) taken.swap(raw);
      else out.assign(raw.begin(), raw.end());
    } else {
      out = clear ? aggregated.take() : aggregated.samples();
    }
  }
  move_all(taken, out);
  return out;
}

void Session::release_unused_label_sets() {
  ScopedLock lock(consumer_mutex);  // the samples and the ring's records the worker reads
  std::vector<bool> live(label_sets.size(), false);
  auto keep = [&](uint32_t id) {
    if (id < live.size()) live[id] = true;
  };
  threads.each([&](ThreadState* ts) { keep(ts->timeline.label_set()); });
  ring.each_pending_record([&](const SampleRecord& r) { keep(r.label_set); });
  for (const Sample& s : aggregated.samples()) keep(s.label_set);
  for (const Sample& s : raw) keep(s.label_set);
  for (const AllocationSample& a : alloc.aggregated.samples()) keep(a.label_set);
  for (const AllocationSample& a : alloc.raw) keep(a.label_set);
  label_sets.release_unused(live);
}

void Session::mark() {
  // In a forked child the lock may be held by the parent's worker, which does not exist
  // here; the child abandons this session without reading its frames.
  if (getpid() != pid) return;
  // The worker interns frames concurrently: hold it off while marking.
  ScopedLock lock(consumer_mutex);
  for (const FrameKey& f : stacks.frames()) {
    if (names_a_method(f.method)) rb_gc_mark(static_cast<VALUE>(f.method));  // rb_gc_mark pins: no moves
  }
  auto mark_method = [](uint64_t m) {
    if (names_a_method(m)) rb_gc_mark(static_cast<VALUE>(m));
  };
  ring.each_pending_method(mark_method);
  ractors.each_pending_method(mark_method);
  // The classes of allocation samples (resolved to names at stop/snapshot), pinned too.
  ring.each_pending_record([](const SampleRecord& r) {
    if (r.kind == SampleRecord::kAllocation && r.klass != 0) rb_gc_mark(static_cast<VALUE>(r.klass));
  });
  auto mark_type = [](const AllocationSample& a) {
    if (a.type != 0) rb_gc_mark(static_cast<VALUE>(a.type));
  };
  for (const AllocationSample& a : alloc.aggregated.samples()) mark_type(a);
  for (const AllocationSample& a : alloc.raw) mark_type(a);
  for (uint64_t klass : alloc.resolving) {
    if (klass != 0) rb_gc_mark(static_cast<VALUE>(klass));
  }
}

}  // namespace rperf
