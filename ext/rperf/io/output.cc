#include "io/output.hh"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace rperf {

namespace {

struct Chunk {
  std::unique_ptr<char[]> data;
  size_t len = 0;
  std::string dict;  // gzip: the input just before this chunk (at most 32 KiB)
  std::string out;   // gzip: the compressed chunk
  uint32_t crc = 0;
  uint64_t seq = 0;
  bool last = false;
  bool deflate_failed = false;
};

}  // namespace

// Chunks flow: producer (acquire, fill, submit) -> todo -> a worker compresses -> ready ->
// whichever worker holds the emitter role writes them in sequence order -> free pool.
struct Output::Pipeline {
  int fd = -1;
  std::string* str = nullptr;
  OutputOptions options;

  std::mutex mu;
  std::condition_variable work_cv, free_cv, emitted_cv;
  std::vector<std::unique_ptr<Chunk>> chunks;  // owns every chunk
  std::vector<Chunk*> free_chunks;
  std::deque<Chunk*> todo;
  std::map<uint64_t, Chunk*> ready;
  size_t max_chunks = 0;
  uint64_t next_seq = 0, next_emit = 0;
  bool emitting = false, closing = false;
  std::vector<std::thread> workers;
  std::atomic<int> error{0};

  // Emitter state (only the emitter touches these).
  uint32_t crc = 0;
  uint64_t total_in = 0;
  std::string gzip_frame;

  std::string history;  // producer: the last 32 KiB of input, the next chunk's dictionary
  Chunk* current = nullptr;

  void start_workers() {
    unsigned n = options.gzip ? (options.threads ? options.threads : std::max(1u, std::min(4u, std::thread::hardware_concurrency()))) : 1;
    max_chunks = 2 * n + 2;
    try {
      for (unsigned i = 0; i < n; i++) workers.emplace_back([this] { worker_loop(); });
    } catch (const std::system_error&) {
      // No threads available: process chunks in the producer.
    }
  }

  Chunk* acquire() {
    std::unique_lock<std::mutex> lock(mu);
    if (free_chunks.empty() && (chunks.size() < max_chunks || workers.empty())) {
      chunks.push_back(std::make_unique<Chunk>());
      chunks.back()->data.reset(new char[options.chunk_size]);
      free_chunks.push_back(chunks.back().get());
    }
    free_cv.wait(lock, [&] { return !free_chunks.empty(); });
    Chunk* c = free_chunks.back();
    free_chunks.pop_back();
    lock.unlock();
    c->len = 0;
    c->last = false;
    c->deflate_failed = false;
    if (options.gzip) c->dict = history;
    return c;
  }

  void submit(Chunk* c, bool last) {
    c->last = last;
    if (options.gzip && !last) {
      if (c->len >= kDeflateWindow) history.assign(c->data.get() + c->len - kDeflateWindow, kDeflateWindow);
      else {
        history.append(c->data.get(), c->len);
        if (history.size() > kDeflateWindow) history.erase(0, history.size() - kDeflateWindow);
      }
    }
    std::unique_lock<std::mutex> lock(mu);
    c->seq = next_seq++;
    if (workers.empty()) {
      // Small outputs (one chunk) and thread-less processes: everything in the caller.
      lock.unlock();
      if (options.gzip) {
        ChunkDeflater local(options.backend, options.level);
        transform(*c, &local);
      }
      emit(*c);
      lock.lock();
      next_emit++;
      free_chunks.push_back(c);
      return;
    }
    todo.push_back(c);
    work_cv.notify_one();
  }

  void worker_loop() {
    std::unique_ptr<ChunkDeflater> deflater;
    if (options.gzip) deflater = std::make_unique<ChunkDeflater>(options.backend, options.level);
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      work_cv.wait(lock, [&] { return !todo.empty() || closing; });
      if (todo.empty()) return;
      Chunk* c = todo.front();
      todo.pop_front();
      lock.unlock();
      transform(*c, deflater.get());
      lock.lock();
      ready.emplace(c->seq, c);
      if (emitting) continue;
      emitting = true;
      for (auto it = ready.find(next_emit); it != ready.end(); it = ready.find(next_emit)) {
        Chunk* next = it->second;
        ready.erase(it);
        lock.unlock();
        emit(*next);
        lock.lock();
        next_emit++;
        free_chunks.push_back(next);
        free_cv.notify_one();
        emitted_cv.notify_all();
      }
      emitting = false;
    }
  }

  void transform(Chunk& c, ChunkDeflater* deflater) {
    if (!options.gzip || error.load(std::memory_order_relaxed)) return;
    c.out.clear();
    c.deflate_failed = !deflater->deflate_chunk(c.dict.data(), c.dict.size(), c.data.get(), c.len, c.last, c.out);
    c.crc = crc32_update(0, c.data.get(), c.len);
  }

  void emit(Chunk& c) {
    if (!options.gzip) {
      write_bytes(c.data.get(), c.len);
      return;
    }
    if (c.deflate_failed) set_error(EIO);
    if (c.seq == 0) {
      gzip_frame.clear();
      append_gzip_header(gzip_frame);
      write_bytes(gzip_frame.data(), gzip_frame.size());
    }
    crc = crc32_concat(crc, c.crc, c.len);
    total_in += c.len;
    write_bytes(c.out.data(), c.out.size());
    if (c.last) {
      gzip_frame.clear();
      append_gzip_trailer(gzip_frame, crc, total_in);
      write_bytes(gzip_frame.data(), gzip_frame.size());
    }
  }

  void write_bytes(const char* p, size_t n) {
    if (error.load(std::memory_order_relaxed)) return;
    if (str) {
      str->append(p, n);
      return;
    }
    while (n > 0) {
      ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        set_error(errno);
        return;
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
  }

  void set_error(int e) {
    int expected = 0;
    error.compare_exchange_strong(expected, e);
  }

  int finish() {
    {
      std::unique_lock<std::mutex> lock(mu);
      emitted_cv.wait(lock, [&] { return next_emit == next_seq; });
    }
    stop_workers();
    return error.load();
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mu);
      closing = true;
    }
    work_cv.notify_all();
    for (std::thread& t : workers) t.join();
    workers.clear();
  }

  ~Pipeline() { stop_workers(); }  // after a failed finish(): never destroy a running thread
};

Output::Output(int fd, const OutputOptions& options) : pipeline_(new Pipeline) {
  pipeline_->fd = fd;
  start(options);
}

Output::Output(std::string* out, const OutputOptions& options) : pipeline_(new Pipeline) {
  pipeline_->str = out;
  start(options);
}

Output::~Output() {
  try {
    finish();  // joins the workers; an exception here would end the process
  } catch (...) {
  }
}

void Output::start(const OutputOptions& options) {
  pipeline_->options = options;
  pipeline_->options.chunk_size = std::max<size_t>(options.chunk_size, 64);
  // Threads start with the second chunk: small outputs never create any.
  pipeline_->max_chunks = 1;
  pipeline_->current = pipeline_->acquire();
  buffer_ = pipeline_->current->data.get();
  capacity_ = pipeline_->options.chunk_size;
}

void Output::append_slow(const char* data, size_t len) {
  if (finished_) return;  // appends after finish() are dropped
  while (len > 0) {
    if (used_ == capacity_) submit_chunk(false);
    size_t n = std::min(len, capacity_ - used_);
    std::memcpy(buffer_ + used_, data, n);
    used_ += n;
    data += n;
    len -= n;
  }
}

void Output::submit_chunk(bool last) {
  Pipeline& p = *pipeline_;
  p.current->len = used_;
  if (!last && p.workers.empty() && p.next_seq == 0) p.start_workers();
  p.submit(p.current, last);
  p.current = last ? nullptr : p.acquire();
  buffer_ = last ? nullptr : p.current->data.get();
  capacity_ = last ? 0 : p.options.chunk_size;
  used_ = 0;
}

int Output::finish() {
  if (finished_) return result_;
  submit_chunk(true);
  finished_ = true;
  result_ = pipeline_->finish();
  return result_;
}

bool Output::failed() const { return pipeline_->error.load(std::memory_order_relaxed) != 0; }

std::string gzip_compress(const std::string& data, int level) {
  std::string out;
  OutputOptions options;
  options.gzip = true;
  options.level = level;
  Output gz(&out, options);
  gz.append(data);
  return gz.finish() == 0 ? out : std::string();
}

}  // namespace rperf
