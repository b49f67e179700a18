// A label key or value as it was given: Rperf.label keeps Ruby's values (a String, a Symbol, an
// Integer, a Float, true/false/nil, an Array or a Hash of those) and a file holds any JSON value.
// Each is one canonical byte string, a type tag then its payload, so the label-set table hashes
// and compares bytes whatever the type, and stays Ruby-independent:
//   String 's' bytes, Symbol 'y' name, Integer 'i' decimal, Float 'f' 8 bytes (IEEE, little
//   endian), true 't', false 'F', nil 'n', Array 'a' items, Hash 'h' key, value, key, value...
// where each item is its own encoding after a 4-byte little-endian length.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rperf {
namespace label_value {

enum Type : char {
  kString = 's',
  kSymbol = 'y',
  kInteger = 'i',
  kFloat = 'f',
  kTrue = 't',
  kFalse = 'F',
  kNil = 'n',
  kArray = 'a',
  kHash = 'h',
};

std::string string(std::string_view bytes);
std::string symbol(std::string_view name);
std::string integer(int64_t v);
std::string integer_text(std::string_view decimal);  // any size: "-123456789012345678901234"
std::string real(double v);
std::string boolean(bool v);
std::string nil();
std::string array(const std::vector<std::string>& items);
std::string hash(const std::vector<std::pair<std::string, std::string>>& members);

// The type of an encoded value (kNil for an empty or unknown encoding).
Type type_of(std::string_view v);
// String and Symbol: the bytes; Integer: the decimal digits; others: empty.
std::string_view text_of(std::string_view v);
double real_of(std::string_view v);  // Float (0 otherwise)
bool int64_of(std::string_view v, int64_t& out);
// Array items, or a Hash's keys and values in turn, each an encoded value.
std::vector<std::string_view> items_of(std::string_view v);
// The same one at a time, without allocating: `pos` starts at 1; false after the last.
bool next_item(std::string_view v, size_t& pos, std::string_view& item);

// Ruby's to_s of the value ("1.5", "true", "" for nil, inspect for an Array or a Hash, in
// Ruby 3.4's spelling): what pprof's string labels, the viewer and the text views show, and
// what a label filter compares (keys and values by their text, so {endpoint: "/a"} finds a
// loaded file's labels and a value 1.5 is "1.5").
std::string to_s(std::string_view v);
// Ruby's inspect of the value ("\"a\"", ":sym", "[1, 2]", "{a: 1}").
std::string inspect(std::string_view v);
// Ruby's Float#to_s ("1.0e+16", "0.0001", "NaN").
std::string float_to_s(double v);

}  // namespace label_value
}  // namespace rperf
