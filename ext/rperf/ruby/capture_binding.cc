// Rperf::Native.capture(argv): runs a program and returns its standard output, for the meta
// object's git commands. IO.popen forks the whole Ruby process, which costs in proportion to
// its memory (~0.1 s per command for a 1 GB process holding a large profile, five commands a
// save); posix_spawn starts the program without copying the parent's page tables.
#include <fcntl.h>
#include <pthread.h>
#include <ruby/ruby.h>
#include <ruby/thread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace rperf {

namespace {

// Plain data only: a Ruby exception may leave this function's callers without unwinding C++.
struct Capture {
  int fd;
  pid_t pid;
  char* buf;
  size_t len, cap;
  int status;
  bool out_of_memory;
  bool done;               // run_capture ran to the end (the program is reaped)
  bool exited;             // the program has exited; its pid may be reused once reaped
  pthread_mutex_t lock;    // orders `exited` against stop_capture's kill
};

// Reads the program's output to its end and reaps it (without the GVL: no Ruby API here).
void* run_capture(void* arg) {
  auto* c = static_cast<Capture*>(arg);
  char chunk[16384];
  for (;;) {
    ssize_t n = read(c->fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
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
  close(c->fd);
  // Wait for the exit without reaping, so that the pid cannot be reused while stop_capture may
  // still kill it; then mark it exited and reap it.
  siginfo_t info;
  while (waitid(P_PID, static_cast<id_t>(c->pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  pthread_mutex_lock(&c->lock);
  c->exited = true;
  pthread_mutex_unlock(&c->lock);
  while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR) {
  }
  c->done = true;
  return nullptr;
}

// Unblocking function (Ctrl-C, Thread#raise, Timeout): the program is killed, so the reader
// sees the end of its output and reaps it.
void stop_capture(void* arg) {
  auto* c = static_cast<Capture*>(arg);
  pthread_mutex_lock(&c->lock);
  if (!c->exited) kill(c->pid, SIGKILL);
  pthread_mutex_unlock(&c->lock);
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
  Capture c{fds[0], pid, nullptr, 0, 0, 0, false, false, false, PTHREAD_MUTEX_INITIALIZER};
  // The _2 variant raises no pending interrupt on return: the buffer is freed first, below.
  rb_thread_call_without_gvl2(run_capture, &c, stop_capture, &c);
  if (!c.done) {  // interrupted before it began: the program's output is not wanted
    stop_capture(&c);
    run_capture(&c);
  }
  pthread_mutex_destroy(&c.lock);
  if (c.out_of_memory) {
    std::free(c.buf);
    rb_memerror();
  }
  int state = 0;
  VALUE result = rb_protect(capture_result, reinterpret_cast<VALUE>(&c), &state);
  std::free(c.buf);
  if (state) rb_jump_tag(state);
  rb_thread_check_ints();  // an interrupt that stopped the program is raised now
  return result;
}

}  // namespace

void init_capture_binding(VALUE native) { rb_define_singleton_method(native, "capture", RUBY_METHOD_FUNC(native_capture), 1); }

}  // namespace rperf
