// A strict JSON (RFC 8259) reader that hands values to a Builder as it goes, so the caller
// decides what a value becomes (Ruby objects in load_binding.cc, strings in the tests).
// It exists to load large profiles: JSON.parse of a 252 MB profile takes 4 s and 1.2 GB,
// mostly to build 4 million identical frame arrays; a Builder can share them instead.
//
// Builder interface (duck-typed, so calls inline):
//   using Value = ...;
//   Value null_value(), true_value(), false_value();
//   Value integer(const char* text, size_t len);       // -?[0-9]+
//   Value real(const char* text, size_t len);          // with a fraction or exponent
//   Value string(const char* utf8, size_t len);        // unescaped, valid UTF-8
//   Value key(const char* utf8, size_t len);           // an object key
//   Value begin_array();  void push(Value& array, Value element);
//   // `raw` spans the array's source text; `scalars` is true when no element is an
//   // array or object. Returns the array to use (possibly an identical earlier one).
//   Value end_array(Value array, const char* raw, size_t raw_len, size_t count, bool scalars);
//   // Before parsing an array of scalars: an earlier identical one (by source text) to
//   // reuse, skipping the parse (4 million frames of a large profile are 20,000 distinct).
//   bool find_array(const char* raw, size_t raw_len, Value& out);
//   // Optional, together: find_array with the text's hash, computed ahead. When an array's first
//   // element is an array (a stack of frames), the reader finds the next short arrays of
//   // scalars in its window, hashes each and hands the hashes over before parsing them, so
//   // the lookups' cache misses overlap instead of coming one per frame.
//   uint64_t array_hash(const char* raw, size_t raw_len);
//   void prefetch_arrays(const uint64_t* hashes, size_t n);
//   bool find_array(const char* raw, size_t raw_len, uint64_t hash, Value& out);
//   Value begin_object(); void set(Value& object, Value key, Value value);
//   Value end_object(Value object);
//   // Checked after each begin_array/begin_object, push and set: non-null stops the parse with
//   // this reason (a shape the builder cannot use, or its memory budget spent), so a hostile
//   // document fails when its first bad value ends, not after it has been built whole.
//   const char* refusal() const;
//
// The input is either one buffer, or a JsonSource read a window at a time (a gzip stream: the
// loader never holds a large profile's whole text). Streamed, a string or number is kept whole
// in the window while it is read, and an array's raw text only while it is at most kScanLimit
// bytes long (longer raw text is passed as nullptr: a builder cannot share such arrays anyway).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "util/utf8.hh"

namespace rperf {


template <typename Builder, typename = void>
struct PrefetchesArrays : std::false_type {};
template <typename Builder>
struct PrefetchesArrays<Builder, decltype(void(std::declval<Builder&>().array_hash(nullptr, 0)))> : std::true_type {};

// The bytes of a streamed document, a piece at a time.
class JsonSource {
 public:
  virtual ~JsonSource() = default;
  // Up to `cap` (> 0) more bytes into `out`; 0 when there are no more (the end, or bad data:
  // the source's owner knows which).
  virtual size_t read(char* out, size_t cap) = 0;
};

template <typename Builder>
class JsonReader {
 public:
  using Value = typename Builder::Value;
  static constexpr int kMaxDepth = 512;  // deeper input is rejected, not a stack overflow
  static constexpr ptrdiff_t kScanLimit = 4096;  // longest array text find_array is offered

  static constexpr size_t kDefaultWindow = size_t{256} << 10;  // stays in the L2 cache while parsed

  JsonReader(const char* data, size_t len, Builder& builder) : begin_(data), p_(data), end_(data + len), b_(builder) {}
  // Streamed: reads `source` into a window of `window` bytes (grown for a longer token).
  JsonReader(JsonSource& source, Builder& builder, size_t window = kDefaultWindow)
      : begin_(nullptr), p_(nullptr), end_(nullptr), b_(builder), source_(&source), window_size_(std::max<size_t>(window, 1)) {}

  // Parses the whole input as one value. On failure, error() says what and where.
  bool parse(Value& out) {
    skip_space();
    if (!value(out, 0)) return false;
    skip_space();
    if (more()) return fail("unexpected data after the document");
    return true;
  }
  // Parses only the first `max_members` members of the object the input starts with; the rest
  // may be missing (a file's head read without its body).
  bool parse_head(Value& out, size_t max_members) {
    skip_space();
    if (!more() || *p_ != '{') return fail("expected an object");
    p_++;
    Value obj = b_.begin_object();
    if (const char* why = b_.refusal()) return refuse(why);
    for (size_t i = 0; i < max_members; i++) {
      skip_space();
      if (more() && *p_ == '}') break;
      if (i > 0) {
        if (!more() || *p_ != ',') return fail("expected ','");
        p_++;
        skip_space();
      }
      if (!member(obj, 1)) return false;
    }
    out = obj;
    return true;
  }
  const std::string& error() const { return error_; }
  // True when the builder stopped the parse (error() then starts with its reason).
  bool refused() const { return refused_; }

 private:
  bool fail(const char* what) {
    if (error_.empty()) error_ = std::string(what) + " at byte " + std::to_string(offset(p_));
    return false;
  }

  // A position as an offset in the whole document, and back (valid while in the window).
  size_t offset(const char* p) const { return base_ + static_cast<size_t>(p - begin_); }
  const char* at(size_t off) const { return begin_ + (off - base_); }

  // True when a byte is left at p_ (reading more from the source if needed).
  bool more() { return p_ < end_ || refill(1); }
  // True when `n` bytes are left at p_ (reading more if needed); false at the end.
  bool ensure(size_t n) { return static_cast<size_t>(end_ - p_) >= n || refill(n); }

  // Moves what is still needed (from the token being read, or the start of a short array being
  // read, else from p_) to the front of the window and reads more after it.
  __attribute__((noinline)) bool refill(size_t need) {
    if (!source_ || source_done_) return false;
    size_t keep = offset(p_);
    if (token_start_ != kNone && token_start_ < keep) keep = token_start_;
    if (array_start_ != kNone && array_start_ >= base_ && keep - array_start_ <= static_cast<size_t>(kScanLimit)) {
      keep = std::min(keep, array_start_);
    }
    const size_t kept = begin_ ? static_cast<size_t>(end_ - at(keep)) : 0;
    const size_t p_off = offset(p_);
    // Room for at least as much again as is kept: a token far longer than the window is
    // copied O(1) times per byte, not once per window.
    const size_t wanted = kept + std::max({need, window_size_, kept});
    if (wanted > window_capacity_) {
      std::unique_ptr<char[]> bigger(new char[wanted]);
      if (kept) std::memcpy(bigger.get(), at(keep), kept);
      window_ = std::move(bigger);
      window_capacity_ = wanted;
    } else if (kept) {
      std::memmove(window_.get(), at(keep), kept);
    }
    base_ = keep;
    begin_ = window_.get();
    end_ = begin_ + kept;
    p_ = at(p_off);
    char* const limit = window_.get() + window_capacity_;
    while (end_ < limit) {  // the window filled (a source may hand over less than asked)
      size_t n = source_->read(const_cast<char*>(end_), static_cast<size_t>(limit - end_));
      if (n == 0) {
        source_done_ = true;
        break;
      }
      end_ += n;
    }
    return static_cast<size_t>(end_ - p_) >= need;
  }

  bool refuse(const char* why) {
    refused_ = true;
    return fail(why);
  }

  void skip_space() {
    while (more() && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) p_++;
  }

  bool literal(const char* word, size_t n) {
    if (!ensure(n) || std::char_traits<char>::compare(p_, word, n) != 0) return fail("invalid literal");
    p_ += n;
    return true;
  }

  bool value(Value& out, int depth) {
    if (!more()) return fail("unexpected end of input");
    switch (*p_) {
      case '{': return object(out, depth + 1);
      case '[': return array(out, depth + 1);
      case '"': {
        const char* s;
        size_t n;
        if (!string_token(s, n)) return false;
        out = b_.string(s, n);
        return true;
      }
      case 't': if (!literal("true", 4)) return false; out = b_.true_value(); return true;
      case 'f': if (!literal("false", 5)) return false; out = b_.false_value(); return true;
      case 'n': if (!literal("null", 4)) return false; out = b_.null_value(); return true;
      default: return number(out);
    }
  }

  // The ']' closing a short array of scalars starting at p, or nullptr. Only a shortcut:
  // the text is trusted only if identical text was parsed before.
  const char* scalar_array_end(const char* p) const {
    const char* limit = end_ - p > kScanLimit ? p + kScanLimit : end_;
    for (const char* q = p + 1; q < limit; q++) {
      char c = *q;
      if (c == '"') {  // skip the string: its closing quote has an even run of '\\' before it
        for (;;) {
          q = static_cast<const char*>(std::memchr(q + 1, '"', static_cast<size_t>(limit - q - 1)));
          if (!q) return nullptr;
          size_t backslashes = 0;
          while (q[-1 - static_cast<ptrdiff_t>(backslashes)] == '\\') backslashes++;
          if (backslashes % 2 == 0) break;
        }
      } else if (c == '[' || c == '{') {
        return nullptr;
      } else if (c == ']') {
        return q;
      }
    }
    return nullptr;
  }

  // The short arrays of scalars found ahead (their offset, length and hash), and the next
  // one to be parsed.
  struct Ahead {
    size_t at, len;
    uint64_t hash;
  };
  static constexpr size_t kAhead = 32;

  // At the first of a run of arrays: finds up to kAhead short arrays of scalars that follow
  // one another (separated by ',' and blanks) in the window and hands their hashes over.
  void look_ahead() {
    ahead_count_ = ahead_next_ = 0;
    uint64_t hashes[kAhead];
    const char* q = p_;
    while (ahead_count_ < kAhead) {
      const char* close = scalar_array_end(q);
      if (!close) break;
      const size_t len = static_cast<size_t>(close + 1 - q);
      hashes[ahead_count_] = b_.array_hash(q, len);
      ahead_[ahead_count_] = Ahead{offset(q), len, hashes[ahead_count_]};
      ahead_count_++;
      q = close + 1;
      while (q < end_ && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')) q++;
      if (q == end_ || *q != ',') break;
      q++;
      while (q < end_ && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')) q++;
      if (q == end_ || *q != '[') break;
    }
    b_.prefetch_arrays(hashes, ahead_count_);
  }

  // A short array of scalars seen before (by its text), without parsing it.
  bool shared_array(Value& out) {
    if constexpr (PrefetchesArrays<Builder>::value) {
      // A full batch used up: the stack goes on (deeper than kAhead frames), so hint the next.
      if (ahead_count_ == kAhead && ahead_next_ == kAhead) look_ahead();
      if (ahead_next_ < ahead_count_ && ahead_[ahead_next_].at == offset(p_)) {
        const Ahead& a = ahead_[ahead_next_++];
        if (!b_.find_array(p_, a.len, a.hash, out)) return false;
        p_ += a.len;
        return true;
      }
      ahead_count_ = 0;  // elsewhere: what was found ahead is not what is parsed
    }
    if (const char* close = scalar_array_end(p_)) {
      if (b_.find_array(p_, static_cast<size_t>(close + 1 - p_), out)) {
        p_ = close + 1;
        return true;
      }
    }
    return false;
  }

  bool array(Value& out, int depth) {
    if (depth > kMaxDepth) return fail("nesting too deep");
    if (source_) ensure(static_cast<size_t>(kScanLimit) + 1);  // the look-ahead scalar_array_end may use
    if (shared_array(out)) return true;
    const size_t start = array_start_ = offset(p_++);
    Value ary = b_.begin_array();
    if (const char* why = b_.refusal()) return refuse(why);
    size_t count = 0;
    bool scalars = true;
    skip_space();
    if constexpr (PrefetchesArrays<Builder>::value) {
      if (more() && *p_ == '[') look_ahead();
    }
    if (more() && *p_ == ']') {
      p_++;
    } else {
      for (;;) {
        skip_space();
        if (more() && (*p_ == '[' || *p_ == '{')) scalars = false;
        Value element;
        if (!value(element, depth)) return false;
        b_.push(ary, element);
        if (const char* why = b_.refusal()) return refuse(why);
        count++;
        skip_space();
        if (!more()) return fail("unterminated array");
        if (*p_ == ',') { p_++; continue; }
        if (*p_ == ']') { p_++; break; }
        return fail("expected ',' or ']'");
      }
    }
    const size_t raw_len = offset(p_) - start;
    out = b_.end_array(ary, start >= base_ ? at(start) : nullptr, raw_len, count, scalars);
    return true;
  }

  bool object(Value& out, int depth) {
    if (depth > kMaxDepth) return fail("nesting too deep");
    p_++;
    Value obj = b_.begin_object();
    if (const char* why = b_.refusal()) return refuse(why);
    skip_space();
    if (more() && *p_ == '}') {
      p_++;
      out = b_.end_object(obj);
      return true;
    }
    for (;;) {
      skip_space();
      if (!member(obj, depth)) return false;
      skip_space();
      if (!more()) return fail("unterminated object");
      if (*p_ == ',') { p_++; continue; }
      if (*p_ == '}') { p_++; break; }
      return fail("expected ',' or '}'");
    }
    out = b_.end_object(obj);
    return true;
  }

  // "key": value, added to `obj`.
  bool member(Value& obj, int depth) {
    if (!more() || *p_ != '"') return fail("expected a string key");
    const char* s;
    size_t n;
    if (!string_token(s, n)) return false;
    Value key = b_.key(s, n);
    skip_space();
    if (!more() || *p_ != ':') return fail("expected ':'");
    p_++;
    skip_space();
    Value v;
    if (!value(v, depth)) return false;
    b_.set(obj, key, v);
    if (const char* why = b_.refusal()) return refuse(why);
    return true;
  }

  bool number(Value& out) {
    token_start_ = offset(p_);
    if (more() && *p_ == '-') p_++;
    if (!more() || !digit(*p_)) return fail("unexpected character");
    if (*p_ == '0') p_++;
    else while (more() && digit(*p_)) p_++;
    bool real = false;
    if (more() && *p_ == '.') {
      real = true;
      p_++;
      if (!more() || !digit(*p_)) return fail("invalid number");
      while (more() && digit(*p_)) p_++;
    }
    if (more() && (*p_ == 'e' || *p_ == 'E')) {
      real = true;
      p_++;
      if (more() && (*p_ == '+' || *p_ == '-')) p_++;
      if (!more() || !digit(*p_)) return fail("invalid number");
      while (more() && digit(*p_)) p_++;
    }
    const char* start = at(token_start_);
    token_start_ = kNone;
    size_t n = static_cast<size_t>(p_ - start);
    out = real ? b_.real(start, n) : b_.integer(start, n);
    return true;
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  // At an opening quote. Without escapes the result points into the input; otherwise into
  // scratch_ (valid until the next string).
  bool string_token(const char*& s, size_t& n) {
    token_start_ = offset(++p_);
    bool ascii = true;
    while (more()) {
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        s = at(token_start_);
        token_start_ = kNone;
        n = static_cast<size_t>(p_ - s);
        p_++;
        if (!ascii && !utf8_valid(s, n)) return fail("invalid UTF-8 in a string");
        return true;
      }
      if (c == '\\') break;
      if (c < 0x20) return fail("control character in a string");
      if (c >= 0x80) ascii = false;
      p_++;
    }
    if (!more()) return fail("unterminated string");
    scratch_.assign(at(token_start_), p_);
    token_start_ = kNone;
    while (more()) {
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        p_++;
        if (!utf8_valid(scratch_.data(), scratch_.size())) return fail("invalid UTF-8 in a string");
        s = scratch_.data();
        n = scratch_.size();
        return true;
      }
      if (c < 0x20) return fail("control character in a string");
      if (c != '\\') {
        scratch_ += static_cast<char>(c);
        p_++;
        continue;
      }
      ++p_;
      if (!more()) break;
      switch (*p_++) {
        case '"': scratch_ += '"'; break;
        case '\\': scratch_ += '\\'; break;
        case '/': scratch_ += '/'; break;
        case 'b': scratch_ += '\b'; break;
        case 'f': scratch_ += '\f'; break;
        case 'n': scratch_ += '\n'; break;
        case 'r': scratch_ += '\r'; break;
        case 't': scratch_ += '\t'; break;
        case 'u': if (!unicode_escape()) return false; break;
        default: p_--; return fail("invalid escape");
      }
    }
    return fail("unterminated string");
  }

  bool hex4(uint32_t& v) {
    if (!ensure(4)) return fail("truncated \\u escape");
    v = 0;
    for (int i = 0; i < 4; i++) {
      char c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<uint32_t>(c - 'A' + 10);
      else return fail("invalid \\u escape");
    }
    return true;
  }

  // After "\u": one code point, or a surrogate pair; a lone surrogate becomes U+FFFD.
  bool unicode_escape() {
    uint32_t cp = 0;
    if (!hex4(cp)) return false;
    if (cp >= 0xd800 && cp <= 0xdbff) {
      uint32_t low = 0;
      if (ensure(6) && p_[0] == '\\' && p_[1] == 'u') {
        const char* save = p_;
        p_ += 2;
        if (!hex4(low)) return false;
        if (low >= 0xdc00 && low <= 0xdfff) cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        else { p_ = save; cp = 0xfffd; }
      } else {
        cp = 0xfffd;
      }
    } else if (cp >= 0xdc00 && cp <= 0xdfff) {
      cp = 0xfffd;
    }
    if (cp < 0x80) {
      scratch_ += static_cast<char>(cp);
    } else if (cp < 0x800) {
      scratch_ += static_cast<char>(0xc0 | (cp >> 6));
      scratch_ += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      scratch_ += static_cast<char>(0xe0 | (cp >> 12));
      scratch_ += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      scratch_ += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      scratch_ += static_cast<char>(0xf0 | (cp >> 18));
      scratch_ += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      scratch_ += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      scratch_ += static_cast<char>(0x80 | (cp & 0x3f));
    }
    return true;
  }

  static constexpr size_t kNone = SIZE_MAX;

  const char* begin_;  // the window (or the whole input): the document's bytes from base_ on
  const char* p_;
  const char* end_;
  Builder& b_;
  JsonSource* source_ = nullptr;
  size_t base_ = 0;                 // the offset in the document of begin_
  size_t token_start_ = kNone;      // the offset of the string or number being read
  size_t array_start_ = kNone;      // the offset of the innermost array begun
  Ahead ahead_[kAhead];
  size_t ahead_count_ = 0, ahead_next_ = 0;
  std::unique_ptr<char[]> window_;
  size_t window_size_ = 0, window_capacity_ = 0;
  bool source_done_ = false;
  std::string scratch_;
  std::string error_;
  bool refused_ = false;
};

}  // namespace rperf
