#include <charconv>
#include <cmath>

#include "io/encoders.hh"

namespace rperf {

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
