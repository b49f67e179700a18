#include "profile/result_keys.hh"

namespace rperf {

const std::vector<const char*>& result_key_order(const Profile& p) {
  static const std::vector<const char*> aggregate = {
      "mode", "frequency", "trigger_count", "sampling_count", "sampling_time_ns", "dropped_samples",
      "dropped_aggregation", "detected_thread_count", "unique_frames", "unique_stacks", "start_time_ns",
      "duration_ns", "aggregated_samples", "label_sets", "user_ns", "sys_ns", "gc_stats", "maxrss_mb"};
  static const std::vector<const char*> raw = {
      "mode", "frequency", "trigger_count", "sampling_count", "sampling_time_ns", "dropped_samples",
      "dropped_aggregation", "detected_thread_count", "start_time_ns", "duration_ns", "raw_samples", "user_ns",
      "sys_ns", "gc_stats", "maxrss_mb", "aggregated_samples", "label_sets"};
  static const std::vector<const char*> merged = {
      "mode", "frequency", "aggregated_samples", "label_sets", "trigger_count", "sampling_count",
      "sampling_time_ns", "duration_ns", "total_duration_ns", "user_ns", "sys_ns", "process_count", "gc_stats",
      "maxrss_mb"};
  if (p.header.has("process_count")) return merged;  // the key, as before, whatever its value
  return p.timestamps ? raw : aggregate;
}

size_t used_frame_count(const Profile& p) {
  std::vector<bool> used(p.frames.size(), false);
  std::vector<bool> stack_seen(p.stacks.size(), false);
  size_t n = 0;
  for (const Sample& s : p.samples) {
    if (stack_seen[s.stack]) continue;
    stack_seen[s.stack] = true;
    for (uint32_t f : p.stacks[s.stack]) {
      if (!used[f]) {
        used[f] = true;
        n++;
      }
    }
  }
  return n;
}

}  // namespace rperf
