#include "sampler/thread_state.hh"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>

namespace rperf {

// Called from GVL/GC hooks and the sample job, where an exception must not unwind through the
// VM's C frames: out of memory yields nullptr (the caller drops the event) instead of throwing.
ThreadState* ThreadRegistry::create(pid_t tid, bool wall) {
  ThreadState* ts = new (std::nothrow) ThreadState();
  if (!ts) return nullptr;
  ts->seq = next_seq_->fetch_add(1, std::memory_order_relaxed);
  ts->timeline.init(ts->seq, wall);
  if (tid == 0) {
    pthread_getcpuclockid(pthread_self(), &ts->cpu_clock);  // called on the thread itself
    ts->tid = static_cast<pid_t>(syscall(SYS_gettid));
  } else if (tid > 0) {
    ts->tid = tid;
    ts->cpu_clock = thread_cpu_clock(tid);
  }
  live_++;
  ts->next = head_;
  if (head_) head_->prev = ts;
  head_ = ts;
  return ts;
}

void ThreadRegistry::retire(ThreadState* ts) {
  if (ts->retired.exchange(true)) return;
  ThreadState* old = retired_.load(std::memory_order_relaxed);
  do {
    ts->retired_next = old;
  } while (!retired_.compare_exchange_weak(old, ts, std::memory_order_release, std::memory_order_relaxed));
}

void ThreadRegistry::unlink_and_free(ThreadState* ts) {
  if (ts->prev) ts->prev->next = ts->next;
  else head_ = ts->next;
  if (ts->next) ts->next->prev = ts->prev;
  live_--;
  delete ts;
}

void ThreadRegistry::free_all() {
  reap_retired();
  while (head_) unlink_and_free(head_);
}

}  // namespace rperf
