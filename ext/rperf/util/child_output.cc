#include "util/child_output.hh"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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

// True when wake_child asked the reader to return (the wake-up is consumed).
bool woken(ChildOutput* c, int timeout_ms) {
  pollfd p{c->wake, POLLIN, 0};  // fd -1: poll only waits (no eventfd)
  if (poll(&p, 1, timeout_ms) <= 0) return false;
  uint64_t n;
  while (read(c->wake, &n, sizeof n) < 0 && errno == EINTR) {
  }
  return !c->ignore_wake;
}

// Appends a chunk; when it does not fit, the rest of the output is dropped (and still read,
// so that the program is not blocked on a full pipe).
void keep(ChildOutput* c, const char* chunk, size_t n) {
  if (c->out_of_memory) return;
  if (c->len + n > c->cap) {
    size_t cap = (c->cap ? c->cap * 2 : 16384) + n;
    char* grown = static_cast<char*>(std::realloc(c->buf, cap));
    if (!grown) {
      c->out_of_memory = true;
      return;
    }
    c->buf = grown;
    c->cap = cap;
  }
  std::memcpy(c->buf + c->len, chunk, n);
  c->len += n;
}

}  // namespace

ChildStart start_child(char* const argv[], ChildOutput& c) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ChildStart::kNoPipe;
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
  int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv, environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    errno = rc;
    return ChildStart::kNotStarted;
  }
  c = ChildOutput{fds[0], -1, pid, nullptr, 0, 0, 0, false, false, false, false, PTHREAD_MUTEX_INITIALIZER};
  c.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (c.wake < 0) c.ignore_wake = true;  // no wake-ups: the program runs to its end
  return ChildStart::kStarted;
}

void read_child(ChildOutput* c) {
  char chunk[16384];
  while (c->fd >= 0) {
    pollfd p[2] = {{c->fd, POLLIN, 0}, {c->wake, POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {  // a wake of -1 is ignored
      if (errno == EINTR) continue;
      break;
    }
    if ((p[1].revents & POLLIN) && woken(c, 0)) return;
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t n = read(c->fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(c->fd);
      c->fd = -1;
      break;
    }
    keep(c, chunk, static_cast<size_t>(n));
  }
  if (c->fd >= 0) {  // poll failed: no way to wait for the output
    close(c->fd);
    c->fd = -1;
  }
  // Wait for the exit without reaping, so that the pid cannot be reused while kill_child may
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
    if (woken(c, 10)) return;
  }
  c->status = -1;
  while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR) {
  }
  c->done = true;
}

void wake_child(ChildOutput* c) {
  uint64_t one = 1;
  ssize_t ignored = write(c->wake, &one, sizeof one);
  (void)ignored;
}

void kill_child(ChildOutput* c) {
  pthread_mutex_lock(&c->lock);
  if (!c->exited) kill(c->pid, SIGKILL);
  pthread_mutex_unlock(&c->lock);
}

bool child_succeeded(const ChildOutput& c) { return c.done && WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0; }

void release_child(ChildOutput& c) {
  if (c.fd >= 0) close(c.fd);
  c.fd = -1;
  if (c.wake >= 0) close(c.wake);
  c.wake = -1;
  pthread_mutex_destroy(&c.lock);
  std::free(c.buf);
  c.buf = nullptr;
}

}  // namespace rperf
