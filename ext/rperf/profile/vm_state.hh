// The VM states a sample can be in, and the names they are reported under: the one definition
// (the sampler records them, the profile model turns them into labels or synthetic frames, the
// summary and the stat breakdown group by them).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rperf {

enum VmState : uint8_t { kRunning = 0, kGvlBlocked = 1, kGvlWait = 2, kGcMark = 3, kGcSweep = 4 };
constexpr int kVmStateCount = 5;

struct VmStateNames {
  const char* name;         // the state's own name ("running", "gvl_blocked", ...): Ruby's Symbol for it
  const char* label_key;    // "%GVL" / "%GC" (nullptr for kRunning)
  const char* label_value;  // "blocked", "wait", "mark", "sweep"
  const char* frame_label;  // synthetic leaf frame with vm_state_frames: "[GVL blocked]", ...
};

inline const VmStateNames& vm_state_names(VmState state) {
  static constexpr VmStateNames kNames[kVmStateCount] = {
      {"running", nullptr, nullptr, nullptr},
      {"gvl_blocked", "%GVL", "blocked", "[GVL blocked]"},
      {"gvl_wait", "%GVL", "wait", "[GVL wait]"},
      {"gc_mark", "%GC", "mark", "[GC marking]"},
      {"gc_sweep", "%GC", "sweep", "[GC sweeping]"},
  };
  return kNames[state < kVmStateCount ? state : 0];
}

// The path of the synthetic VM-state frames.
constexpr const char* kVmFramePath = "<VM>";
// Label keys the profiler sets itself (besides the VM-state keys above).
constexpr const char* kPidLabelKey = "%pid";
// On the samples of another Ractor's threads: the Ractor's id (Ractor#inspect's "#N").
constexpr const char* kRactorLabelKey = "%ractor";
// Name given to samples without any Ruby frame (a thread starting or exiting) by the formats
// that cannot represent an empty stack.
constexpr const char* kNoRubyFrames = "(no Ruby frames)";
// The root-side frame of a stack cut at max_depth.
constexpr const char* kTruncatedFrame = "[truncated]";
// The one frame of a thread's time before its first Ruby frame, when no later stack of the
// thread takes it (sampler/thread_timeline.hh): the sampler records no empty stack.
constexpr const char* kThreadStartFrame = "[thread start]";

// The Viewer's four states, in its order (viewer.js STATES): the Timeline's, the Threads tab's,
// the stack chart's leaf cells and the page's state sums.
enum TimelineState : uint8_t { kTimelineRunning = 0, kTimelineBlocked = 1, kTimelineWait = 2, kTimelineGc = 3 };
constexpr int kTimelineStates = 4;

// A VM state's (kTimelineRunning for kRunning).
inline TimelineState timeline_state(VmState state) {
  switch (state) {
    case kGvlBlocked: return kTimelineBlocked;
    case kGvlWait: return kTimelineWait;
    case kGcMark:
    case kGcSweep: return kTimelineGc;
    default: return kTimelineRunning;
  }
}

// A label set's, from its labels' text ((key, value) pairs): %GVL=blocked, %GVL=wait, any %GC,
// else running.
inline TimelineState timeline_state(const std::vector<std::pair<std::string, std::string>>& labels) {
  bool gc = false;
  for (const auto& [key, value] : labels) {
    if (key == vm_state_names(kGvlBlocked).label_key) {
      if (value == vm_state_names(kGvlBlocked).label_value) return kTimelineBlocked;
      if (value == vm_state_names(kGvlWait).label_value) return kTimelineWait;
    } else if (key == vm_state_names(kGcMark).label_key) {
      gc = true;
    }
  }
  return gc ? kTimelineGc : kTimelineRunning;
}

}  // namespace rperf
