#include <charconv>
#include <cmath>

#include "io/encoders.hh"

namespace rperf {

namespace {
// Length of the valid UTF-8 sequence at s[i], or 0 if invalid.
size_t utf8_seq_len(const unsigned char* s, size_t i, size_t n) {
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
}  // namespace

bool utf8_valid(const char* s, size_t len) {
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

std::string valid_utf8(const std::string& s) {
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

void append_json_string(std::string& out, const std::string& raw) {
  static const char kHex[] = "0123456789abcdef";
  const std::string s = valid_utf8(raw);
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void append_json_value(std::string& out, const JsonValue& v) {
  char buf[32];
  switch (v.kind()) {
    case JsonValue::Kind::kNull: out += "null"; break;
    case JsonValue::Kind::kBool: out += v.as_bool() ? "true" : "false"; break;
    case JsonValue::Kind::kInt: out.append(buf, std::to_chars(buf, buf + sizeof(buf), v.as_int()).ptr); break;
    case JsonValue::Kind::kDouble:
      if (std::isfinite(v.as_double())) {
        int n = std::snprintf(buf, sizeof(buf), "%.17g", v.as_double());
        out.append(buf, static_cast<size_t>(n));
        if (std::string(buf, static_cast<size_t>(n)).find_first_of(".e") == std::string::npos) out += ".0";  // stays a Float
      } else {
        out += "null";  // JSON has no NaN or infinity
      }
      break;
    case JsonValue::Kind::kString:
    case JsonValue::Kind::kSymbol: append_json_string(out, v.as_string()); break;
    case JsonValue::Kind::kArray:
      out += '[';
      for (size_t i = 0; i < v.items().size(); i++) {
        if (i) out += ',';
        append_json_value(out, v.items()[i]);
      }
      out += ']';
      break;
    case JsonValue::Kind::kObject:
      out += '{';
      for (size_t i = 0; i < v.members().size(); i++) {
        if (i) out += ',';
        append_json_string(out, v.members()[i].first);
        out += ':';
        append_json_value(out, v.members()[i].second);
      }
      out += '}';
      break;
  }
}

}  // namespace rperf
