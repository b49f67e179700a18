// A profile's frames as methods: a method is (path, label) whatever the line (ruby-prof's
// MethodInfo, rperf's functions) and starts at a frame's start_line, else at the lowest line
// sampled in it, else 0. The one folding of frames into methods: the call tree's and the method
// table's (views/method_paths), the text report's functions (views/functions), the Viewer's
// stack tree and "collapse recursion" (transform).
#pragma once
#include <cstdint>
#include <vector>

#include "profile/profile.hh"

namespace rperf {

struct FrameMethods {
  std::vector<uint32_t> of_frame;     // frame id -> method id (numbered in frame order)
  std::vector<uint32_t> first_frame;  // method id -> the first frame of it
  std::vector<int32_t> lines;         // method id -> where it starts
};

// `by_label`: a method is its label alone (methods of one name in different files are one, as
// rperf's summary and table views count them).
FrameMethods frame_methods(const Profile& p, bool by_label = false);

}  // namespace rperf
