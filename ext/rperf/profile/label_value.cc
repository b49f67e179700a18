#include "profile/label_value.hh"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace rperf {
namespace label_value {

namespace {

std::string tagged(Type t, std::string_view payload) {
  std::string out;
  out.reserve(1 + payload.size());
  out += static_cast<char>(t);
  out.append(payload.data(), payload.size());
  return out;
}

void append_item(std::string& out, std::string_view item) {
  const uint32_t n = static_cast<uint32_t>(item.size());
  for (int i = 0; i < 4; i++) out += static_cast<char>((n >> (8 * i)) & 0xff);
  out.append(item.data(), item.size());
}

// Length of the UTF-8 sequence at s[i] (0: not a valid one).
size_t utf8_length(const unsigned char* s, size_t i, size_t n) {
  unsigned char c = s[i];
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (len == 0 || i + len > n) return 0;
  for (size_t k = 1; k < len; k++) {
    if ((s[i + k] & 0xc0) != 0x80) return 0;
  }
  return len;
}

// Ruby's String#inspect of UTF-8 text.
std::string inspect_text(std::string_view text) {
  std::string out = "\"";
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  char buf[16];
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    size_t len = utf8_length(s, i, n);
    if (len == 0) {
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
      i++;
      continue;
    }
    if (len > 1) {
      out.append(text.data() + i, len);
      i += len;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\f': out += "\\f"; break;
      case '\v': out += "\\v"; break;
      case '\b': out += "\\b"; break;
      case '\a': out += "\\a"; break;
      case 033: out += "\\e"; break;
      case '#':
        out += i + 1 < n && (s[i + 1] == '{' || s[i + 1] == '$' || s[i + 1] == '@') ? "\\#" : "#";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          std::snprintf(buf, sizeof buf, "\\u%04X", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
    i++;
  }
  return out + "\"";
}

// A Symbol Ruby writes bare (:name, name: in a Hash): an identifier, maybe ending in ? or !.
bool plain_symbol(std::string_view name, bool allow_setter) {
  if (name.empty()) return false;
  auto ident = [](unsigned char c) { return c == '_' || std::isalnum(c) || c >= 0x80; };
  if (std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (size_t i = 0; i < name.size(); i++) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (ident(c)) continue;
    bool last = i + 1 == name.size();
    if (last && (c == '?' || c == '!' || (allow_setter && c == '='))) continue;
    return false;
  }
  return true;
}

}  // namespace

std::string string(std::string_view bytes) { return tagged(kString, bytes); }
std::string symbol(std::string_view name) { return tagged(kSymbol, name); }
std::string integer(int64_t v) { return tagged(kInteger, std::to_string(v)); }
std::string integer_text(std::string_view decimal) { return tagged(kInteger, decimal); }
std::string real(double v) {
  char bytes[8];
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  for (int i = 0; i < 8; i++) bytes[i] = static_cast<char>((bits >> (8 * i)) & 0xff);
  return tagged(kFloat, std::string_view(bytes, 8));
}
std::string boolean(bool v) { return std::string(1, v ? kTrue : kFalse); }
std::string nil() { return std::string(1, kNil); }

std::string array(const std::vector<std::string>& items) {
  std::string out(1, kArray);
  for (const std::string& item : items) append_item(out, item);
  return out;
}

std::string hash(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out(1, kHash);
  for (const auto& m : members) {
    append_item(out, m.first);
    append_item(out, m.second);
  }
  return out;
}

Type type_of(std::string_view v) {
  if (v.empty()) return kNil;
  switch (v[0]) {
    case kString:
    case kSymbol:
    case kInteger:
    case kFloat:
    case kTrue:
    case kFalse:
    case kNil:
    case kArray:
    case kHash: return static_cast<Type>(v[0]);
    default: return kNil;
  }
}

std::string_view text_of(std::string_view v) {
  Type t = type_of(v);
  return t == kString || t == kSymbol || t == kInteger ? v.substr(1) : std::string_view();
}

double real_of(std::string_view v) {
  if (type_of(v) != kFloat || v.size() != 9) return 0;
  uint64_t bits = 0;
  for (int i = 0; i < 8; i++) bits |= static_cast<uint64_t>(static_cast<unsigned char>(v[1 + i])) << (8 * i);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

bool int64_of(std::string_view v, int64_t& out) {
  if (type_of(v) != kInteger) return false;
  std::string_view digits = v.substr(1);
  return std::from_chars(digits.data(), digits.data() + digits.size(), out).ec == std::errc() ;
}

bool next_item(std::string_view v, size_t& pos, std::string_view& item) {
  Type t = type_of(v);
  if ((t != kArray && t != kHash) || pos + 4 > v.size()) return false;
  uint32_t n = 0;
  for (int k = 0; k < 4; k++) n |= static_cast<uint32_t>(static_cast<unsigned char>(v[pos + k])) << (8 * k);
  if (n > v.size() - pos - 4) return false;  // not an encoding this module made
  item = v.substr(pos + 4, n);
  pos += 4 + n;
  return true;
}

std::vector<std::string_view> items_of(std::string_view v) {
  std::vector<std::string_view> items;
  size_t pos = 1;
  std::string_view item;
  while (next_item(v, pos, item)) items.push_back(item);
  return items;
}

// The shortest d.ddde[+-]x that reads back as v.
std::string shortest_scientific(double v) {
  char buf[64];
#if defined(__EMSCRIPTEN__)
  // The page model's libc++ (emscripten 3.1.6) has no floating-point to_chars: the fewest
  // digits printf rounds correctly that read back as v are the same digits.
  for (int precision = 0; precision < 17; precision++) {
    std::snprintf(buf, sizeof buf, "%.*e", precision, v);
    if (std::strtod(buf, nullptr) == v) return buf;
  }
  std::snprintf(buf, sizeof buf, "%.16e", v);
  return buf;
#else
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  return std::string(buf, res.ptr);
#endif
}

std::string float_to_s(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-Infinity" : "Infinity";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  // The shortest digits that read back as v: d.ddde[+-]x
  std::string sci = shortest_scientific(v);
  std::string out;
  size_t pos = 0;
  if (sci[0] == '-') {
    out += '-';
    pos = 1;
  }
  size_t e = sci.find('e');
  std::string digits;
  for (size_t i = pos; i < e; i++) {
    if (sci[i] != '.') digits += sci[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exp10 = std::atoi(sci.c_str() + e + 1);
  const int decpt = exp10 + 1;  // v = 0.digits x 10^decpt
  const int nd = static_cast<int>(digits.size());
  if (decpt > 0 && decpt <= 15) {  // Ruby: fixed up to DBL_DIG digits before the point
    if (nd <= decpt) {
      out += digits + std::string(static_cast<size_t>(decpt - nd), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
    }
  } else if (decpt <= 0 && decpt > -4) {
    out += "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
  } else {
    out += digits.substr(0, 1) + "." + (nd > 1 ? digits.substr(1) : "0");
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%+03d", decpt - 1);
    out += exp;
  }
  return out;
}

std::string to_s(std::string_view v) {
  switch (type_of(v)) {
    case kString:
    case kSymbol:
    case kInteger: return std::string(v.substr(1));
    case kFloat: return float_to_s(real_of(v));
    case kTrue: return "true";
    case kFalse: return "false";
    case kNil: return "";
    case kArray:
    case kHash: return inspect(v);
  }
  return "";
}

std::string inspect(std::string_view v) {
  switch (type_of(v)) {
    case kString: return inspect_text(v.substr(1));
    case kSymbol: {
      std::string_view name = v.substr(1);
      return plain_symbol(name, true) ? ":" + std::string(name) : ":" + inspect_text(name);
    }
    case kNil: return "nil";
    case kArray: {
      std::string out = "[";
      bool first = true;
      for (std::string_view item : items_of(v)) {
        if (!first) out += ", ";
        first = false;
        out += inspect(item);
      }
      return out + "]";
    }
    case kHash: {
      std::vector<std::string_view> items = items_of(v);
      if (items.size() < 2) return "{}";
      std::string out = "{";
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        if (i) out += ", ";
        std::string_view key = items[i];
        if (type_of(key) == kSymbol) {
          std::string_view name = key.substr(1);
          out += plain_symbol(name, false) ? std::string(name) : inspect_text(name);
          out += ": ";
        } else {
          out += inspect(key) + " => ";
        }
        out += inspect(items[i + 1]);
      }
      return out + "}";
    }
    default: return to_s(v);
  }
}

}  // namespace label_value
}  // namespace rperf
