#include "views/stack_chart.hh"

#include <algorithm>

#include "views/timeline_bins.hh"

namespace rperf {

int32_t StackChartBuilder::frame(const std::string& label, const std::string& path) {
  auto [it, added] = index_.emplace(std::make_pair(label, path), static_cast<int32_t>(out_.frames.size()));
  if (added) out_.frames.emplace_back(label, path);
  return it->second;
}

void StackChartBuilder::add(int64_t weight, int64_t time, TimelineState state) {
  const int64_t from = sample_start_ns(time, weight);
  const bool continues = any_ && from - last_end_ <= weight;
  out_.samples++;
  any_ = true;
  // The sample's cells: its frames, then its VM state's leaf (taken off again at the end).
  const size_t frames = path_.size();
  if (path_.empty()) {
    if (no_frames_ < 0) no_frames_ = frame(kNoRubyFrames, "");
    path_.push_back(no_frames_);
  }
  if (state != kTimelineRunning) path_.push_back(-1 - state);
  size_t depth = 0;
  if (continues) {
    while (depth < path_.size() && depth < open_.size() && open_[depth].frame == path_[depth]) depth++;
  }
  close_from(depth);
  const int64_t opened_at = out_.total_ns;
  out_.total_ns += weight;
  for (; depth < path_.size(); depth++) {
    open_.push_back({out_.x.size(), path_[depth], opened_at});
    out_.x.push_back(from);
    out_.w.push_back(0);  // set when it closes
    out_.d.push_back(static_cast<uint32_t>(depth));
    out_.f.push_back(path_[depth]);
    out_.gap.push_back(0);
  }
  path_.resize(frames);
  last_end_ = time;
}

void StackChartBuilder::close_from(size_t depth) {
  while (open_.size() > depth) {
    const OpenCell& c = open_.back();
    const int64_t width = last_end_ - out_.x[c.cell];
    out_.w[c.cell] = width;
    out_.gap[c.cell] = width - (out_.total_ns - c.weight_before);
    open_.pop_back();
  }
}

StackCharts stack_charts(const Profile& p, const SampleFilter& filter, int64_t min_end_ns) {
  StackCharts out;
  out.end_ns = std::max<int64_t>(min_end_ns, 1);
  for (const Sample& s : p.samples) out.end_ns = std::max(out.end_ns, s.time_ns);

  // Kept samples by thread, each thread's in time order (ties: recorded order).
  std::map<uint32_t, std::vector<uint32_t>> by_thread;
  for (uint32_t i = 0; i < p.samples.size(); i++) {
    if (filter.keeps(p, p.samples[i])) by_thread[p.samples[i].thread_seq].push_back(i);
  }
  TimelineStates states(p);
  out.threads.reserve(by_thread.size());
  for (auto& [thread, rows] : by_thread) {
    auto earlier = [&](uint32_t a, uint32_t b) { return p.samples[a].time_ns < p.samples[b].time_ns; };
    // Rows come in time order but for a few: sorting them anyway was a fifth of the merge.
    if (!std::is_sorted(rows.begin(), rows.end(), earlier)) std::stable_sort(rows.begin(), rows.end(), earlier);
    out.threads.emplace_back();
    StackChart& chart = out.threads.back();
    chart.thread = thread;
    StackChartBuilder builder(chart);
    std::vector<int32_t> frame_of(p.frames.size(), -1);  // profile frame id -> chart frame
    for (uint32_t i : rows) {
      const Sample& s = p.samples[i];
      if (s.weight_ns <= 0) continue;
      FrameSpan stack = p.stacks[s.stack];
      std::vector<int32_t>& path = builder.path();
      path.clear();
      for (size_t k = stack.size(); k-- > 0;) {
        int32_t& known = frame_of[stack[k]];
        if (known < 0) known = builder.frame(p.frames[stack[k]].label, p.frames[stack[k]].path);
        path.push_back(known);
      }
      builder.add(s.weight_ns, s.time_ns, states.of(s));
    }
    builder.finish();
  }
  return out;
}

}  // namespace rperf
