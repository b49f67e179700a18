// RAII for a pthread mutex: released on every path out of the scope, exceptions included (a
// lock left held by a bad_alloc would deadlock the next GC mark of the session).
#pragma once
#include <pthread.h>

namespace rperf {

class ScopedLock {
 public:
  explicit ScopedLock(pthread_mutex_t& m) : m_(m) { pthread_mutex_lock(&m_); }
  ~ScopedLock() { pthread_mutex_unlock(&m_); }
  ScopedLock(const ScopedLock&) = delete;
  ScopedLock& operator=(const ScopedLock&) = delete;

 private:
  pthread_mutex_t& m_;
};

}  // namespace rperf
