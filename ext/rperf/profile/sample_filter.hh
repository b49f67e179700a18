// Which samples a view keeps, and how much of each: the one filter of the Viewer's tabs (served
// and in the page, compiled to WebAssembly: page/), the CLI's and the call tree's.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "profile/profile.hh"

namespace rperf {

class IdleSamples;  // profile/idle_wait.hh

// The samples a view keeps, and how much of each: every filter set must hold.
//   labels      the label set has every (key, value) given (compared by their text)
//   label_sets  the sample's label set id is one of these (the Viewer's label filter, whose
//               matching of the page's spelling is done once per label set)
//   thread      the sample's thread_seq; hidden_threads: thread_seqs left out
//   range       [from, to] in ns (raw samples): a sample covers [time - weight, time] and keeps
//               the part inside the range
//   hide_idle   the idle waits are left out (profile/idle_wait.hh: threads waiting for work;
//               the CLI's default, the Viewer's "hide idle threads")
struct SampleFilter {
  LabelSet labels;
  bool by_label_sets = false;
  std::vector<uint32_t> label_sets;  // sorted
  bool by_thread = false;
  uint32_t thread = 0;
  std::vector<uint32_t> hidden_threads;  // sorted
  bool by_range = false;
  int64_t from_ns = 0, to_ns = 0;
  bool hide_idle = false;

  // Whether `s` is kept; `weight` its kept weight (its own, or its part of the range).
  bool keeps(const Profile& p, const Sample& s, int64_t& weight) const;
  // hide_idle's IdleSamples of the profile, made once per profile by its owner instead of once
  // per filter (they are the same for every query of an unchanged profile).
  void share_idle(std::shared_ptr<const IdleSamples> idle) { idle_ = std::move(idle); }
  // The same for a row that is not a Profile's sample (the Viewer page's rows, page/page_rows.hh):
  // the filters on its own fields, its idleness as marked. `labels` does not apply (rows carry
  // label set ids: the page's label filter comes as label_sets).
  bool keeps_row(uint32_t thread_seq, uint32_t label_set, bool idle, int64_t time_ns, int64_t weight_ns, int64_t& weight) const {
    weight = weight_ns;
    if (by_thread && thread_seq != thread) return false;
    if (!hidden_threads.empty() && std::binary_search(hidden_threads.begin(), hidden_threads.end(), thread_seq)) return false;
    if (by_label_sets && !std::binary_search(label_sets.begin(), label_sets.end(), label_set)) return false;
    if (hide_idle && idle) return false;
    if (by_range) {
      int64_t from, to;
      if (!covered(time_ns, weight_ns, from, to)) return false;
      weight = to - from;
    }
    return true;
  }
  // The time a sample keeps: it covers [time - weight, time], and with a range only its part
  // inside [from_ns, to_ns]. False when that is empty.
  bool covered(int64_t time_ns, int64_t weight_ns, int64_t& from, int64_t& to) const {
    from = sample_start_ns(time_ns, weight_ns);
    to = time_ns;
    if (by_range) {
      from = std::max(from, from_ns);
      to = std::min(to, to_ns);
    }
    return to > from;
  }
  bool keeps(const Profile& p, const Sample& s) const {
    int64_t weight;
    return keeps(p, s, weight);
  }

 private:
  bool labels_match(const Profile& p, const Sample& s) const;
  mutable std::vector<int8_t> kept_;  // by label set id: -1 unknown, 0 or 1
  mutable std::shared_ptr<const IdleSamples> idle_;  // hide_idle's, made on first use
};

}  // namespace rperf
