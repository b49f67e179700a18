// The Viewer's Source tab: the time of each line of one file, from the samples a filter keeps.
// self: the samples whose leaf frame is at that line; total: those with the line anywhere on
// their stack, counted once per sample (recursion does not count a line twice).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.hh"
#include "profile/sample_filter.hh"

namespace rperf {

struct LineWeight {
  int32_t line = 0;
  int64_t self_ns = 0;
  int64_t total_ns = 0;
};

struct SourceLines {
  std::vector<LineWeight> lines;  // by line; only lines some kept sample has on its stack
  int64_t kept_ns = 0;            // the kept samples' weight (their part of a range)
};

// Whether `path` is exactly the path of one of the profile's frames (the files the Source tab
// may read: no other file, however spelled).
bool has_frame_path(const Profile& p, const std::string& path);

// Per line of `path`, for a profile with lines (has_lines); empty lines otherwise.
SourceLines source_lines(const Profile& p, const SampleFilter& filter, const std::string& path);

}  // namespace rperf
