// The idle rule (profile/idle_wait.hh) on threads shaped as real ones: labels as Ruby 3.3 gives
// them (Puma 8.0, Sidekiq 8.1 with redis-client 0.31, a script's threads), each thread with the
// rest of its time, since a wait is judged against its thread's home.
#include "profile/idle_wait.hh"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "profile/sample_filter.hh"
#include "profile/transform.hh"
#include "test_profiles.hh"

namespace rperf {
namespace {

using fixtures::FrameSpec;
using fixtures::make_profile;
using fixtures::SampleSpec;

constexpr const char* kC = "<C method>";
constexpr const char* kKernel = "<internal:kernel>";
constexpr const char* kSync = "<internal:thread_sync>";
constexpr const char* kPool = "/g/gems/puma-8.0.2/lib/puma/thread_pool.rb";
constexpr const char* kServer = "/g/gems/puma-8.0.2/lib/puma/server.rb";
constexpr const char* kSidekiq = "/g/gems/sidekiq-8.1.7/lib/sidekiq/processor.rb";
constexpr const char* kRedis = "/g/gems/redis-client-0.31.0/lib/redis_client.rb";
constexpr const char* kApp = "/srv/app/app.rb";

using Stack = std::vector<std::pair<const char*, const char*>>;  // (label, path), leaf first

struct ThreadSample {
  uint32_t thread;
  Stack stack;
  int64_t weight;
  VmState state = kGvlBlocked;
  uint32_t label_set = 0;  // 1: endpoint=GET /x, 2: %GVL=blocked
};

// A profile of the samples, in the order given (the tests read samples[i]).
Profile profile(const std::vector<ThreadSample>& samples) {
  std::vector<FrameSpec> frames;
  std::vector<SampleSpec> specs;
  for (const ThreadSample& s : samples) {
    std::vector<uint32_t> ids;
    for (const auto& [label, path] : s.stack) {
      ids.push_back(static_cast<uint32_t>(frames.size()));
      frames.push_back(FrameSpec{path, label, 0});
    }
    specs.push_back(SampleSpec{ids, s.weight, s.thread, s.label_set, s.state});
  }
  return make_profile(frames, specs, {{}, {{"endpoint", "GET /x"}}, {{"%GVL", "blocked"}}});
}

std::vector<bool> idle_of(const Profile& p) {
  IdleSamples idle(p);
  std::vector<bool> out;
  for (const Sample& s : p.samples) out.push_back(idle.idle(s));
  return out;
}

const Stack kPoolWait = {{"Thread::Mutex#sleep", kC},
                         {"Thread::ConditionVariable#wait", kC},
                         {"Puma::ThreadPool#spawn_thread", kPool},
                         {"Thread::Mutex#synchronize", kC},
                         {"Puma::ThreadPool#spawn_thread", kPool}};
const Stack kRequestSleep = {{"Kernel#sleep", kC}, {"App#call", kApp}, {"Puma::Server#process_client", kServer}, {"Puma::ThreadPool#spawn_thread", kPool}};
const Stack kRequestWork = {{"Digest::SHA256.hexdigest", kC}, {"App#call", kApp}, {"Puma::Server#process_client", kServer},
                            {"Puma::ThreadPool#spawn_thread", kPool}};

TEST(IdleWait, APoolThreadWaitingForARequestNotTheRequestsOwnSleep) {
  // Waiting most of its time, or nearly always: the wait at the top of the pool's loop is idle,
  // the request's sleep under the app is the program's.
  for (int64_t wait : {250, 10'000}) {
    Profile p = profile({{1, kPoolWait, wait}, {1, kRequestSleep, 100}, {1, kRequestWork, 100, kRunning}});
    EXPECT_EQ(idle_of(p), (std::vector<bool>{true, false, false})) << wait;
  }
  // Busy more than half of its time: its waits stay (they swamp nothing).
  Profile busy = profile({{1, kPoolWait, 150}, {1, kRequestSleep, 100}, {1, kRequestWork, 100, kRunning}});
  EXPECT_EQ(idle_of(busy), (std::vector<bool>{false, false, false}));
  // Off the GVL only: waiting for the GVL (woken for a request), running or in GC is not idle.
  Profile states = profile({{1, kPoolWait, 100, kGvlWait}, {1, kPoolWait, 100, kRunning}, {1, kPoolWait, 100, kGcMark}});
  EXPECT_EQ(idle_of(states), (std::vector<bool>{false, false, false}));
  // A block's label as other tools (and older files) spell it.
  Profile block = profile({{1, {{"Thread::Mutex#sleep", kC}, {"Thread::ConditionVariable#wait", kC}, {"block in Puma::ThreadPool#spawn_thread", kPool}}, 100},
                           {1, {{"App#call", kApp}, {"block in Puma::ThreadPool#spawn_thread", kPool}}, 100, kRunning}});
  EXPECT_TRUE(idle_of(block)[0]);
}

TEST(IdleWait, AWaitInsideLabelledWorkIsTheWorks) {
  // The same pool wait, and a thread that only waits, under the program's label: not idle; the
  // VM state's own label is not the program's.
  Profile p = profile({{1, kPoolWait, 100, kGvlBlocked, 1}, {1, kRequestWork, 100, kRunning}, {2, kPoolWait, 100, kRunning, 2}});
  EXPECT_EQ(idle_of(p), (std::vector<bool>{false, false, true}));
  // A thread that runs labelled requests: its unlabelled waits are between them, however deep
  // (reading the next request's body); the request's own sleep, labelled, is the request's.
  const Stack body = {{"IO#wait_readable", kC}, {"Puma::Client#eagerly_finish", kServer}, {"Puma::Server#process_client", kServer},
                      {"Puma::ThreadPool#spawn_thread", kPool}};
  Profile labelled = profile({{1, kRequestSleep, 100, kGvlBlocked, 1}, {1, body, 300}, {1, kRequestWork, 100, kRunning, 1}});
  EXPECT_EQ(idle_of(labelled), (std::vector<bool>{false, true, false}));
  // Not on the main thread: a script's unlabelled sleep beside its labelled work stays its own.
  Profile script = profile({{1, {{"Kernel#sleep", kC}, {"<main>", kApp}}, 100}, {1, {{"Object#compute", kApp}, {"<main>", kApp}}, 100, kRunning, 1}});
  EXPECT_FALSE(idle_of(script)[0]);
}

TEST(IdleWait, ServerThreadsThatWaitOneCallDown) {
  const Stack reactor_wait = {{"NIO::Selector#select", kC}, {"Puma::Reactor#select_loop", kServer}, {"Puma::Reactor#run", kServer}};
  const Stack reactor_work = {{"Puma::Client#try_to_finish", kServer}, {"Puma::Reactor#select_loop", kServer}, {"Puma::Reactor#run", kServer}};
  const Stack acceptor_wait = {{"IO.select", kC}, {"Puma::Server#handle_servers", kServer}, {"Puma::Server#run", kServer}};
  const Stack acceptor_work = {{"Socket#__accept_nonblock", kC}, {"Puma::Server#handle_servers", kServer}, {"Puma::Server#run", kServer}};
  // The reactor's select_loop and the acceptor's handle_servers hold all of their threads' time.
  Profile p = profile({{1, reactor_wait, 900}, {1, reactor_work, 100, kRunning}, {2, acceptor_wait, 500}, {2, acceptor_work, 50}});
  EXPECT_EQ(idle_of(p), (std::vector<bool>{true, false, true, false}));
  // A request's own IO.select in a pool thread is one call down from nothing the thread lives in.
  Profile request = profile({{1, kPoolWait, 500}, {1, {{"IO.select", kC}, {"App#call", kApp}, {"Puma::ThreadPool#spawn_thread", kPool}}, 500}});
  EXPECT_EQ(idle_of(request), (std::vector<bool>{true, false}));
  // Frames of one method at different lines are one frame of the home.
  Profile lines = make_profile({{kC, "NIO::Selector#select"}, {kServer, "Puma::Reactor#select_loop", 10}, {kServer, "Puma::Reactor#select_loop", 12},
                                {kServer, "Puma::Reactor#run", 3}, {kServer, "Puma::Client#try_to_finish", 7}},
                               {{{0, 1, 3}, 60, 1, 0, kGvlBlocked}, {{4, 2, 3}, 40, 1, 0, kRunning}});
  EXPECT_TRUE(IdleSamples(lines).idle(lines.samples[0]));
}

TEST(IdleWait, ScriptThreadsWaitingInTheirLoops) {
  const Stack background_sleep = {{"Kernel#sleep", kC}, {"block (2 levels) in <main>", kApp}, {"Kernel#loop", kKernel}, {"block in <main>", kApp}};
  const Stack background_work = {{"Array#sum", kC}, {"block (2 levels) in <main>", kApp}, {"Kernel#loop", kKernel}, {"block in <main>", kApp}};
  const Stack worker_pop = {{"Thread::Queue#pop", kSync}, {"Worker#start", kApp}, {"Kernel#loop", kKernel}, {"Worker#start", kApp}};
  const Stack job_pop = {{"Thread::Queue#pop", kSync}, {"Job#run", kApp}, {"Worker#start", kApp}, {"Kernel#loop", kKernel}, {"Worker#start", kApp}};
  const Stack job_work = {{"Integer#times", kC}, {"Job#run", kApp}, {"Worker#start", kApp}, {"Kernel#loop", kKernel}, {"Worker#start", kApp}};
  Profile p = profile({{2, background_sleep, 1000}, {2, background_work, 10, kRunning}, {3, worker_pop, 1000}, {3, job_pop, 300}, {3, job_work, 400, kRunning}});
  // The loops' sleep and pop are idle; a pop inside a job (waiting for a result) is the job's.
  EXPECT_EQ(idle_of(p), (std::vector<bool>{true, false, true, false, false}));
  // concurrent-ruby's worker: a pop under its loop and catch.
  Profile pool = profile({{1,
                           {{"Thread::Queue#pop", kSync},
                            {"Concurrent::RubyThreadPoolExecutor::Worker#create_worker", kApp},
                            {"Kernel#loop", kKernel},
                            {"Concurrent::RubyThreadPoolExecutor::Worker#create_worker", kApp},
                            {"Kernel#catch", kC},
                            {"Concurrent::RubyThreadPoolExecutor::Worker#create_worker", kApp}},
                           100}});
  EXPECT_TRUE(idle_of(pool)[0]);
}

TEST(IdleWait, TheMainThreadsOwnSleepIsTheScripts) {
  const Stack main_sleep = {{"Kernel#sleep", kC}, {"<main>", kApp}};
  const Stack main_work = {{"Object#compute", kApp}, {"<main>", kApp}};
  // A script that computes and sleeps: its sleep is its own time.
  Profile script = profile({{1, main_sleep, 400}, {1, main_work, 600, kRunning}});
  EXPECT_EQ(idle_of(script), (std::vector<bool>{false, false}));
  // Even a script that only sleeps, or a main thread that waits for good after its boot: the
  // main thread is the program (only waiting for another thread is idle there).
  Profile sleeper = profile({{1, main_sleep, 300}});
  EXPECT_FALSE(idle_of(sleeper)[0]);
  const Stack launch_wait = {{"IO#wait_readable", kC}, {"Sidekiq::CLI#launch", kSidekiq}, {"Sidekiq::CLI#run", kSidekiq}, {"<main>", kApp}};
  Profile server = profile({{1, launch_wait, 9500}, {1, main_work, 400, kRunning}});
  EXPECT_EQ(idle_of(server), (std::vector<bool>{false, false}));
}

TEST(IdleWait, WaitingForAnotherThreadOrProcess) {
  // Puma::Single#run joining the server, and a script collecting its threads' values, however
  // much else the thread did; the same join inside labelled work is the work's.
  const Stack join = {{"Thread#join", kC}, {"Puma::Single#run", kServer}, {"Puma::Launcher#run", kServer}, {"<main>", kApp}};
  const Stack value = {{"Thread#value", kC}, {"Array#map", kC}, {"<main>", kApp}};
  const Stack wait = {{"Process.wait", kC}, {"Object#run_children", kApp}, {"<main>", kApp}};
  Profile p = profile({{1, join, 100}, {1, value, 100}, {1, wait, 100}, {1, {{"Object#boot", kApp}, {"<main>", kApp}}, 5000, kRunning}, {1, join, 100, kGvlBlocked, 1}});
  EXPECT_EQ(idle_of(p), (std::vector<bool>{true, true, true, false, false}));
}

TEST(IdleWait, SidekiqProcessorsHeartbeatAndPoller) {
  // A processor that mostly waits for a job: its fetch, however deep redis-client reads it, is
  // on its home; the job's own blocking call is under perform.
  const Stack fetch = {{"IO#wait_readable", kC},
                       {"RedisClient::RubyConnection::BufferedIO#fill_buffer", kRedis},
                       {"Kernel#loop", kKernel},
                       {"RedisClient::RubyConnection#read", kRedis},
                       {"RedisClient#blocking_call", kRedis},
                       {"Sidekiq::BasicFetch#retrieve_work", kSidekiq},
                       {"Sidekiq::Processor#get_one", kSidekiq},
                       {"Sidekiq::Processor#run", kSidekiq}};
  const Stack job_call = {{"IO#wait_readable", kC}, {"RedisClient#blocking_call", kRedis}, {"HardJob#perform", kApp},
                          {"Sidekiq::Processor#process", kSidekiq}, {"Sidekiq::Processor#run", kSidekiq}};
  const Stack heartbeat = {{"Kernel#sleep", kC}, {"Sidekiq::Launcher#start_heartbeat", kSidekiq}, {"Kernel#loop", kKernel},
                           {"Sidekiq::Launcher#start_heartbeat", kSidekiq}};
  const Stack poller = {{"Thread::Mutex#sleep", kC},       {"Thread::ConditionVariable#wait", kC}, {"ConnectionPool::TimedStack#pop", kRedis},
                        {"Thread::Mutex#synchronize", kC}, {"ConnectionPool::TimedStack#pop", kRedis}, {"Sidekiq::Scheduled::Poller#wait", kSidekiq},
                        {"Sidekiq::Scheduled::Poller#start", kSidekiq}};
  const Stack enqueue = {{"Sidekiq::Scheduled::Enq#enqueue_jobs", kSidekiq}, {"Sidekiq::Scheduled::Poller#start", kSidekiq}};
  Profile p = profile({{1, fetch, 9000}, {1, job_call, 500}, {2, heartbeat, 1000}, {3, poller, 1000}, {3, enqueue, 20, kRunning}});
  EXPECT_EQ(idle_of(p), (std::vector<bool>{true, false, true, true, false}));
  // A busier processor (a fifth of its time in jobs, 89% in a real run): its fetch is idle when its
  // jobs are labelled (the middleware), not by where it is.
  Profile busy = profile({{1, fetch, 8000}, {1, job_call, 2000}});
  EXPECT_EQ(idle_of(busy), (std::vector<bool>{false, false}));
  Profile labelled = profile({{1, fetch, 8000}, {1, job_call, 2000, kGvlBlocked, 1}});
  EXPECT_EQ(idle_of(labelled), (std::vector<bool>{true, false}));
}

TEST(IdleWait, AChildProcesssThreadsAreItsOwn) {
  // A root's busy thread 2 (its sleep a tenth of its time) and a child's thread 2 that only
  // sleeps in its loop (its samples merged with %pid): one thread_seq, two threads.
  Profile p = make_profile({{kC, "Kernel#sleep"}, {kApp, "block in <main>"}, {kApp, "Object#work"}},
                           {{{0, 1}, 100, 2, 0, kGvlBlocked}, {{2, 1}, 900, 2, 0, kRunning}, {{0, 1}, 1000, 2, 1, kGvlBlocked}},
                           {{}, {{"%pid", "42"}}});
  EXPECT_EQ(idle_of(p), (std::vector<bool>{false, false, true}));
}

TEST(IdleWait, WhatIsNeverIdle) {
  // Moving data, a lock's contention, a stack with no wait, a stack cut at max_depth (no top).
  Profile p = profile({{1, {{"IO#read", kC}, {"Shop#download", kApp}}, 100},
                       {2, {{"Thread::Mutex#lock", kC}, {"Cache#fetch", kApp}}, 100},
                       {3, {}, 100},
                       {4, {{"Thread::Queue#pop", kSync}, {"Worker#start", kApp}, {"[truncated]", ""}}, 100},
                       {5, {{"Thread#join", kC}, {"Worker#start", kApp}, {"[truncated]", ""}}, 100}});
  EXPECT_EQ(idle_of(p), (std::vector<bool>{false, false, false, false, true}));
}

TEST(IdleWait, StateFromLabelsAndVmStateFrames) {
  // A Hash built by hand says the state with its labels (%GVL=blocked: set 2); a profile
  // recorded with vm_state_frames has the state's frame as its leaf.
  Profile labelled = profile({{1, kPoolWait, 100, kRunning, 2}, {1, kPoolWait, 50, kRunning, 0}});
  EXPECT_EQ(idle_of(labelled), (std::vector<bool>{true, false}));
  Stack framed = kPoolWait;
  framed.insert(framed.begin(), {"[GVL blocked]", kVmFramePath});
  Profile frames = profile({{1, framed, 100}, {1, kRequestWork, 100, kRunning}});
  EXPECT_TRUE(idle_of(frames)[0]);
}

// The one profile of the filters' tests: a Puma worker that served a request, then waited;
// a busy I/O thread off the GVL.
Profile server() {
  return make_profile({{kC, "Thread::Mutex#sleep"}, {kC, "Thread::ConditionVariable#wait"}, {kPool, "Puma::ThreadPool#spawn_thread"},
                       {kApp, "App#call"}, {kC, "IO#read"}, {kApp, "Shop#download"}},
                      {{{0, 1, 2}, 70, 1, 0, kGvlBlocked, 70},
                       {{3, 2}, 30, 1, 0, kRunning, 100},
                       {{0, 1, 2}, 5, 1, 0, kGvlWait, 105},
                       {{4, 5}, 45, 2, 0, kGvlBlocked, 45},
                       {{5}, 5, 2, 0, kRunning, 50}});
}

TEST(IdleWait, SampleFilterAndThreadTotals) {
  Profile p = server();
  SampleFilter hide;
  hide.hide_idle = true;
  int64_t kept = 0;
  for (const Sample& s : p.samples) kept += hide.keeps(p, s) ? s.weight_ns : 0;
  EXPECT_EQ(kept, 30 + 5 + 45 + 5);
  std::vector<ThreadIdleTotal> totals = thread_idle_totals(p);
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[0].thread_seq, 1u);
  EXPECT_EQ(totals[0].total_ns, 105);
  EXPECT_EQ(totals[0].idle_ns, 70);
  EXPECT_EQ(totals[1].thread_seq, 2u);
  EXPECT_EQ(totals[1].total_ns, 50);
  EXPECT_EQ(totals[1].idle_ns, 0);
}

TEST(IdleWait, HideIdleTransformJudgesTheStacksBeforeTheCut) {
  // Hidden on the whole stacks, the pool's 70 ms go and the rest stays; after a focus, the idle
  // samples are judged on the cut stacks.
  Profile p = server();
  transform_stacks(p, {StackTransform{StackTransform::Op::kHideIdle, "", ""}});
  int64_t kept = 0;
  for (const Sample& s : p.samples) kept += s.weight_ns;
  EXPECT_EQ(kept, 30 + 5 + 45 + 5);
  Profile after = server();
  transform_stacks(after, {StackTransform{StackTransform::Op::kFocus, "Shop#download", kApp},
                           StackTransform{StackTransform::Op::kHideIdle, "", ""}});
  EXPECT_EQ(after.samples.size(), 2u) << "judged on the cut stacks: the I/O thread's read is no wait";
}

}  // namespace
}  // namespace rperf
