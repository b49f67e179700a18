// The operations on a profile, each in one place: line -> method folding, VM states as labels
// or frames, aggregation, and merging a child process's profile into its root's.
#pragma once
#include <string>

#include "profile/profile.hh"

namespace rperf {

// Frames that differ only by line become one method-level frame (line 0); samples are merged
// again. No-op when the profile has no lines.
void fold_lines(Profile& p);

// Samples in a GVL/GC state get the state as a label (%GVL=blocked, ...: rperf's shape) or,
// with `as_frames`, as a synthetic leaf frame ([GVL blocked], ...) for viewers without labels.
void apply_vm_states(Profile& p, bool as_frames);

// The VM state of each sample from its labels or synthetic leaf frame (loaded profiles).
void infer_vm_states(Profile& p);

// Merges samples (time and allocation) by key and drops the per-sample times.
void aggregate(Profile& p);

// Appends `child`'s samples to `root`, its label sets given `%pid=<pid>`, raw times on the
// root's clock (by start_time_ns); counters add up.
void merge_child(Profile& root, const Profile& child, const std::string& pid);

}  // namespace rperf
