#include "sampler/thread_state.hh"

#include <pthread.h>

namespace rperf {

ThreadState* ThreadRegistry::create(int max_depth) {
  ThreadState* ts = new ThreadState();
  ts->seq = next_seq_++;
  pthread_getcpuclockid(pthread_self(), &ts->cpu_clock);  // called on the thread itself
  ts->cache.resize(max_depth + 1);
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

void ThreadRegistry::reap_retired() {
  ThreadState* ts = retired_.exchange(nullptr, std::memory_order_acquire);
  while (ts) {
    ThreadState* next = ts->retired_next;
    unlink_and_free(ts);
    ts = next;
  }
}

void ThreadRegistry::unlink_and_free(ThreadState* ts) {
  if (ts->prev) ts->prev->next = ts->next;
  else head_ = ts->next;
  if (ts->next) ts->next->prev = ts->prev;
  delete ts;
}

void ThreadRegistry::free_all() {
  reap_retired();
  while (head_) unlink_and_free(head_);
}

}  // namespace rperf
