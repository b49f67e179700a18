# frozen_string_literal: true

# A small Rack app behind Rack::MiniProfiler, served by Puma on 127.0.0.1 (a free port, printed
# as "port N" on stdout once listening). Used by test/mini_profiler_test.rb, one process per
# configuration, since loading stackprof or rperf/mini_profiler cannot be undone.
#
# Environment:
#   MP_RPERF=0            do not load rperf/mini_profiler (plain rack-mini-profiler)
#   MP_STACKPROF=1        load stackprof
#   MP_PROFILER=name      Rack::MiniProfiler.config.flamegraph_profiler
#   MP_SAMPLE_RATE=x      Rack::MiniProfiler.config.flamegraph_sample_rate
#   MP_AUTH=1             authorization_mode :allow_authorized (X-Test-Admin: 1 authorizes)
#   MP_CSP=1              a Content-Security-Policy with a per-request nonce, given to
#                         rack-mini-profiler the way secure_headers does
#
# Endpoints: /work (CPU, sleep, GVL contention, allocation; an HTML page), /fast, and
# /session/{start,profile,stop} driving an rperf session of the app's own.

require "json"
require "securerandom"
require "rack"
require "puma"
require "puma/server"
require "rack-mini-profiler"
require "stackprof" if ENV["MP_STACKPROF"] == "1"
require "rperf" # the app's own sessions; the integration itself only with MP_RPERF != 0
require "rperf/mini_profiler" unless ENV["MP_RPERF"] == "0"

# The work a request does, in methods with names the tests look for.
module MiniProfilerTestApp
  CPU_SECONDS = 0.1
  SLEEP_SECONDS = 0.2

  module_function

  def burn_cpu(seconds = CPU_SECONDS)
    clock = Process::CLOCK_THREAD_CPUTIME_ID
    start = Process.clock_gettime(clock)
    n = 0
    n += 1 while Process.clock_gettime(clock) - start < seconds
    n
  end

  # The wall time of the last nap, for the tests to compare with (GET /last_nap).
  def nap
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
    sleep SLEEP_SECONDS
  ensure
    @last_nap_ns = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
  end

  # Wakes up while another thread burns CPU holding the GVL: [GVL wait].
  def contend
    started = Queue.new
    worker = Thread.new do
      started << true
      burn_cpu(0.05)
    end
    started.pop
    worker.join
  end

  def allocate
    3.times do
      Array.new(50_000) { |i| "object #{i}" }
      GC.start
    end
  end

  def page(text)
    [200, { "content-type" => "text/html; charset=utf-8" },
     ["<!DOCTYPE html><html><head><title>app</title></head><body><p>#{text}</p></body></html>"]]
  end

  def json(value)
    [200, { "content-type" => "application/json" }, [JSON.generate(value)]]
  end

  def call(env)
    case env["PATH_INFO"]
    when "/work"
      burn_cpu
      nap
      contend
      allocate
      page("work done; rperf running during the request: #{Rperf.running?}")
    when "/last_nap"
      json(ns: @last_nap_ns)
    when "/fast"
      # An admin (this header) is authorized, as a Rails before_action would do it.
      Rack::MiniProfiler.authorize_request if env["HTTP_X_TEST_ADMIN"] == "1"
      page("fast; rperf running during the request: #{Rperf.running?}")
    when "/session/start"
      Rperf.start(mode: :wall, frequency: 1000, defer: true, inherit: false)
      json(running: Rperf.running?)
    when "/session/profile"
      Rperf.profile(endpoint: "session") { burn_cpu(0.05) }
      json(running: Rperf.running?)
    when "/session/stop"
      data = Rperf.stop
      labels = data[:label_sets]
      session_ns = data[:aggregated_samples].select { |s| labels[s[3]][:endpoint] == "session" }.sum { |s| s[1] }
      json(mode: data[:mode], frequency: data[:frequency], session_ns: session_ns,
           label_keys: labels.flat_map(&:keys).uniq.map(&:to_s))
    else
      [404, { "content-type" => "text/plain" }, ["not found"]]
    end
  end
end

# Sets a nonce and the header that requires it, as CSP middlewares (secure_headers) do.
class NonceCsp
  def initialize(app) = @app = app

  def call(env)
    nonce = SecureRandom.base64(16)
    env["secure_headers_content_security_policy_nonce"] = nonce
    status, headers, body = @app.call(env)
    headers["content-security-policy"] = "script-src 'self' 'nonce-#{nonce}'; object-src 'none'"
    [status, headers, body]
  end
end

config = Rack::MiniProfiler.config
config.flamegraph_profiler = ENV["MP_PROFILER"].to_sym if ENV["MP_PROFILER"]
config.flamegraph_sample_rate = Float(ENV["MP_SAMPLE_RATE"]) if ENV["MP_SAMPLE_RATE"]
config.authorization_mode = :allow_authorized if ENV["MP_AUTH"] == "1"

app = Rack::MiniProfiler.new(MiniProfilerTestApp)
app = NonceCsp.new(app) if ENV["MP_CSP"] == "1"
server = Puma::Server.new(app, nil, min_threads: 1, max_threads: 4, log_writer: Puma::LogWriter.null)
server.add_tcp_listener("127.0.0.1", 0)
$stdout.puts "port #{server.connected_ports.first}"
$stdout.flush
# Stop when the test closes our stdin (or dies), so no server outlives its test.
Thread.new do
  $stdin.read
  server.stop(true)
end
server.run.join
