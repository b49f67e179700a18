// Per-function totals of a profile: a function is (label, path) whatever the line; its self
// weight is the weight of samples whose leaf it is, its total weight counts each sample once
// however often the function recurses in it. Read by the text report and the summary.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "profile/profile.hh"

namespace rperf {

// Self and total weights per function, one sample at a time: its weight is its leaf's self and
// counts once in the total of every function on its stack however often that one recurs in it.
// The one rule of the text report's functions and of the method table's entries.
class SelfTotals {
 public:
  explicit SelfTotals(size_t functions) : self_ns(functions, 0), total_ns(functions, 0), recursive(functions, 0), seen_in_(functions, 0) {}
  // A sample ending in `leaf` whose stack's functions each_function(visit) visits (any order).
  // True when one of them is on it more than once.
  template <typename EachFunction>
  bool add(uint32_t leaf, int64_t weight, EachFunction&& each_function) {
    sample_++;
    self_ns[leaf] += weight;
    bool repeats = false;
    each_function([&](uint32_t fn) {
      if (seen_in_[fn] == sample_) {
        recursive[fn] = 1;
        repeats = true;
        return;
      }
      seen_in_[fn] = sample_;
      total_ns[fn] += weight;
    });
    return repeats;
  }

  std::vector<int64_t> self_ns;
  std::vector<int64_t> total_ns;
  std::vector<uint8_t> recursive;  // on some sample's stack more than once

 private:
  std::vector<uint64_t> seen_in_;  // per function: the last sample it was counted in
  uint64_t sample_ = 0;
};

struct FunctionTotals {
  std::vector<uint32_t> first_frame;  // function index -> a frame naming it
  std::vector<int64_t> self_ns;
  std::vector<int64_t> total_ns;
  int64_t grand_total_ns = 0;
};

// `by_name`: functions are labels alone (methods of the same name in different files merge,
// as rperf's summary and table views count them).
FunctionTotals function_totals(const Profile& p, bool by_name = false);

// The same over allocation samples: objects allocated (or, with `retained`, still alive) per
// function, by allocating site (self) and by caller (total). Weights are object counts.
FunctionTotals allocation_totals(const Profile& p, bool retained = false);

// (class name id, objects) heaviest first, classes with objects only.
std::vector<std::pair<uint32_t, int64_t>> class_totals(const Profile& p, bool retained = false);

// Function indexes with a non-zero `weights` entry, heaviest first (ties by label, then path).
std::vector<uint32_t> top_functions(const Profile& p, const FunctionTotals& t, const std::vector<int64_t>& weights, size_t n);

// The profile's function_start_lines: per method (path and label) that has a start line, the
// first frame carrying it, in frame order (what the JSON file and the Hash view list).
std::vector<uint32_t> start_line_frames(const Profile& p);

}  // namespace rperf
