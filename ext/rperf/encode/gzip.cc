// gzip with zlib. Large inputs are cut into chunks deflated in parallel (as pigz does): each
// chunk is a raw deflate stream primed with the previous 32 KiB as dictionary and ended with a
// full flush, so their concatenation is one valid deflate stream; the CRCs are combined. On the
// 2-core development VM this halves the time of a 250 MB json.gz (rake bench).
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "profile.hh"

namespace rperf {

namespace {

constexpr size_t kChunk = 4u << 20;  // below this, one thread
constexpr size_t kWindow = 32768;

struct Piece {
  size_t begin = 0, end = 0;
  std::string out;
  uLong crc = 0;
  bool ok = false;
};

void deflate_piece(const std::string& data, Piece& piece, int level, bool last) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK) return;
  if (piece.begin > 0) {
    size_t dict = std::min(kWindow, piece.begin);
    deflateSetDictionary(&zs, reinterpret_cast<const Bytef*>(data.data() + piece.begin - dict), static_cast<uInt>(dict));
  }
  size_t len = piece.end - piece.begin;
  piece.out.resize(deflateBound(&zs, len) + 16);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + piece.begin));
  zs.avail_in = static_cast<uInt>(len);
  zs.next_out = reinterpret_cast<Bytef*>(&piece.out[0]);
  zs.avail_out = static_cast<uInt>(piece.out.size());
  int rc = deflate(&zs, last ? Z_FINISH : Z_FULL_FLUSH);
  piece.ok = last ? rc == Z_STREAM_END : (rc == Z_OK && zs.avail_in == 0);
  piece.out.resize(zs.total_out);
  deflateEnd(&zs);
  piece.crc = crc32(0L, reinterpret_cast<const Bytef*>(data.data() + piece.begin), static_cast<uInt>(len));
}

void put_le32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; i++) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

std::string gzip_compress(const std::string& data, int level) {
  size_t threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  size_t pieces_n = data.size() < 2 * kChunk ? 1 : std::min(threads * 4, data.size() / kChunk);
  std::vector<Piece> pieces(pieces_n);
  size_t step = data.size() / pieces_n;
  for (size_t i = 0; i < pieces_n; i++) {
    pieces[i].begin = i * step;
    pieces[i].end = i + 1 == pieces_n ? data.size() : (i + 1) * step;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < pieces_n;) deflate_piece(data, pieces[i], level, i + 1 == pieces_n);
  };
  std::vector<std::thread> workers;
  for (size_t t = 1; t < std::min(threads, pieces_n); t++) workers.emplace_back(work);
  work();
  for (std::thread& w : workers) w.join();

  std::string out("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);  // gzip header, OS = Unix
  size_t total = 0;
  for (const Piece& p : pieces) total += p.out.size();
  out.reserve(total + 18);
  uLong crc = crc32(0L, Z_NULL, 0);
  for (const Piece& p : pieces) {
    if (!p.ok) return std::string();
    out += p.out;
    crc = crc32_combine(crc, p.crc, static_cast<z_off_t>(p.end - p.begin));
  }
  put_le32(out, static_cast<uint32_t>(crc));
  put_le32(out, static_cast<uint32_t>(data.size() & 0xffffffffu));
  return out;
}

}  // namespace rperf
