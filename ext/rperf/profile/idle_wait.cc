#include "profile/idle_wait.hh"

#include <algorithm>
#include <string_view>

#include "profile/thread_index.hh"
#include "profile/transform.hh"

namespace rperf {

namespace {

// The labels the rules name, as tokens: a frame is read once into its token (kOther: none).
enum Token : int8_t {
  kOther = -1,
  kMutexSleep,
  kConditionWait,
  kPumaSpawnThread,
  kNioSelect,
  kPumaSelectLoop,
  kIoSelect,
  kPumaHandleServers,
  kKernelSleep,
  kPumaAutomatonStart,
  kRedisBlockingCall,
  kSidekiqRetrieveWork,
  kSidekiqHeartbeat,
  kTimedStackPop,
  kPollerWait,
  kPollerInitialWait,
  kQueuePop,
  kSizedQueuePop,
  kKernelLoop,
  kKernelCatch,
  kTokenCount,
};

constexpr std::string_view kTokenLabels[kTokenCount] = {
    "Thread::Mutex#sleep",
    "Thread::ConditionVariable#wait",
    "Puma::ThreadPool#spawn_thread",
    "NIO::Selector#select",
    "Puma::Reactor#select_loop",
    "IO.select",
    "Puma::Server#handle_servers",
    "Kernel#sleep",
    "Puma::ThreadPool::Automaton#start!",
    "RedisClient#blocking_call",
    "Sidekiq::BasicFetch#retrieve_work",
    "Sidekiq::Launcher#start_heartbeat",
    "ConnectionPool::TimedStack#pop",
    "Sidekiq::Scheduled::Poller#wait",
    "Sidekiq::Scheduled::Poller#initial_wait",
    "Thread::Queue#pop",
    "Thread::SizedQueue#pop",
    "Kernel#loop",
    "Kernel#catch",
};

// One step of a rule, from the leaf: a frame with one of two labels (b: kOther for one), any
// frames up to the next step's (kSkip), or the rest of the stack being the thread's top (kTop).
struct Step {
  enum Kind : uint8_t { kFrame, kSkip, kTop } kind;
  Token a = kOther, b = kOther;
};
constexpr Step frame(Token a, Token b = kOther) { return Step{Step::kFrame, a, b}; }
constexpr Step kAny{Step::kSkip};
constexpr Step kThreadTop{Step::kTop};

struct Rule {
  const char* name;
  Step steps[5];
  int count;
};

// The list of idle_wait.hh, in IdleWait's order.
const Rule kRules[static_cast<int>(IdleWait::kCount)] = {
    {"puma_pool", {frame(kMutexSleep), frame(kConditionWait), frame(kPumaSpawnThread)}, 3},
    {"puma_reactor", {frame(kNioSelect), frame(kPumaSelectLoop)}, 2},
    {"puma_acceptor", {frame(kIoSelect), frame(kPumaHandleServers)}, 2},
    {"puma_automaton", {frame(kKernelSleep), frame(kPumaAutomatonStart)}, 2},
    {"sidekiq_fetch", {kAny, frame(kRedisBlockingCall), kAny, frame(kSidekiqRetrieveWork)}, 4},
    {"sidekiq_heartbeat", {frame(kKernelSleep), frame(kSidekiqHeartbeat)}, 2},
    {"sidekiq_poller", {frame(kMutexSleep), frame(kConditionWait), frame(kTimedStackPop), kAny, frame(kPollerWait, kPollerInitialWait)}, 5},
    {"queue_pop", {frame(kQueuePop, kSizedQueuePop), kThreadTop}, 2},
};

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// A label without the "block in " / "block (N levels) in " Ruby puts before a block's method.
std::string_view method_label(std::string_view label) {
  if (starts_with(label, "block in ")) return label.substr(9);
  if (starts_with(label, "block (")) {
    size_t at = label.find(" levels) in ");
    if (at != std::string_view::npos) return label.substr(at + 12);
  }
  return label;
}

Token token_of(const Frame& f) {
  std::string_view label = method_label(f.label);
  for (int t = 0; t < kTokenCount; t++) {
    if (kTokenLabels[t] == label) return static_cast<Token>(t);
  }
  return kOther;
}

// Matches rule steps [step, count) against the stack's frames [at, n) (leaf first).
template <typename TokenAt>
bool match(const Profile& p, FrameSpan stack, size_t at, const Rule& rule, int step, TokenAt&& token_at) {
  if (step == rule.count) return true;
  const Step& s = rule.steps[step];
  switch (s.kind) {
    case Step::kFrame: {
      if (at >= stack.size()) return false;
      Token t = token_at(at);
      return t != kOther && (t == s.a || t == s.b) && match(p, stack, at + 1, rule, step + 1, token_at);
    }
    case Step::kSkip:
      for (size_t i = at; i < stack.size(); i++) {
        if (match(p, stack, i, rule, step + 1, token_at)) return true;
      }
      return false;
    case Step::kTop: {
      if (at >= stack.size()) return true;
      std::string_view top = method_label(p.frames[stack[stack.size() - 1]].label);
      for (size_t i = at; i < stack.size(); i++) {
        Token t = token_at(i);
        if (t != kKernelLoop && t != kKernelCatch && method_label(p.frames[stack[i]].label) != top) return false;
      }
      return true;
    }
  }
  return false;
}

template <typename TokenAt>
IdleWait classify(const Profile& p, FrameSpan stack, TokenAt&& token_at) {
  // A profile recorded with vm_state_frames has the state's frame as its leaf.
  size_t at = !stack.empty() && p.frames[stack[0]].path == kVmFramePath ? 1 : 0;
  if (at >= stack.size()) return IdleWait::kNone;
  for (int r = 0; r < static_cast<int>(IdleWait::kCount); r++) {
    if (match(p, stack, at, kRules[r], 0, token_at)) return static_cast<IdleWait>(r);
  }
  return IdleWait::kNone;
}

}  // namespace

const char* idle_wait_name(IdleWait wait) {
  int i = static_cast<int>(wait);
  return i >= 0 && i < static_cast<int>(IdleWait::kCount) ? kRules[i].name : "";
}

IdleWait idle_wait_of(const Profile& p, FrameSpan stack) {
  return classify(p, stack, [&](size_t i) { return token_of(p.frames[stack[i]]); });
}

IdleSamples::IdleSamples(const Profile& p) {
  std::vector<Token> token_of_frame(p.frames.size());
  for (uint32_t f = 0; f < p.frames.size(); f++) token_of_frame[f] = token_of(p.frames[f]);
  wait_of_stack_.resize(p.stacks.size(), IdleWait::kNone);
  for (uint32_t id = 0; id < p.stacks.size(); id++) {
    FrameSpan stack = p.stacks[id];
    // Every rule's leaf is a named frame or kAny: a stack whose frames name nothing is not idle.
    if (std::none_of(stack.begin(), stack.end(), [&](uint32_t f) { return token_of_frame[f] != kOther; })) continue;
    wait_of_stack_[id] = classify(p, stack, [&](size_t i) { return token_of_frame[stack[i]]; });
  }
  state_of_set_.reserve(p.label_sets.size());
  for (uint32_t i = 0; i < p.label_sets.size(); i++) state_of_set_.push_back(vm_state_of(p.label_sets[i]));
}

IdleWait IdleSamples::wait_of(const Sample& s) const {
  VmState state = s.vm_state != kRunning || s.label_set >= state_of_set_.size() ? s.vm_state : state_of_set_[s.label_set];
  if (state != kGvlBlocked || s.stack >= wait_of_stack_.size()) return IdleWait::kNone;
  return wait_of_stack_[s.stack];
}

std::vector<ThreadIdleTotal> thread_idle_totals(const Profile& p) {
  IdleSamples idle(p);
  std::vector<ThreadIdleTotal> out;
  ThreadIndex index;  // thread_seq -> into out
  for (const Sample& s : p.samples) {
    bool added;
    uint32_t i = index.find_or_add(s.thread_seq, added);
    if (added) out.push_back(ThreadIdleTotal{s.thread_seq, 0, 0});
    out[i].total_ns += s.weight_ns;
    if (idle.idle(s)) out[i].idle_ns += s.weight_ns;
  }
  std::sort(out.begin(), out.end(), [](const ThreadIdleTotal& a, const ThreadIdleTotal& b) { return a.thread_seq < b.thread_seq; });
  return out;
}

}  // namespace rperf
