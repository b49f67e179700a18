#include "profile/thread_names.hh"

#include "profile/profile_rows.hh"

namespace rperf {

std::vector<ThreadName> thread_name_entries(const Profile& p) {
  std::vector<ThreadName> out;
  std::optional<JsonValue> list = p.header.get(kThreadNamesKey);
  if (!list || list->kind() != JsonValue::Kind::kArray) return out;
  for (const JsonValue& e : list->items()) {
    const std::vector<JsonValue>& f = e.items();
    if (e.kind() != JsonValue::Kind::kArray || f.size() < 2 || !f[0].is_int() || !f[1].is_text()) continue;
    if (f[0].as_int() < 0 || f[0].as_int() > ProfileRows::kMaxThreadSeq) continue;
    ThreadName n;
    n.thread_seq = static_cast<uint32_t>(f[0].as_int());
    n.name = f[1].as_string();
    if (f.size() > 2 && f[2].is_int()) n.time_ns = f[2].as_int();
    if (f.size() > 3 && f[3].is_text()) n.pid = f[3].as_string();
    out.push_back(std::move(n));
  }
  return out;
}

void set_thread_name_entries(Profile& p, const std::vector<ThreadName>& names) {
  if (names.empty()) {
    p.header.erase(kThreadNamesKey);
    return;
  }
  JsonValue list = JsonValue::array();
  for (const ThreadName& n : names) {
    JsonValue e = JsonValue::array();
    e.push(JsonValue::integer(n.thread_seq));
    e.push(JsonValue::string(n.name));
    e.push(JsonValue::integer(n.time_ns));
    if (!n.pid.empty()) e.push(JsonValue::string(n.pid));
    list.push(std::move(e));
  }
  p.header.set(kThreadNamesKey, std::move(list));
}

void merge_thread_names(Profile& root, const Profile& child, const std::string& pid) {
  std::vector<ThreadName> child_names = thread_name_entries(child);
  if (child_names.empty()) return;
  std::vector<ThreadName> names = thread_name_entries(root);
  for (ThreadName& n : child_names) {
    if (n.pid.empty()) n.pid = pid;
    names.push_back(std::move(n));
  }
  set_thread_name_entries(root, names);
}

ThreadNames::ThreadNames(const Profile& p) {
  for (ThreadName& n : thread_name_entries(p)) names_[{std::move(n.pid), n.thread_seq}] = std::move(n.name);
}

const std::string& ThreadNames::of(uint32_t thread_seq, const std::string& pid) const {
  static const std::string none;
  auto found = names_.find({pid, thread_seq});
  return found == names_.end() ? none : found->second;
}

std::string ThreadNames::label(uint32_t thread_seq, const std::string& pid) const {
  std::string out = "thread " + std::to_string(thread_seq);
  const std::string& name = of(thread_seq, pid);
  if (!name.empty()) out += " (" + name + ")";
  return out;
}

}  // namespace rperf
