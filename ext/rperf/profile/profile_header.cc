#include "profile/profile_header.hh"

#include <algorithm>
#include <atomic>
#include <tuple>
#include <type_traits>

namespace rperf {

uint64_t next_header_stamp() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

namespace {

// The one list of typed keys: each name with its field in every header given (ProfileHeader,
// const or not).
template <typename F, typename... H>
void each_field(F&& f, H&... h) {
  f("mode", h.mode...);
  f("frequency", h.frequency...);
  f("trigger_count", h.trigger_count...);
  f("sampling_count", h.sampling_count...);
  f("sampling_time_ns", h.sampling_time_ns...);
  f("hook_time_ns", h.hook_time_ns...);
  f("dropped_samples", h.dropped_samples...);
  f("dropped_aggregation", h.dropped_aggregation...);
  f("label_sets_overflowed", h.label_sets_overflowed...);
  f("detected_thread_count", h.detected_thread_count...);
  f("max_depth", h.max_depth...);
  f("profiler_cpu_ns", h.profiler_cpu_ns...);
  f("process_cpu_ns", h.process_cpu_ns...);
  f("start_time_ns", h.start_time_ns...);
  f("duration_ns", h.duration_ns...);
  f("total_duration_ns", h.total_duration_ns...);
  f("process_count", h.process_count...);
  f("user_ns", h.user_ns...);
  f("sys_ns", h.sys_ns...);
  f("allocation_interval", h.allocation_interval...);
  f("allocation_sample_count", h.allocation_sample_count...);
  f("dropped_allocations", h.dropped_allocations...);
  f("allocation_interval_guessed", h.allocation_interval_guessed...);
  f("gc_stats", h.gc_stats...);
  f("maxrss_mb", h.maxrss_mb...);
}

// Each field type's JSON form, and what it accepts: exactly its own kinds (a Double is not an
// Integer field's value: it would not be written back as it came).
JsonValue field_json(const HeaderText& t) { return t.symbol ? JsonValue::symbol(t.text) : JsonValue::string(t.text); }
JsonValue field_json(int64_t i) { return JsonValue::integer(i); }
JsonValue field_json(bool b) { return JsonValue::boolean(b); }
JsonValue field_json(const JsonValue& v) { return v; }
JsonValue field_json(const std::optional<int64_t>& i) { return i ? JsonValue::integer(*i) : JsonValue(); }

bool from_json(const JsonValue& v, HeaderText& out) {
  if (!v.is_text()) return false;
  out = HeaderText{v.as_string(), v.kind() == JsonValue::Kind::kSymbol};
  return true;
}
bool from_json(const JsonValue& v, int64_t& out) {
  if (!v.is_int()) return false;
  out = v.as_int();
  return true;
}
bool from_json(const JsonValue& v, bool& out) {
  if (v.kind() != JsonValue::Kind::kBool) return false;
  out = v.as_bool();
  return true;
}
bool from_json(const JsonValue& v, JsonValue& out) {
  if (!v.is_object()) return false;
  out = v;
  return true;
}
bool from_json(const JsonValue& v, std::optional<int64_t>& out) {
  if (!v.is_int() && !v.is_null()) return false;
  out = v.is_null() ? std::nullopt : std::optional<int64_t>(v.as_int());
  return true;
}

const char* expected(const HeaderText&) { return "a String or Symbol"; }
const char* expected(int64_t) { return "an Integer"; }
const char* expected(bool) { return "true or false"; }
const char* expected(const JsonValue&) { return "a Hash"; }
const char* expected(const std::optional<int64_t>&) { return "an Integer or nil"; }

}  // namespace

const char* ProfileHeader::set(const std::string& key, JsonValue value) {
  const char* wrong = nullptr;
  bool found = false;
  each_field([&](const char* name, auto& field) {
    if (found || key != name) return;
    found = true;
    // The key keeps its place whether its value moves between the field and the extras.
    uint64_t stamp = field.has_value() ? field.stamp() : extra_stamp(key);
    typename std::decay_t<decltype(field)>::value_type typed{};
    if (from_json(value, typed)) {
      erase_extra(key);
      field.assign(std::move(typed), stamp);
    } else {
      wrong = expected(typed);
      field.reset();
      set_extra(key, std::move(value), stamp);
    }
  }, *this);
  if (!found) set_extra(key, std::move(value), 0);
  return wrong;
}

std::optional<JsonValue> ProfileHeader::get(const std::string& key) const {
  std::optional<JsonValue> out;
  each_field([&](const char* name, const auto& field) {
    if (!out && field.has_value() && key == name) out = field_json(*field);
  }, *this);
  if (out) return out;
  if (const JsonValue* v = extras_.get(key)) return *v;
  return std::nullopt;
}

bool ProfileHeader::has(const std::string& key) const {
  bool typed = false;
  each_field([&](const char* name, const auto& field) { typed = typed || (field.has_value() && key == name); }, *this);
  return typed || extras_.get(key) != nullptr;
}

void ProfileHeader::erase(const std::string& key) {
  each_field([&](const char* name, auto& field) {
    if (key == name) field.reset();
  }, *this);
  erase_extra(key);
}

bool ProfileHeader::known(const std::string& key) {
  ProfileHeader none;
  bool found = false;
  each_field([&](const char* name, const auto&) { found = found || key == name; }, none);
  return found;
}

std::vector<JsonValue::Member> ProfileHeader::members() const {
  std::vector<std::tuple<uint64_t, std::string, JsonValue>> all;
  each_field([&](const char* name, const auto& field) {
    if (field.has_value()) all.emplace_back(field.stamp(), name, field_json(*field));
  }, *this);
  const std::vector<JsonValue::Member>& extras = extras_.members();
  for (size_t i = 0; i < extras.size(); i++) {
    bool shadowed = false;  // a typed field set directly after a wrong value came by name
    for (const auto& t : all) shadowed = shadowed || std::get<1>(t) == extras[i].first;
    if (!shadowed) all.emplace_back(extra_stamps_[i], extras[i].first, extras[i].second);
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::vector<JsonValue::Member> out;
  out.reserve(all.size());
  for (auto& t : all) out.emplace_back(std::move(std::get<1>(t)), std::move(std::get<2>(t)));
  return out;
}

ProfileHeader& ProfileHeader::operator=(const ProfileHeader& o) {
  each_field([](const char*, auto& to, const auto& from) { to.copy_from(from); }, *this, o);
  meta = o.meta;
  summary = o.summary;
  extras_ = o.extras_;
  extra_stamps_ = o.extra_stamps_;
  return *this;
}

JsonValue ProfileHeader::to_json() const {
  JsonValue o = JsonValue::object();
  for (JsonValue::Member& m : members()) o.set(m.first, std::move(m.second));
  return o;
}

void ProfileHeader::set_extra(const std::string& key, JsonValue value, uint64_t stamp) {
  bool held = extras_.get(key) != nullptr;
  extras_.set(key, std::move(value));  // in place when held
  if (!held) extra_stamps_.push_back(stamp ? stamp : next_header_stamp());
}

uint64_t ProfileHeader::extra_stamp(const std::string& key) const {
  const std::vector<JsonValue::Member>& m = extras_.members();
  for (size_t i = 0; i < m.size(); i++) {
    if (m[i].first == key) return extra_stamps_[i];
  }
  return 0;
}

void ProfileHeader::erase_extra(const std::string& key) {
  const std::vector<JsonValue::Member>& m = extras_.members();
  for (size_t i = 0; i < m.size(); i++) {
    if (m[i].first == key) {
      extras_.erase(key);
      extra_stamps_.erase(extra_stamps_.begin() + static_cast<long>(i));
      return;
    }
  }
}

}  // namespace rperf
