#include "sampler/timer.hh"

#include <errno.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "util/clock.hh"

namespace rperf {

std::atomic<uint64_t> Timer::trigger_count_{0};
std::atomic<Timer::TickFn> Timer::signal_tick_{nullptr};
std::atomic<Timer::TickFn> Timer::extra_tick_{nullptr};
std::atomic<uint8_t> Timer::generation_{0};
pid_t Timer::pid_ = 0;
uid_t Timer::uid_ = 0;

namespace {
constexpr int64_t kBackgroundPeriodNs = 10 * 1000 * 1000;
constexpr int kMaxExtraTargets = 64;
// With an overhead budget the drain runs with the ticks when they are slower than that, up
// to this period: a wake-up of this thread cost ~30 us of its CPU on the loaded development
// VM, and 100 drains a second took most of a 1% budget, leaving ~20 Hz for the samples. The
// ring (16k records) holds 100 ms of 160k GVL events a second.
constexpr int64_t kSlowestBackgroundPeriodNs = 100 * 1000 * 1000;
// The overhead budget's window: long enough that a window holds many ticks and the CPU clocks'
// reads (three system calls) are nothing beside it. The first is short and each doubles up to
// the longest: a rate far over budget at start (10 kHz) comes down within tens of ms, before
// it has cost much.
constexpr int64_t kFirstControlPeriodNs = 10 * 1000 * 1000;
constexpr int64_t kControlPeriodNs = 100 * 1000 * 1000;

// A CPU clock's reading, 0 when it cannot be read (a thread that has exited).
int64_t cpu_clock_ns(clockid_t clock) {
  timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

timespec to_timespec(int64_t ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(ns / 1000000000LL);
  ts.tv_nsec = static_cast<long>(ns % 1000000000LL);  // always < 1e9, also at 1 Hz
  return ts;
}
}  // namespace

int Timer::default_signal() {
#ifdef __linux__
  return SIGRTMIN + 8;
#else
  return 0;
#endif
}

namespace {
// A forwarded tick's siginfo value: a tag and the timer's generation in the high half (not a
// stray sigqueue from the application, nor a tick of a stopped timer) and the target's kernel
// id in the low half, its top bit set for an extra target's tick (kernel ids are below 2^22).
constexpr uint64_t kForwardTag = 0x72706600ULL << 32;  // "rpf"
constexpr uint32_t kExtraBit = 1U << 31;

bool forward(pid_t pid, uid_t uid, pid_t tid, int sig, uint8_t generation, bool extra = false) {
  siginfo_t si;
  std::memset(&si, 0, sizeof(si));
  si.si_signo = sig;
  si.si_code = SI_QUEUE;  // negative: allowed for a signal to our own process
  si.si_pid = pid;
  si.si_uid = uid;
  const uint64_t tag = kForwardTag | (static_cast<uint64_t>(generation) << 32);
  const uint32_t low = static_cast<uint32_t>(tid) | (extra ? kExtraBit : 0);
  si.si_value.sival_ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(tag | low));
  return syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &si) == 0;
}

// The target kernel id of a forwarded tick of this generation, or 0 when `info` is not one;
// `stale` when it is one of an earlier generation; `extra` for an extra target's tick.
pid_t forwarded_to(const siginfo_t* info, pid_t pid, uint8_t generation, bool& stale, bool& extra) {
  stale = false;
  extra = false;
  if (info == nullptr || info->si_code != SI_QUEUE || info->si_pid != pid) return 0;
  uint64_t v = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(info->si_value.sival_ptr));
  if ((v & 0xffffff0000000000ULL) != kForwardTag) return 0;
  if (((v >> 32) & 0xff) != generation) {
    stale = true;
    return 0;
  }
  extra = (v & kExtraBit) != 0;
  return static_cast<pid_t>(v & (kExtraBit - 1));
}
}  // namespace

void Timer::on_signal(int, siginfo_t* info, void*) {
  int saved_errno = errno;
  TickFn tick = signal_tick_.load(std::memory_order_relaxed);
  if (tick) {
    bool stale = false, extra = false;
    const uint8_t generation = generation_.load(std::memory_order_relaxed);
    pid_t self = forwarded_to(info, pid_, generation, stale, extra);
    if (stale) {
      // a stopped timer's tick, delivered late: nothing to do
    } else if (extra) {
      if (TickFn extra_tick = extra_tick_.load(std::memory_order_relaxed)) extra_tick(self);
    } else if (self > 0) {
      tick(self);  // forwarded: the kernel delivered it to thread `self`, the GVL holder a moment ago
    }
    // Anything else (a signal the application sent itself) is not a tick.
  }
  errno = saved_errno;
}

bool Timer::start(const Options& opts, TickFn tick, BackgroundFn background, void* ctx, std::string* error) {
  opts_ = opts;
  tick_ = tick;
  target_ = opts.target;
  background_ = background;
  ctx_ = ctx;
  budget_ = OverheadBudget(opts.overhead_target, 1000000000LL / opts.frequency);
  interval_ns_.store(opts.overhead_target > 0 ? budget_.first_interval_ns() : 1000000000LL / opts.frequency,
                     std::memory_order_relaxed);
  window_process_ns_ = -1;
  trigger_count_.store(0, std::memory_order_relaxed);
  stop_requested_ = false;
  worker_ready_ = false;
  armed_.store(opts.armed);
  next_deadline_ns_ = monotonic_ns() + interval_ns();

  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&cond_, &attr);
  pthread_condattr_destroy(&attr);

  if (opts.signal > 0) {
#ifdef __linux__
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    generation_.fetch_add(1);
    signal_tick_.store(tick);
    extra_tick_.store(opts.extra_tick);
    pid_ = getpid();
    uid_ = getuid();
    if (sigaction(opts.signal, &sa, &old_action_) != 0) {
      *error = std::string("sigaction failed: ") + std::strerror(errno);
      signal_tick_.store(nullptr);
      return false;
    }
#else
    *error = "signal mode is only supported on Linux";
    return false;
#endif
  }

  // The worker blocks every signal, so no process-directed signal (Ctrl-C, SIGTERM) and no
  // forwarded tick is ever handled on it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int rc = pthread_create(&worker_, nullptr, worker_main, this);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    *error = std::string("cannot create the timer thread: ") + std::strerror(rc);
    restore_signal();
    return false;
  }
  pthread_mutex_lock(&mutex_);
  while (!worker_ready_) pthread_cond_wait(&cond_, &mutex_);
  pthread_mutex_unlock(&mutex_);
  running_ = true;
  return true;
}

void Timer::arm() {
  if (!running_) return;
  pthread_mutex_lock(&mutex_);
  armed_.store(true);
  next_deadline_ns_ = monotonic_ns() + interval_ns();
  window_process_ns_ = -1;  // the budget's next window starts with the ticks
  pthread_cond_signal(&cond_);
  pthread_mutex_unlock(&mutex_);
}

void Timer::disarm() {
  if (!running_) return;
  armed_.store(false);  // the worker reads it before each tick
}

void Timer::stop() {
  if (!running_) return;
  pthread_mutex_lock(&mutex_);
  stop_requested_ = true;
  pthread_cond_signal(&cond_);
  pthread_mutex_unlock(&mutex_);
  pthread_join(worker_, nullptr);
  pthread_cond_destroy(&cond_);
  restore_signal();
  running_ = false;
}

bool Timer::restart(std::string* error) {
  if (running_) return true;
  Options again = opts_;
  again.armed = armed_.load();
  const uint64_t ticks = trigger_count_.load(std::memory_order_relaxed);
  if (!start(again, tick_, background_, ctx_, error)) return false;
  trigger_count_.fetch_add(ticks, std::memory_order_relaxed);
  return true;
}

int64_t Timer::cpu_ns() const {
  return earlier_cpu_ns_.load(std::memory_order_relaxed) + (running_ ? cpu_clock_ns(worker_clock_) : 0);
}

void Timer::adjust_rate(int64_t now) {
  const int64_t process = cpu_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  const int64_t own = cpu_clock_ns(CLOCK_THREAD_CPUTIME_ID) + (opts_.own_time ? opts_.own_time(ctx_) : 0);
  if (window_process_ns_ < 0) {  // (re)started: this is the first window's start
    control_period_ns_ = kFirstControlPeriodNs;
  } else {
    const int64_t interval = budget_.next_interval_ns(interval_ns(), own - window_own_ns_, process - window_process_ns_);
    interval_ns_.store(interval, std::memory_order_relaxed);
    if (next_deadline_ns_ > now + interval) next_deadline_ns_ = now + interval;  // faster now: not a long wait first
    control_period_ns_ = std::min(control_period_ns_ * 2, kControlPeriodNs);
  }
  next_control_ns_ = now + control_period_ns_;
  window_process_ns_ = process;
  window_own_ns_ = own;
}

void Timer::abandon_after_fork() {
  if (!running_) return;
  running_ = false;  // the worker thread is not inherited by fork
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  mutex_ = fresh;
  restore_signal();
}

void Timer::restore_signal() {
  if (opts_.signal > 0 && signal_tick_.load() != nullptr) {
    signal_tick_.store(nullptr);
    extra_tick_.store(nullptr);
    // A tick still queued (real-time signals queue, and forwarded ticks go to one thread) would
    // arrive after the handler is gone and, at the default action, end the process (seen once:
    // "signal 42" in the re-entrancy stress on Ruby 3.4). Ignoring the signal discards pending
    // instances; it stays ignored when the previous action was the default (which only kills).
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(opts_.signal, &ignore, nullptr);
    const bool was_default = !(old_action_.sa_flags & SA_SIGINFO) && old_action_.sa_handler == SIG_DFL;
    if (!was_default) sigaction(opts_.signal, &old_action_, nullptr);
  }
}

void* Timer::worker_main(void* self) {
  static_cast<Timer*>(self)->worker_loop();
  return nullptr;
}

void Timer::worker_loop() {
#ifdef __linux__
  // Wake at each deadline, not up to 50 us after it (the default slack of a normal thread: half
  // the period at 10 kHz).
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
  pthread_getcpuclockid(pthread_self(), &worker_clock_);
  const bool budgeted = opts_.overhead_target > 0;
  pthread_mutex_lock(&mutex_);
  worker_ready_ = true;
  pthread_cond_broadcast(&cond_);
  // The drain's period: with the budget, the tick interval within [10 ms, 100 ms].
  auto background_period = [&] {
    return budgeted ? std::clamp(interval_ns(), kBackgroundPeriodNs, kSlowestBackgroundPeriodNs) : kBackgroundPeriodNs;
  };
  int64_t next_background = monotonic_ns() + background_period();
  while (!stop_requested_) {
    int64_t now = monotonic_ns();
    int64_t wake = next_background;
    bool sleeping_ticks = armed_.load();
    if (sleeping_ticks && next_deadline_ns_ < wake) wake = next_deadline_ns_;
    if (budgeted && sleeping_ticks && next_control_ns_ < wake) wake = next_control_ns_;
    if (wake > now) {
      timespec ts = to_timespec(wake);
      pthread_cond_timedwait(&cond_, &mutex_, &ts);
      continue;  // re-evaluate: woken early by a signal, arm() or stop()
    }
    bool ticked = false;
    if (sleeping_ticks && now >= next_deadline_ns_) {
      ticked = true;
      trigger_count_.fetch_add(1, std::memory_order_relaxed);
      pid_t tid = target_ ? target_() : 0;
      const uint8_t generation = generation_.load(std::memory_order_relaxed);
      if (tid != kSkipTick && (opts_.signal <= 0 || tid <= 0 || !forward(pid_, uid_, tid, opts_.signal, generation))) tick_(0);
      if (opts_.signal > 0 && opts_.extra_targets) {
        pid_t extra[kMaxExtraTargets];
        const int n = opts_.extra_targets(extra, kMaxExtraTargets);
        for (int i = 0; i < n; i++) forward(pid_, uid_, extra[i], opts_.signal, generation, true);
      }
      next_deadline_ns_ += interval_ns();
      if (next_deadline_ns_ <= now) next_deadline_ns_ = now + interval_ns();  // skip missed ticks
    }
    // With the budget, work due before the next tick is done on this wake-up: one, not three.
    const int64_t early = budgeted && ticked ? interval_ns() : 0;
    if (budgeted && sleeping_ticks && (now + early >= next_control_ns_ || window_process_ns_ < 0)) adjust_rate(now);
    if (now + early >= next_background) {
      pthread_mutex_unlock(&mutex_);
      background_(ctx_);
      pthread_mutex_lock(&mutex_);
      next_background = monotonic_ns() + background_period();
    }
  }
  pthread_mutex_unlock(&mutex_);
  background_(ctx_);
  earlier_cpu_ns_.fetch_add(cpu_clock_ns(CLOCK_THREAD_CPUTIME_ID), std::memory_order_relaxed);
}

}  // namespace rperf
