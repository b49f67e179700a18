#include "profile/sample_filter.hh"

#include <algorithm>

#include "profile/idle_wait.hh"
#include "profile/label_value.hh"

namespace rperf {

bool SampleFilter::keeps(const Profile& p, const Sample& s, int64_t& weight) const {
  weight = s.weight_ns;
  if (!labels_match(p, s)) return false;
  bool idle = false;
  if (hide_idle) {
    if (!idle_) idle_ = std::make_shared<const IdleSamples>(p);
    idle = idle_->idle(s);
  }
  return keeps_row(s.thread_seq, s.label_set, idle, s.time_ns, s.weight_ns, weight);
}

bool SampleFilter::labels_match(const Profile& p, const Sample& s) const {
  if (labels.empty()) return true;
  if (kept_.size() != p.label_sets.size()) kept_.assign(p.label_sets.size(), -1);
  int8_t& known = kept_[s.label_set];
  if (known >= 0) return known;
  // Keys and values compare by their text (label_value::to_s), whatever their types.
  const LabelSet& set = p.label_sets[s.label_set];
  known = std::all_of(labels.begin(), labels.end(), [&](const Label& wanted) {
    return std::any_of(set.begin(), set.end(), [&](const Label& l) {
      return label_value::to_s(l.key) == label_value::to_s(wanted.key) && label_value::to_s(l.value) == label_value::to_s(wanted.value);
    });
  });
  return known;
}

}  // namespace rperf
