#include "sampler/ractor_threads.hh"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>

#include "sampler/charge_ring.hh"
#include "sampler/vm_frames.hh"
#include "util/clock.hh"

namespace rperf {

rb_internal_thread_specific_key_t g_ractor_thread_key;
SpinLock RactorThreads::lock_;
RactorThreads* RactorThreads::recording_ = nullptr;

namespace {
// The running Ractor threads the timer sends ticks to: written under the lock, read lock-free
// by the timer thread (a stale entry costs one tick that the handler finds not running).
constexpr int kSlots = 64;
std::atomic<pid_t> g_slot_tid[kSlots];
std::atomic<ThreadState*> g_slot_state[kSlots];

// rb_ractor_t begins with its public part { VALUE self; uint32_t id; ... } (vm_core.h,
// ractor_core.h: the same in 3.3 and 3.4); checked once on the main Ractor, whose id is 1.
struct RactorPub {
  VALUE self;
  uint32_t id;
};
bool g_ractor_id_readable = false;

uint32_t ractor_id(const void* vm_thread) {
  if (!g_ractor_id_readable || !vm_thread) return 0;
  const void* r = static_cast<const vm::Thread*>(vm_thread)->ractor;
  return r ? static_cast<const RactorPub*>(r)->id : 0;
}

pid_t own_tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// The thread's current stack is one rb_profile_frames can read: not torn down (a thread's end
// clears its VM stack before its EXITED event, while it still holds its GVL).
bool stack_readable(const void* vm_thread) {
  const vm::ExecutionContext* ec = static_cast<const vm::Thread*>(vm_thread)->ec;
  if (ec == nullptr || ec->vm_stack == nullptr || ec->cfp == nullptr || ec->vm_stack_size == 0) return false;
  const auto* begin = reinterpret_cast<const vm::ControlFrame*>(ec->vm_stack);
  const auto* end = reinterpret_cast<const vm::ControlFrame*>(ec->vm_stack + ec->vm_stack_size) - 1;
  return ec->cfp > begin && ec->cfp < end;
}
}  // namespace

void init_ractor_globals() {
  g_ractor_thread_key = rb_internal_thread_specific_key_create();
  VALUE ractor_class = rb_const_get(rb_cObject, rb_intern("Ractor"));
  const void* main_ractor = static_cast<const vm::Thread*>(RTYPEDDATA_GET_DATA(rb_thread_current()))->ractor;
  if (!main_ractor) return;
  const RactorPub* pub = static_cast<const RactorPub*>(main_ractor);
  g_ractor_id_readable = pub->id == 1 && !RB_SPECIAL_CONST_P(pub->self) && rb_obj_class(pub->self) == ractor_class;
}

bool of_another_ractor(VALUE thread) {
  if (!g_ractor_id_readable) return false;
  const auto* th = static_cast<const vm::Thread*>(RTYPEDDATA_GET_DATA(thread));
  const auto* self = static_cast<const vm::Thread*>(RTYPEDDATA_GET_DATA(rb_thread_current()));
  return th && self && th->ractor != self->ractor;
}

void SpinLock::lock() {
  for (int spins = 0; !try_lock(); spins++) {
    if (spins >= 64) sched_yield();  // the holder may have been descheduled (2 cores, loaded)
  }
}

RactorThreads::RactorThreads(bool wall, int max_depth, bool lines, std::atomic<uint64_t>& dropped)
    : ring(1 << 12, 1 << 16, static_cast<uint32_t>(max_depth + 1), lines), wall_(wall), max_depth_(max_depth), lines_(lines), dropped_(dropped) {}

RactorThreads::~RactorThreads() {
  lock_.lock();
  if (recording_ == this) recording_ = nullptr;
  lock_.unlock();
}

int64_t RactorThreads::now_on_thread() const { return wall_ ? monotonic_ns() : thread_cpu_ns(); }

void RactorThreads::start_recording(bool vm_layout_ok, bool resume, int64_t start_mono_ns) {
  lock_.lock();
  vm_layout_ok_ = vm_layout_ok;
  start_mono_ns_ = start_mono_ns;
  if (resume) threads.each([](ThreadState* ts) { ts->timeline.unobserve(); });
  recording_ = this;
  lock_.unlock();
}

void RactorThreads::close_intervals(int64_t wall) {
  lock_.lock();
  if (recording_ == this) {
    threads.each([&](ThreadState* ts) {
      int64_t now = wall;
      if (!wall_) {
        timespec cpu;
        if (clock_gettime(ts->cpu_clock, &cpu) != 0) return;  // its kernel thread is gone
        now = static_cast<int64_t>(cpu.tv_sec) * 1000000000LL + cpu.tv_nsec;
      }
      if (ts->timeline.phase() == ThreadPhase::kOffGvl) ts->timeline.close_off_gvl(now, wall, *this);
      else if (ts->timeline.phase() == ThreadPhase::kRunning) ts->timeline.close_own(now, wall, Charge::kCurrentStack, *this);
    });
  }
  lock_.unlock();
}

// Unpublished too: while nothing records, a thread may block without an event seen, and a tick
// after a deferred session's resume would charge its wait as running. Each thread is sampled
// again from its next RESUMED.
void RactorThreads::stop_recording() {
  lock_.lock();
  if (recording_ == this) recording_ = nullptr;
  threads.each([&](ThreadState* ts) { unpublish(ts); });
  lock_.unlock();
}

void RactorThreads::forget() {
  lock_.lock();
  if (recording_ == this) recording_ = nullptr;
  threads.each([&](ThreadState* ts) {
    unpublish(ts);
    if (ts->thread) rb_internal_thread_specific_set(static_cast<VALUE>(ts->thread), g_ractor_thread_key, nullptr);
  });
  threads.free_all();
  lock_.unlock();
}

void RactorThreads::reset_after_fork() {
  lock_.reset();
  recording_ = nullptr;
  for (int i = 0; i < kSlots; i++) {
    g_slot_tid[i].store(0, std::memory_order_relaxed);
    g_slot_state[i].store(nullptr, std::memory_order_relaxed);
  }
}

ThreadState* RactorThreads::state(VALUE thread) const {
  return static_cast<ThreadState*>(rb_internal_thread_specific_get(thread, g_ractor_thread_key));
}

// On the thread itself, lock held: its kernel id and CPU clock are this thread's.
ThreadState* RactorThreads::create(VALUE thread) {
  ThreadState* ts = threads.create(0, wall_);
  if (!ts) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  ts->thread = static_cast<uintptr_t>(thread);
  ts->vm_thread = RTYPEDDATA_GET_DATA(thread);
  try {
    ractor_of_thread_[ts->seq] = ractor_id(ts->vm_thread);
  } catch (const std::bad_alloc&) {
    // unlabelled: its samples still are the thread's
  }
  rb_internal_thread_specific_set(thread, g_ractor_thread_key, ts);
  return ts;
}

void RactorThreads::publish(ThreadState* ts, pid_t tid) {
  if (ts->ractor_slot < 0) {
    for (int i = 0; i < kSlots; i++) {
      if (g_slot_state[i].load(std::memory_order_relaxed) == nullptr) {
        ts->ractor_slot = i;
        break;
      }
    }
    if (ts->ractor_slot < 0) return;  // more running Ractor threads than slots: events only
  }
  g_slot_state[ts->ractor_slot].store(ts, std::memory_order_relaxed);
  g_slot_tid[ts->ractor_slot].store(tid, std::memory_order_release);
}

void RactorThreads::unpublish(ThreadState* ts) {
  if (ts->ractor_slot < 0) return;
  g_slot_tid[ts->ractor_slot].store(0, std::memory_order_relaxed);
  g_slot_state[ts->ractor_slot].store(nullptr, std::memory_order_relaxed);
  ts->ractor_slot = -1;
}

void RactorThreads::resumed(VALUE thread) {
  lock_.lock();
  if (recording_ == this) {
    int64_t wall = monotonic_ns();
    pid_t tid = own_tid();
    ThreadState* ts = state(thread);
    if (!ts) {
      ts = create(thread);  // first sight: counted from here
      if (ts) ts->timeline.start_running(now_on_thread());
    } else if (ts->tid != tid) {
      // Ruby moved the thread to another kernel thread (M:N scheduling): the CPU it burned off
      // the GVL was on a clock we can no longer read; it counts again from here.
      ts->tid = tid;
      ts->cpu_clock = thread_cpu_clock(tid);
      if (wall_) ts->timeline.resumed(wall, wall, *this);
      else ts->timeline.unobserve(thread_cpu_ns());
    } else {
      ts->timeline.resumed(now_on_thread(), wall, *this);
    }
    if (ts) publish(ts, tid);
  }
  lock_.unlock();
}

void RactorThreads::suspended(VALUE thread) {
  if (rb_thread_current() != thread) return;  // only the releasing thread's own stack is readable
  lock_.lock();
  if (recording_ == this) {
    if (ThreadState* ts = state(thread)) {
      unpublish(ts);
      int64_t wall = monotonic_ns();
      int depth = stack_readable(ts->vm_thread) ? walk_stack(0) : 0;
      ts->timeline.suspended(wall_ ? wall : thread_cpu_ns(), wall, depth, *this);
    }
  }
  lock_.unlock();
}

void RactorThreads::ready(VALUE thread) {
  if (!wall_) return;
  lock_.lock();
  if (recording_ == this) {
    if (ThreadState* ts = state(thread)) ts->timeline.ready(monotonic_ns());
  }
  lock_.unlock();
}

void RactorThreads::exited(VALUE thread) {
  lock_.lock();
  ThreadState* ts = state(thread);
  // Also while nothing records (a paused session): the state must not outlive its thread,
  // whose specific slot forget() would otherwise clear after Ruby freed it.
  if (ts) {
    unpublish(ts);
    int64_t wall = monotonic_ns();
    // Its stack is gone: the last interval goes to the last stack it was seen in.
    if (recording_ == this && (wall_ || ts->tid == own_tid())) ts->timeline.exited(wall_ ? wall : thread_cpu_ns(), wall, *this);
    SampleRecord r;
    r.kind = SampleRecord::kThreadGone;
    r.thread_seq = ts->seq;
    ring.push(r);  // when full, the worker keeps that thread's path until stop
    rb_internal_thread_specific_set(thread, g_ractor_thread_key, nullptr);
    ts->thread = 0;
    threads.retire(ts);
    threads.reap_retired();
  }
  lock_.unlock();
}

int RactorThreads::running_tids(pid_t* out, int max) {
  int n = 0;
  for (int i = 0; i < kSlots && n < max; i++) {
    pid_t tid = g_slot_tid[i].load(std::memory_order_acquire);
    if (tid > 0) out[n++] = tid;
  }
  return n;
}

void RactorThreads::tick_in_handler(pid_t self) {
  if (!lock_.try_lock()) return;  // another Ractor's event or sample, the stop, the marker
  if (RactorThreads* r = recording_) r->sample_in_handler(self);
  lock_.unlock();
}

// Lock held, on thread `self` in the signal handler. Every condition is a load; a failed one
// skips the tick (its time stays in the open interval, charged by the thread's next event):
//  - a Ractor thread published as running on this kernel thread, and it is the Ruby thread
//    this kernel thread runs now (M:N scheduling may have switched it);
//  - not during GC (a GC on any Ractor stops every Ractor's threads at a barrier, and a tick
//    delivered to a thread waiting there must not walk or publish frames);
//  - its VM stack not torn down (stack_readable), its timeline running.
// The frames written are those of its live frames; the marker pins them under the lock.
void RactorThreads::sample_in_handler(pid_t self) {
  if (!vm_layout_ok_ || !ruby_native_thread_p()) return;
  ThreadState* ts = nullptr;
  for (int i = 0; i < kSlots; i++) {
    if (g_slot_tid[i].load(std::memory_order_relaxed) != self) continue;
    ThreadState* candidate = g_slot_state[i].load(std::memory_order_relaxed);
    if (candidate && static_cast<VALUE>(candidate->thread) == rb_thread_current()) {
      ts = candidate;
      break;
    }
  }
  if (!ts || rb_during_gc() || !stack_readable(ts->vm_thread)) return;
  ThreadPhase phase = ts->timeline.phase();
  if (phase == ThreadPhase::kInGc || phase == ThreadPhase::kExited) return;
  int64_t t0 = monotonic_ns();
  int64_t now = wall_ ? t0 : thread_cpu_ns();
  if (!wall_ && now <= ts->timeline.since() && phase == ThreadPhase::kRunning) return;
  int depth = walk_stack(vm::skipped_top_frame(ts->vm_thread));
  if (depth == 0) return;
  ts->timeline.tick(now, t0, depth, *this);
  samples_++;
  sampling_time_ns_ += monotonic_ns() - t0;
}

// As Session::walk_stack, into this ring (lock held).
int RactorThreads::walk_stack(VALUE leaf) {
  int32_t* lines = nullptr;
  uint64_t* slots = ring.frame_slots(&lines);
  if (!slots) return Charge::kNoRoom;
  const int limit = max_depth_ + 1;
  const int k = leaf ? 1 : 0;
  if (leaf) {
    slots[0] = leaf;
    if (lines_) lines[0] = 0;
  }
  int n = k + rb_profile_frames(0, limit - k, reinterpret_cast<VALUE*>(slots + k), lines_ ? lines + k : nullptr);
  if (n == limit) {
    slots[n - 1] = kTruncatedMethod;
    if (lines_) lines[n - 1] = 0;
  }
  return n;
}

bool RactorThreads::charge(uint32_t thread_seq, const Charge& c) {
  return push_charge(ring, dropped_, start_mono_ns_, thread_seq, c);
}

std::unordered_map<uint32_t, uint32_t> RactorThreads::ractors_of_threads() {
  lock_.lock();
  std::unordered_map<uint32_t, uint32_t> copy;
  try {
    copy = ractor_of_thread_;
  } catch (const std::bad_alloc&) {
    lock_.unlock();
    throw;
  }
  lock_.unlock();
  return copy;
}

void RactorThreads::take_counts(int64_t new_start_mono_ns, uint64_t* samples, int64_t* sampling_time_ns) {
  const bool clear = new_start_mono_ns != 0;
  lock_.lock();
  if (clear) start_mono_ns_ = new_start_mono_ns;
  *samples = samples_;
  *sampling_time_ns = sampling_time_ns_;
  if (clear) {
    samples_ = 0;
    sampling_time_ns_ = 0;
  }
  lock_.unlock();
}

}  // namespace rperf
