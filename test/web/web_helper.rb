# frozen_string_literal: true

require "test_helper"
require "digest"
require "open3"
require "json"
require "net/http"
require "socket"
require "timeout"
require "puma"
require "puma/server"
require "puma/log_writer"

# Real servers for the web tests, all bound to 127.0.0.1 and stopped by the test that started
# them: Puma (in this process, so the profiler sees its threads) and redis-server (a child).
module WebTestHelper
  LOOPBACK = "127.0.0.1"
  FIXTURES = File.expand_path("fixtures", __dir__)

  def free_port
    server = TCPServer.new(LOOPBACK, 0)
    server.addr[1]
  ensure
    server&.close
  end

  # Serves app with Puma on a free loopback port; yields the port, stops the server after.
  def with_puma(app, threads: 4)
    log = Puma::LogWriter.new(StringIO.new, StringIO.new)
    server = Puma::Server.new(app, nil, min_threads: 1, max_threads: threads, log_writer: log)
    server.add_tcp_listener(LOOPBACK, 0)
    port = server.connected_ports.first
    server.run
    yield port
  ensure
    server&.stop(true)
  end

  # The app of the Puma tests: /hash hashes (CPU only: never releases the GVL), /slow sleeps
  # 20 ms. `request_ns`: the time its calls took, as it measured them.
  class PumaTestApp
    FRAME = "WebTestHelper::PumaTestApp#call"
    attr_reader :request_ns

    def initialize(hashes: 2000)
      @hashes = hashes
      @request_ns = 0
      @lock = Mutex.new
    end

    def call(env)
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
      case env["PATH_INFO"]
      when "/hash" then @hashes.times { Digest::SHA256.hexdigest("rperf") }
      when "/slow" then sleep 0.02
      end
      [200, { "content-type" => "text/plain" }, ["ok\n"]]
    ensure
      elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
      @lock.synchronize { @request_ns += elapsed }
    end
  end

  def http_get(port, path, headers = {})
    Net::HTTP.start(LOOPBACK, port, open_timeout: 5, read_timeout: 30) do |http|
      http.get(path, headers)
    end
  end

  def http_request(port, request)
    Net::HTTP.start(LOOPBACK, port, open_timeout: 5, read_timeout: 30) { |http| http.request(request) }
  end

  # redis-server (Debian package) on a free loopback port with its files in a temporary
  # directory; yields the port and kills the server after.
  def with_redis
    skip "redis-server is not installed (script/bootstrap consumers installs it)" unless system("command -v redis-server >/dev/null 2>&1")
    Dir.mktmpdir("rperf-redis") do |dir|
      port = nil
      pid = nil
      3.times do
        port = free_port
        pid = Process.spawn("redis-server", "--port", port.to_s, "--bind", LOOPBACK, "--save", "", "--appendonly", "no",
                            "--dir", dir, "--daemonize", "no", "--loglevel", "warning", "--protected-mode", "yes",
                            out: File.join(dir, "redis.log"), err: [:child, :out])
        break if wait_for_redis(port, pid)

        stop_process(pid)
        pid = nil
      end
      flunk "redis-server did not start: #{File.read(File.join(dir, 'redis.log'))}" unless pid
      begin
        yield port
      ensure
        stop_process(pid)
      end
    end
  end

  def wait_for_redis(port, pid, timeout: 10)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
      return false if Process.waitpid(pid, Process::WNOHANG)

      begin
        TCPSocket.open(LOOPBACK, port) do |s|
          s.write("PING\r\n")
          return true if s.gets&.start_with?("+PONG")
        end
      rescue SystemCallError
        sleep 0.05
      end
    end
    false
  end

  def stop_process(pid)
    Process.kill("TERM", pid)
    Timeout.timeout(10) { Process.wait(pid) }
  rescue Errno::ESRCH, Errno::ECHILD
    nil
  rescue Timeout::Error
    Process.kill("KILL", pid)
    Process.wait(pid)
  end

  # Runs a fixture script in a fresh Ruby with rperf and the bundle's gems; returns its stdout.
  def run_fixture(name, *args, timeout: 60)
    out = err = status = nil
    Timeout.timeout(timeout) do
      out, err, status = Open3.capture3(RperfTestHelper::RUBY, "-I#{RperfTestHelper::ROOT}/lib", File.join(FIXTURES, name), *args.map(&:to_s))
    end
    assert status.success?, "#{name} failed (#{status}):\n#{err}\n#{out}"
    out
  end

  # Runs a fixture that writes its profile to the path given as its last argument and prints
  # JSON; returns [that JSON, the profile].
  def run_profiled_fixture(name, *args)
    Dir.mktmpdir("rperf-fixture") do |dir|
      profile = File.join(dir, "profile.json.gz")
      output = JSON.parse(run_fixture(name, *args, profile))
      [output, Rperf.load(profile)]
    end
  end

  # A label's value in a label set whose keys may be Symbols or Strings ("%GVL" or :"%GVL").
  # The page's views of a profile (the call tree, bottom-up tree, method table or sandwich), as
  # the page computes them: the page model under node (test/js/page_views.js) on the payload.
  # Each query: {view:, filter: {thread:, hide:, range:, idle:, label: {key:, values:, unset:}}, fn: [name, path]}.
  def page_views(data, queries, max_samples: 20_000, max_timeline: 200_000)
    payload = Rperf::Viewer::Payload.build(data, max_samples: max_samples, max_timeline: max_timeline)
    out, err, status = Open3.capture3("node", File.expand_path("../js/page_views.js", __dir__),
                                      stdin_data: JSON.generate(payload: payload, duration_ns: data[:duration_ns], queries: queries))
    raise "page_views.js failed: #{err}" unless status.success?

    JSON.parse(out)
  end

  def page_view(data, view, fn: nil, limits: {}, max_timeline: 200_000, **filter)
    page_views(data, [{ view: view, filter: filter, fn: fn, limits: limits }], max_timeline: max_timeline)[0]
  end

  # The profile of the samples the Viewer's filters keep, selected by the model itself
  # (Native::Profile#selected: profile/sample_filter.hh and label_set_match.hh, which the page runs
  # compiled): label: [key, value or [value, ...]] (nil: not set), tags: {focus: Regexp, ignore:
  # [[key, value or nil], ...]}, thread:, hide: [...], idle: true, range: [from, to].
  def model_selected(data, label: nil, tags: nil, thread: nil, hide: nil, idle: false, range: nil)
    native = Rperf::Storage.native(data)
    select = { thread: thread, hide: hide && !hide.empty? ? hide : nil, range: range, idle: idle || nil }.compact
    if label || tags
      sets = native.label_sets.map { |set| Rperf::Viewer::Payload.string_labels(set) }
      focus = tags && tags[:focus] && Rperf::Native.label_values(sets).grep(tags[:focus])
      select[:label_sets] = Rperf::Native.matching_label_sets(sets, label: label && [label[0], label[1].is_a?(Array) ? label[1] : [label[1]]],
                                                              focus_values: focus, ignore: tags && tags[:ignore])
    end
    native.selected(select)
  end

  # The weight of the samples the Viewer's filters keep (model_selected).
  def kept_ns(data, **filters) = model_selected(data, **filters).to_h[:aggregated_samples].sum { |s| s[1] }

  def label_value(set, key) = set && (set.key?(key.to_sym) ? set[key.to_sym] : set[key.to_s])

  # Weight per value of one label key, as {value => ns}.
  def weight_by_label(data, key)
    data[:aggregated_samples].each_with_object(Hash.new(0)) do |(_, weight, _, lsi), acc|
      acc[label_value(data[:label_sets][lsi], key)] += weight
    end
  end

  # Weight of the samples whose labels have all these values.
  def weight_labelled(data, **wanted)
    data[:aggregated_samples].sum do |_, weight, _, lsi|
      set = data[:label_sets][lsi]
      wanted.all? { |k, v| label_value(set, k) == v } ? weight : 0
    end
  end

  # ruby-prof's example of one method with two callers: process calls validate then save, save
  # calls validate then write. validate sleeps (its time ends in a [GVL blocked] leaf), write
  # computes in its own code (self time).
  class Checkout
    def process
      validate
      save
    end

    def save
      validate
      write
    end

    def validate = sleep(0.03)

    def write
      i = 0
      i += 1 while i < 1_500_000
      i
    end
  end
end
