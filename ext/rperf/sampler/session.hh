// One profiling session: everything between Rperf.start and Rperf.stop. Owns the timer, the
// stack store, the per-thread states, the sample ring and the aggregator, and installs the
// GVL and GC hooks. There is at most one session per process (g_session).
#pragma once
#include <ruby/ruby.h>
#include <ruby/debug.h>
#include <ruby/thread.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.hh"
#include "sampler/sample_ring.hh"
#include "sampler/stack_store.hh"
#include "sampler/thread_state.hh"
#include "sampler/timer.hh"

namespace rperf {

struct SessionOptions {
  int frequency = 1000;
  bool wall = false;      // false: cpu mode
  bool aggregate = true;
  int signal = -1;        // -1 default signal, 0 sleeping worker, > 0 that signal
  bool defer = false;
  int max_depth = 512;
};

struct GcTracking {
  bool in_gc = false;      // between GC_ENTER and GC_EXIT
  bool marking = false;    // a GC cycle is in its mark phase
  ThreadState* thread = nullptr;
  uint32_t stack = kNoStack;
  int64_t last_ns = 0;     // mode clock
};

class Session {
 public:
  explicit Session(const SessionOptions& opts);
  ~Session();

  bool start(std::string* error);  // GVL held
  void stop();                     // GVL held; closes open intervals first
  void after_fork_child();         // in a forked child: forget everything without joining

  // Time on the mode's clock for the calling thread.
  int64_t mode_now() const;

  bool active() const { return running_ && !paused_; }
  void pause();   // defer: last `profile` block ended
  void resume();  // defer: first `profile` block began

  ThreadState* current_thread_state(bool create);
  ThreadState* thread_state(VALUE thread) const;
  uint32_t capture_stack(ThreadState* ts);
  // Closes `ts`'s open interval at `now` (mode clock) on `stack` in `state`.
  void close_interval(ThreadState* ts, uint32_t stack, VmState state, int64_t now, int64_t wall_now);
  void record(ThreadState* ts, uint32_t stack, VmState state, int64_t weight, int64_t wall_now);
  // Attributes the time `ts` spent off the GVL, up to `now` (mode clock) / `wall_now`, to the
  // stack it released the GVL with: blocked + wait in wall mode, the CPU it burned in cpu mode.
  void close_off_gvl_interval(ThreadState* ts, int64_t now, int64_t wall_now);
  // Brings a thread whose baseline predates the last resume up to date; returns false if the
  // interval must not be recorded.
  bool refresh_epoch(ThreadState* ts, int64_t now);

  void sample_current_thread();  // the postponed job's body
  void drain();                  // ring -> samples (worker thread or GVL holder)
  // The samples so far (stack ids are StackStore nodes); `clear` starts a new interval.
  std::vector<Sample> take_samples(bool clear);

  void mark();  // GC: frame VALUEs in the stack store

  SessionOptions opts;
  Timer timer;
  StackStore stacks;
  SampleRing ring;
  SampleAggregator aggregated;  // with opts.aggregate
  std::vector<Sample> raw;      // without: every interval, with its time
  LabelSetTable label_sets;     // the labels threads are tagged with (Rperf.label)
  ThreadRegistry threads;
  GcTracking gc;
  std::vector<VALUE> frame_buf;
  std::vector<int> line_buf;

  uint64_t sampling_count = 0;
  int64_t sampling_time_ns = 0;
  std::atomic<uint64_t> dropped_samples{0};
  int64_t start_mono_ns = 0;
  int64_t start_realtime_ns = 0;
  int64_t floor_wall_ns = 0;  // wall-mode intervals never start before this (start/resume)
  uint32_t epoch = 1;
  int profile_refcount = 0;
  pthread_mutex_t consumer_mutex = PTHREAD_MUTEX_INITIALIZER;

 private:
  void install_hooks();
  void remove_hooks();
  void remove_gc_hook();
  void close_all_intervals();

  bool running_ = false;
  bool paused_ = false;
  VALUE gc_tracepoint_ = Qnil;
};

extern Session* g_session;
extern rb_internal_thread_specific_key_t g_thread_key;
extern rb_postponed_job_handle_t g_sample_job;

void init_session_globals();  // Init_rperf: thread key, postponed job
// The GVL hook is process-wide: installed by a session's start, removed at its stop, and left
// in place (inert) in a forked child, where the next session reuses it.
void install_gvl_hook();
void remove_gvl_hook();
void gc_event_hook(VALUE tpval, void*);

}  // namespace rperf
