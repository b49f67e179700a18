// The idle-wait rule (profile/idle_wait.hh) on the stacks real servers give: the labels are
// those of Puma 8.0 and Sidekiq 8.1 (redis-client 0.31) under Ruby 3.3, as rperf recorded them.
#include "profile/idle_wait.hh"

#include <gtest/gtest.h>

#include "profile/method_stacks.hh"
#include "profile/transform.hh"
#include "test_profiles.hh"

namespace rperf {
namespace {

using fixtures::FrameSpec;
using fixtures::make_profile;
using fixtures::SampleSpec;

constexpr const char* kC = "<C method>";
constexpr const char* kPuma = "/g/gems/puma-8.0.2/lib/puma/thread_pool.rb";
constexpr const char* kServer = "/g/gems/puma-8.0.2/lib/puma/server.rb";
constexpr const char* kSidekiq = "/g/gems/sidekiq-8.1.7/lib/sidekiq/fetch.rb";
constexpr const char* kRedis = "/g/gems/redis-client-0.31.0/lib/redis_client.rb";
constexpr const char* kApp = "/srv/app/app.rb";

// A stack of labels, leaf first (files as a real profile has them), in a one-sample profile.
Profile one(const std::vector<std::pair<const char*, const char*>>& leaf_first, VmState state = kGvlBlocked) {
  std::vector<FrameSpec> frames;
  std::vector<uint32_t> ids;
  for (const auto& [label, path] : leaf_first) {
    ids.push_back(static_cast<uint32_t>(frames.size()));
    frames.push_back(FrameSpec{path, label, 0});
  }
  return make_profile(frames, {SampleSpec{ids, 1000, 1, 0, state}});
}

IdleWait wait_of(const Profile& p) { return IdleSamples(p).wait_of(p.samples[0]); }
bool idle(const Profile& p) { return IdleSamples(p).idle(p.samples[0]); }

const std::vector<std::pair<const char*, const char*>> kPumaPoolWait = {
    {"Thread::Mutex#sleep", kC}, {"Thread::ConditionVariable#wait", kC}, {"Puma::ThreadPool#spawn_thread", kPuma},
    {"Thread::Mutex#synchronize", kC}, {"Puma::ThreadPool#spawn_thread", kPuma}};

TEST(IdleWait, PumaPoolWaitingForARequest) {
  EXPECT_EQ(wait_of(one(kPumaPoolWait)), IdleWait::kPumaPool);
  EXPECT_STREQ(idle_wait_name(IdleWait::kPumaPool), "puma_pool");
  // Off the GVL only: waiting for the GVL (woken for a request) or running is not idle.
  EXPECT_FALSE(idle(one(kPumaPoolWait, kGvlWait)));
  EXPECT_FALSE(idle(one(kPumaPoolWait, kRunning)));
  EXPECT_FALSE(idle(one(kPumaPoolWait, kGcMark)));
  // The same wait inside a request (the app's lock) has the app between it and the pool.
  EXPECT_FALSE(idle(one({{"Thread::Mutex#sleep", kC}, {"Thread::ConditionVariable#wait", kC}, {"App#call", kApp},
                         {"Puma::Server#process_client", kServer}, {"Puma::ThreadPool#spawn_thread", kPuma}})));
  // A block's label as other tools (and older files) spell it.
  EXPECT_EQ(wait_of(one({{"Thread::Mutex#sleep", kC}, {"Thread::ConditionVariable#wait", kC}, {"block in Puma::ThreadPool#spawn_thread", kPuma}})),
            IdleWait::kPumaPool);
}

TEST(IdleWait, PumaReactorAcceptorAndAutomaton) {
  EXPECT_EQ(wait_of(one({{"NIO::Selector#select", kC}, {"Puma::Reactor#select_loop", kServer}, {"Puma::Reactor#run", kServer}})), IdleWait::kPumaReactor);
  EXPECT_EQ(wait_of(one({{"IO.select", kC}, {"Puma::Server#handle_servers", kServer}, {"Puma::Server#run", kServer}})), IdleWait::kPumaAcceptor);
  EXPECT_EQ(wait_of(one({{"Kernel#sleep", kC}, {"Puma::ThreadPool::Automaton#start!", kPuma}})), IdleWait::kPumaAutomaton);
  // The reactor's work after select returns, and a request's own IO.select, are not.
  EXPECT_FALSE(idle(one({{"Puma::Client#try_to_finish", kServer}, {"Puma::Reactor#select_loop", kServer}})));
  EXPECT_FALSE(idle(one({{"IO.select", kC}, {"App#call", kApp}, {"Puma::Server#handle_servers", kServer}})));
  // A client's body still being read (IO#wait_readable in eagerly_finish) is the request's.
  EXPECT_FALSE(idle(one({{"IO#wait_readable", kC}, {"Puma::Client#eagerly_finish", kServer}, {"Puma::Server#process_client", kServer},
                         {"Puma::ThreadPool#spawn_thread", kPuma}})));
}

TEST(IdleWait, SidekiqFetchHeartbeatAndPoller) {
  // The processor's blocking pop, as deep as redis-client reads it.
  Profile fetch = one({{"IO#wait_readable", kC}, {"RedisClient::RubyConnection::BufferedIO#fill_buffer", kRedis}, {"Kernel#loop", "<internal:kernel>"},
                       {"RedisClient::RubyConnection#read", kRedis}, {"RedisClient::ConnectionMixin#call", kRedis},
                       {"RedisClient#blocking_call", kRedis}, {"RedisClient::BasicMiddleware#call", kRedis}, {"RedisClient#blocking_call", kRedis},
                       {"RedisClient::Decorator::CommandsMixin#blocking_call", kRedis}, {"Sidekiq::BasicFetch#retrieve_work", kSidekiq},
                       {"ConnectionPool#with", kRedis}, {"Sidekiq::BasicFetch#retrieve_work", kSidekiq}, {"Sidekiq::Processor#get_one", kSidekiq},
                       {"Sidekiq::Processor#run", kSidekiq}});
  EXPECT_EQ(wait_of(fetch), IdleWait::kSidekiqFetch);
  // Connecting to Redis on the way is not a wait for a job.
  EXPECT_FALSE(idle(one({{"Socket#__connect_nonblock", kC}, {"RedisClient::RubyConnection#connect", kRedis},
                         {"Sidekiq::BasicFetch#retrieve_work", kSidekiq}, {"Sidekiq::Processor#run", kSidekiq}})));
  // A job's own blocking call runs under perform, not retrieve_work.
  EXPECT_FALSE(idle(one({{"IO#wait_readable", kC}, {"RedisClient#blocking_call", kRedis}, {"HardJob#perform", kApp},
                         {"Sidekiq::Processor#process", kSidekiq}, {"Sidekiq::Processor#run", kSidekiq}})));
  EXPECT_EQ(wait_of(one({{"Kernel#sleep", kC}, {"Sidekiq::Launcher#start_heartbeat", kSidekiq}, {"Kernel#loop", "<internal:kernel>"}})),
            IdleWait::kSidekiqHeartbeat);
  for (const char* waiter : {"Sidekiq::Scheduled::Poller#initial_wait", "Sidekiq::Scheduled::Poller#wait"}) {
    EXPECT_EQ(wait_of(one({{"Thread::Mutex#sleep", kC}, {"Thread::ConditionVariable#wait", kC}, {"ConnectionPool::TimedStack#pop", kRedis},
                           {"Kernel#loop", "<internal:kernel>"}, {"ConnectionPool::TimedStack#pop", kRedis}, {"Thread::Mutex#synchronize", kC},
                           {"ConnectionPool::TimedStack#pop", kRedis}, {waiter, kSidekiq}, {"Sidekiq::Scheduled::Poller#start", kSidekiq}})),
              IdleWait::kSidekiqPoller)
        << waiter;
  }
  // A job sleeping is the job's time.
  EXPECT_FALSE(idle(one({{"Kernel#sleep", kC}, {"SleepJob#perform", kApp}, {"Sidekiq::Processor#execute_job", kSidekiq}})));
}

TEST(IdleWait, QueuePopAtTheTopOfAThread) {
  const char* kSync = "<internal:thread_sync>";
  // Thread.new { loop { queue.pop.call } } in a method, in a script, and concurrent-ruby's worker.
  EXPECT_EQ(wait_of(one({{"Thread::Queue#pop", kSync}, {"Worker#start", kApp}, {"Kernel#loop", "<internal:kernel>"}, {"Worker#start", kApp}})),
            IdleWait::kQueuePop);
  EXPECT_EQ(wait_of(one({{"Thread::SizedQueue#pop", kSync}, {"block (2 levels) in <main>", kApp}, {"Kernel#loop", "<internal:kernel>"},
                         {"block in <main>", kApp}})),
            IdleWait::kQueuePop);
  EXPECT_EQ(wait_of(one({{"Thread::Queue#pop", kSync}, {"Concurrent::RubyThreadPoolExecutor::Worker#create_worker", kApp},
                         {"Kernel#loop", "<internal:kernel>"}, {"Concurrent::RubyThreadPoolExecutor::Worker#create_worker", kApp},
                         {"Kernel#catch", kC}, {"Concurrent::RubyThreadPoolExecutor::Worker#create_worker", kApp}})),
            IdleWait::kQueuePop);
  // A pop deeper in the program's code (waiting for a result) is the program's time.
  EXPECT_FALSE(idle(one({{"Thread::Queue#pop", kSync}, {"JobSupport.wait_for_jobs", kApp}, {"Integer#times", "<internal:numeric>"},
                         {"JobSupport.wait_for_jobs", kApp}, {"<main>", kApp}})));
  // A stack cut at max_depth has no top.
  EXPECT_FALSE(idle(one({{"Thread::Queue#pop", kSync}, {"Worker#start", kApp}, {"[truncated]", ""}})));
}

TEST(IdleWait, BusyWaitsAreNotIdle) {
  // A thread reading a response, sleeping in its own loop, joining a thread: the program's time.
  EXPECT_FALSE(idle(one({{"IO#read", kC}, {"Shop#download", kApp}, {"Object#main", kApp}})));
  EXPECT_FALSE(idle(one({{"Kernel#sleep", kC}, {"Object#main", kApp}})));
  EXPECT_FALSE(idle(one({{"Thread#join", kC}, {"Puma::Server#stop", kServer}})));
  EXPECT_FALSE(idle(one({{"IO.select", kC}})));
  EXPECT_FALSE(idle(one({})));
}

TEST(IdleWait, StateFromLabelsAndVmStateFrames) {
  // A Hash built by hand says the state with its labels; a profile recorded with
  // vm_state_frames has the state's frame as its leaf.
  Profile labelled = make_profile({{kC, "IO.select"}, {kServer, "Puma::Server#handle_servers"}},
                                  {{{0, 1}, 100, 1, 1, kRunning}, {{0, 1}, 50, 1, 0, kRunning}}, {{}, {{"%GVL", "blocked"}}});
  IdleSamples idle_of(labelled);
  EXPECT_TRUE(idle_of.idle(labelled.samples[0]));
  EXPECT_FALSE(idle_of.idle(labelled.samples[1]));
  EXPECT_EQ(wait_of(one({{"[GVL blocked]", kVmFramePath}, {"IO.select", kC}, {"Puma::Server#handle_servers", kServer}})), IdleWait::kPumaAcceptor);
}

// The one profile of the filters' tests: a Puma worker that served a request, then waited;
// a busy I/O thread off the GVL.
Profile server() {
  return make_profile({{kC, "Thread::Mutex#sleep"}, {kC, "Thread::ConditionVariable#wait"}, {kPuma, "Puma::ThreadPool#spawn_thread"},
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
  // Focused on ConditionVariable#wait, the pool's wait is [Mutex#sleep, CV#wait]: no longer the
  // pool's by its stack. The idle samples go first, so its 70 ms go, the 5 ms of GVL wait stay.
  Profile p = server();
  transform_stacks(p, {StackTransform{StackTransform::Op::kHideIdle, "", ""},
                       StackTransform{StackTransform::Op::kFocus, "Thread::ConditionVariable#wait", kC}});
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(p.samples[0].weight_ns, 5);
  Profile after = server();
  transform_stacks(after, {StackTransform{StackTransform::Op::kFocus, "Thread::ConditionVariable#wait", kC},
                           StackTransform{StackTransform::Op::kHideIdle, "", ""}});
  EXPECT_EQ(after.samples.size(), 2u) << "judged on the cut stacks, nothing is idle";
}

}  // namespace
}  // namespace rperf
