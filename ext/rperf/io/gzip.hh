// gzip (RFC 1952) built from independently deflated chunks. Each chunk is a raw deflate
// stream primed with the preceding 32 KiB of input as dictionary and ended with a full flush
// (the last one with the final block), so the chunks concatenate into one valid deflate
// stream: one gzip member, readable by Zlib::GzipReader. Chunks can thus be compressed in
// parallel and while the encoder is still producing input (see output.hh).
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace rperf {

enum class DeflateBackend {
  kIsal,  // Intel ISA-L (igzip): 0.43 s for the 252 MB benchmark JSON vs zlib level 1's 1.54 s, and smaller
  kZlib,
};

bool deflate_backend_available(DeflateBackend backend);
DeflateBackend default_deflate_backend();  // ISA-L when the build found it, else zlib
std::string deflate_backend_name(DeflateBackend backend);  // "isa-l" / "zlib 1.2.13"

constexpr size_t kDeflateWindow = 32768;

// One compressor per thread; reused across chunks.
class ChunkDeflater {
 public:
  // `level` as zlib's (-1 = default, 0-9); mapped onto ISA-L's levels 1-3.
  ChunkDeflater(DeflateBackend backend, int level);
  ~ChunkDeflater();
  ChunkDeflater(const ChunkDeflater&) = delete;
  ChunkDeflater& operator=(const ChunkDeflater&) = delete;

  // Appends the compressed `in` to `out`. `dict`: the input just before `in` (at most
  // kDeflateWindow bytes are used). Returns false if the library failed.
  bool deflate_chunk(const char* dict, size_t dict_len, const char* in, size_t len, bool last, std::string& out);

 private:
  struct State;
  DeflateBackend backend_;
  int level_;
  State* state_;
};

uint32_t crc32_update(uint32_t crc, const char* data, size_t len);
uint32_t crc32_concat(uint32_t crc_a, uint32_t crc_b, size_t len_b);  // CRC of a followed by b

void append_gzip_header(std::string& out);
void append_gzip_trailer(std::string& out, uint32_t crc, uint64_t input_len);

// The first gzip member of `in`, decompressed a piece at a time into the caller's buffer, so a
// large file is parsed from a small cache-resident window instead of being inflated whole
// (inflating the 252 MB benchmark body into one string cost 0.9 CPU-s in zero-filling and page
// faults alone on the development VM). The CRC and length are checked when the member ends.
class GzipStream {
 public:
  GzipStream(const char* in, size_t len, DeflateBackend backend = default_deflate_backend());
  ~GzipStream();
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  // Up to `cap` (> 0) more bytes into `out`; 0 once the member has ended (done()) or the data is
  // bad (error() then says what: "truncated", "CRC mismatch", "invalid deflate data", ...).
  size_t read(char* out, size_t cap);
  bool done() const { return done_; }
  const std::string& error() const { return error_; }
  // The member's length as its trailer claims it (mod 2^32), believed up to what deflate can
  // produce from this input: a hint for sizing, checked only when the member ends.
  static size_t size_hint(const char* in, size_t len);

 private:
  struct State;
  State* state_;
  DeflateBackend backend_;
  uint64_t total_ = 0;
  bool done_ = false;
  std::string error_;
};

// A GzipStream inflated on a thread of its own, up to kChunks chunks ahead of the reader, so
// a large file's inflate overlaps its parse (ISA-L's inflate was 18% of `rperf report --top` on
// the 100k-stack benchmark profile, in line before the parse). Without a thread to start
// (std::system_error), it inflates in line. Not for Ruby: the thread runs only the inflater.
class InflateAhead {
 public:
  InflateAhead(const char* in, size_t len);
  ~InflateAhead();  // stops the thread and joins it
  InflateAhead(const InflateAhead&) = delete;
  InflateAhead& operator=(const InflateAhead&) = delete;

  // As GzipStream::read. done() and error() tell why once read() has returned 0.
  size_t read(char* out, size_t cap);
  bool done() const { return stream_.done(); }
  const std::string& error() const { return stream_.error(); }

 private:
  static constexpr size_t kChunks = 4;
  static constexpr size_t kChunkSize = size_t{256} << 10;
  struct Chunk {
    std::unique_ptr<char[]> data;
    size_t len = 0;
  };
  void produce();

  GzipStream stream_;
  std::mutex mutex_;
  std::condition_variable changed_;
  Chunk chunks_[kChunks];
  uint64_t filled_ = 0, taken_ = 0;  // chunks handed over and given back (guarded by mutex_)
  size_t offset_ = 0;                // the reader's position in chunk taken_ (reader only)
  bool ended_ = false, stopping_ = false;
  bool in_line_ = false;
  std::thread thread_;
};

// Decompresses the first gzip member of `in` into `out` (replacing it), checking its CRC.
// Returns "" on success, else what is wrong ("truncated", "invalid deflate data", ...).
std::string gunzip(const char* in, size_t len, std::string& out, DeflateBackend backend = default_deflate_backend());

// Decompresses as much of the start of `in` as is readable, up to `max_out` bytes, into `out`
// (the head of a large file: no CRC check, stops quietly at corrupt or missing data).
void gunzip_prefix(const char* in, size_t len, std::string& out, size_t max_out = 1 << 20);

}  // namespace rperf
