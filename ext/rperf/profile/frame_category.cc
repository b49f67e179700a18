#include "profile/frame_category.hh"

#include <cctype>

namespace rperf {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Ruby's own library: <internal:...> files and .../lib/ruby/3.3.0/...
bool is_stdlib_path(std::string_view path) {
  if (starts_with(path, "<internal:")) return true;
  size_t at = path.find("/lib/ruby/");
  return at != std::string_view::npos && at + 10 < path.size() && is_digit(path[at + 10]);
}

}  // namespace

const char* frame_category_name(FrameCategory c) {
  static constexpr const char* kNames[] = {"app", "gem", "stdlib", "native", "gc", "gvl", "other"};
  return c < FrameCategory::kCount ? kNames[static_cast<int>(c)] : "other";
}

FrameCategory frame_category(std::string_view label, std::string_view path) {
  if (starts_with(label, "[GC")) return FrameCategory::kGc;
  if (starts_with(label, "[GVL")) return FrameCategory::kGvl;
  if (path.empty() || path == "<rperf>") return FrameCategory::kOther;
  if (path == "<C method>" || path == "<cfunc>") return FrameCategory::kNative;
  if (starts_with(path, "<internal:")) return FrameCategory::kStdlib;
  if (!gem_name(path).empty()) return FrameCategory::kGem;
  if (is_stdlib_path(path)) return FrameCategory::kStdlib;
  return FrameCategory::kApp;
}

std::string gem_name(std::string_view path) {
  for (size_t at = path.find("/gems/"); at != std::string_view::npos; at = path.find("/gems/", at + 1)) {
    size_t begin = at + 6, end = path.find('/', begin);
    if (end == std::string_view::npos) return std::string();
    std::string_view dir = path.substr(begin, end - begin);
    if (dir.empty() || !std::isalpha(static_cast<unsigned char>(dir[0]))) continue;  // gems/3.3.0/
    // The version starts at the last '-' followed by a digit; a git checkout's at the last '-'.
    size_t cut = std::string_view::npos;
    for (size_t i = dir.size(); i-- > 1;) {
      if (dir[i] == '-' && i + 1 < dir.size() && is_digit(dir[i + 1])) {
        cut = i;
        break;
      }
    }
    if (cut == std::string_view::npos) cut = dir.rfind('-');
    return std::string(cut == std::string_view::npos || cut == 0 ? dir : dir.substr(0, cut));
  }
  return std::string();
}

}  // namespace rperf
