// The threads of Ractors other than the main one. Each Ractor has a GVL of its own, so its
// running thread runs Ruby in parallel with the main Ractor's GVL holder and with the other
// Ractors': none of the main Ractor's producer rules (one GVL, one producer of the sample ring)
// holds for them. They get their own states, timelines and sample ring, behind one lock:
//  - Their GVL events (Ruby's thread event hook is process-wide: it sees every Ractor's
//    threads) take the lock and feed the thread's timeline as the main Ractor's do.
//  - Their ticks are taken in the signal handler on the thread itself, whatever the session's
//    capture: a postponed job cannot be aimed at a Ractor's thread (Ruby keeps one VM-wide set
//    of triggered jobs, run by whichever thread services its interrupt first). The timer sends
//    a tick to each Ractor thread published as running (RESUMED to SUSPENDED/EXITED); the
//    handler only tries the lock (busy: the tick is skipped, its time stays in the open
//    interval for the next event).
//  - The main Ractor's session code (start, stop, snapshot, pause, the marker, the profile
//    builder) takes the lock for what it reads or closes of them; no code holding it calls
//    Ruby, allocates Ruby objects or waits for another Ruby thread (a GC barrier needs every
//    running Ractor thread, which may be spinning on it).
// Not seen: GC and allocation events of other Ractors (tracepoints are per Ractor: GC run by a
// Ractor's thread is its running time, and a tick during any GC is skipped), and a Ractor
// thread that started before the session until its first GVL event.
#pragma once
#include <ruby/ruby.h>
#include <ruby/debug.h>
#include <ruby/thread.h>

#include <atomic>
#include <cstdint>
#include <unordered_map>

#include "sampler/sample_ring.hh"
#include "sampler/thread_state.hh"

namespace rperf {

// Taken by Ractor threads' hooks and by the main Ractor's session code (spinning, yielding the
// CPU after a while: a holder is always short and never waits), tried by signal handlers.
class SpinLock {
 public:
  void lock();
  bool try_lock() { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() { locked_.store(false, std::memory_order_release); }
  void reset() { locked_.store(false, std::memory_order_relaxed); }  // a forked child: no other thread

 private:
  std::atomic<bool> locked_{false};
};

class RactorThreads final : public ChargeSink {
 public:
  RactorThreads(bool wall, int max_depth, bool lines, std::atomic<uint64_t>& dropped);
  ~RactorThreads();

  // Main Ractor, GVL held. `vm_layout_ok`: sampler/vm_frames.hh reads Ruby's stacks as
  // rperf expects (Session::start checked it); without it no Ractor thread is sampled.
  // `resume`: a deferred session's resume: every known thread is Unobserved until its next event.
  // `start_mono_ns`: the session's start (records' times are relative to it).
  void start_recording(bool vm_layout_ok, bool resume, int64_t start_mono_ns);
  // Closes every Ractor thread's open interval (stop, pause, snapshot) at `wall` (cpu mode:
  // its CPU clock): each thread's weights add up to its time up to there.
  void close_intervals(int64_t wall);
  void stop_recording();  // stop, pause: hooks and handlers do nothing from here
  void forget();  // after stop, hooks removed: clears the threads' specific slots, frees states

  // The Ractor threads' GVL events, on the thread itself (READY: maybe Ruby's timer thread).
  void resumed(VALUE thread);
  void suspended(VALUE thread);
  void ready(VALUE thread);
  void exited(VALUE thread);
  // A tick forwarded to thread `self` (signal handler, async-signal-safe).
  static void tick_in_handler(pid_t self);
  // The timer thread: the kernel ids of the Ractor threads running now (at most `max`).
  static int running_tids(pid_t* out, int max);
  static void reset_after_fork();  // in a forked child: no other thread holds anything

  bool charge(uint32_t thread_seq, const Charge& c) override;  // into `ring`

  // Consumer side (consumer lock held): the Ractor threads' records.
  SampleRing ring;
  // Main Ractor: each Ractor thread's Ractor id (its thread_seq -> Ractor#inspect's #id), for
  // the %ractor label; the counters the header adds (`new_start_mono_ns` != 0: a
  // snapshot(clear: true) begins a new interval there, with new counts).
  std::unordered_map<uint32_t, uint32_t> ractors_of_threads();
  void take_counts(int64_t new_start_mono_ns, uint64_t* samples, int64_t* sampling_time_ns);
  template <typename F>
  void each_pending_method(F&& f) {  // the marker (consumer lock held)
    lock_.lock();
    ring.each_pending_method(f);
    lock_.unlock();
  }
  ThreadRegistry threads;  // numbered after the main Ractor's (ThreadRegistry::number_after)

 private:
  ThreadState* state(VALUE thread) const;
  ThreadState* create(VALUE thread);
  void publish(ThreadState* ts, pid_t tid);
  void unpublish(ThreadState* ts);
  int walk_stack(VALUE leaf);
  void sample_in_handler(pid_t self);
  int64_t now_on_thread() const;

  bool wall_;
  int max_depth_;
  bool lines_;
  bool vm_layout_ok_ = false;
  std::atomic<uint64_t>& dropped_;
  std::unordered_map<uint32_t, uint32_t> ractor_of_thread_;
  int64_t start_mono_ns_ = 0;
  uint64_t samples_ = 0;
  int64_t sampling_time_ns_ = 0;

  static SpinLock lock_;
  static RactorThreads* recording_;  // under lock_: the session's, while it records
};

extern rb_internal_thread_specific_key_t g_ractor_thread_key;
// Init_rperf (main Ractor): the key and the check of the Ractor id's place in Ruby's layout.
void init_ractor_globals();
// Whether `thread` (a thread just STARTED) belongs to another Ractor than the calling thread's
// (false when Ruby's layout could not be checked: then the main Ractor's session keeps a state
// for it that its own events never reach).
bool of_another_ractor(VALUE thread);

}  // namespace rperf
