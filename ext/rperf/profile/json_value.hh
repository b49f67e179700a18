// A small JSON-shaped value: the open-ended parts of a profile (the header's keys nobody
// types, see profile_header.hh, and the file's meta and summary objects) are kept as these, so
// the model, the JSON writer, the loader and the Ruby view agree on them without knowing every key.
// Objects keep their insertion order (files stay readable and diffable).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rperf {

class JsonValue {
 public:
  enum class Kind : uint8_t { kNull, kBool, kInt, kDouble, kString, kSymbol, kArray, kObject };
  using Member = std::pair<std::string, JsonValue>;

  JsonValue() = default;
  static JsonValue boolean(bool b) { JsonValue v(Kind::kBool); v.int_ = b; return v; }
  static JsonValue integer(int64_t i) { JsonValue v(Kind::kInt); v.int_ = i; return v; }
  static JsonValue real(double d) { JsonValue v(Kind::kDouble); v.double_ = d; return v; }
  static JsonValue string(std::string s) { JsonValue v(Kind::kString); v.string_ = std::move(s); return v; }
  // A Ruby Symbol: written to JSON as a string, given back to Ruby as a Symbol (e.g. mode: :cpu).
  static JsonValue symbol(std::string s) { JsonValue v(Kind::kSymbol); v.string_ = std::move(s); return v; }
  static JsonValue array() { return JsonValue(Kind::kArray); }
  static JsonValue object() { return JsonValue(Kind::kObject); }

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_object() const { return kind_ == Kind::kObject; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_text() const { return kind_ == Kind::kString || kind_ == Kind::kSymbol; }
  bool as_bool() const { return int_ != 0; }
  int64_t as_int() const { return kind_ == Kind::kDouble ? static_cast<int64_t>(double_) : int_; }
  double as_double() const { return kind_ == Kind::kDouble ? double_ : static_cast<double>(int_); }
  const std::string& as_string() const { return string_; }
  const std::vector<JsonValue>& items() const { return items_; }
  const std::vector<Member>& members() const { return members_; }

  void push(JsonValue v) { items_.push_back(std::move(v)); }
  // Objects: sets `key`, replacing an earlier value in place.
  void set(const std::string& key, JsonValue v) {
    for (Member& m : members_) {
      if (m.first == key) {
        m.second = std::move(v);
        return;
      }
    }
    members_.emplace_back(key, std::move(v));
  }
  void erase(const std::string& key) {
    for (size_t i = 0; i < members_.size(); i++) {
      if (members_[i].first == key) {
        members_.erase(members_.begin() + static_cast<long>(i));
        return;
      }
    }
  }
  const JsonValue* get(const std::string& key) const {
    for (const Member& m : members_) {
      if (m.first == key) return &m.second;
    }
    return nullptr;
  }
  int64_t int_or(const std::string& key, int64_t fallback) const {
    const JsonValue* v = get(key);
    return v && (v->kind_ == Kind::kInt || v->kind_ == Kind::kDouble) ? v->as_int() : fallback;
  }
  std::string string_or(const std::string& key, const std::string& fallback) const {
    const JsonValue* v = get(key);
    return v && v->is_text() ? v->string_ : fallback;
  }

 private:
  explicit JsonValue(Kind k) : kind_(k) {}
  Kind kind_ = Kind::kNull;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::vector<JsonValue> items_;
  std::vector<Member> members_;
};

}  // namespace rperf
