// Per-thread profiling state and the registry of all of them. A ThreadState is created the
// first time a thread is seen while the GVL is held, stored in Ruby's thread-specific storage,
// and retired at thread exit (the EXITED hook runs without the GVL, so it only queues the
// state; it is unlinked and freed later under the GVL).
#pragma once
#include <time.h>

#include <atomic>
#include <cstdint>

#include "sampler/stack_store.hh"

namespace rperf {

constexpr uint32_t kNoStack = 0xfffffffeu;  // "stack unknown" (kRoot means "empty stack")

struct ThreadState {
  uint32_t seq = 0;                // 1-based, in order of first sight
  uint32_t label_set = 0;          // interned by the Ruby layer; 0 = no labels
  uint32_t epoch = 0;              // session epoch when last_ns was taken (defer/resume)
  int64_t last_ns = 0;             // start of the open interval, on the mode's clock
  bool off_gvl = false;            // between SUSPENDED and RESUMED
  uint32_t suspended_stack = kNoStack;
  int64_t suspended_wall_ns = 0;   // monotonic time at SUSPENDED
  clockid_t cpu_clock = CLOCK_THREAD_CPUTIME_ID;  // this thread's CPU clock, readable from others
  std::atomic<int64_t> ready_wall_ns{0};  // monotonic time at READY (written without the GVL)
  StackCache cache;
  // Registry links (GVL only) and the retire queue link (lock-free push from EXITED).
  ThreadState* prev = nullptr;
  ThreadState* next = nullptr;
  ThreadState* retired_next = nullptr;
  std::atomic<bool> retired{false};
};

class ThreadRegistry {
 public:
  ~ThreadRegistry() { free_all(); }
  ThreadState* create(int max_depth);  // GVL held
  void retire(ThreadState* ts);        // any thread; async with the GVL holder
  void reap_retired();                 // GVL held: free what retire() queued
  void free_all();                     // GVL held, hooks removed
  uint32_t detected() const { return next_seq_ - 1; }
  template <typename F>
  void each(F&& f) {
    for (ThreadState* t = head_; t; t = t->next) f(t);
  }

 private:
  void unlink_and_free(ThreadState* ts);
  ThreadState* head_ = nullptr;
  std::atomic<ThreadState*> retired_{nullptr};
  uint32_t next_seq_ = 1;
};

}  // namespace rperf
