// Where an encoder's bytes go: a file descriptor or a string, plain or gzip-compressed.
// Encoders append small pieces into a chunk; full chunks go to background threads that
// compress them (in parallel, see gzip.hh) and write them in order. A 250 MB JSON body thus
// never exists in memory at once (memory stays ~10 MiB), and producing it overlaps
// compression and the kernel's copy into the page cache.
#pragma once
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "io/gzip.hh"

namespace rperf {

struct OutputOptions {
  bool gzip = false;
  int level = -1;  // zlib's scale
  DeflateBackend backend = default_deflate_backend();
  size_t chunk_size = 1u << 20;
  unsigned threads = 0;  // background threads; 0 = one per CPU (at most 4)
};

class Output {
 public:
  Output(int fd, const OutputOptions& options);           // writes to fd (not closed)
  Output(std::string* out, const OutputOptions& options);  // appends to *out
  ~Output();                                               // finishes if finish() was not called
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  void append(const char* data, size_t len) {
    if (len <= capacity_ - used_) {
      std::memcpy(buffer_ + used_, data, len);
      used_ += len;
    } else {
      append_slow(data, len);
    }
  }
  void append(const std::string& s) { append(s.data(), s.size()); }
  void append(char c) {
    if (used_ < capacity_) buffer_[used_++] = c;
    else append_slow(&c, 1);
  }
  template <typename Int>
  void append_int(Int value) {
    char digits[24];
    auto result = std::to_chars(digits, digits + sizeof digits, value);
    append(digits, static_cast<size_t>(result.ptr - digits));
  }

  // Flushes everything (and the gzip trailer). Returns 0, or the errno of the first failed
  // write (EIO if the compressor failed). Later appends are ignored.
  int finish();
  // True once a write failed: encoders may stop producing early.
  bool failed() const;

 private:
  struct Pipeline;
  void start(const OutputOptions& options);
  void append_slow(const char* data, size_t len);
  void submit_chunk(bool last);

  std::unique_ptr<Pipeline> pipeline_;
  char* buffer_ = nullptr;  // the chunk being filled
  size_t used_ = 0;
  size_t capacity_ = 0;
  bool finished_ = false;
  int result_ = 0;
};

// gzip of a whole string (RFC 1952, one member); `level` as zlib's (-1 = default).
std::string gzip_compress(const std::string& data, int level = -1);

}  // namespace rperf
