// The encoders: a Profile (profile/profile.hh) to a file format. The small formats return the
// file body; the two that grow with the number of stacks (hundreds of MB for large profiles)
// stream into an Output (output.hh).
#pragma once
#include <string>
#include <vector>

#include "profile/profile.hh"
#include "util/utf8.hh"

namespace rperf {

class Output;

// profile.proto; read back by load_pprof_profile (io/loader.hh). With allocation samples, the
// comments end with kPprofAllocationComment and the interval, which the reader reads.
std::string encode_pprof(const Profile& p, const std::vector<std::string>& comments);
constexpr const char* kPprofAllocationComment = "allocations: one in ";
std::string encode_speedscope(const Profile& p, const std::string& name);
std::string encode_text(const Profile& p, int top_n, bool header = true);  // flat + cumulative tables
// Allocation sites and classes; `interval_guessed`: the file did not name the interval (a
// pprof file read back), so the header says it is an estimate.
std::string encode_allocation_text(const Profile& p, int top_n, bool interval_guessed = false);
// "root;...;leaf weight\n"; `allocations`: objects allocated per stack, the class as leaf.
void encode_collapsed(const Profile& p, Output& out, bool allocations = false);
// Callgrind format (KCachegrind, callgrind_annotate): self costs by line, calls with inclusive costs.
void encode_callgrind(const Profile& p, Output& out);
// The rperf JSON document: meta and summary first (read_meta stops there), the attributes,
// then raw_samples (with timestamps), aggregated_samples, label_sets, and `trailer`'s members.
void encode_json(const Profile& p, const JsonValue& trailer, Output& out);
// The Firefox Profiler's processed profile (JSON, version 55): a track per thread and process,
// samples with times and weights, GVL/GC states and labels as interval markers (firefox.cc).
struct FirefoxOptions {
  std::string product;   // shown as the profile's name; default "rperf <mode>"
  std::string root_pid;  // the pid of the process whose samples have no %pid label
};
void encode_firefox(const Profile& p, const FirefoxOptions& options, Output& out);

// Shared helpers.
void append_json_string(std::string& out, const std::string& s);  // quoted, escaped, valid UTF-8
void append_json_value(std::string& out, const JsonValue& v);
// A number's text ("-1234567.8") with its whole part grouped by thousands ("-1,234,567.8"), as
// the text reports print counts and milliseconds.
std::string grouped_thousands(std::string number);

}  // namespace rperf
