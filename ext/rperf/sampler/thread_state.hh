// Per-thread profiling state and the registry of all of them. A ThreadState is created the
// first time a thread is seen while the GVL is held, stored in Ruby's thread-specific storage,
// and retired at thread exit (the EXITED hook runs without the GVL, so it only queues the
// state; it is unlinked and freed later under the GVL).
#pragma once
#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <cstdint>

#include "sampler/stack_store.hh"
#include "sampler/thread_timeline.hh"

namespace rperf {

// Linux's encoding of a thread's CPU-time clock id (what pthread_getcpuclockid returns), from
// its kernel thread id alone: readable from any thread of the process.
inline clockid_t thread_cpu_clock(pid_t tid) { return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6); }

struct ThreadState {
  uint32_t seq = 0;                // 1-based, in order of first sight
  ThreadTimeline timeline;         // this thread's time: the only place its intervals live
  bool born = false;               // created while profiling: nothing seen on its own thread yet
  bool ending = false;             // past THREAD_END: its VM stack is being torn down
  pid_t tid = 0;                   // kernel thread id (0 until seen on its own thread)
  uintptr_t thread = 0;            // the Thread VALUE whose specific slot points here (until EXITED)
  const void* vm_thread = nullptr;  // its rb_thread_t (malloc'ed: does not move), for vm_frames.hh
  clockid_t cpu_clock = CLOCK_THREAD_CPUTIME_ID;  // this thread's CPU clock, readable from others
  int64_t exit_ns = 0;             // mode clock at EXITED, read on the thread (0: not profiled)
  int64_t exit_wall_ns = 0;        // monotonic time at EXITED
  int ractor_slot = -1;            // another Ractor's thread: its running slot (ractor_threads.cc)
  // Registry links (GVL only) and the retire queue link (lock-free push from EXITED).
  ThreadState* prev = nullptr;
  ThreadState* next = nullptr;
  ThreadState* retired_next = nullptr;
  std::atomic<bool> retired{false};
};

class ThreadRegistry {
 public:
  ~ThreadRegistry() { free_all(); }
  // GVL held. `tid` 0: the calling thread's own state; else another thread's (its kernel id).
  ThreadState* create(pid_t tid, bool wall);
  void retire(ThreadState* ts);        // any thread; async with the GVL holder
  // GVL held: free what retire() queued, after calling gone(ts) for each. Cheap (one load)
  // when nothing retired.
  template <typename F>
  void reap_retired(F&& gone) {
    if (retired_.load(std::memory_order_relaxed) == nullptr) return;
    ThreadState* ts = retired_.exchange(nullptr, std::memory_order_acquire);
    while (ts) {
      ThreadState* next = ts->retired_next;
      gone(ts);
      unlink_and_free(ts);
      ts = next;
    }
  }
  void reap_retired() {
    reap_retired([](ThreadState*) {});
  }
  size_t live() const { return live_; }
  void free_all();                     // GVL held, hooks removed
  uint32_t detected() const { return next_seq_->load(std::memory_order_relaxed) - 1; }
  // This registry's threads are numbered in `main`'s sequence (the other Ractors' threads
  // and the main Ractor's are one process's threads), from any thread.
  void number_after(ThreadRegistry& main) { next_seq_ = main.next_seq_; }
  template <typename F>
  void each(F&& f) {
    for (ThreadState* t = head_; t; t = t->next) f(t);
  }

 private:
  void unlink_and_free(ThreadState* ts);
  ThreadState* head_ = nullptr;
  std::atomic<ThreadState*> retired_{nullptr};
  std::atomic<uint32_t> own_next_seq_{1};
  std::atomic<uint32_t>* next_seq_ = &own_next_seq_;
  size_t live_ = 0;
};

}  // namespace rperf
