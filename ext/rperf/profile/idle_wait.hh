// Idle waits: the samples of a server's or a job runner's threads that only wait for work (the
// Viewer's "hide idle threads", the Threads tab's idle share). The one rule, asked for by the
// Viewer's filters (SampleFilter::hide_idle), its payload (Native::Profile#stack_tree's idle rows,
// #thread_totals) and so its page; never re-derived in Ruby or JavaScript.
//
// A sample is idle when it is off the GVL in a wait (VM state GVL blocked: sleeping, waiting on
// I/O or a lock; not GVL wait, which is a thread ready to run) AND its stack's innermost frames
// are one of the known idle waits below. Frames are matched by label (a method's, whatever its
// file and line; a leading "block in " / "block (N levels) in " is ignored, and so is a VM-state
// leaf frame of a profile recorded with vm_state_frames). The labels are those Ruby 3.3 gives
// (rb_profile_frame_full_label), read from real runs (test/web/puma_idle_test.rb: Puma 8.0;
// Sidekiq 8.1 with redis-client 0.31), leaf first:
//
//   puma_pool        Thread::Mutex#sleep <- Thread::ConditionVariable#wait
//                    <- Puma::ThreadPool#spawn_thread
//                    a pool thread waiting for a request (`not_empty.wait mutex` in the thread's
//                    loop). The same wait inside a request (the app's own lock) has the app's
//                    frames between it and spawn_thread: not idle.
//   puma_reactor     NIO::Selector#select <- Puma::Reactor#select_loop
//                    the reactor waiting for slow clients' bytes and keep-alive connections
//   puma_acceptor    IO.select <- Puma::Server#handle_servers
//                    the server thread waiting for a connection to accept
//   puma_automaton   Kernel#sleep <- Puma::ThreadPool::Automaton#start!
//                    the pool's reaper and trimmer sleeping between rounds
//   sidekiq_fetch    ... <- RedisClient#blocking_call <- ... <- Sidekiq::BasicFetch#retrieve_work
//                    a processor waiting for a job: the blocking pop (BRPOP/BLMPOP) on the
//                    queues, however deep redis-client's reading is (IO#wait_readable, or a
//                    driver's read); connecting or a non-blocking command there is not idle
//   sidekiq_heartbeat  Kernel#sleep <- Sidekiq::Launcher#start_heartbeat
//                    the heartbeat thread sleeping between beats
//   sidekiq_poller   Thread::Mutex#sleep <- Thread::ConditionVariable#wait
//                    <- ConnectionPool::TimedStack#pop <- ... <- Sidekiq::Scheduled::Poller#wait
//                    (or #initial_wait): the scheduler sleeping between polls (its sleeper is a
//                    TimedStack)
//   queue_pop        Thread::Queue#pop or Thread::SizedQueue#pop at the top of its thread: every
//                    frame above the pop is the thread's own block (the label of the stack's
//                    outermost frame) or Kernel#loop / Kernel#catch: a worker waiting for work
//                    (`Thread.new { loop { q.pop.call } }`, concurrent-ruby's pool workers). A pop
//                    deeper in code (a request waiting for a result) is not idle.
//
// Everything else off the GVL (an I/O read of a request, a sleep in a job, a lock the app waits
// for, a Thread#join) is the program's own time: never hidden.
#pragma once
#include <cstdint>
#include <vector>

#include "profile/profile.hh"

namespace rperf {

// The known idle waits, in the order listed above.
enum class IdleWait : int8_t {
  kPumaPool,
  kPumaReactor,
  kPumaAcceptor,
  kPumaAutomaton,
  kSidekiqFetch,
  kSidekiqHeartbeat,
  kSidekiqPoller,
  kQueuePop,
  kCount,
  kNone = -1,
};

// "puma_pool", ... ("" for kNone).
const char* idle_wait_name(IdleWait wait);

// The idle wait whose innermost frames `stack` (leaf first) holds, else kNone; the VM state is
// not looked at (IdleSamples does).
IdleWait idle_wait_of(const Profile& p, FrameSpan stack);

// A profile's samples, classified: each stack once (when made), each label set's VM state once.
class IdleSamples {
 public:
  explicit IdleSamples(const Profile& p);
  // The wait `s` is idle in (off the GVL in a known idle wait), else kNone.
  IdleWait wait_of(const Sample& s) const;
  bool idle(const Sample& s) const { return wait_of(s) != IdleWait::kNone; }

 private:
  std::vector<IdleWait> wait_of_stack_;
  std::vector<VmState> state_of_set_;
};

// Per thread (thread_seq ascending): its samples' weight, and that of its idle ones.
struct ThreadIdleTotal {
  uint32_t thread_seq;
  int64_t total_ns;
  int64_t idle_ns;
};
std::vector<ThreadIdleTotal> thread_idle_totals(const Profile& p);

}  // namespace rperf
