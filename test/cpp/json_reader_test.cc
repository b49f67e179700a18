// JsonReader with a builder that prints values back in a canonical form, TextTable, and
// gunzip (both backends) on good, truncated and corrupt input.
#include <gtest/gtest.h>

#include "io/gzip.hh"
#include "io/json_reader.hh"
#include "io/output.hh"
#include "io/text_table.hh"

#include <algorithm>
#include <cstring>
#include <unordered_map>

using namespace rperf;

namespace {

// Values are their canonical text; arrays of scalars seen before are reported as shared.
struct PrintBuilder {
  using Value = std::string;
  TextTable<int> seen;
  int shared_hits = 0;
  Value null_value() { return "null"; }
  Value true_value() { return "true"; }
  Value false_value() { return "false"; }
  Value integer(const char* t, size_t n) { return "i:" + std::string(t, n); }
  Value real(const char* t, size_t n) { return "r:" + std::string(t, n); }
  Value string(const char* s, size_t n) { return "s:" + std::string(s, n); }
  Value key(const char* s, size_t n) { return "k:" + std::string(s, n); }
  Value begin_array() { return "["; }
  void push(Value& a, Value v) { a += (a.size() > 1 ? "," : "") + v; }
  // The look-ahead's hints too (json_reader.hh), so every test here runs through them.
  uint64_t array_hash(const char* raw, size_t len) const { return TextTable<int>::hash(raw, len); }
  void prefetch_arrays(const uint64_t* hashes, size_t n) const {
    for (size_t i = 0; i < n; i++) seen.prefetch_entry(hashes[i]);
  }
  bool find_array(const char* raw, size_t len, uint64_t hash, Value& out) {
    EXPECT_EQ(hash, array_hash(raw, len));
    return find_array(raw, len, out);
  }
  bool find_array(const char* raw, size_t len, Value& out) {
    if (!seen.find(raw, len)) return false;
    shared_hits++;
    out = "shared:" + std::string(raw, len);
    return true;
  }
  Value end_array(Value a, const char* raw, size_t len, size_t count, bool scalars) {
    if (raw && scalars && count > 0 && count <= 3) seen.insert(raw, len, 1);
    return a + "]";
  }
  Value begin_object() { return "{"; }
  void set(Value& o, Value k, Value v) { o += (o.size() > 1 ? "," : "") + k + "=" + v; }
  Value end_object(Value o) { return o; }  // objects print unclosed
  const char* refusal() const { return nullptr; }
};

// A document handed over `piece` bytes at a time.
class PieceSource : public JsonSource {
 public:
  PieceSource(const std::string& text, size_t piece) : text_(text), piece_(piece) {}
  size_t read(char* out, size_t cap) override {
    size_t n = std::min({cap, piece_, text_.size() - at_});
    std::memcpy(out, text_.data() + at_, n);
    at_ += n;
    return n;
  }

 private:
  const std::string& text_;
  size_t piece_, at_ = 0;
};

std::string parse_with(JsonReader<PrintBuilder>& reader, PrintBuilder& b, std::string* error, int* shared) {
  std::string out;
  bool ok = reader.parse(out);
  if (error) *error = reader.error();
  if (shared) *shared = b.shared_hits;
  return ok ? out : "ERROR";
}

// Parsed whole, then streamed (in 1-, 3- and 1000-byte pieces through windows of 1 byte, 7
// bytes and the default): each streamed parse must give the same values, sharing and error.
std::string parse(const std::string& json, std::string* error = nullptr, int* shared = nullptr) {
  PrintBuilder b;
  JsonReader<PrintBuilder> reader(json.data(), json.size(), b);
  std::string whole = parse_with(reader, b, error, shared);
  const std::pair<size_t, size_t> pieces_and_windows[] = {{1, 1}, {3, 7}, {1000, JsonReader<PrintBuilder>::kDefaultWindow}};
  for (auto [piece, window] : pieces_and_windows) {
    PrintBuilder sb;
    PieceSource source(json, piece);
    JsonReader<PrintBuilder> streamed(source, sb, window);
    std::string streamed_error;
    int streamed_shared = 0;
    EXPECT_EQ(parse_with(streamed, sb, &streamed_error, &streamed_shared), whole) << "piece " << piece << ", window " << window;
    if (error) {
      EXPECT_EQ(streamed_error, *error) << "piece " << piece << ", window " << window;
    }
    if (shared) {
      EXPECT_EQ(streamed_shared, *shared) << "piece " << piece << ", window " << window;
    }
  }
  return whole;
}

}  // namespace

TEST(JsonReader, ParsesEveryKindOfValue) {
  EXPECT_EQ(parse(" {\"a\" : [1, -0, 2.5, -1e3, 7E+2, true, false, null], \"b\":{}, \"c\":[]} "),
            "{k:a=[i:1,i:-0,r:2.5,r:-1e3,r:7E+2,true,false,null],k:b={,k:c=[]");  // objects print unclosed
  EXPECT_EQ(parse("\"x\""), "s:x");
  EXPECT_EQ(parse("123456789012345678901234567890"), "i:123456789012345678901234567890");
}

TEST(JsonReader, UnescapesStringsAndSurrogatePairs) {
  EXPECT_EQ(parse(R"(["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u4e2d\ud83d\ude00", "\ud800x", "\udc00"])"),
            "[s:a\"b\\c/d\b\f\n\r\t,s:\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80,s:\xef\xbf\xbdx,s:\xef\xbf\xbd]");
  EXPECT_EQ(parse("\"caf\xc3\xa9\""), "s:caf\xc3\xa9");
}

TEST(JsonReader, RejectsMalformedInputSayingWhere) {
  std::string error;
  for (const char* bad : {"", "[", "[1,]", "{\"a\"}", "{\"a\":1,}", "{1:2}", "01", "1.", "-", "1e", "tru", "nul",
                          "\"abc", "\"a\\x\"", "\"\\u12g4\"", "\"\x01\"", "\"\xff\"", "\"\xc3\"", "[1] 2", "[1 2]",
                          "{\"a\":1 \"b\":2}", "NaN", "Infinity"}) {
    EXPECT_EQ(parse(bad, &error), "ERROR") << bad;
    EXPECT_NE(error.find("at byte"), std::string::npos) << bad << ": " << error;
  }
  EXPECT_EQ(parse("[1,]", &error), "ERROR");
  EXPECT_EQ(error, "unexpected character at byte 3");
}

TEST(JsonReader, LimitsNestingInsteadOfOverflowingTheStack) {
  std::string error;
  std::string deep(100000, '[');
  EXPECT_EQ(parse(deep, &error), "ERROR");
  EXPECT_NE(error.find("nesting too deep"), std::string::npos);
  std::string ok = std::string(500, '[') + std::string(500, ']');
  EXPECT_NE(parse(ok), "ERROR");
}

TEST(JsonReader, OffersRepeatedScalarArraysForSharing) {
  int shared = 0;
  std::string out = parse(R"([["a.rb","m",1],["a.rb","m",1],["a.rb","m",2],["a\"]","x"],["a\"]","x"],[[1]],[[1]]])", nullptr, &shared);
  EXPECT_EQ(shared, 3) << out;  // the second ["a.rb","m",1], ["a\"]","x"] and [1]
  EXPECT_NE(out.find("shared:[\"a.rb\",\"m\",1]"), std::string::npos) << out;
  EXPECT_NE(out.find("shared:[\"a\\\"]\",\"x\"]"), std::string::npos) << out;
}

TEST(JsonReader, StreamsTokensLongerThanItsWindow) {
  // A string and a number far longer than the window, escapes astride a window's edge, and
  // short arrays of scalars repeated after more than a window of other text (still shared).
  const std::string long_text(300000, 'x');
  const std::string digits(70000, '7');
  std::string filler;
  for (int i = 0; i < 20000; i++) filler += "[" + std::to_string(i) + "," + std::to_string(i) + "],";
  const std::string doc = "[[\"a.rb\",\"m\",1],\"" + long_text + "\\n\\u00e9\"," + digits + "," + filler + "[\"a.rb\",\"m\",1]]";
  int shared = 0;
  std::string out = parse(doc, nullptr, &shared);
  EXPECT_NE(out.find("s:" + long_text + "\n\xc3\xa9"), std::string::npos);
  EXPECT_NE(out.find("i:" + digits), std::string::npos);
  EXPECT_NE(out.find("shared:[\"a.rb\",\"m\",1]"), std::string::npos);
  EXPECT_EQ(shared, 1);
  std::string error;
  EXPECT_EQ(parse(doc.substr(0, doc.size() - 1), &error), "ERROR");
  EXPECT_EQ(error, "unterminated array at byte " + std::to_string(doc.size() - 1));
}

TEST(TextTable, FindsStoredTextsAndGrows) {
  TextTable<int> t;
  for (int i = 0; i < 5000; i++) {
    std::string k = "key" + std::to_string(i);
    EXPECT_TRUE(t.insert(k.data(), k.size(), i));
  }
  EXPECT_FALSE(t.insert("key7", 4, 99));  // present
  EXPECT_EQ(t.size(), 5000u);
  for (int i = 0; i < 5000; i++) {
    std::string k = "key" + std::to_string(i);
    ASSERT_NE(t.find(k.data(), k.size()), nullptr);
    EXPECT_EQ(*t.find(k.data(), k.size()), i);
  }
  EXPECT_EQ(t.find("key", 3), nullptr);
  EXPECT_EQ(t.find("", 0), nullptr);
  std::string huge(TextTable<int>::kMaxKey + 1, 'x');
  EXPECT_FALSE(t.insert(huge.data(), huge.size(), 1));
  int sum = 0;
  t.each_value([&](int v) { sum += v; });
  EXPECT_EQ(sum, 4999 * 5000 / 2);
}

TEST(TextTable, RandomTextsAgreeWithUnorderedMap) {
  TextTable<int> t;
  std::unordered_map<std::string, int> model;
  uint64_t state = 9;
  auto next = [&] { return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  for (int i = 0; i < 30000; i++) {
    const uint64_t n = next() % 20000;
    const std::string k = std::string(n % 40, 'f') + "[\"a.rb\"," + std::to_string(n) + "]";  // from 9 bytes to 50
    const uint64_t h = TextTable<int>::hash(k.data(), k.size());
    t.prefetch(h);
    t.prefetch_entry(h);
    auto it = model.find(k);
    const int* found = t.find(k.data(), k.size(), h);
    ASSERT_EQ(found != nullptr, it != model.end()) << k;
    if (found) {
      EXPECT_EQ(*found, it->second);
      EXPECT_FALSE(t.insert(k.data(), k.size(), -1));
    } else {
      EXPECT_TRUE(t.insert(k.data(), k.size(), i));
      model[k] = i;
    }
  }
  EXPECT_EQ(t.size(), model.size());
  size_t values = 0;
  t.each_value([&](int) { values++; });
  EXPECT_EQ(values, model.size());
}

TEST(Gunzip, RoundTripsAndRejectsDamageWithEveryBackend) {
  std::string data;
  for (int i = 0; data.size() < (3u << 20); i++) data += "[\"app/x.rb\",\"M#m" + std::to_string(i % 777) + "\"],";
  std::string gz = gzip_compress(data, 1);
  for (DeflateBackend b : {DeflateBackend::kIsal, DeflateBackend::kZlib}) {
    if (!deflate_backend_available(b)) continue;
    std::string out;
    EXPECT_EQ(gunzip(gz.data(), gz.size(), out, b), "") << deflate_backend_name(b);
    EXPECT_EQ(out, data);
    EXPECT_NE(gunzip(gz.data(), gz.size() / 2, out, b), "") << "truncated, " << deflate_backend_name(b);
    EXPECT_NE(gunzip(gz.data(), gz.size() - 3, out, b), "") << "no trailer, " << deflate_backend_name(b);
    std::string bad_crc = gz;
    bad_crc[bad_crc.size() - 6] ^= 1;
    EXPECT_NE(gunzip(bad_crc.data(), bad_crc.size(), out, b), "") << "CRC, " << deflate_backend_name(b);
    std::string garbage = "\x1f\x8b\x08\x00garbage-garbage-garbage";
    EXPECT_NE(gunzip(garbage.data(), garbage.size(), out, b), "") << deflate_backend_name(b);
    std::string empty_gz = gzip_compress("");
    EXPECT_EQ(gunzip(empty_gz.data(), empty_gz.size(), out, b), "");
    EXPECT_EQ(out, "");
    // A piece at a time, as the loader reads: the same bytes; damage found where it is.
    for (size_t cap : {size_t{1} << 10, size_t{1} << 18}) {
      GzipStream stream(gz.data(), gz.size(), b);
      std::string pieces;
      std::string piece(cap, '\0');
      while (size_t n = stream.read(&piece[0], cap)) pieces.append(piece, 0, n);
      EXPECT_TRUE(stream.done()) << stream.error();
      EXPECT_EQ(stream.error(), "");
      EXPECT_EQ(pieces, data);
      GzipStream damaged(bad_crc.data(), bad_crc.size(), b);
      while (damaged.read(&piece[0], cap) > 0) {
      }
      EXPECT_FALSE(damaged.done());
      EXPECT_NE(damaged.error(), "") << deflate_backend_name(b);
      GzipStream cut(gz.data(), gz.size() / 2, b);
      while (cut.read(&piece[0], cap) > 0) {
      }
      EXPECT_EQ(cut.error(), "truncated") << deflate_backend_name(b);
    }
    EXPECT_EQ(GzipStream::size_hint(gz.data(), gz.size()), data.size());
  }
}
