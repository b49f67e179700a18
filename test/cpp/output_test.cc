// The chunked output pipeline: plain and gzip, to strings and files, with every deflate
// backend the build has, across chunk boundaries and worker counts. zlib's inflate checks
// every gzip stream (including its CRC and length).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <random>

#include "io/encoders.hh"
#include "io/output.hh"
#include "test_profiles.hh"

using namespace rperf;

namespace {

std::string inflate_gzip(const std::string& in) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  std::string out;
  char buf[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  } while (rc == Z_OK);
  EXPECT_EQ(rc, Z_STREAM_END) << "inflate stopped early";
  EXPECT_EQ(zs.avail_in, 0u) << "bytes after the gzip member";
  inflateEnd(&zs);
  return out;
}

// JSON-like text with repeats (compressible) and noise (not).
std::string corpus(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s;
  while (s.size() < size) {
    if (rng() % 4 == 0) {
      for (int i = 0; i < 50; i++) s += static_cast<char>(rng() & 0xff);
    } else {
      s += "[\"app/models/user.rb\",\"User#name_" + std::to_string(rng() % 3000) + "\",12],";
    }
  }
  s.resize(size);
  return s;
}

std::vector<DeflateBackend> backends() {
  std::vector<DeflateBackend> all;
  for (DeflateBackend b : {DeflateBackend::kIsal, DeflateBackend::kZlib})
    if (deflate_backend_available(b)) all.push_back(b);
  return all;
}

std::string write_through(const std::string& data, OutputOptions options, size_t piece) {
  std::string out;
  Output o(&out, options);
  for (size_t i = 0; i < data.size(); i += piece) o.append(data.data() + i, std::min(piece, data.size() - i));
  EXPECT_EQ(o.finish(), 0);
  return out;
}

}  // namespace

TEST(Output, PlainBytesArriveInOrderAcrossChunks) {
  std::string data = corpus(3u << 20, 1);
  for (size_t chunk : {64u, 4096u, 1u << 20, 8u << 20}) {
    OutputOptions o;
    o.chunk_size = chunk;
    EXPECT_EQ(write_through(data, o, 1000), data) << "chunk " << chunk;
  }
}

TEST(Output, GzipIsOneMemberForEveryBackendLevelChunkAndThreadCount) {
  std::string data = corpus(5u << 20, 2);
  for (DeflateBackend b : backends()) {
    for (int level : {-1, 1, 6, 9}) {
      for (unsigned threads : {1u, 3u}) {
        OutputOptions o;
        o.gzip = true;
        o.backend = b;
        o.level = level;
        o.threads = threads;
        o.chunk_size = 256 << 10;
        std::string gz = write_through(data, o, 777);
        ASSERT_GE(gz.size(), 18u);
        EXPECT_EQ(inflate_gzip(gz), data) << deflate_backend_name(b) << " level " << level << " threads " << threads;
        EXPECT_LT(gz.size(), data.size()) << deflate_backend_name(b);
      }
    }
  }
}

TEST(Output, ChunksSmallerThanTheWindowStillShareHistory) {
  std::string data = corpus(400000, 3);
  for (DeflateBackend b : backends()) {
    OutputOptions o;
    o.gzip = true;
    o.backend = b;
    o.chunk_size = 1000;  // far below 32 KiB: the dictionary spans several chunks
    EXPECT_EQ(inflate_gzip(write_through(data, o, 333)), data) << deflate_backend_name(b);
  }
}

TEST(Output, EmptyAndTinyInputsAreValidGzip) {
  for (DeflateBackend b : backends()) {
    OutputOptions o;
    o.gzip = true;
    o.backend = b;
    EXPECT_EQ(inflate_gzip(write_through("", o, 1)), "");
    EXPECT_EQ(inflate_gzip(write_through("x", o, 1)), "x");
  }
}

TEST(Output, WritesFilesAndReportsWriteErrors) {
  char path[] = "/tmp/rperf-output-test-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string data = corpus(3u << 20, 4);
  {
    OutputOptions o;
    o.gzip = true;
    Output out(fd, o);
    out.append(data);
    EXPECT_EQ(out.finish(), 0);
  }
  close(fd);
  std::string gz;
  FILE* f = fopen(path, "rb");
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) gz.append(buf, n);
  fclose(f);
  unlink(path);
  EXPECT_EQ(inflate_gzip(gz), data);

  int full = open("/dev/full", O_WRONLY);
  if (full >= 0) {
    Output out(full, OutputOptions());
    out.append(data);
    EXPECT_EQ(out.finish(), ENOSPC);
    EXPECT_TRUE(out.failed());
    close(full);
  }
}

TEST(Output, AppendsAfterFinishAreIgnored) {
  std::string s;
  Output out(&s, OutputOptions());
  out.append("abc", 3);
  EXPECT_EQ(out.finish(), 0);
  out.append("def", 3);
  out.append('g');
  EXPECT_EQ(out.finish(), 0);
  EXPECT_EQ(s, "abc");
}

TEST(Output, JsonBodyIsTheSameWhateverTheChunkSize) {
  std::vector<fixtures::FrameSpec> frames;
  std::vector<fixtures::SampleSpec> samples;
  for (int i = 0; i < 300; i++) frames.push_back({"lib/f" + std::to_string(i % 7) + ".rb", "M#m" + std::to_string(i), i});
  for (uint32_t i = 0; i < 2000; i++) samples.push_back({{i % 300, (i * 7) % 300, (i * 13) % 300}, 1000 + i, i % 3, 0});
  Profile p = fixtures::make_profile(frames, samples);
  auto encode = [&](size_t chunk, bool gzip) {
    OutputOptions o;
    o.chunk_size = chunk;
    o.gzip = gzip;
    std::string s;
    Output out(&s, o);
    encode_json(p, JsonValue::object(), out);
    EXPECT_EQ(out.finish(), 0);
    return gzip ? inflate_gzip(s) : s;
  };
  std::string whole = encode(64u << 20, false);
  EXPECT_EQ(encode(100, false), whole);
  EXPECT_EQ(encode(4096, true), whole);
  EXPECT_NE(whole.find("[[[\"lib/f0.rb\",\"M#m0\",0],[\"lib/f0.rb\",\"M#m0\",0],[\"lib/f0.rb\",\"M#m0\",0]],1000,0,0]"), std::string::npos);
}
