// A finished profile as plain C++ data: the input of every encoder. Built from a result Hash
// by the Ruby binding, or directly by tests and benchmarks.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rperf {

struct ProfileFrame {
  std::string path;
  std::string label;
  int32_t line = 0;        // 0 when unknown (method-level results, C methods)
  int32_t start_line = 0;  // first line of the method's definition, 0 when unknown
};

struct ProfileSample {
  std::vector<uint32_t> frames;  // indexes into Profile::frames, leaf first
  int64_t weight_ns = 0;
  uint32_t thread_seq = 0;
  uint32_t label_set = 0;
};

using LabelSet = std::vector<std::pair<std::string, std::string>>;

struct Profile {
  std::string mode = "cpu";  // "cpu" or "wall"
  int frequency = 1000;
  int64_t start_time_ns = 0;  // Unix epoch
  int64_t duration_ns = 0;
  int64_t sampling_count = -1;  // timer samples taken; -1 when unknown
  std::vector<ProfileFrame> frames;
  std::vector<ProfileSample> samples;
  std::vector<LabelSet> label_sets;  // index = label_set id; [0] is normally empty
  std::vector<std::string> comments;
  bool has_lines = false;  // frames are [path, label, line] in the JSON body

  int64_t total_weight() const {
    int64_t t = 0;
    for (const auto& s : samples) t += s.weight_ns;
    return t;
  }
};

// Name given to samples without any Ruby frame (a thread starting or exiting) by the formats
// that cannot represent an empty stack.
constexpr const char* kNoRubyFrames = "(no Ruby frames)";

class Output;

// Encoders. The small formats return the file body; the two that grow with the number of
// stacks (hundreds of MB for large profiles) stream into an Output (output.hh).
std::string encode_pprof(const Profile& p);            // perftools.profiles.Profile protobuf
std::string encode_speedscope(const Profile& p, const std::string& name);
std::string encode_text(const Profile& p, int top_n);  // flat + cumulative tables
void encode_collapsed(const Profile& p, Output& out);     // "root;...;leaf weight\n"
void encode_json_samples(const Profile& p, Output& out);  // "aggregated_samples":[...],"label_sets":[...]

// Shared helpers.
void append_json_string(std::string& out, const std::string& s);  // quoted, escaped, valid UTF-8
std::string valid_utf8(const std::string& s);                     // invalid bytes -> U+FFFD

}  // namespace rperf
