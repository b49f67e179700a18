// speedscope file format: one "sampled" profile per thread (named with its Thread#name when it
// had one), weights in nanoseconds, samples root-first, frames shared as {name, file, line}.
// Raw samples (aggregate: false) are in time order, so speedscope's Time Order view is the
// thread's real sequence; aggregated ones are one per distinct stack.
#include <algorithm>
#include <map>

#include "io/encoders.hh"
#include "profile/thread_names.hh"

namespace rperf {

std::string encode_speedscope(const Profile& p, const std::string& name) {
  std::string out = "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"shared\":{\"frames\":[";
  for (size_t i = 0; i < p.frames.size(); i++) {
    const Frame& f = p.frames[static_cast<uint32_t>(i)];
    if (i) out += ',';
    out += "{\"name\":";
    append_json_string(out, f.label);
    out += ",\"file\":";
    append_json_string(out, f.path);
    if (f.line > 0) {
      out += ",\"line\":";
      out += std::to_string(f.line);
    }
    out += '}';
  }
  out += "]},\"profiles\":[";
  std::map<uint32_t, std::vector<const Sample*>> by_thread;
  for (const Sample& s : p.samples) by_thread[s.thread_seq].push_back(&s);
  if (p.timestamps) {
    for (auto& [thread, samples] : by_thread) {
      std::stable_sort(samples.begin(), samples.end(), [](const Sample* a, const Sample* b) { return a->time_ns < b->time_ns; });
    }
  }
  const ThreadNames names(p);
  bool first_profile = true;
  for (const auto& [thread, samples] : by_thread) {
    int64_t total = 0;
    for (const Sample* s : samples) total += s->weight_ns;
    if (!first_profile) out += ',';
    first_profile = false;
    out += "{\"type\":\"sampled\",\"name\":";
    const std::string& thread_name = names.of(thread);
    append_json_string(out, name + " thread " + std::to_string(thread) + (thread_name.empty() ? "" : " (" + thread_name + ")"));
    out += ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":";
    out += std::to_string(total);
    out += ",\"samples\":[";
    bool first = true;
    for (const Sample* s : samples) {
      if (!first) out += ',';
      first = false;
      out += '[';
      FrameSpan frames = p.stacks[s->stack];
      for (size_t i = frames.size(); i-- > 0;) {
        out += std::to_string(frames[i]);
        if (i) out += ',';
      }
      out += ']';
    }
    out += "],\"weights\":[";
    first = true;
    for (const Sample* s : samples) {
      if (!first) out += ',';
      first = false;
      out += std::to_string(s->weight_ns);
    }
    out += "]}";
  }
  out += "],\"name\":";
  append_json_string(out, name);
  out += ",\"activeProfileIndex\":0,\"exporter\":\"rperf\"}";
  return out;
}

}  // namespace rperf
