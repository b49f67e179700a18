// The sampler's side of the profile model: a session's samples so far, resolved into a
// Profile (frames to strings, once per unique frame; live stack nodes to profile stacks).
// Called at stop and snapshot only, never on the sampling path. GVL held.
#pragma once
#include "profile/profile.hh"
#include "sampler/session.hh"

namespace rperf {

struct BuildOptions {
  bool clear = false;            // snapshot(clear: true): start a new interval
  bool vm_state_frames = false;  // VM states as synthetic leaf frames instead of labels
};

// Fills `out` (empty) with frames at line level; fold_lines() gives the method-level view.
// Ruby calls made here do not raise for valid frames; the caller owns `out` through a Ruby
// object, so nothing leaks if one ever does.
void build_profile(Session& s, const BuildOptions& opts, Profile& out);

}  // namespace rperf
