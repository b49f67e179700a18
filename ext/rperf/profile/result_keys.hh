// The top-level keys of a result (the Ruby Hash and the JSON file) in rperf 0.11's order, which
// scripts and diffs of files see. Keys 0.11 does not have (ours) follow in the order they were
// set; the body keys (samples, label sets) are named here too, so both writers place them alike.
#pragma once

#include <cstddef>
#include <vector>

#include "profile/profile.hh"

namespace rperf {

// The order for this profile: a merge of processes, raw samples, or one aggregated process.
const std::vector<const char*>& result_key_order(const Profile& p);

// Frames referenced by the profile's samples (rperf's unique_frames).
size_t used_frame_count(const Profile& p);

}  // namespace rperf
