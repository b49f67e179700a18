// A program run with its standard output in a pipe, read to its end (the meta object's git
// commands, through Native.capture). posix_spawn, not fork: forking a Ruby process that holds a
// large profile copies its page tables (~0.1 s per command at 1 GB, five commands a save).
// Ruby-independent; the caller decides what an interruption means (ruby/capture_binding.cc
// reads without the GVL and wakes the reader to let Ruby look at its interrupts).
#pragma once
#include <pthread.h>
#include <sys/types.h>

#include <cstddef>

namespace rperf {

// Plain data only: a Ruby exception may leave the binding without unwinding C++.
struct ChildOutput {
  int fd;                // the program's standard output, -1 once read to its end
  int wake;              // eventfd: wake_child asks read_child to return; -1 when none
  pid_t pid;
  char* buf;             // the output read so far (malloc'd; release_child frees it)
  size_t len, cap;
  int status;            // waitpid's, once done
  bool out_of_memory;    // the output did not fit: the rest was read and dropped
  bool ignore_wake;      // after a kill: read to the end and reap, whatever wakes the reader
  bool done;             // the program is reaped
  bool exited;           // it has exited; its pid may be reused once reaped
  pthread_mutex_t lock;  // orders `exited` against kill_child
};

enum class ChildStart { kStarted, kNoPipe, kNotStarted };

// Starts argv[0] (searched in PATH) with argv, its standard output into a pipe, standard error
// to /dev/null, no signal blocked and SIGPIPE/SIGXFSZ at their default (as Ruby's spawn does).
// kNoPipe and kNotStarted leave nothing to release (errno says why).
ChildStart start_child(char* const argv[], ChildOutput& c);
// Reads the output to its end and reaps the program; returns early, `done` false, when woken.
// No Ruby API: runs without the GVL.
void read_child(ChildOutput* c);
// Asks read_child to return. Async-signal-safe (a write to an eventfd).
void wake_child(ChildOutput* c);
// SIGKILL, unless the program has exited already (then its pid may be another's).
void kill_child(ChildOutput* c);
bool child_succeeded(const ChildOutput& c);  // exited with status 0
// Closes what start_child opened and frees the output.
void release_child(ChildOutput& c);

}  // namespace rperf
