// The sample body of the rperf JSON format: "aggregated_samples":[[frames, weight, thread_seq,
// label_set_id], ...],"label_sets":[...]. Each frame's JSON is built once and copied per use.
#include "profile.hh"

namespace rperf {

std::string encode_json_samples(const Profile& p) {
  std::vector<std::string> frame_json(p.frames.size());
  for (size_t i = 0; i < p.frames.size(); i++) {
    std::string& j = frame_json[i];
    j += '[';
    append_json_string(j, p.frames[i].path);
    j += ',';
    append_json_string(j, p.frames[i].label);
    if (p.has_lines) {
      j += ',';
      j += std::to_string(p.frames[i].line);
    }
    j += ']';
  }
  size_t size = 64;
  for (const ProfileSample& s : p.samples) {
    size += 48;
    for (uint32_t f : s.frames) size += frame_json[f].size() + 1;
  }
  std::string out;
  out.reserve(size);
  out += "\"aggregated_samples\":[";
  bool first = true;
  for (const ProfileSample& s : p.samples) {
    if (!first) out += ',';
    first = false;
    out += "[[";
    for (size_t i = 0; i < s.frames.size(); i++) {
      if (i) out += ',';
      out += frame_json[s.frames[i]];
    }
    out += "],";
    out += std::to_string(s.weight_ns);
    out += ',';
    out += std::to_string(s.thread_seq);
    out += ',';
    out += std::to_string(s.label_set);
    out += ']';
  }
  out += "],\"label_sets\":[";
  for (size_t i = 0; i < p.label_sets.size(); i++) {
    if (i) out += ',';
    out += '{';
    for (size_t k = 0; k < p.label_sets[i].size(); k++) {
      if (k) out += ',';
      append_json_string(out, p.label_sets[i][k].first);
      out += ':';
      append_json_string(out, p.label_sets[i][k].second);
    }
    out += '}';
  }
  out += ']';
  return out;
}

}  // namespace rperf
