// The rperf JSON document, written entirely here:
//   {"meta":{...},"summary":{...}, <header keys and body in rperf 0.11's order (result_keys.hh):
//    "raw_samples":[[frames, weight, thread_seq, label_set_id, vm_state, time_ns], ...],
//    "aggregated_samples":[[frames, weight, thread_seq, label_set_id], ...], "label_sets":[...]>,
//    <our header keys, in the order set>, with allocation profiling "allocation_samples":[[frames, count, thread_seq,
//    label_set_id, class_name, retained_count], ...] (and with timestamps "raw_allocation_samples",
//    each with its time_ns last), "function_start_lines":[...], <trailer: rperf_version, pid, ppid of the writer>}
// meta and summary come first so read_meta can stop there. rperf 0.10/0.11 readers need every
// frame inline, so the body repeats them (252 MB for 100,000 stacks of depth 40): each frame's
// JSON is rendered once into one arena and copied per use, and the body streams into an Output.
#include <cmath>

#include "io/encoders.hh"
#include "io/output.hh"
#include "profile/label_value.hh"
#include "profile/result_keys.hh"
#include "profile/transform.hh"
#include "views/functions.hh"
#include "views/summary.hh"

namespace rperf {

namespace {

class FrameArena {
 public:
  explicit FrameArena(const Profile& p) : offset_(p.frames.size() + 1, 0) {
    for (uint32_t i = 0; i < p.frames.size(); i++) {
      const Frame& f = p.frames[i];
      offset_[i] = text_.size();
      text_ += '[';
      append_json_string(text_, f.path);
      text_ += ',';
      append_json_string(text_, f.label);
      if (p.has_lines) {
        text_ += ',';
        text_ += std::to_string(f.line);
      }
      text_ += ']';
    }
    offset_[p.frames.size()] = text_.size();
  }
  void write_stack(Output& out, FrameSpan frames) const {
    out.append('[');
    for (size_t i = 0; i < frames.size(); i++) {
      if (i) out.append(',');
      uint32_t f = frames[i];
      out.append(text_.data() + offset_[f], offset_[f + 1] - offset_[f]);
    }
    out.append(']');
  }

 private:
  std::string text_;  // frame i is text_[offset_[i], offset_[i + 1])
  std::vector<size_t> offset_;
};

void write_samples(Output& out, const Profile& p, const FrameArena& arena, const std::vector<Sample>& samples, bool raw) {
  UserLabelSets user_sets(p);  // raw rows: the user's labels, the VM state apart (rperf 0.11)
  for (size_t n = 0; n < samples.size() && !out.failed(); n++) {
    const Sample& s = samples[n];
    out.append(n ? ",[" : "[", n ? 2 : 1);
    arena.write_stack(out, p.stacks[s.stack]);
    out.append(',');
    out.append_int(s.weight_ns);
    out.append(',');
    out.append_int(s.thread_seq);
    out.append(',');
    out.append_int(raw ? user_sets.of(s) : s.label_set);
    if (raw) {
      out.append(',');
      out.append_int(s.vm_state);
      out.append(',');
      out.append_int(s.time_ns);
    }
    out.append(']');
  }
}

void write_allocations(Output& out, const Profile& p, const FrameArena& arena, const std::vector<AllocationSample>& rows, bool raw) {
  out.append(raw ? ",\"raw_allocation_samples\":[" : ",\"allocation_samples\":[");
  for (size_t n = 0; n < rows.size() && !out.failed(); n++) {
    const AllocationSample& a = rows[n];
    out.append(n ? ",[" : "[", n ? 2 : 1);
    arena.write_stack(out, p.stacks[a.stack]);
    std::string rest = "," + std::to_string(a.count) + "," + std::to_string(a.thread_seq) + "," + std::to_string(a.label_set) + ",";
    append_json_string(rest, p.class_names[static_cast<uint32_t>(a.type)]);
    rest += p.retained_measured ? "," + std::to_string(a.retained) : std::string(",null");
    if (raw) rest += "," + std::to_string(a.time_ns);
    rest += ']';
    out.append(rest);
  }
  out.append(']');
}

// A label key or value as JSON (rperf 0.11 writes them with JSON.generate): Symbols as strings,
// a Hash's keys by their text; NaN and the infinities, which JSON lacks, as their text.
void append_label_json(std::string& out, std::string_view v, int depth = 0) {
  namespace lv = label_value;
  switch (lv::type_of(v)) {
    case lv::kString:
    case lv::kSymbol: append_json_string(out, std::string(lv::text_of(v))); return;
    case lv::kInteger: out.append(lv::text_of(v).data(), lv::text_of(v).size()); return;
    case lv::kFloat: {
      double d = lv::real_of(v);
      if (std::isfinite(d)) out += lv::float_to_s(d);
      else append_json_string(out, lv::float_to_s(d));
      return;
    }
    case lv::kTrue: out += "true"; return;
    case lv::kFalse: out += "false"; return;
    case lv::kNil: out += "null"; return;
    case lv::kArray:
    case lv::kHash: {
      const bool hash = lv::type_of(v) == lv::kHash;
      std::vector<std::string_view> items = lv::items_of(v);
      out += hash ? '{' : '[';
      for (size_t i = 0; i < items.size(); i++) {
        if (i) out += hash && i % 2 ? ':' : ',';
        if (hash && i % 2 == 0) append_json_string(out, lv::to_s(items[i]));
        else append_label_json(out, items[i], depth + 1);
      }
      out += hash ? '}' : ']';
      return;
    }
  }
}

std::string label_sets_json(const Profile& p) {
  std::string sets = "[";
  for (uint32_t i = 0; i < p.label_sets.size(); i++) {
    if (i) sets += ',';
    sets += '{';
    const LabelSet& set = p.label_sets[i];
    for (size_t k = 0; k < set.size(); k++) {
      if (k) sets += ',';
      append_json_string(sets, label_value::to_s(set[k].key));
      sets += ':';
      append_label_json(sets, set[k].value);
    }
    sets += '}';
  }
  return sets + ']';
}

std::string start_lines_json(const Profile& p) {
  std::string out = "[";
  for (uint32_t i : start_line_frames(p)) {
    const Frame& f = p.frames[i];
    if (out.size() > 1) out += ',';
    out += '[';
    append_json_string(out, f.path);
    out += ',';
    append_json_string(out, f.label);
    out += ',' + std::to_string(f.start_line) + ']';
  }
  return out + ']';
}

}  // namespace

void encode_json(const Profile& p, const JsonValue& trailer, Output& out) {
  std::string head = "{\"meta\":";
  append_json_value(head, p.header.meta);
  head += ",\"summary\":";
  append_json_value(head, p.header.summary.is_null() ? summarize(p) : p.header.summary);
  // rperf 0.11's key order (profile/result_keys.hh); the header's other keys follow it.
  auto write_attribute = [&](const std::string& key, const JsonValue& value) {
    out.append(",", 1);
    std::string kv;
    append_json_string(kv, key);
    kv += ':';
    append_json_value(kv, value);
    out.append(kv);
  };
  FrameArena arena(p);
  out.append(head);
  // The header's keys by name (typed fields and extras), in the order they were set.
  const std::vector<JsonValue::Member> attributes = p.header.members();
  auto attribute = [&](const std::string& key) -> const JsonValue* {
    for (const JsonValue::Member& m : attributes) {
      if (m.first == key) return &m.second;
    }
    return nullptr;
  };
  const std::vector<const char*>& order = result_key_order(p);
  for (const char* key : order) {
    std::string k = key;
    if (k == "aggregated_samples") {
      out.append(",\"aggregated_samples\":[", 23);
      write_samples(out, p, arena, p.timestamps ? p.aggregated_samples() : p.samples, false);
      out.append(']');
    } else if (k == "raw_samples") {
      out.append(",\"raw_samples\":[", 16);
      write_samples(out, p, arena, p.samples, true);
      out.append(']');
    } else if (k == "label_sets") {
      out.append(",\"label_sets\":", 14);
      out.append(label_sets_json(p));
    } else if (k == "unique_frames") {
      write_attribute(k, JsonValue::integer(static_cast<int64_t>(used_frame_count(p))));
    } else if (k == "unique_stacks") {
      write_attribute(k, JsonValue::integer(static_cast<int64_t>(p.stacks.size())));
    } else if (const JsonValue* v = attribute(k)) {
      write_attribute(k, *v);
    }
  }
  // The trailer (the writer's rperf_version, pid, ppid) replaces the same keys of a loaded
  // profile, as rperf 0.11's Hash#merge does: a key appears once (strict readers reject twice).
  auto in_trailer = [&](const std::string& key) { return trailer.get(key) != nullptr; };
  for (const JsonValue::Member& m : attributes) {
    bool placed = false;
    for (const char* key : order) placed = placed || m.first == key;
    if (!placed && !in_trailer(m.first)) write_attribute(m.first, m.second);
  }
  if (p.has_allocations()) {
    write_allocations(out, p, arena, p.timestamps ? p.aggregated_allocations() : p.allocations, false);
    if (p.timestamps) write_allocations(out, p, arena, p.allocations, true);
  }
  out.append(",\"function_start_lines\":" + start_lines_json(p));
  std::string tail;
  for (const JsonValue::Member& m : trailer.members()) {
    tail += ',';
    append_json_string(tail, m.first);
    tail += ':';
    append_json_value(tail, m.second);
  }
  out.append(tail);
  out.append('}');
}

}  // namespace rperf
