# frozen_string_literal: true

# rack-mini-profiler flame graphs: rperf against stackprof on the same server and request.
# One Puma server (test/mini_profiler/server.rb, both profilers loaded) on 127.0.0.1; rounds
# interleave the two profilers so load on a shared machine hits both alike. Per profiler, the
# median of the rounds of:
#   - request: client time of GET /work?pp=async-flamegraph (the profiled request: 0.1 s CPU,
#     0.2 s sleep, GVL contention, allocation and GC),
#   - no graph: the same request without a flame graph, just before it in the same round,
#   - fetch: client time of GET of the stored flame graph (x-miniprofiler-flamegraph-path),
#   - page: client time of GET /work?pp=flamegraph (profile and the speedscope page at once),
#   - bytes: the stored flame graph's size.
# MP_BENCH_ROUNDS (default 7) sets the rounds. Prints a table; asserts nothing.
require "json"
require "net/http"
require "rbconfig"

ROOT = File.expand_path("..", __dir__)
ROUNDS = Integer(ENV.fetch("MP_BENCH_ROUNDS", "7"))

def monotonic = Process.clock_gettime(Process::CLOCK_MONOTONIC)

def get(port, path)
  Net::HTTP.start("127.0.0.1", port, open_timeout: 10, read_timeout: 120) { |http| http.get(path) }
end

def timed_get(port, path)
  t0 = monotonic
  res = get(port, path)
  raise "GET #{path}: #{res.code}" unless res.code == "200"

  [res, (monotonic - t0) * 1000]
end

def median(values) = values.sort[values.size / 2]

env = { "MP_STACKPROF" => "1" }
io = IO.popen(env, [RbConfig.ruby, "-I#{ROOT}/lib", File.join(ROOT, "test/mini_profiler/server.rb")], "r+")
begin
  raise "server did not start" unless io.wait_readable(120)

  port = Integer(io.gets.to_s.split.last)
  profilers = %w[rperf stackprof]
  runs = Hash.new { |h, k| h[k] = Hash.new { |hh, kk| hh[kk] = [] } }
  timed_get(port, "/work") # warm up the app and rack-mini-profiler's first-request work
  profilers.each { |p| timed_get(port, "/work?pp=flamegraph&flamegraph_profiler=#{p}") }
  ROUNDS.times do |round|
    order = round.even? ? profilers : profilers.reverse
    order.each do |profiler|
      _, plain_ms = timed_get(port, "/work")
      res, request_ms = timed_get(port, "/work?pp=async-flamegraph&flamegraph_profiler=#{profiler}")
      stored, fetch_ms = timed_get(port, res["x-miniprofiler-flamegraph-path"])
      _, page_ms = timed_get(port, "/work?pp=flamegraph&flamegraph_profiler=#{profiler}")
      r = runs[profiler]
      r[:request] << request_ms
      r[:no_graph] << plain_ms
      r[:fetch] << fetch_ms
      r[:page] << page_ms
      r[:bytes] << stored.body.bytesize
    end
  end

  load_avg = File.read("/proc/loadavg").split.first rescue "?"
  puts "rack-mini-profiler 5.0.0 flame graphs, #{ROUNDS} interleaved rounds, medians (ms), " \
       "Ruby #{RUBY_VERSION}, load average #{load_avg}"
  puts format("%-10s %10s %10s %10s %10s %10s", "profiler", "request", "no graph", "fetch", "page", "KiB")
  profilers.each do |p|
    r = runs[p]
    puts format("%-10s %10.1f %10.1f %10.1f %10.1f %10.1f", p, median(r[:request]), median(r[:no_graph]),
                median(r[:fetch]), median(r[:page]), median(r[:bytes]) / 1024.0)
  end
  a, b = runs["rperf"], runs["stackprof"]
  puts format("rperf / stackprof: request %.2f, page %.2f", median(a[:request]) / median(b[:request]),
              median(a[:page]) / median(b[:page]))
ensure
  io.close_write
  Process.wait(io.pid)
  io.close
end
