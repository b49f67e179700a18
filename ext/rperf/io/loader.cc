// JSON -> Profile. The reader's builder recognises the body's shapes as they are parsed: a
// [path, label(, line)] array becomes a frame id, an array of frames a stack id, and
// [stack, weight, thread_seq, label_set_id(, vm_state, time_ns)] a row, so the 4 million frame
// references of the benchmark profile never become tree nodes (identical frame texts are
// parsed once: find_array). Everything else (meta, summary, attributes) is a small tree.
#include "io/loader.hh"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <deque>
#include <memory>

#include "io/gzip.hh"
#include "io/json_reader.hh"
#include "io/text_table.hh"
#include "profile/label_value.hh"
#include "profile/transform.hh"
#include "profile/profile_rows.hh"

namespace rperf {

namespace {

struct Node;

// A parsed value: an integer, a recognised body shape, or a tree node for anything else.
struct Val {
  enum Tag : uint8_t { kNode, kInt, kFrame, kStack, kRow } tag = kNode;
  int64_t num = 0;       // kInt: the value; kFrame/kStack/kRow: an id in the builder's tables
  Node* node = nullptr;  // kNode
};

struct Node {
  JsonValue::Kind kind = JsonValue::Kind::kNull;
  double real = 0;
  bool truth = false;
  std::string text;                                // strings, and an object member's key
  std::vector<Val> items;                          // arrays; objects: key, value, key, value...
  const Val* get(const char* key) const {          // objects
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      if (items[i].node->text == key) return &items[i + 1];
    }
    return nullptr;
  }
};

struct Row {
  uint32_t stack;  // a builder stack id; kEmptyStack for []
  int64_t values[5];
  uint8_t count;   // values after the stack: 3 (aggregated), 4 or 5 (raw)
};

constexpr uint32_t kEmptyStack = 0xffffffffu;
// The builder's line of a [path, label] frame (no line given), told apart from [path, label, 0].
constexpr int32_t kNoLine = INT32_MIN;
int32_t line_of(const Frame& f) { return f.line == kNoLine ? 0 : f.line; }

// What the loader may spend on a document (its estimate of the builder's memory): 64 MiB plus
// 8 bytes per byte of JSON, at most 8 GiB. A profile's bulk (sample rows, shared frames, label
// sets) costs 1 to 7 bytes per byte of JSON; the arbitrary trees of meta, summary and other
// attributes, which cost up to 35 bytes per byte ("[],"), get at most kFreeFormBudget.
constexpr size_t kBudgetFloor = size_t{64} << 20;
constexpr size_t kBudgetPerByte = 8;
constexpr size_t kBudgetCap = size_t{8} << 30;
constexpr size_t kFreeFormBudget = size_t{128} << 20;


class BodyBuilder {
 public:
  using Value = Val;

  // `profile`: the document must be an rperf profile, and its body is checked as it is
  // parsed (a value that is not what its place in the body holds stops the parse at once).
  BodyBuilder(size_t json_len, bool profile) : budget_(load_budget(json_len)), profile_(profile) {}

  Val null_value() { return node(JsonValue::Kind::kNull); }
  Val true_value() { Val v = node(JsonValue::Kind::kBool); v.node->truth = true; return v; }
  Val false_value() { return node(JsonValue::Kind::kBool); }
  Val integer(const char* text, size_t len) {
    Val v;
    v.tag = Val::kInt;
    if (std::from_chars(text, text + len, v.num).ec == std::errc()) return v;
    v = real(text, len);  // beyond int64: a real, or in a label's value an Integer of any size
    v.node->text.assign(text, len);  // (and its digits for a row's message)
    if (len >= sizeof(std::string)) spend(len);
    return v;
  }
  Val real(const char* text, size_t len) {
    Val v = node(JsonValue::Kind::kDouble);
    v.node->real = std::strtod(std::string(text, len).c_str(), nullptr);
    return v;
  }
  Val string(const char* s, size_t len) {
    Val v = node(JsonValue::Kind::kString);
    v.node->text.assign(s, len);
    if (len >= sizeof(std::string)) spend(len);  // beyond the short-string buffer
    return v;
  }
  Val key(const char* s, size_t len) {
    Val v = string(s, len);
    key_ = v.node;
    return v;
  }
  Val begin_array() {
    Val v;
    if (spare_.empty()) {
      v = node(JsonValue::Kind::kArray);
    } else {
      v.node = spare_.back();
      spare_.pop_back();
    }
    open(v.node, true);
    return v;
  }
  void push(Val& array, const Val& element) {
    spend(sizeof(Val));
    if (profile_) check_element(array.node->items, element);
    array.node->items.push_back(element);
  }
  bool find_array(const char* raw, size_t raw_len, Val& out) { return find_array(raw, raw_len, array_hash(raw, raw_len), out); }
  bool find_array(const char* raw, size_t raw_len, uint64_t hash, Val& out) {
    if (in_label_value()) return false;  // a label's value is kept as it is, never a frame
    const Val* shared = shared_arrays_.find(raw, raw_len, hash);
    if (!shared) return false;
    out = *shared;
    return true;
  }
  // A stack's frames looked up together: the 4 million frame references of the benchmark
  // profile are random reads in a table of 20,000 (each a cache miss for the slot, then one
  // for the text); hinted as a batch, the misses overlap.
  uint64_t array_hash(const char* raw, size_t raw_len) const { return TextTable<Val>::hash(raw, raw_len); }
  void prefetch_arrays(const uint64_t* hashes, size_t n) const {
    for (size_t i = 0; i < n; i++) shared_arrays_.prefetch(hashes[i]);
    for (size_t i = 0; i < n; i++) shared_arrays_.prefetch_entry(hashes[i]);
  }
  Val end_array(Val array, const char* raw, size_t raw_len, size_t, bool scalars) {
    const bool label_value = context_.back().role == kLabelValue;
    context_.pop_back();
    if (label_value) return array;
    Val shaped;
    if (!recognise(array.node->items, shaped)) return array;
    array.node->items.clear();  // keeps its capacity for the next array
    spare_.push_back(array.node);
    if (raw && scalars && shaped.tag == Val::kFrame) shared_arrays_.insert(raw, raw_len, shaped);
    return shaped;
  }
  Val begin_object() {
    Val v = node(JsonValue::Kind::kObject);
    open(v.node, false);
    return v;
  }
  void set(Val& object, const Val& key, const Val& value) {
    spend(2 * sizeof(Val));
    object.node->items.push_back(key);
    object.node->items.push_back(value);
  }
  Val end_object(Val object) {
    context_.pop_back();
    return object;
  }
  const char* refusal() const { return refusal_.empty() ? nullptr : refusal_.c_str(); }

  FrameTable frames;  // every [path, label(, line)] seen (start-line entries too); line kNoLine: none
  StackTable stacks;
  std::vector<Row> rows;

 private:
  // The place of an open array or object in an rperf profile, so each value is checked when
  // it ends. kFree: anything goes (meta, summary, other attributes; any document when not
  // loading a profile).
  enum Role : uint8_t { kFree, kRoot, kSamples, kRawSamples, kRow, kStack, kFrame, kLabelSets, kLabelSet, kLabelValue, kAllocs, kAllocRow, kStartLines, kStartLine };
  struct Context {
    Role role;
    uint8_t width;  // kAllocs, kAllocRow: the row's width (6, or 7 when raw); kRow: 1 when raw
    const Node* node;
  };

  static constexpr const char* kRowShape = "sample is not [frames, weight, thread_seq, label_set_id]";
  static constexpr const char* kRawRowShape = "raw sample is not [frames, weight, thread_seq, label_set_id, ...]";
  static constexpr const char* kAllocShape = "allocation sample is not [frames, count, thread_seq, label_set_id, class_name, retained_count]";
  static constexpr const char* kRawAllocShape =
      "raw allocation sample is not [frames, count, thread_seq, label_set_id, class_name, retained_count, time_ns]";
  static constexpr const char* kFrameShape = "frame is not [path, label(, line)]";
  static constexpr const char* kStartLinesShape = "function_start_lines is not a list of [path, label, line]";

  bool in_label_value() const { return !context_.empty() && (context_.back().role == kLabelSet || context_.back().role == kLabelValue); }
  static bool is_string(const Val& v) { return v.tag == Val::kNode && v.node->kind == JsonValue::Kind::kString; }
  static bool is_empty_array(const Val& v) { return v.tag == Val::kNode && v.node->kind == JsonValue::Kind::kArray && v.node->items.empty(); }
  static bool is_array(const Val& v) { return v.tag == Val::kNode && v.node->kind == JsonValue::Kind::kArray; }

  void refuse(const std::string& why) {
    if (refusal_.empty()) refusal_ = why.rfind("not an", 0) == 0 ? why : "malformed profile: " + why;
  }

  // Inline: called for every element pushed (4 million frame references in the benchmark
  // profile); the checks past the budgets are out of line.
  void spend(size_t bytes) {
    spent_ += bytes;
    if (!context_.empty() && (context_.back().role == kFree || context_.back().role == kRoot)) free_spent_ += bytes;
    if (__builtin_expect(spent_ > budget_ || free_spent_ > kFreeFormBudget, 0)) over_budget();
  }

  __attribute__((noinline)) void over_budget() {
    if (spent_ > budget_ && refusal_.empty()) {
      refusal_ = "over the loader's memory budget (" + std::to_string(budget_ >> 20) +
                 " MiB for this document: 64 MiB + 8 bytes per byte of JSON, at most 8 GiB)";
    } else if (profile_ && free_spent_ > kFreeFormBudget && refusal_.empty()) {
      refusal_ = "not an rperf profile (its meta, summary and attributes hold over " + std::to_string(kFreeFormBudget >> 20) + " MiB)";
    }
  }

  // A new array or object: its role from its parent's.
  void open(const Node* n, bool array) {
    Context c{kFree, 0, n};
    if (profile_) {
      if (context_.empty()) {
        if (array) refuse("not an rperf profile (no aggregated_samples)");
        else c.role = kRoot;
      } else {
        const Context& parent = context_.back();
        Context role = child(parent, array, parent.node->items.size());
        c.role = role.role;
        c.width = role.width;
      }
    }
    context_.push_back(c);
  }

  Context child(const Context& parent, bool array, size_t index) {
    switch (parent.role) {
      case kFree: return {kFree, 0, nullptr};
      case kRoot: {
        const std::string& k = key_ ? key_->text : std::string();
        if (!array) return {kFree, 0, nullptr};
        if (k == "aggregated_samples") return {kSamples, 0, nullptr};
        if (k == "raw_samples") return {kRawSamples, 0, nullptr};
        if (k == "label_sets") return {kLabelSets, 0, nullptr};
        if (k == "allocation_samples") return {kAllocs, 6, nullptr};
        if (k == "raw_allocation_samples") return {kAllocs, 7, nullptr};
        if (k == "function_start_lines") return {kStartLines, 0, nullptr};
        return {kFree, 0, nullptr};
      }
      case kSamples:
      case kRawSamples:
        if (!array) refuse(parent.role == kSamples ? kRowShape : kRawRowShape);
        return {kRow, static_cast<uint8_t>(parent.role == kSamples ? 0 : 1), nullptr};
      case kRow:
        if (!array || index != 0) refuse(parent.width ? kRawRowShape : kRowShape);
        return {kStack, 0, nullptr};
      case kAllocRow:
        if (!array || index != 0) refuse(parent.width == 7 ? kRawAllocShape : kAllocShape);
        return {kStack, 0, nullptr};
      case kStack:
        if (!array) refuse(kFrameShape);
        return {kFrame, 0, nullptr};
      case kFrame: refuse(kFrameShape); return {kFree, 0, nullptr};
      case kStartLines:
        if (!array) refuse(kStartLinesShape);
        return {kStartLine, 0, nullptr};
      case kStartLine: refuse(kStartLinesShape); return {kFree, 0, nullptr};
      case kLabelSets:
        if (array) refuse("label_sets is not an array of objects");
        return {kLabelSet, 0, nullptr};
      case kLabelSet:
      case kLabelValue: return {kLabelValue, 0, nullptr};  // any JSON value, kept as it is
      case kAllocs:
        if (!array) refuse(parent.width == 7 ? kRawAllocShape : kAllocShape);
        return {kAllocRow, parent.width, nullptr};
    }
    return {kFree, 0, nullptr};
  }

  // An element about to join the array `items` (the innermost open array).
  void check_element(const std::vector<Val>& items, const Val& v) {
    if (context_.empty()) return;
    const Context& c = context_.back();
    size_t index = items.size();
    switch (c.role) {
      case kFree:
      case kRoot:
      case kLabelSet:
      case kLabelValue:
        return;
      case kSamples:
        if (v.tag != Val::kRow) refuse(kRowShape);
        return;
      case kRawSamples:
        if (v.tag != Val::kRow) refuse(kRawRowShape);
        return;
      case kRow: {
        bool ok = index == 0 ? v.tag == Val::kStack || is_empty_array(v) : index < 6 && v.tag == Val::kInt;
        if (!ok && !refuse_number(v, c.width ? "raw_samples" : "aggregated_samples", index, kRowFields)) refuse(c.width ? kRawRowShape : kRowShape);
        return;
      }
      case kStack:
        if (v.tag != Val::kFrame) refuse(kFrameShape);
        return;
      case kFrame: {
        bool ok = index < 2 ? is_string(v) : index == 2 && v.tag == Val::kInt;
        if (!ok) refuse(kFrameShape);
        return;
      }
      case kStartLines:
        if (v.tag != Val::kFrame) refuse(kStartLinesShape);
        return;
      case kStartLine: {
        bool ok = index < 2 ? is_string(v) : index == 2 && v.tag == Val::kInt;
        if (!ok) refuse(kStartLinesShape);
        return;
      }
      case kLabelSets:
        if (v.tag != Val::kNode || v.node->kind != JsonValue::Kind::kObject) refuse("label_sets is not an array of objects");
        return;
      case kAllocs:
        if (!is_array(v) || v.node->items.size() != c.width) refuse(c.width == 7 ? kRawAllocShape : kAllocShape);
        return;
      case kAllocRow: {
        bool ok = index == 0   ? v.tag == Val::kStack || is_empty_array(v)
                  : index == 4 ? is_string(v)
                               : index < c.width && v.tag == Val::kInt;
        if (!ok && (index == 4 || !refuse_number(v, c.width == 7 ? "raw_allocation_samples" : "allocation_samples", index, kAllocFields))) {
          refuse(c.width == 7 ? kRawAllocShape : kAllocShape);
        }
        return;
      }
    }
  }

  // A row's number that is not a 64-bit integer (a real, or an integer past 2^63) named with
  // its row and field, as ProfileRows names one out of its range; false for anything else.
  static constexpr const char* kRowFields[] = {"frames", "weight", "thread_seq", "label_set_id", "vm_state", "time_ns"};
  static constexpr const char* kAllocFields[] = {"frames", "count", "thread_seq", "label_set_id", "class_name", "retained_count", "time_ns"};
  bool refuse_number(const Val& v, const char* array, size_t index, const char* const* fields) {
    if (index == 0 || index > 6 || v.tag != Val::kNode || v.node->kind != JsonValue::Kind::kDouble || context_.size() < 2) return false;
    if (fields == kRowFields && index > 5) return false;
    size_t row = context_[context_.size() - 2].node->items.size();  // the rows before this one
    std::string text = v.node->text.empty() ? std::to_string(v.node->real) : v.node->text;
    if (text.size() > 40) text = text.substr(0, 40) + "...";
    refuse(std::string(array) + "[" + std::to_string(row) + "]: " + fields[index] + " " + text + " is not an integer of 64 bits");
    return true;
  }

  bool recognise(const std::vector<Val>& items, Val& out) {
    size_t n = items.size();
    if ((n == 2 || n == 3) && is_string(items[0]) && is_string(items[1]) && (n == 2 || items[2].tag == Val::kInt)) {
      out.tag = Val::kFrame;
      const std::string& path = items[0].node->text;
      const std::string& label = items[1].node->text;
      size_t before = frames.size();
      out.num = frames.intern(path, label, n == 3 ? static_cast<int32_t>(items[2].num) : kNoLine);
      if (frames.size() != before) spend(path.size() + label.size() + 64);
      return true;
    }
    if (n > 0 && items[0].tag == Val::kFrame) {
      ids_.clear();
      for (const Val& v : items) {
        if (v.tag != Val::kFrame) return false;
        ids_.push_back(static_cast<uint32_t>(v.num));
      }
      out.tag = Val::kStack;
      size_t before = stacks.size();
      out.num = stacks.intern(ids_);
      if (stacks.size() != before) spend(ids_.size() * sizeof(uint32_t) + 32);
      return true;
    }
    if (n >= 4 && n <= 6 && (items[0].tag == Val::kStack || is_empty_array(items[0]))) {
      Row row{items[0].tag == Val::kStack ? static_cast<uint32_t>(items[0].num) : kEmptyStack, {}, static_cast<uint8_t>(n - 1)};
      for (size_t i = 1; i < n; i++) {
        if (items[i].tag != Val::kInt) return false;
        row.values[i - 1] = items[i].num;
      }
      out.tag = Val::kRow;
      out.num = static_cast<int64_t>(rows.size());
      rows.push_back(row);
      spend(sizeof(Row));
      return true;
    }
    return false;
  }

  Val node(JsonValue::Kind kind) {
    nodes_.emplace_back();
    nodes_.back().kind = kind;
    spend(sizeof(Node));
    Val v;
    v.node = &nodes_.back();
    return v;
  }

  std::deque<Node> nodes_;
  std::vector<Node*> spare_;  // array nodes whose content became a frame, stack or row
  std::vector<uint32_t> ids_;
  TextTable<Val> shared_arrays_;
  std::vector<Context> context_;  // the open arrays and objects, innermost last
  const Node* key_ = nullptr;     // the key of the member being parsed
  size_t spent_ = 0, free_spent_ = 0;
  size_t budget_;
  bool profile_;
  std::string refusal_;
};

JsonValue to_value(const BodyBuilder& b, const Val& v) {
  switch (v.tag) {
    case Val::kInt: return JsonValue::integer(v.num);
    case Val::kFrame: {
      const Frame& f = b.frames[static_cast<uint32_t>(v.num)];
      JsonValue a = JsonValue::array();
      a.push(JsonValue::string(f.path));
      a.push(JsonValue::string(f.label));
      if (f.line != kNoLine) a.push(JsonValue::integer(f.line));
      return a;
    }
    case Val::kStack: {
      JsonValue a = JsonValue::array();
      for (uint32_t f : b.stacks[static_cast<uint32_t>(v.num)]) a.push(to_value(b, Val{Val::kFrame, f, nullptr}));
      return a;
    }
    case Val::kRow: {
      const Row& r = b.rows[static_cast<size_t>(v.num)];
      JsonValue a = JsonValue::array();
      a.push(r.stack == kEmptyStack ? JsonValue::array() : to_value(b, Val{Val::kStack, r.stack, nullptr}));
      for (uint8_t i = 0; i < r.count; i++) a.push(JsonValue::integer(r.values[i]));
      return a;
    }
    case Val::kNode: break;
  }
  const Node* n = v.node;
  switch (n->kind) {
    case JsonValue::Kind::kBool: return JsonValue::boolean(n->truth);
    case JsonValue::Kind::kDouble: return JsonValue::real(n->real);
    case JsonValue::Kind::kString:
    case JsonValue::Kind::kSymbol: return JsonValue::string(n->text);
    case JsonValue::Kind::kArray: {
      JsonValue a = JsonValue::array();
      for (const Val& item : n->items) a.push(to_value(b, item));
      return a;
    }
    case JsonValue::Kind::kObject: {
      JsonValue o = JsonValue::object();
      for (size_t i = 0; i + 1 < n->items.size(); i += 2) o.set(n->items[i].node->text, to_value(b, n->items[i + 1]));
      return o;
    }
    default: return JsonValue();
  }
}

bool is_node(const Val* v, JsonValue::Kind kind) { return v && v->tag == Val::kNode && v->node->kind == kind; }

// Builds the profile from what the builder recognised; false with `error` set on a shape it
// cannot use. The rows themselves are checked and added by ProfileRows (profile/profile_rows),
// as the pprof reader's and a Ruby Hash's are.
class ProfileReader {
 public:
  ProfileReader(const BodyBuilder& b, Profile& p, std::string& error) : b_(b), p_(p), error_(error) {}

  bool read(const Val& doc) {
    if (!is_node(&doc, JsonValue::Kind::kObject)) return bad("not an rperf profile (no aggregated_samples)");
    const Node* d = doc.node;
    const Val* aggregated = d->get("aggregated_samples");
    if (!aggregated) return bad("not an rperf profile (no aggregated_samples)");
    for (size_t i = 0; i + 1 < d->items.size(); i += 2) {
      const std::string& key = d->items[i].node->text;
      const Val& value = d->items[i + 1];
      if (key == "meta") p_.header.meta = to_value(b_, value);
      else if (key == "summary") p_.header.summary = to_value(b_, value);
      else if (key == "mode" && is_node(&value, JsonValue::Kind::kString)) p_.header.set(key, JsonValue::symbol(value.node->text));
      // By name into the header: a known key of another type is kept as written.
      else if (!is_body_key(key) && key != kTrailerVersionKey) p_.header.set(key, to_value(b_, value));
    }
    frame_map_.assign(b_.frames.size(), kEmptyStack);
    stack_map_.assign(b_.stacks.size(), kEmptyStack);
    // At most the builder's stacks and frame ids: no regrowth (each copies the table and, on
    // the benchmark VM, pays page faults again).
    p_.stacks.reserve(b_.stacks.size() + 1, b_.stacks.frame_count());
    const Val* raw = d->get("raw_samples");
    ProfileRows rows(p_, is_node(raw, JsonValue::Kind::kArray));
    if (!read_label_sets(rows, d->get("label_sets"))) return false;
    if (!read_samples(rows, p_.timestamps ? *raw : *aggregated)) return false;
    if (!read_start_lines(rows, d->get("function_start_lines"))) return false;
    const Val* raw_allocations = d->get("raw_allocation_samples");
    if (p_.timestamps && raw_allocations) {
      if (!read_allocations(rows, raw_allocations, true)) return false;
    } else if (!read_allocations(rows, d->get("allocation_samples"), false)) {
      return false;
    }
    rows.finish();
    return true;
  }

 private:
  // The JSON writer's trailer names the version that wrote the file: not the profile's.
  static constexpr const char* kTrailerVersionKey = "rperf_version";

  bool bad(const std::string& what) {
    error_ = what.rfind("not an", 0) == 0 ? what : "malformed profile: " + what;
    return false;
  }

  bool read_label_sets(ProfileRows& rows, const Val* sets) {
    if (!sets) return true;  // only the empty set
    if (!is_node(sets, JsonValue::Kind::kArray)) return bad("label_sets is not an array of objects");
    for (const Val& set : sets->node->items) {
      if (!is_node(&set, JsonValue::Kind::kObject)) return bad("label_sets is not an array of objects");
      LabelSet labels;
      const std::vector<Val>& m = set.node->items;
      // Keys become Symbols, as rperf 0.11's JSON.parse(symbolize_names: true) makes them.
      for (size_t i = 0; i + 1 < m.size(); i += 2) labels.push_back(Label{label_value::symbol(m[i].node->text), label_value_of(m[i + 1])});
      rows.label_set(labels);
    }
    return true;
  }

  // A label's value from the parsed JSON: every type kept (object keys as Symbols).
  std::string label_value_of(const Val& v) const {
    if (v.tag == Val::kInt) return label_value::integer(v.num);
    if (v.tag != Val::kNode) return label_value::nil();  // not shaped under label_sets
    const Node* n = v.node;
    switch (n->kind) {
      case JsonValue::Kind::kString:
      case JsonValue::Kind::kSymbol: return label_value::string(n->text);
      case JsonValue::Kind::kBool: return label_value::boolean(n->truth);
      case JsonValue::Kind::kDouble: return n->text.empty() ? label_value::real(n->real) : label_value::integer_text(n->text);
      case JsonValue::Kind::kArray: {
        std::vector<std::string> items;
        for (const Val& item : n->items) items.push_back(label_value_of(item));
        return label_value::array(items);
      }
      case JsonValue::Kind::kObject: {
        std::vector<std::pair<std::string, std::string>> members;
        for (size_t i = 0; i + 1 < n->items.size(); i += 2) members.emplace_back(label_value::symbol(n->items[i].node->text), label_value_of(n->items[i + 1]));
        return label_value::hash(members);
      }
      default: return label_value::nil();
    }
  }

  // A builder stack -> the profile's (only frames used by samples enter the profile).
  uint32_t stack(uint32_t s) {
    if (s == kEmptyStack) return p_.stacks.intern(std::vector<uint32_t>{});
    uint32_t& mapped = stack_map_[s];
    if (mapped != kEmptyStack) return mapped;
    ids_.clear();
    for (uint32_t f : b_.stacks[s]) {
      uint32_t& frame = frame_map_[f];
      if (frame == kEmptyStack) {
        const Frame& bf = b_.frames[f];
        frame = p_.frames.intern(bf.path, bf.label, line_of(bf));
        p_.has_lines |= bf.line != kNoLine;
      }
      ids_.push_back(frame);
    }
    return mapped = p_.stacks.intern(ids_);
  }

  // Why a value in the samples array is not a sample row, for the message.
  bool explain(const Val& v, const char* shape) {
    if (is_node(&v, JsonValue::Kind::kArray) && !v.node->items.empty()) {
      const Val& frames = v.node->items[0];
      if (is_node(&frames, JsonValue::Kind::kArray)) {
        for (const Val& f : frames.node->items) {
          if (f.tag != Val::kFrame) return bad("frame is not [path, label(, line)]");
        }
      }
    }
    return bad(shape);
  }

  bool read_samples(ProfileRows& rows, const Val& samples) {
    const bool raw = p_.timestamps;
    if (!is_node(&samples, JsonValue::Kind::kArray)) return bad("aggregated_samples is not an array");
    const char* shape = raw ? "raw sample is not [frames, weight, thread_seq, label_set_id, ...]"
                            : "sample is not [frames, weight, thread_seq, label_set_id]";
    p_.samples.reserve(samples.node->items.size());
    for (const Val& v : samples.node->items) {
      if (v.tag != Val::kRow) return explain(v, shape);
      const Row& r = b_.rows[static_cast<size_t>(v.num)];
      if (!raw && r.count != 3) return bad(shape);
      if (!rows.sample(stack(r.stack), r.values[0], r.values[1], r.values[2], r.values + 3, r.count - 3u)) return bad(rows.error());
    }
    return true;
  }

  // [frames, count, thread_seq, label_set_id, class_name, retained_count(, time_ns when raw)]
  // rows: not shaped by the builder (the class name is a string), read from their nodes.
  bool read_allocations(ProfileRows& rows, const Val* list, bool raw) {
    if (!list) return true;
    const char* shape = raw ? "raw allocation sample is not [frames, count, thread_seq, label_set_id, class_name, retained_count, time_ns]"
                            : "allocation sample is not [frames, count, thread_seq, label_set_id, class_name, retained_count]";
    const size_t width = raw ? 7 : 6;
    if (!is_node(list, JsonValue::Kind::kArray)) return bad("allocation_samples is not an array");
    for (const Val& row : list->node->items) {
      if (!is_node(&row, JsonValue::Kind::kArray) || row.node->items.size() != width) return explain(row, shape);
      const std::vector<Val>& v = row.node->items;
      bool empty_stack = is_node(&v[0], JsonValue::Kind::kArray) && v[0].node->items.empty();
      if ((v[0].tag != Val::kStack && !empty_stack) || v[1].tag != Val::kInt || v[2].tag != Val::kInt || v[3].tag != Val::kInt ||
          !is_node(&v[4], JsonValue::Kind::kString) || v[5].tag != Val::kInt || (raw && v[6].tag != Val::kInt)) {
        return explain(row, shape);
      }
      const std::string& name = v[4].node->text;
      if (!rows.allocation(stack(empty_stack ? kEmptyStack : static_cast<uint32_t>(v[0].num)), v[1].num, v[2].num, v[3].num,
                           rows.class_name(name.data(), name.size()), v[5].num, raw, raw ? v[6].num : 0)) {
        return bad(rows.error());
      }
    }
    return true;
  }

  bool read_start_lines(ProfileRows& rows, const Val* starts) {
    if (!starts) return true;
    // A list of [path, label, line] looks like a stack to the builder; an empty one is [].
    if (starts->tag != Val::kStack) {
      if (!is_node(starts, JsonValue::Kind::kArray) || !starts->node->items.empty()) return bad("function_start_lines is not a list of [path, label, line]");
      return true;
    }
    for (uint32_t e : b_.stacks[static_cast<uint32_t>(starts->num)]) {
      const Frame& f = b_.frames[e];
      if (f.line == kNoLine) return bad("function_start_lines is not a list of [path, label, line]");
      rows.start_line(f.path.data(), f.path.size(), f.label.data(), f.label.size(), f.line);
    }
    return true;
  }

  const BodyBuilder& b_;
  Profile& p_;
  std::string& error_;
  std::vector<uint32_t> frame_map_, stack_map_;  // builder ids -> profile ids
  std::vector<uint32_t> ids_;
};

bool parse_document(const char* data, size_t len, BodyBuilder& builder, Val& doc, std::string& error) {
  JsonReader<BodyBuilder> reader(data, len, builder);
  if (reader.parse(doc)) return true;
  error = reader.refused() ? reader.error() : "invalid JSON (" + reader.error() + ")";
  return false;
}

class GzipSource : public JsonSource {
 public:
  GzipSource(const char* data, size_t len) : stream(data, len) {}
  size_t read(char* out, size_t cap) override { return stream.read(out, cap); }
  InflateAhead stream;
};

// A gzip file's JSON, parsed as it is inflated (on a second thread). Damaged gzip data is
// reported as such, also when the JSON read from it failed first (the rest is inflated to find
// out; the stream's state is read once it has ended).
bool parse_gzip_document(const char* data, size_t len, BodyBuilder& builder, Val& doc, std::string& error) {
  GzipSource source(data, len);
  JsonReader<BodyBuilder> reader(source, builder);
  const bool parsed = reader.parse(doc);
  if (!parsed) {
    std::unique_ptr<char[]> sink(new char[1 << 16]);
    while (source.read(sink.get(), 1 << 16) > 0) {
    }
  }
  if (!source.stream.error().empty()) {
    error = "corrupt gzip data (" + source.stream.error() + ")";
    return false;
  }
  if (parsed) return true;
  error = reader.refused() ? reader.error() : "invalid JSON (" + reader.error() + ")";
  return false;
}

}  // namespace

size_t load_budget(size_t input_len) {
  size_t per_byte = input_len > kBudgetCap / kBudgetPerByte ? kBudgetCap : input_len * kBudgetPerByte;
  return std::min(kBudgetCap, kBudgetFloor + per_byte);
}

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
  // Blanks (line breaks included), then '{': JSON. A pprof file's '\n' is followed by its
  // sample type's length and that ValueType's first field (0x08), never by blanks and '{'.
  size_t i = 0;
  while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t')) i++;
  if (i < len && data[i] == '{') return FileKind::kJson;
  if (len > 0 && data[0] == '\n') return FileKind::kPprof;
  return FileKind::kUnknown;
}

bool inflate_if_gzip(const char*& data, size_t& len, std::string& inflated, std::string& error) {
  if (!is_gzip(data, len)) return true;
  std::string gz_error = gunzip(data, len, inflated);
  if (!gz_error.empty()) {
    error = "corrupt gzip data (" + gz_error + ")";
    return false;
  }
  data = inflated.data();
  len = inflated.size();
  return true;
}

bool load_json_profile(const char* data, size_t len, Profile& out, std::string& error) {
  Val doc;
  if (is_gzip(data, len)) {
    // The budget from the length the trailer claims (bounded by what deflate can produce from
    // this input): a file claiming more than it holds fails its length check at the end.
    BodyBuilder builder(GzipStream::size_hint(data, len), true);
    return parse_gzip_document(data, len, builder, doc, error) && ProfileReader(builder, out, error).read(doc);
  }
  BodyBuilder builder(len, true);
  return parse_document(data, len, builder, doc, error) && ProfileReader(builder, out, error).read(doc);
}

bool parse_json(const char* data, size_t len, JsonValue& out, std::string& error) {
  BodyBuilder builder(len, false);
  Val doc;
  if (!parse_document(data, len, builder, doc, error)) return false;
  out = to_value(builder, doc);
  return true;
}

bool read_json_head(const char* data, size_t len, JsonValue& meta, JsonValue& summary) {
  std::string inflated;
  if (is_gzip(data, len)) {
    gunzip_prefix(data, len, inflated);
    data = inflated.data();
    len = inflated.size();
  }
  BodyBuilder builder(len, false);
  Val head;
  JsonReader<BodyBuilder> reader(data, len, builder);
  if (!reader.parse_head(head, 2)) return false;
  const Val* m = head.node->get("meta");
  if (!is_node(m, JsonValue::Kind::kObject)) return false;
  meta = to_value(builder, *m);
  const Val* s = head.node->get("summary");
  summary = s ? to_value(builder, *s) : JsonValue();
  return true;
}

}  // namespace rperf
