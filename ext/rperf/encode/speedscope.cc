// speedscope file format: one "sampled" profile per thread, weights in nanoseconds, samples
// root-first, frames shared as {name, file, line}.
#include <map>

#include "profile.hh"

namespace rperf {

std::string encode_speedscope(const Profile& p, const std::string& name) {
  std::string out = "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"shared\":{\"frames\":[";
  for (size_t i = 0; i < p.frames.size(); i++) {
    const ProfileFrame& f = p.frames[i];
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
  std::map<uint32_t, std::vector<const ProfileSample*>> by_thread;
  for (const ProfileSample& s : p.samples) by_thread[s.thread_seq].push_back(&s);
  bool first_profile = true;
  for (const auto& [thread, samples] : by_thread) {
    int64_t total = 0;
    for (const ProfileSample* s : samples) total += s->weight_ns;
    if (!first_profile) out += ',';
    first_profile = false;
    out += "{\"type\":\"sampled\",\"name\":";
    append_json_string(out, name + " thread " + std::to_string(thread));
    out += ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":";
    out += std::to_string(total);
    out += ",\"samples\":[";
    bool first = true;
    for (const ProfileSample* s : samples) {
      if (!first) out += ',';
      first = false;
      out += '[';
      for (size_t i = s->frames.size(); i-- > 0;) {
        out += std::to_string(s->frames[i]);
        if (i) out += ',';
      }
      out += ']';
    }
    out += "],\"weights\":[";
    first = true;
    for (const ProfileSample* s : samples) {
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
