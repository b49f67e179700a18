// One profiling session: everything between Rperf.start and Rperf.stop. Owns the timer, the
// stack store, the per-thread states, the sample ring and the aggregator, and installs the
// GVL and GC hooks. There is at most one session per process (g_session).
#pragma once
#include <ruby/ruby.h>
#include <ruby/debug.h>
#include <ruby/ractor.h>
#include <ruby/thread.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "profile/profile.hh"
#include "profile/thread_names.hh"
#include "sampler/live_objects.hh"
#include "sampler/ractor_threads.hh"
#include "sampler/sample_ring.hh"
#include "sampler/stack_store.hh"
#include "sampler/thread_state.hh"
#include "sampler/timer.hh"
#include "util/geometric_gaps.hh"

namespace rperf {

// A thread alive when a session starts, as the binding read it from Ruby before the session
// existed (Thread.list, Thread#native_thread_id).
struct ExistingThread {
  VALUE thread;
  pid_t tid;
  std::string name;  // Thread#name ("": none)
};

struct SessionOptions {
  int frequency = 1000;
  bool wall = false;      // false: cpu mode
  bool aggregate = true;
  int signal = -1;        // -1 default signal, 0 sleeping worker, > 0 that signal
  bool defer = false;
  int max_depth = 512;
  bool lines = false;     // capture line numbers (lines: true, or a pprof output)
  bool forked_child = false;  // a forked child's session: its thread's CPU counts from the fork
  uint32_t allocation_interval = 0;  // > 0: sample one allocation in this many on average
  // retained: true: the sampled objects' frees are followed (a FREEOBJ hook, which Ruby calls
  // for every freed object) for the retained estimate; else only NEWOBJ is hooked.
  bool retained = false;
  uint32_t max_label_sets = 10000;   // distinct label sets before new ones fold into "(other)"
  // capture: :signal — the GVL holder's signal handler takes the sample itself (no postponed
  // job, no interrupt flag: YJIT code keeps running); see Session::capture_in_handler.
  bool signal_capture = false;
  // > 0: the overhead budget (the share of the process's CPU the profiler holds itself to,
  // the rate adapting between 1 Hz and `frequency`; see Timer and OverheadBudget).
  double overhead_target = 0;
};

// A time the profiler spent (ns), added up on the GVL holder and read by the timer thread too
// (the overhead budget): one writer at a time, so a relaxed load and store. Never reset: an
// interval's share is the difference from its start (IntervalStart).
class SpentTime {
 public:
  SpentTime& operator+=(int64_t ns) {
    total_.store(total_.load(std::memory_order_relaxed) + ns, std::memory_order_relaxed);
    return *this;
  }
  int64_t total() const { return total_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> total_{0};
};

// Marks rperf's own producer code (hooks, the sample job, labels, start/stop) running on the
// GVL holder: a tick whose handler interrupts it must not touch the timeline or the ring, and
// falls back to the postponed job. A counter, as these nest (a GC inside a hook).
class ProducerScope {
 public:
  ProducerScope();
  ~ProducerScope();
  ProducerScope(const ProducerScope&) = delete;
  ProducerScope& operator=(const ProducerScope&) = delete;
};

struct GcTracking {
  bool marking = false;           // a GC cycle is in its mark phase
  ThreadState* thread = nullptr;  // between GC_ENTER and GC_EXIT: the thread GC runs on
};

// Allocation profiling (sampler/allocation_events.cc). The hook side runs with the GVL held;
// the worker side under the consumer lock.
struct AllocationTracking {
  GeometricGaps gaps{1, 0};
  bool sampling = false;        // NEWOBJ counted (from start_allocations until the hooks go)
  uint64_t countdown = 0;       // allocations until the next sampled one
  LiveObjects live;             // sampled objects still alive (retained: true only)
  uint64_t sample_count = 0;    // sampled allocations recorded
  uint64_t dropped = 0;         // sampled allocations lost (ring full)
  // Worker side: each thread's last allocating stack, the aggregation (or, aggregate: false,
  // every sampled allocation with its time), and which of those samples each live slot
  // belongs to.
  std::unordered_map<uint32_t, StackPath> paths;
  AllocationAggregator aggregated;
  std::deque<AllocationSample> raw;  // a deque, as Session::raw
  std::vector<uint32_t> slot_sample;
  // The classes of samples taken out by a snapshot(clear: true), kept marked until named.
  std::vector<uint64_t> resolving;
};

// Moves a raw list's elements to the end of `out`, whose capacity the caller reserved (so
// nothing here allocates or throws), block by block: each block is freed once copied, so the
// peak is the vector and one block.
template <typename T>
void move_all(std::deque<T>& from, std::vector<T>& out) {
  while (!from.empty()) {
    out.push_back(from.front());
    from.pop_front();
  }
}

class Session final : public ChargeSink {
 public:
  explicit Session(const SessionOptions& opts);
  ~Session();

  // GVL held. Neither calls Ruby code (no interrupt check, so no other Ruby thread runs in
  // the middle): the binding asks Ruby for the threads first. `others`: every live thread but
  // the caller, with its native thread id (0 when unknown).
  bool start(const std::vector<ExistingThread>& others, std::string* error);
  void stop();                     // closes open intervals first
  // Allocation sampling begins (allocations: N): Rperf.start calls it when its own work is
  // done, so that rperf's start-up (requires, session files) is not in the profile.
  // `own_source_prefix`: where rperf's Ruby files are; an allocation whose innermost Ruby
  // frame is one of them (Rperf.stop, the at_exit handler, labels) is rperf's, not sampled.
  void start_allocations(std::string own_source_prefix);
  void after_fork_child();         // in a forked child: forget everything without joining
  // pthread_atfork child handler (async-signal-safe): a fork that bypassed Process._fork
  // (Process.daemon, fork(2) from C) leaves the hooks inert until Ruby code adopts the child.
  void mark_forked() { forked_ = true; }

  // Time on the mode's clock for the calling thread.
  int64_t mode_now() const;

  bool active() const { return running_ && !paused_ && !forked_; }
  // A snapshot ends an interval: the open intervals (the caller's, threads off the GVL) close
  // here, so the weights of each snapshot(clear: true) interval add up to its time. GVL held.
  void close_intervals_for_snapshot() {
    if (active()) close_all_intervals();
  }
  void pause();   // defer: last `profile` block ended
  void resume();  // defer: first `profile` block began
  // Around exec: a tick queued to this thread survives exec, and in the new program, before
  // any handler exists, the real-time signal's default action ends it. So the timer stops
  // (its thread joined: no tick in flight) and queued ticks are discarded; if exec fails
  // (it raised), the timer starts again and the profile goes on.
  void suspend_for_exec();
  bool resume_after_failed_exec(std::string* error);

  ThreadState* current_thread_state(bool create);
  ThreadState* thread_state(VALUE thread) const;
  // STARTED (on the creating thread, GVL held): the new thread's CPU counts from zero.
  void thread_born(VALUE thread);
  // The calling thread's state as seen on its own thread (fills what STARTED could not know).
  ThreadState* own_thread_state();
  // Walks the current thread's stack into the frame ring (unpublished until charged); returns
  // its depth, or Charge::kNoRoom when the ring has no room.
  // `leaf` (a frame VALUE, or 0) is put first: the frame rb_profile_frames would skip.
  int walk_stack(VALUE leaf = 0);
  // The timeline's charges: pushed to the sample ring (ChargeSink).
  bool charge(uint32_t thread_seq, const Charge& c) override;
  // Rperf.label and friends on the calling thread: the interval so far keeps the old labels.
  void set_label(ThreadState* ts, uint32_t label_set);

  void sample_current_thread();  // the postponed job's body
  void reap_threads();           // frees states of threads that exited (GVL held)
  void drain();                  // ring -> stack store and samples (worker thread or GVL holder)
  // The samples so far (stack ids are StackStore nodes); `clear` starts a new interval.
  // `store_copy`: when the worker still runs, a copy of the stack store that the samples'
  // ids refer to (the worker may grow the live one meanwhile).
  // `allocations`: the allocation samples (type = class VALUE) with their retained counts.
  std::vector<Sample> take_samples(bool clear, StackStore* store_copy, std::vector<AllocationSample>* allocations = nullptr);
  // NEWOBJ, one allocation in opts.allocation_interval on average: records `obj`'s allocation.
  void sample_allocation(VALUE obj);
  // Whether the innermost Ruby-level frame of the `depth` frames just walked is rperf's own.
  bool allocated_by_rperf(int depth);

  // After snapshot(clear: true), GVL held: frees the label sets that nothing refers to any more
  // (no thread's current labels, no sample not yet taken, no pin of a label block); the others
  // keep their ids.
  void release_unused_label_sets();

  // Thread#name= (and start, for every thread's name then), GVL held, no Ruby call: the name
  // `ts` has from now, recorded when it differs from its last. Names are read where Ruby may
  // be called (the binding, before it looks the session up), never by a hook or a sample.
  void thread_named(ThreadState* ts, std::string name);
  // Every name recorded, times in ns since `since_mono_ns` (0 when earlier).
  std::vector<ThreadName> thread_names_since(int64_t since_mono_ns) const;

  void mark();  // GC: frame VALUEs in the stack store and in the ring
  // Which allocation events are hooked now: NEWOBJ (allocations: N), FREEOBJ (retained: true).
  bool newobj_hooked() const { return alloc.sampling; }
  bool freeobj_hooked() const { return (vm_events_ & RUBY_INTERNAL_EVENT_FREEOBJ) != 0; }

  // The kernel id of the thread that holds the GVL (0: none known), for the timer signal, and
  // its state. Written only on the holder itself (start/resume, RESUMED, SUSPENDED) or cleared
  // for an exiting/reaped thread when it is the one named: state first, then the id, so a
  // handler that reads its own id here also reads its own state.
  static std::atomic<pid_t> gvl_holder;
  static std::atomic<ThreadState*> gvl_holder_state;
  static void publish_gvl_holder(ThreadState* ts);
  static void clear_gvl_holder();
  static void release_gvl_holder(const ThreadState* ts);  // only if `ts` is the one named
  // > 0 while a ProducerScope is open.
  static std::atomic<int> producing;
  // capture: :signal is on for the running session.
  static std::atomic<bool> signal_capture;
  // The signal handler's sample on thread `self` (capture: :signal); false: a condition for it
  // does not hold, and the postponed job takes the sample instead. Async-signal-safe.
  static bool capture_in_handler(pid_t self);
  // THREAD_END (GVL held, on the ending thread): from here Ruby tears its VM stack down; the
  // thread is never again named the GVL holder, so no handler walks that stack.
  void thread_ending();
  // Whether ticks are forwarded to the GVL holder (more than one Ruby thread seen).
  static std::atomic<bool> forward_ticks;
  // Set by a tick of the running session before it triggers the postponed job, taken by the
  // job. Ruby runs a triggered job on whichever thread's interrupt flag it set, maybe one that
  // stays blocked past Rperf.stop; without this, that job would sample in the next session for
  // a tick it never had (seen: 57 of 100 quick start/stop pairs with a thread in Queue#pop).
  static std::atomic<bool> job_requested;
  // cpu mode: the timer thread reads the GVL holder's CPU clock at each tick (a system call
  // on this VM, ~0.5-2 us) so that the sample job on the Ruby thread need not.
  static std::atomic<bool> tick_reads_cpu;
  // The tick's reading, or -1 when it is not for `tid` (then the caller reads its own clock).
  static int64_t tick_cpu_ns(pid_t tid);

  SessionOptions opts;
  Timer timer;
  StackStore stacks;
  SampleRing ring;
  std::unordered_map<uint32_t, StackPath> paths;  // worker: each thread's current stack
  SampleAggregator aggregated;  // with opts.aggregate
  // Without: every interval, with its time. A deque: the worker, which is the timer thread,
  // appends without ever moving what it holds; a vector's doubling copied 256 MB at once (3.2 s
  // on a loaded VM), with no tick meanwhile (issue 48.6b: one "running" interval of seconds).
  std::deque<Sample> raw;
  LabelSetTable label_sets;     // the labels threads are tagged with (Rperf.label)
  ThreadRegistry threads;
  GcTracking gc;
  AllocationTracking alloc;
  RactorThreads ractors;  // the other Ractors' threads, apart from the main Ractor's

  uint64_t sampling_count = 0;
  uint64_t handler_samples = 0;  // of sampling_count, taken in the signal handler
  SpentTime sampling_time_ns;  // in sample jobs (as rperf reports it)
  SpentTime hook_time_ns;      // in the GVL and GC hooks, and the sampled allocations' hook work
  SpentTime export_time_ns;    // encoding the intervals for export (Rperf::Continuous)
  // The profiler's CPU so far: the timer thread's, and the capture, hooks and export above (the
  // overhead budget's measure; their wall time where they run on the GVL holder).
  int64_t own_cpu_ns() const;
  // The totals where the current interval began (start, snapshot(clear: true)).
  struct IntervalStart {
    int64_t sampling_ns = 0, hook_ns = 0, own_cpu_ns = 0, process_cpu_ns = 0;
  } interval_start;
  std::atomic<uint64_t> dropped_samples{0};
  int64_t start_mono_ns = 0;
  // When stop() closed the intervals (0 while running): the end of duration_ns. The profile is
  // built after the worker is joined and the last records drained, which under load took
  // several ms that no thread's weights cover (a wall-mode stress test's one thread summed to
  // 90% of its duration).
  int64_t stopped_mono_ns = 0;
  int64_t start_realtime_ns = 0;
  int profile_refcount = 0;
  pid_t pid = 0;  // the process that started the session
  Session* abandoned_next = nullptr;  // in a forked child: the list of inherited sessions
  pthread_mutex_t consumer_mutex = PTHREAD_MUTEX_INITIALIZER;

 private:
  std::string own_source_prefix_;  // see start_allocations
  std::vector<ThreadName> thread_names_;  // time_ns: monotonic at the rename (0: at start)
  void install_hooks();
  void remove_hooks();
  void remove_gc_hook();
  void take_allocations(bool clear, std::vector<AllocationSample>& out);  // consumer lock held
  void consume_allocation(const SampleRecord& r, const SampleRing::Run& run);  // drain, consumer lock held
  void close_all_intervals();
  int64_t cpu_clock_of(const ThreadState* ts) const;  // another thread's CPU time (-1: unreadable)
  void adopt_existing_threads(const std::vector<ExistingThread>& others);
  void forget_threads();
  void update_forwarding();

  bool running_ = false;
  bool paused_ = false;
  bool forked_ = false;  // set in a child forked behind Ruby's back: no worker, no timer here
  bool exec_suspended_ = false;
  bool vm_layout_ok_ = false;  // vm_frames.hh reads this Ruby's stacks (checked at start)
  rb_event_flag_t vm_events_ = 0;  // what vm_event_hook is registered for (0: not registered)
  VALUE thread_end_tracepoint_ = Qnil;
  bool sample_in_handler(ThreadState* ts);  // capture_in_handler's work, conditions checked
  void set_thread(ThreadState* ts, VALUE thread);
};

extern Session* g_session;

// The session's per-thread states, sample ring (one producer) and GC tracking are the main
// Ractor's: other Ractors run Ruby in parallel under GVLs of their own, and their threads are
// RactorThreads'. Every hook and the sample job run on the thread concerned, so the calling
// thread's Ractor decides (Ruby 3.3 has no public rb_ractor_main_p: a Ractor-local value set in
// the main one).
bool on_main_ractor();
extern rb_internal_thread_specific_key_t g_thread_key;
extern rb_postponed_job_handle_t g_sample_job;

void init_session_globals();  // Init_rperf: thread key, postponed job
// The GVL hook is process-wide: installed by a session's start, removed at its stop, and left
// in place (inert) in a forked child, where the next session reuses it.
void install_gvl_hook();
void remove_gvl_hook();
// vm_event_hook's events (session.cc): GC_* (gc_events.cc), NEWOBJ and FREEOBJ (allocation_events.cc).
void gc_event(rb_event_flag_t event);
void newobj_event(rb_trace_arg_t* arg);
void freeobj_event(rb_trace_arg_t* arg);
// GC compaction moved objects (the marker's dcompact): the live table follows them.
void update_moved_objects();

}  // namespace rperf
