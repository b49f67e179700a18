// UTF-8 checks shared by the layers: the encoders and the JSON reader (io/) and the stack
// transforms' name matching (profile/), so a name is made valid text the same way everywhere.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace rperf {

// Length of the valid UTF-8 sequence at s[i], or 0 if invalid.
inline size_t utf8_seq_len(const unsigned char* s, size_t i, size_t n) {
  unsigned char c = s[i];
  if (c < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; }
  else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; }
  else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; }
  else return 0;
  if (i + len > n) return 0;
  for (size_t k = 1; k < len; k++) {
    if ((s[i + k] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i + k] & 0x3f);
  }
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

inline bool utf8_valid(const char* s, size_t len) {
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  for (size_t i = 0; i < len;) {
    if (p[i] < 0x80) {
      i++;
      continue;
    }
    size_t n = utf8_seq_len(p, i, len);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

inline std::string valid_utf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t len = utf8_seq_len(p, i, s.size());
    if (len == 0) {
      out += "\xef\xbf\xbd";
      i++;
    } else {
      out.append(s, i, len);
      i += len;
    }
  }
  return out;
}

// `raw` (any bytes) as `text` would show it: equal, or equal once made valid.
inline bool same_text(const std::string& raw, const std::string& text) {
  return raw == text || (!utf8_valid(raw.data(), raw.size()) && valid_utf8(raw) == text);
}

}  // namespace rperf
