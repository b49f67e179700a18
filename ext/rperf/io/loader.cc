// JSON -> Profile. The reader builds a small DOM in which identical frame arrays (4 million
// occurrences of 20,000 frames in the benchmark profile) are one node, parsed once; the
// profile is then built from the DOM, looking frames up by node.
#include "io/loader.hh"

#include <charconv>
#include <cstdlib>
#include <deque>
#include <unordered_map>

#include "io/gzip.hh"
#include "io/json_reader.hh"
#include "io/text_table.hh"
#include "profile/transform.hh"

namespace rperf {

namespace {

struct Node {
  JsonValue::Kind kind = JsonValue::Kind::kNull;
  int64_t integer = 0;
  double real = 0;
  std::string text;
  std::vector<Node*> items;
  std::vector<std::pair<Node*, Node*>> members;  // key nodes are strings
  const Node* get(const char* key) const {
    for (const auto& m : members) {
      if (m.first->text == key) return m.second;
    }
    return nullptr;
  }
};

class DomBuilder {
 public:
  using Value = Node*;
  Node* null_value() { return make(JsonValue::Kind::kNull); }
  Node* true_value() { Node* n = make(JsonValue::Kind::kBool); n->integer = 1; return n; }
  Node* false_value() { return make(JsonValue::Kind::kBool); }
  Node* integer(const char* text, size_t len) {
    Node* n = make(JsonValue::Kind::kInt);
    auto r = std::from_chars(text, text + len, n->integer);
    if (r.ec != std::errc()) {  // beyond int64: keep it as a real
      n->kind = JsonValue::Kind::kDouble;
      n->real = std::strtod(std::string(text, len).c_str(), nullptr);
    }
    return n;
  }
  Node* real(const char* text, size_t len) {
    Node* n = make(JsonValue::Kind::kDouble);
    n->real = std::strtod(std::string(text, len).c_str(), nullptr);
    return n;
  }
  Node* string(const char* s, size_t len) { Node* n = make(JsonValue::Kind::kString); n->text.assign(s, len); return n; }
  Node* key(const char* s, size_t len) { return string(s, len); }
  Node* begin_array() { return make(JsonValue::Kind::kArray); }
  void push(Node*& array, Node* element) { array->items.push_back(element); }
  bool find_array(const char* raw, size_t raw_len, Node*& out) {
    Node* const* shared = shared_arrays_.find(raw, raw_len);
    if (!shared) return false;
    out = *shared;
    return true;
  }
  Node* end_array(Node* array, const char* raw, size_t raw_len, size_t count, bool scalars) {
    if (scalars && count > 0 && count <= 3) shared_arrays_.insert(raw, raw_len, array);
    return array;
  }
  Node* begin_object() { return make(JsonValue::Kind::kObject); }
  void set(Node*& object, Node* key, Node* value) { object->members.emplace_back(key, value); }

 private:
  Node* make(JsonValue::Kind kind) {
    nodes_.emplace_back();
    nodes_.back().kind = kind;
    return &nodes_.back();
  }
  std::deque<Node> nodes_;
  TextTable<Node*> shared_arrays_;
};

JsonValue to_value(const Node* n) {
  switch (n->kind) {
    case JsonValue::Kind::kBool: return JsonValue::boolean(n->integer != 0);
    case JsonValue::Kind::kInt: return JsonValue::integer(n->integer);
    case JsonValue::Kind::kDouble: return JsonValue::real(n->real);
    case JsonValue::Kind::kString:
    case JsonValue::Kind::kSymbol: return JsonValue::string(n->text);
    case JsonValue::Kind::kArray: {
      JsonValue a = JsonValue::array();
      for (const Node* item : n->items) a.push(to_value(item));
      return a;
    }
    case JsonValue::Kind::kObject: {
      JsonValue o = JsonValue::object();
      for (const auto& m : n->members) o.set(m.first->text, to_value(m.second));
      return o;
    }
    default: return JsonValue();
  }
}

bool is(const Node* n, JsonValue::Kind kind) { return n && n->kind == kind; }

// Builds the profile from the document; false with `error` set on a shape it cannot use.
class ProfileReader {
 public:
  ProfileReader(Profile& p, std::string& error) : p_(p), error_(error) {}

  bool read(const Node* doc) {
    if (!is(doc, JsonValue::Kind::kObject)) return bad("not an rperf profile (no aggregated_samples)");
    const Node* aggregated = doc->get("aggregated_samples");
    if (!aggregated) return bad("not an rperf profile (no aggregated_samples)");
    for (const auto& m : doc->members) {
      const std::string& key = m.first->text;
      if (key == "meta") p_.meta = to_value(m.second);
      else if (key == "summary") p_.summary = to_value(m.second);
      else if (key == "mode" && is(m.second, JsonValue::Kind::kString)) p_.attributes.set(key, JsonValue::symbol(m.second->text));
      else if (!derived(key)) p_.attributes.set(key, to_value(m.second));
    }
    if (!read_label_sets(doc->get("label_sets"))) return false;
    const Node* raw = doc->get("raw_samples");
    if (is(raw, JsonValue::Kind::kArray)) {
      p_.timestamps = true;
      if (!read_samples(raw, true)) return false;
    } else if (!read_samples(aggregated, false)) {
      return false;
    }
    if (!read_start_lines(doc->get("function_start_lines"))) return false;
    if (!p_.timestamps) infer_vm_states(p_);  // raw samples carry their state
    return true;
  }

 private:
  // Keys computed from the samples, never stored as attributes.
  static bool derived(const std::string& key) {
    return key == "aggregated_samples" || key == "raw_samples" || key == "label_sets" || key == "function_start_lines" ||
           key == "unique_frames" || key == "unique_stacks" || key == "rperf_version";
  }

  bool bad(const std::string& what) {
    error_ = what.rfind("not an", 0) == 0 ? what : "malformed profile: " + what;
    return false;
  }

  bool read_label_sets(const Node* sets) {
    if (!sets) return true;  // only the empty set
    if (!is(sets, JsonValue::Kind::kArray)) return bad("label_sets is not an array of objects");
    label_set_map_.clear();
    for (const Node* set : sets->items) {
      if (!is(set, JsonValue::Kind::kObject)) return bad("label_sets is not an array of objects");
      LabelSet labels;
      for (const auto& m : set->members) {
        const Node* v = m.second;
        if (is(v, JsonValue::Kind::kInt)) labels.push_back(Label{m.first->text, std::to_string(v->integer), true});
        else if (is(v, JsonValue::Kind::kString)) labels.push_back(Label{m.first->text, v->text, false});
        else return bad("label values must be strings or integers");
      }
      label_set_map_.push_back(p_.label_sets.intern(labels));
    }
    if (label_set_map_.empty()) label_set_map_.push_back(0);
    return true;
  }

  bool read_frame(const Node* f, uint32_t& id) {
    auto it = frame_ids_.find(f);
    if (it != frame_ids_.end()) {
      id = it->second;
      return true;
    }
    if (!is(f, JsonValue::Kind::kArray) || f->items.size() < 2 || f->items.size() > 3 || !is(f->items[0], JsonValue::Kind::kString) ||
        !is(f->items[1], JsonValue::Kind::kString) || (f->items.size() == 3 && !is(f->items[2], JsonValue::Kind::kInt))) {
      return bad("frame is not [path, label(, line)]");
    }
    int32_t line = 0;
    if (f->items.size() == 3) {
      line = static_cast<int32_t>(f->items[2]->integer);
      p_.has_lines = true;
    }
    id = p_.frames.intern(f->items[0]->text, f->items[1]->text, line);
    frame_ids_.emplace(f, id);
    return true;
  }

  bool read_samples(const Node* samples, bool raw) {
    if (!is(samples, JsonValue::Kind::kArray)) return bad("aggregated_samples is not an array");
    const char* shape = raw ? "raw sample is not [frames, weight, thread_seq, label_set_id, ...]"
                            : "sample is not [frames, weight, thread_seq, label_set_id]";
    std::vector<uint32_t> ids;
    p_.samples.reserve(samples->items.size());
    for (const Node* s : samples->items) {
      if (!is(s, JsonValue::Kind::kArray) || s->items.size() < 4 || (!raw && s->items.size() != 4) || s->items.size() > 6) return bad(shape);
      const Node* frames = s->items[0];
      if (!is(frames, JsonValue::Kind::kArray)) return bad(shape);
      for (size_t i = 1; i < s->items.size(); i++) {
        if (!is(s->items[i], JsonValue::Kind::kInt)) return bad(shape);
      }
      ids.clear();
      for (const Node* f : frames->items) {
        uint32_t id;
        if (!read_frame(f, id)) return false;
        ids.push_back(id);
      }
      Sample sample;
      sample.stack = p_.stacks.intern(ids);
      sample.weight_ns = s->items[1]->integer;
      sample.thread_seq = static_cast<uint32_t>(s->items[2]->integer);
      int64_t set = s->items[3]->integer;
      if (set < 0 || static_cast<size_t>(set) >= label_set_map_.size()) return bad("label_set_id " + std::to_string(set) + " out of range");
      sample.label_set = label_set_map_[static_cast<size_t>(set)];
      if (s->items.size() >= 5) {
        // [..., vm_state(, time_ns)] (rperf 0.11: 5 elements); early builds of ours wrote [..., time_ns].
        int64_t fifth = s->items[4]->integer;
        if (s->items.size() == 6 || (fifth >= 0 && fifth < kVmStateCount)) sample.vm_state = static_cast<VmState>(fifth >= 0 && fifth < kVmStateCount ? fifth : 0);
        else sample.time_ns = fifth;
        if (s->items.size() == 6) sample.time_ns = s->items[5]->integer;
      }
      p_.samples.push_back(sample);
    }
    return true;
  }

  bool read_start_lines(const Node* starts) {
    if (!starts) return true;
    if (!is(starts, JsonValue::Kind::kArray)) return bad("function_start_lines is not a list of [path, label, line]");
    FrameTable methods;  // (path, label) -> start line
    std::vector<int32_t> start_of_method;
    for (const Node* e : starts->items) {
      if (!is(e, JsonValue::Kind::kArray) || e->items.size() != 3 || !is(e->items[0], JsonValue::Kind::kString) ||
          !is(e->items[1], JsonValue::Kind::kString) || !is(e->items[2], JsonValue::Kind::kInt)) {
        return bad("function_start_lines is not a list of [path, label, line]");
      }
      uint32_t m = methods.intern(e->items[0]->text, e->items[1]->text, 0);
      start_of_method.resize(methods.size(), 0);
      start_of_method[m] = static_cast<int32_t>(e->items[2]->integer);
    }
    for (uint32_t i = 0; i < p_.frames.size(); i++) {
      Frame& f = p_.frames.at(i);
      size_t before = methods.size();
      uint32_t m = methods.intern(f.path, f.label, 0);
      if (methods.size() == before) f.start_line = start_of_method[m];
    }
    return true;
  }

  Profile& p_;
  std::string& error_;
  std::vector<uint32_t> label_set_map_{0};
  std::unordered_map<const Node*, uint32_t> frame_ids_;
};

}  // namespace

bool is_gzip(const char* data, size_t len) {
  return len >= 2 && static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b;
}

FileKind sniff_file_kind(const char* data, size_t len) {
  std::string inflated;
  if (is_gzip(data, len)) {
    gunzip_prefix(data, len < 65536 ? len : 65536, inflated, 64);
    data = inflated.data();
    len = inflated.size();
  }
  size_t i = 0;
  while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') && data[0] != '\n') i++;
  if (i < len && data[i] == '{') return FileKind::kJson;
  if (len > 0 && data[0] == '\n') return FileKind::kPprof;
  return FileKind::kUnknown;
}

bool load_json_profile(const char* data, size_t len, Profile& out, std::string& error) {
  std::string inflated;
  if (is_gzip(data, len)) {
    std::string gz_error = gunzip(data, len, inflated);
    if (!gz_error.empty()) {
      error = "corrupt gzip data (" + gz_error + ")";
      return false;
    }
    data = inflated.data();
    len = inflated.size();
  }
  DomBuilder builder;
  Node* doc = nullptr;
  JsonReader<DomBuilder> reader(data, len, builder);
  if (!reader.parse(doc)) {
    error = "invalid JSON (" + reader.error() + ")";
    return false;
  }
  return ProfileReader(out, error).read(doc);
}

bool parse_json(const char* data, size_t len, JsonValue& out, std::string& error) {
  DomBuilder builder;
  Node* doc = nullptr;
  JsonReader<DomBuilder> reader(data, len, builder);
  if (!reader.parse(doc)) {
    error = "invalid JSON (" + reader.error() + ")";
    return false;
  }
  out = to_value(doc);
  return true;
}

bool read_json_head(const char* data, size_t len, JsonValue& meta, JsonValue& summary) {
  std::string inflated;
  if (is_gzip(data, len)) {
    gunzip_prefix(data, len, inflated);
    data = inflated.data();
    len = inflated.size();
  }
  DomBuilder builder;
  Node* head = nullptr;
  JsonReader<DomBuilder> reader(data, len, builder);
  if (!reader.parse_head(head, 2)) return false;
  const Node* m = head->get("meta");
  if (!is(m, JsonValue::Kind::kObject)) return false;
  meta = to_value(m);
  const Node* s = head->get("summary");
  summary = s ? to_value(s) : JsonValue();
  return true;
}

}  // namespace rperf
