// Rperf::Native.capture(argv): runs a program and returns its standard output, for the meta
// object's git commands. IO.popen forks the whole Ruby process, which costs in proportion to
// its memory (~0.1 s per command for a 1 GB process holding a large profile, five commands a
// save); posix_spawn starts the program without copying the parent's page tables.
#include <fcntl.h>
#include <pthread.h>
#include <ruby/ruby.h>
#include <ruby/thread.h>
#include <signal.h>
#include <poll.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace rperf {

namespace {

// Plain data only: a Ruby exception may leave this function's callers without unwinding C++.
struct Capture {
  int fd;                  // the program's standard output, -1 once read to its end
  int wake;                // eventfd: the unblocking function asks the reader to return
  pid_t pid;
  char* buf;
  size_t len, cap;
  int status;
  bool out_of_memory;
  bool ignore_wake;        // after a kill: read to the end and reap, whatever wakes us
  bool done;               // the program is reaped
  bool exited;             // the program has exited; its pid may be reused once reaped
  pthread_mutex_t lock;    // orders `exited` against kill_program
};

// True when the unblocking function asked the reader to return (the wake-up is consumed).
bool woken(Capture* c, int timeout_ms) {
  pollfd p{c->wake, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return false;
  uint64_t n;
  while (read(c->wake, &n, sizeof n) < 0 && errno == EINTR) {
  }
  return !c->ignore_wake;
}

// Reads the program's output to its end and reaps it (without the GVL: no Ruby API here).
// Returns early, with `done` false, when woken: Ruby then looks at its interrupts, and only
// one that raises (Ctrl-C, Thread#raise, Timeout) stops the program. Any other (a SIGCHLD
// of another child, a trap that returns) lets it run on.
void* run_capture(void* arg) {
  auto* c = static_cast<Capture*>(arg);
  char chunk[16384];
  while (c->fd >= 0) {
    pollfd p[2] = {{c->fd, POLLIN, 0}, {c->wake, POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if ((p[1].revents & POLLIN) && woken(c, 0)) return nullptr;
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t n = read(c->fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(c->fd);
      c->fd = -1;
      break;
    }
    if (c->len + static_cast<size_t>(n) > c->cap) {
      size_t cap = (c->cap ? c->cap * 2 : sizeof(chunk)) + static_cast<size_t>(n);
      char* grown = static_cast<char*>(std::realloc(c->buf, cap));
      if (!grown) {
        c->out_of_memory = true;
        continue;  // keep reading so the program is not blocked on a full pipe
      }
      c->buf = grown;
      c->cap = cap;
    }
    if (!c->out_of_memory) {
      std::memcpy(c->buf + c->len, chunk, static_cast<size_t>(n));
      c->len += static_cast<size_t>(n);
    }
  }
  if (c->fd >= 0) {  // poll failed: no way to wait for the output
    close(c->fd);
    c->fd = -1;
  }
  // Wait for the exit without reaping, so that the pid cannot be reused while kill_program may
  // still kill it; then mark it exited and reap it. A program that closed its output but runs
  // on is polled every 10 ms, so that a wake-up is still seen.
  while (!c->exited) {
    siginfo_t info;
    std::memset(&info, 0, sizeof info);
    int r = waitid(P_PID, static_cast<id_t>(c->pid), &info, WEXITED | WNOWAIT | WNOHANG);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || info.si_pid == c->pid) {  // exited, or reaped by someone else (ECHILD)
      pthread_mutex_lock(&c->lock);
      c->exited = true;
      pthread_mutex_unlock(&c->lock);
      break;
    }
    if (woken(c, 10)) return nullptr;
  }
  c->status = -1;
  while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR) {
  }
  c->done = true;
  return nullptr;
}

// Unblocking function: asks the reader to return so that Ruby can look at its interrupts.
// Async-signal-safe (a write to an eventfd).
void wake_capture(void* arg) {
  auto* c = static_cast<Capture*>(arg);
  uint64_t one = 1;
  ssize_t ignored = write(c->wake, &one, sizeof one);
  (void)ignored;
}

void kill_program(Capture* c) {
  pthread_mutex_lock(&c->lock);
  if (!c->exited) kill(c->pid, SIGKILL);
  pthread_mutex_unlock(&c->lock);
}

// Without an eventfd the unblocking function stops the program itself.
void kill_on_interrupt(void* arg) { kill_program(static_cast<Capture*>(arg)); }

VALUE check_interrupts(VALUE) {
  rb_thread_check_ints();
  return Qnil;
}

VALUE capture_result(VALUE arg) {
  auto* c = reinterpret_cast<Capture*>(arg);
  VALUE out = rb_external_str_new(c->buf ? c->buf : "", static_cast<long>(c->len));
  return rb_ary_new_from_args(2, out, WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0 ? Qtrue : Qfalse);
}

// Native.capture(argv) -> [stdout String, success?], or nil when the program cannot be started.
// Standard error goes to /dev/null; SIGPIPE and SIGXFSZ (ignored by Ruby) are reset for the
// program, as Ruby's own spawn does.
VALUE native_capture(VALUE, VALUE argv) {
  Check_Type(argv, T_ARRAY);
  long n = RARRAY_LEN(argv);
  if (n < 1) rb_raise(rb_eArgError, "rperf: capture needs a program");
  VALUE strings = rb_ary_new_capa(n);
  for (long i = 0; i < n; i++) {
    VALUE s = rb_ary_entry(argv, i);
    StringValue(s);  // a TypeError for anything but a String, before its bytes are read
    s = rb_str_new_frozen(s);
    StringValueCStr(s);
    rb_ary_push(strings, s);
  }
  VALUE args_holder;
  char** args = ALLOCV_N(char*, args_holder, n + 1);
  for (long i = 0; i < n; i++) args[i] = RSTRING_PTR(RARRAY_AREF(strings, i));
  args[n] = nullptr;

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    ALLOCV_END(args_holder);
    rb_sys_fail("pipe2");
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t none, reset;
  sigemptyset(&none);
  sigemptyset(&reset);
  sigaddset(&reset, SIGPIPE);
  sigaddset(&reset, SIGXFSZ);
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &reset);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, &attr, args, environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  ALLOCV_END(args_holder);
  RB_GC_GUARD(strings);
  if (rc != 0) {
    close(fds[0]);
    return Qnil;
  }
  Capture c{fds[0], -1, pid, nullptr, 0, 0, 0, false, false, false, false, PTHREAD_MUTEX_INITIALIZER};
  c.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (c.wake < 0) c.ignore_wake = true;  // no wake-ups: the program runs to its end
  int interrupt = 0;
  while (!c.done) {
    // The _2 variant raises no pending interrupt on return: Ruby's interrupts are looked at
    // below, where the program can be stopped and reaped first.
    rb_thread_call_without_gvl2(run_capture, &c, c.wake < 0 ? kill_on_interrupt : wake_capture, &c);
    if (c.done) break;
    rb_protect(check_interrupts, Qnil, &interrupt);
    if (interrupt) {  // the program's output is not wanted: stop it, then read to the end and reap
      kill_program(&c);
      c.ignore_wake = true;
      run_capture(&c);
    }
  }
  if (c.wake >= 0) close(c.wake);
  pthread_mutex_destroy(&c.lock);
  if (interrupt) {
    std::free(c.buf);
    rb_jump_tag(interrupt);  // what stopped the program goes on
  }
  if (c.out_of_memory) {
    std::free(c.buf);
    rb_memerror();
  }
  int state = 0;
  VALUE result = rb_protect(capture_result, reinterpret_cast<VALUE>(&c), &state);
  std::free(c.buf);
  if (state) rb_jump_tag(state);
  return result;
}

}  // namespace

void init_capture_binding(VALUE native) { rb_define_singleton_method(native, "capture", RUBY_METHOD_FUNC(native_capture), 1); }

}  // namespace rperf
