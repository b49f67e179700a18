// rperf 0.11's names-only samples (Rperf::Viewer.samples_to_json: each a stack of names, root
// first, a weight and a label set id), which a page's custom data source
// (window.RPERF_DATA_SOURCE) may hand it, made the model's stack tree (build_stack_tree) with one
// row per sample in its order, as the server makes a payload's: the page builds no tree itself.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "profile/stack_tree.hh"

namespace rperf::page {

struct NamesSample {
  std::vector<std::string> stack;  // root first; empty: no Ruby frames
  int64_t weight = 0;
  uint32_t label_set = 0;
};

// Frames are (name, no path); every sample is thread 0's.
StackTree names_tree(const std::vector<NamesSample>& samples);

}  // namespace rperf::page
