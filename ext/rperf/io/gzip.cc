#include "io/gzip.hh"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <system_error>

#ifdef RPERF_HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

namespace rperf {

struct ChunkDeflater::State {
  z_stream zs{};
  bool zs_ready = false;
#ifdef RPERF_HAVE_ISAL
  isal_zstream is{};
  std::string level_buf;
#endif
};

bool deflate_backend_available(DeflateBackend backend) {
#ifdef RPERF_HAVE_ISAL
  (void)backend;
  return true;
#else
  return backend == DeflateBackend::kZlib;
#endif
}

DeflateBackend default_deflate_backend() {
  return deflate_backend_available(DeflateBackend::kIsal) ? DeflateBackend::kIsal : DeflateBackend::kZlib;
}

std::string deflate_backend_name(DeflateBackend backend) {
  return backend == DeflateBackend::kIsal ? "isa-l" : std::string("zlib ") + zlibVersion();
}

ChunkDeflater::ChunkDeflater(DeflateBackend backend, int level)
    : backend_(deflate_backend_available(backend) ? backend : DeflateBackend::kZlib), level_(level), state_(new State) {
  if (backend_ == DeflateBackend::kZlib) {
    state_->zs_ready = deflateInit2(&state_->zs, level, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) == Z_OK;
  }
#ifdef RPERF_HAVE_ISAL
  // ISA-L has levels 0-3; its level 1 already compresses our JSON better than zlib's level 1.
  int isal_level = (level >= 7) ? 3 : (level >= 4 || level < 0) ? 2 : 1;
  level_ = isal_level;
  size_t buf = isal_level == 3 ? ISAL_DEF_LVL3_DEFAULT : isal_level == 2 ? ISAL_DEF_LVL2_DEFAULT : ISAL_DEF_LVL1_DEFAULT;
  if (backend_ == DeflateBackend::kIsal) state_->level_buf.resize(buf);
#endif
}

ChunkDeflater::~ChunkDeflater() {
  if (state_->zs_ready) deflateEnd(&state_->zs);
  delete state_;
}

bool ChunkDeflater::deflate_chunk(const char* dict, size_t dict_len, const char* in, size_t len, bool last, std::string& out) {
  if (dict_len > kDeflateWindow) {
    dict += dict_len - kDeflateWindow;
    dict_len = kDeflateWindow;
  }
  const size_t start = out.size();
  out.resize(start + len + len / 16 + 1024);
#ifdef RPERF_HAVE_ISAL
  if (backend_ == DeflateBackend::kIsal) {
    isal_zstream& s = state_->is;
    isal_deflate_init(&s);
    s.level = static_cast<uint32_t>(level_);
    s.level_buf = reinterpret_cast<uint8_t*>(&state_->level_buf[0]);
    s.level_buf_size = static_cast<uint32_t>(state_->level_buf.size());
    s.gzip_flag = IGZIP_DEFLATE;
    s.flush = FULL_FLUSH;
    s.end_of_stream = last ? 1 : 0;
    if (dict_len > 0 && isal_deflate_set_dict(&s, reinterpret_cast<uint8_t*>(const_cast<char*>(dict)), static_cast<uint32_t>(dict_len)) != COMP_OK) return false;
    s.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(in));
    s.avail_in = static_cast<uint32_t>(len);
    for (;;) {
      s.next_out = reinterpret_cast<uint8_t*>(&out[start + s.total_out]);
      s.avail_out = static_cast<uint32_t>(out.size() - start - s.total_out);
      if (isal_deflate(&s) != COMP_OK) return false;
      // Room left in the output means everything was consumed and flushed (ISA-L's contract).
      if (s.avail_in == 0 && s.avail_out > 0) break;
      out.resize(out.size() + len / 4 + 4096);
    }
    out.resize(start + s.total_out);
    return true;
  }
#endif
  z_stream& zs = state_->zs;
  if (!state_->zs_ready || deflateReset(&zs) != Z_OK) return false;
  if (dict_len > 0 && deflateSetDictionary(&zs, reinterpret_cast<const Bytef*>(dict), static_cast<uInt>(dict_len)) != Z_OK) return false;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in));
  zs.avail_in = static_cast<uInt>(len);
  const int flush = last ? Z_FINISH : Z_FULL_FLUSH;
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(&out[start + zs.total_out]);
    zs.avail_out = static_cast<uInt>(out.size() - start - zs.total_out);
    int rc = deflate(&zs, flush);
    if (last ? rc == Z_STREAM_END : (rc == Z_OK && zs.avail_in == 0 && zs.avail_out > 0)) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) return false;
    out.resize(out.size() + len / 4 + 4096);
  }
  out.resize(start + zs.total_out);
  return true;
}

uint32_t crc32_update(uint32_t crc, const char* data, size_t len) {
#ifdef RPERF_HAVE_ISAL
  return crc32_gzip_refl(crc, reinterpret_cast<const unsigned char*>(data), len);
#else
  return static_cast<uint32_t>(crc32_z(crc, reinterpret_cast<const Bytef*>(data), len));
#endif
}

uint32_t crc32_concat(uint32_t crc_a, uint32_t crc_b, size_t len_b) {
  return static_cast<uint32_t>(crc32_combine(crc_a, crc_b, static_cast<z_off_t>(len_b)));
}

void append_gzip_header(std::string& out) {
  out.append("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);  // deflate, no name, no mtime, OS = Unix
}

void append_gzip_trailer(std::string& out, uint32_t crc, uint64_t input_len) {
  for (int i = 0; i < 4; i++) out += static_cast<char>((crc >> (8 * i)) & 0xff);
  for (int i = 0; i < 4; i++) out += static_cast<char>((input_len >> (8 * i)) & 0xff);  // ISIZE: length mod 2^32
}

namespace {
// ISA-L counts output in 32 bits; no profile we could load into Ruby is larger anyway.
constexpr size_t kMaxInflated = UINT32_MAX;
constexpr const char* kTooLarge = "over 4 GiB decompressed";
}  // namespace

struct GzipStream::State {
  z_stream zs{};
  bool zs_ready = false;
#ifdef RPERF_HAVE_ISAL
  inflate_state is{};
#endif
};

size_t GzipStream::size_hint(const char* in, size_t len) {
  // The trailer's ISIZE (length mod 2^32) is only a hint: a corrupt file may claim anything,
  // but not more than deflate can produce (at most ~1032 bytes per byte of input), so a claim
  // is believed up to that. A right first guess matters to gunzip: each doubling copies the
  // text and holds both copies (a 521 KB file of 512 MiB peaked at 1.07 GB with a guess of 64x).
  uint64_t isize = 0;
  if (len >= 4) for (int i = 3; i >= 0; i--) isize = (isize << 8) | static_cast<unsigned char>(in[len - 4 + i]);
  return std::min<size_t>({isize, len * 1032 + 4096, kMaxInflated});
}

GzipStream::GzipStream(const char* in, size_t len, DeflateBackend backend)
    : state_(new State), backend_(deflate_backend_available(backend) ? backend : DeflateBackend::kZlib) {
  // Both libraries count input in 32 bits.
  if (len > UINT32_MAX) {
    error_ = "over 4 GiB compressed";
    return;
  }
#ifdef RPERF_HAVE_ISAL
  if (backend_ == DeflateBackend::kIsal) {
    inflate_state& st = state_->is;
    isal_inflate_init(&st);
    st.crc_flag = ISAL_GZIP;  // parse the header, verify CRC and length
    st.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(in));
    st.avail_in = static_cast<uint32_t>(len);
    return;
  }
#endif
  z_stream& zs = state_->zs;
  if (inflateInit2(&zs, 15 + 16) != Z_OK) {
    error_ = "zlib failed to start";
    return;
  }
  state_->zs_ready = true;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in));
  zs.avail_in = static_cast<uInt>(len);
}

GzipStream::~GzipStream() {
  if (state_->zs_ready) inflateEnd(&state_->zs);
  delete state_;
}

size_t GzipStream::read(char* out, size_t cap) {
  if (done_ || !error_.empty()) return 0;
  if (total_ >= kMaxInflated) {
    error_ = kTooLarge;
    return 0;
  }
  cap = std::min<size_t>(cap, kMaxInflated - total_);
  size_t produced = 0;
#ifdef RPERF_HAVE_ISAL
  if (backend_ == DeflateBackend::kIsal) {
    inflate_state& st = state_->is;
    st.next_out = reinterpret_cast<uint8_t*>(out);
    st.avail_out = static_cast<uint32_t>(cap);
    // A call may consume a header or a block's table without output: go on until some
    // output, the end, or no progress at all.
    while (produced == 0) {
      const uint32_t in_before = st.avail_in;
      int rc = isal_inflate(&st);
      produced = cap - st.avail_out;
      if (rc == ISAL_INCORRECT_CHECKSUM) error_ = "CRC mismatch";
      else if (rc == ISAL_INVALID_WRAPPER || rc == ISAL_UNSUPPORTED_METHOD) error_ = "invalid gzip header";
      else if (rc < 0) error_ = "invalid deflate data";
      else if (st.block_state == ISAL_BLOCK_FINISH) done_ = true;
      else if (produced == 0 && (st.avail_in == 0 || st.avail_in == in_before)) error_ = "truncated";
      if (!error_.empty()) return 0;
      if (done_) break;
    }
    total_ += produced;
    return produced;
  }
#endif
  z_stream& zs = state_->zs;
  zs.next_out = reinterpret_cast<Bytef*>(out);
  zs.avail_out = static_cast<uInt>(cap);
  while (produced == 0) {
    const uInt in_before = zs.avail_in;
    int rc = inflate(&zs, Z_NO_FLUSH);
    produced = cap - zs.avail_out;
    if (rc == Z_STREAM_END) done_ = true;
    else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) error_ = zs.msg ? zs.msg : "invalid deflate data";
    else if (rc == Z_MEM_ERROR) error_ = "out of memory";
    else if (produced == 0 && (zs.avail_in == 0 || zs.avail_in == in_before)) error_ = "truncated";
    if (!error_.empty()) return 0;
    if (done_) break;
  }
  total_ += produced;
  return produced;
}

InflateAhead::InflateAhead(const char* in, size_t len) : stream_(in, len) {
  try {
    for (Chunk& c : chunks_) c.data.reset(new char[kChunkSize]);
    thread_ = std::thread([this] { produce(); });
  } catch (const std::system_error&) {
    in_line_ = true;
  }
}

InflateAhead::~InflateAhead() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

// The inflating thread: fills the free chunks in turn until the stream ends or fails (GzipStream
// allocates nothing after its construction, so nothing here throws).
void InflateAhead::produce() {
  for (uint64_t next = 0;; next++) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || next - taken_ < kChunks; });
      if (stopping_) return;
    }
    Chunk& c = chunks_[next % kChunks];  // free: the reader gave it back
    c.len = 0;
    while (c.len < kChunkSize) {
      size_t n = stream_.read(c.data.get() + c.len, kChunkSize - c.len);
      if (n == 0) break;
      c.len += n;
    }
    const bool last = c.len < kChunkSize;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      filled_ = next + 1;
      ended_ = last;
    }
    changed_.notify_all();
    if (last) return;
  }
}

size_t InflateAhead::read(char* out, size_t cap) {
  if (in_line_) return stream_.read(out, cap);
  size_t copied = 0;
  while (copied < cap) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (copied > 0 && filled_ == taken_) break;  // hand over what is there rather than wait
      changed_.wait(lock, [&] { return filled_ > taken_ || ended_; });
      if (filled_ == taken_) break;  // ended: the last chunk was taken
    }
    // Chunk taken_ is the reader's until it is given back: read outside the lock.
    const Chunk& c = chunks_[taken_ % kChunks];
    size_t n = std::min(cap - copied, c.len - offset_);
    std::memcpy(out + copied, c.data.get() + offset_, n);
    copied += n;
    offset_ += n;
    if (offset_ == c.len) {
      offset_ = 0;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        taken_++;
      }
      changed_.notify_all();
    }
  }
  return copied;
}

std::string gunzip(const char* in, size_t len, std::string& out, DeflateBackend backend) {
  GzipStream stream(in, len, backend);
  out.resize(std::max<size_t>(4096, GzipStream::size_hint(in, len) + 1));
  size_t total = 0;
  while (!stream.done() && stream.error().empty()) {
    if (total == out.size()) {
      // Doubles the buffer; the stream says when the limit is passed.
      out.resize(std::min(out.size() * 2, kMaxInflated + 1));
    }
    total += stream.read(&out[total], out.size() - total);
  }
  out.resize(total);
  return stream.error();
}

}  // namespace rperf

namespace rperf {

void gunzip_prefix(const char* in, size_t len, std::string& out, size_t max_out) {
  out.clear();
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return;
  out.resize(max_out);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in));
  zs.avail_in = static_cast<uInt>(len > 0xffffffffu ? 0xffffffffu : len);
  zs.next_out = reinterpret_cast<Bytef*>(&out[0]);
  zs.avail_out = static_cast<uInt>(max_out);
  inflate(&zs, Z_SYNC_FLUSH);  // errors and truncation just end the prefix early
  out.resize(max_out - zs.avail_out);
  inflateEnd(&zs);
}

}  // namespace rperf
