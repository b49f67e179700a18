// Threads' names (Ruby's Thread#name: "puma srv tp 001", "AR Pool Reaper"), kept as the header
// key "thread_names" so that every file and the Hash view carry them as any other key does
// (rperf 0.11.1 readers ignore a key they do not know):
//
//   "thread_names": [[thread_seq, name, time_ns], ...]       a merge adds the child's pid:
//                   [[thread_seq, name, time_ns, "pid"], ...]
//
// One entry per name a thread had, in the order seen; time_ns is when the name was seen (ns
// since the session started; 0: it had it at start). A thread's name in a view is its last.
// Ruby-independent.
#pragma once
#include <cstdint>
#include <string>
#include <map>
#include <utility>
#include <vector>

#include "profile/profile.hh"

namespace rperf {

inline constexpr const char* kThreadNamesKey = "thread_names";

struct ThreadName {
  uint32_t thread_seq = 0;
  std::string name;
  int64_t time_ns = 0;
  std::string pid;  // empty: the profile's own process
  bool operator==(const ThreadName& o) const {
    return thread_seq == o.thread_seq && name == o.name && time_ns == o.time_ns && pid == o.pid;
  }
};

// The entries the profile's header holds, in order; malformed entries (a hand-edited file) are
// skipped: a name is a label for the eye, never a reason to refuse a profile.
std::vector<ThreadName> thread_name_entries(const Profile& p);
// Replaces the header's key (none when `names` is empty).
void set_thread_name_entries(Profile& p, const std::vector<ThreadName>& names);
// The child's names appended to the root's, each with `pid` (merge_child).
void merge_thread_names(Profile& root, const Profile& child, const std::string& pid);

// Each thread's last name, by (process, thread_seq): a merged child's thread numbers are its
// own (pid: its %pid label's value; empty: the profile's own process).
class ThreadNames {
 public:
  explicit ThreadNames(const Profile& p);
  // Empty when the thread had no name.
  const std::string& of(uint32_t thread_seq, const std::string& pid = std::string()) const;
  // "thread 3 (puma srv tp 001)", or "thread 3" without a name: the one spelling of a thread
  // in text (reports, tables).
  std::string label(uint32_t thread_seq, const std::string& pid = std::string()) const;
  bool empty() const { return names_.empty(); }

 private:
  std::map<std::pair<std::string, uint32_t>, std::string> names_;
};

}  // namespace rperf
