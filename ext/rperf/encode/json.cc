// The sample body of the rperf JSON format: "aggregated_samples":[[frames, weight, thread_seq,
// label_set_id], ...],"label_sets":[...]. rperf 0.10 readers need every frame inline, so the
// body repeats them (252 MB for 100,000 stacks of depth 40): each frame's JSON is rendered
// once into one arena and copied per use, and the body streams into an Output.
#include "output.hh"
#include "profile.hh"

namespace rperf {

void encode_json_samples(const Profile& p, Output& out) {
  std::string arena;  // frame i is arena[offset[i], offset[i + 1])
  std::vector<size_t> offset(p.frames.size() + 1, 0);
  for (size_t i = 0; i < p.frames.size(); i++) {
    offset[i] = arena.size();
    arena += '[';
    append_json_string(arena, p.frames[i].path);
    arena += ',';
    append_json_string(arena, p.frames[i].label);
    if (p.has_lines) {
      arena += ',';
      arena += std::to_string(p.frames[i].line);
    }
    arena += ']';
  }
  offset[p.frames.size()] = arena.size();

  out.append("\"aggregated_samples\":[", 22);
  for (size_t n = 0; n < p.samples.size() && !out.failed(); n++) {
    const ProfileSample& s = p.samples[n];
    out.append(n ? ",[[" : "[[", n ? 3 : 2);
    for (size_t i = 0; i < s.frames.size(); i++) {
      if (i) out.append(',');
      uint32_t f = s.frames[i];
      out.append(arena.data() + offset[f], offset[f + 1] - offset[f]);
    }
    out.append("],", 2);
    out.append_int(s.weight_ns);
    out.append(',');
    out.append_int(s.thread_seq);
    out.append(',');
    out.append_int(s.label_set);
    out.append(']');
  }
  out.append("],\"label_sets\":[", 16);
  std::string sets;
  for (size_t i = 0; i < p.label_sets.size(); i++) {
    if (i) sets += ',';
    sets += '{';
    for (size_t k = 0; k < p.label_sets[i].size(); k++) {
      if (k) sets += ',';
      append_json_string(sets, p.label_sets[i][k].first);
      sets += ':';
      append_json_string(sets, p.label_sets[i][k].second);
    }
    sets += '}';
  }
  out.append(sets);
  out.append(']');
}

}  // namespace rperf
