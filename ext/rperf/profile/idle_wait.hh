// Idle waits: the samples in which a thread waits for work to come, not inside its work. The one
// rule, asked for by every view that leaves idle time out: the CLI (`rperf report`, `stat`,
// `diff`: hidden by default, --idle shows it), the Viewer's filters (SampleFilter::hide_idle), its
// payload (Native::Profile#stack_tree's idle rows, #thread_totals) and so its page; never
// re-derived in Ruby or JavaScript.
//
// A sample is idle when all of these hold:
//   1. it is off the GVL in a wait (VM state GVL blocked: sleeping, waiting on I/O or a lock; not
//      GVL wait, a thread ready to run);
//   2. its leaf (past a VM-state frame of vm_state_frames) is a wait primitive: Kernel#sleep,
//      Thread.stop, Thread::Queue#pop, Thread::SizedQueue#pop, Thread::ConditionVariable#wait,
//      Thread::Mutex#sleep, MonitorMixin::ConditionVariable#wait, Monitor#wait_for_cond,
//      IO.select, Kernel#select, IO#wait_readable, IO#wait, NIO::Selector#select,
//      TCPServer/UNIXServer/Socket#accept, Thread#join, Thread#value, Process.wait/wait2/waitpid/
//      waitpid2/waitall, Process::Status.wait. Frameworks wait through these: no framework's frames
//      are named. (Mutex#lock is contention, IO#read and #wait_writable move data: never idle.)
//   3. it carries none of the program's labels (only %GVL, %GC, %pid): a wait inside a labelled
//      unit of work (a request under the Rack middleware, a job, an Rperf.label block) is that
//      work's time, however it waits. (So a thread labelled for its whole life is never idle:
//      label the work, not the thread.)
//   4. the thread waits for work, not in it: one of
//      a. the primitive waits for another thread or process (Thread#join, #value, Process.wait*):
//         that one's time is its own, shown on it; counting the wait too would count it twice
//         (a main thread joining a server's threads, a parent waiting for its children);
//      b. the thread runs labelled work at other times (a server's thread under the Rack
//         middleware, a Sidekiq processor under its middleware): its unlabelled waits are
//         between units of work (a processor's fetch of the next job, however deep in
//         redis-client, a pool thread's wait for a request);
//      c. the wait is at the top of its thread's loop: between the thread's root and the wait
//         are only frames of the thread's home, then blocks of methods already on the stack,
//         Kernel#loop, Kernel#catch and Mutex/Monitor#synchronize (a pool thread's
//         `mutex.synchronize { cv.wait(mutex) }`, `loop { queue.pop }`, a reaper's
//         `loop { sleep 60; reap }`, Puma's reactor's `select_loop`). A thread's home is the
//         stack, from its root, that holds at least 90% of the thread's time: the frames the
//         thread lives in (its block, its run loop; through a wait when the thread does
//         (almost) nothing but that wait). A wait under any other frame (a request's
//         `sleep 0.02` under the app's frames, a job's blocking call) is the program's time.
//         Without labels a wait is told apart only by where it is: a thread that spends 90% of
//         its time in one request's wait (a saturated server whose one endpoint sleeps) looks
//         like a thread waiting for work; the Rack middleware's labels keep such a wait the
//         program's (rule 3).
//      and b. and c. only in a thread that waits so most of its time (at least half): a thread busy
//      more than half of its time keeps its waits (they swamp nothing, and may be its work's: a
//      thread that computes, then sleeps once at its top, or a busy pool's short waits).
//      The main thread (root `<main>`) is the program, with no loop of its own to wait at the top
//      of nor units of work: only a. makes its waits idle (a server's main thread joining its
//      threads), so a script's own `sleep` stays the script's, even when it is all it does.
// A stack cut at max_depth (root "[truncated]") has no known top: only a. applies.
//
// A thread is a thread_seq in its process: a child's samples merged into its root's profile
// (labelled %pid) are its own threads.
// The samples are judged as a whole profile: the homes are its threads' (a view of part of the
// profile, a time range or a thread, uses the judgement of the whole).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "profile/profile.hh"

namespace rperf {

// A profile's samples, classified once: each stack's wait, each label set's state and whether it
// carries the program's labels, each waiting thread's home, then each (thread, stack) idle by rule 4b or 4c.
class IdleSamples {
 public:
  explicit IdleSamples(const Profile& p);
  bool idle(const Sample& s) const;

 private:
  enum class StackWait : uint8_t { kNone, kOnAnother, kPrimitive };
  // Rules 1 to 3: off the GVL, no program label, a wait primitive's leaf (its kind), else kNone.
  StackWait unlabelled_wait(const Sample& s) const;
  // The sample's thread: its process (the %pid of a child's merged samples) << 32 | thread_seq.
  uint64_t thread_key(const Sample& s) const;
  std::vector<StackWait> wait_of_stack_;
  std::vector<VmState> state_of_set_;
  std::vector<bool> labelled_set_;      // by label set id: carries a program label
  std::vector<uint32_t> process_of_set_;  // by label set id: its %pid's number, 0 without one
  std::unordered_map<uint64_t, std::unordered_set<uint32_t>> idle_stacks_of_thread_;  // rule 4b or 4c
};

// Per thread (thread_seq ascending): its samples' weight, and that of its idle ones; and its
// Ractor when it is another Ractor's thread (its samples' %ractor label, as text; else empty).
struct ThreadIdleTotal {
  uint32_t thread_seq;
  int64_t total_ns;
  int64_t idle_ns;
  std::string ractor;
};
std::vector<ThreadIdleTotal> thread_idle_totals(const Profile& p);

}  // namespace rperf
