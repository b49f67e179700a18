# frozen_string_literal: true

require_relative "web_helper"
require "rperf/rack"
require "rperf/metrics"
require "yaml"

# Issue 46: Rperf::Metrics on a real Puma (in this process, a wall session, the Rack middleware)
# with three endpoints: /cpu computes (never releases the GVL), /contend computes while another
# thread computes too (it waits for the GVL), /sleep sleeps (off the GVL). Requests come one at
# a time from a child process; then GET /metrics, read with a strict parser of the text format,
# has per endpoint the time each endpoint's requests took, in the state they spent it in,
# against what the endpoints measured themselves. Prometheus (Debian's) scrapes the same app.
class MetricsTest < Minitest::Test
  include WebTestHelper
  include RperfTestHelper

  WORK_S = 0.02
  REQUESTS = 12
  # /contend computes longer than Ruby's time slice (100 ms), so the other thread takes the
  # GVL from it in the middle of its work.
  CONTEND_S = 0.3
  CONTEND_REQUESTS = 4

  # What the app measured per endpoint: the time inside the middleware's label (`inner`, a
  # lower bound of what the label holds), around the middleware (`outer`, an upper bound), and
  # the thread CPU time of the work.
  class App
    attr_reader :measured

    def initialize
      @inner = Rperf::RackMiddleware.new(method(:work))
      @metrics = Rperf::Metrics.new
      @measured = Hash.new { |h, k| h[k] = { inner: 0, outer: 0, cpu: 0, count: 0 } }
      @lock = Mutex.new
    end

    attr_reader :metrics

    def call(env)
      return @metrics.call(env) if env["PATH_INFO"] == "/metrics"

      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
      response = @inner.call(env)
      elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
      @lock.synchronize { @measured[env["PATH_INFO"]][:outer] += elapsed }
      response
    end

    def work(env)
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
      c0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
      case env["PATH_INFO"]
      when "/cpu" then burn(WORK_S)
      when "/contend" then burn(CONTEND_S)
      when "/sleep" then sleep(WORK_S)
      end
      cpu = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond) - c0
      elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
      @lock.synchronize do
        m = @measured[env["PATH_INFO"]]
        m[:inner] += elapsed
        m[:cpu] += cpu
        m[:count] += 1
      end
      [200, { "content-type" => "text/plain" }, ["ok\n"]]
    end

    # Thread CPU time, without releasing the GVL.
    def burn(seconds)
      t0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
      x = 0
      x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t0 < seconds
      x
    end
  end

  CLIENT = <<~RUBY
    require "net/http"
    port, path, count = ARGV
    Net::HTTP.start("127.0.0.1", port.to_i, read_timeout: 60) do |http|
      count.to_i.times { http.get(path).value }
    end
  RUBY

  def drive(port, path, count = REQUESTS)
    _, err, status = run_ruby(CLIENT, port.to_s, path, count.to_s)
    assert status.success?, err
  end

  # The three endpoints' load, /contend while a thread of the app computes all along.
  def load(port)
    drive(port, "/cpu")
    stop = false
    contender = Thread.new do
      x = 0
      x += 1 until stop
    end
    begin
      drive(port, "/contend", CONTEND_REQUESTS)
    ensure
      stop = true
      contender.join
    end
    drive(port, "/sleep")
  end

  def with_loaded_app
    app = App.new
    Rperf.start(mode: :wall, frequency: 1000)
    begin
      with_puma(app, threads: 4) do |port|
        load(port)
        yield app, port
      end
    ensure
      Rperf.stop
      app.metrics.close
    end
  end

  # --- the text format, read strictly ------------------------------------------------------

  NAME = /[a-zA-Z_:][a-zA-Z0-9_:]*/
  LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/
  VALUE = /[-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|Inf|NaN)/

  # {name => {type:, help:, samples: {labels Hash => Float}}}; flunks at any line that is not
  # the format, a sample before its TYPE, a series given twice or a TYPE given twice.
  def parse_exposition(text)
    families = {}
    assert text.end_with?("\n"), "the exposition ends with a newline"
    text.each_line(chomp: true).with_index(1) do |line, n|
      case line
      when /\A# HELP (#{NAME}) (.*)\z/
        (families[$1] ||= { samples: {} })[:help] = $2
      when /\A# TYPE (#{NAME}) (counter|gauge)\z/
        family = (families[$1] ||= { samples: {} })
        assert_nil family[:type], "line #{n}: a second TYPE for #{$1}"
        assert_empty family[:samples], "line #{n}: TYPE after samples of #{$1}"
        family[:type] = $2
      when /\A(#{NAME})(?:\{((?:#{LABEL},)*(?:#{LABEL})?)\})? (#{VALUE})\z/
        name, label_text, value = $1, $2.to_s, $~[-1]
        family = families[name]
        flunk "line #{n}: #{name} has no TYPE before its samples" unless family&.dig(:type)
        labels = label_text.scan(LABEL).to_h { |k, v| [k, v.gsub(/\\(.)/) { Regexp.last_match(1) == "n" ? "\n" : Regexp.last_match(1) }] }
        assert_equal label_text.scan(LABEL).size, labels.size, "line #{n}: a label given twice"
        refute family[:samples].key?(labels), "line #{n}: #{name}#{labels} given twice"
        family[:samples][labels] = Float(value)
      else
        flunk "line #{n} is not Prometheus text format: #{line.inspect}"
      end
    end
    families
  end

  def scrape(port)
    response = http_get(port, "/metrics")
    assert_equal "200", response.code
    assert_equal Rperf::Metrics::CONTENT_TYPE, response["content-type"]
    parse_exposition(response.body)
  end

  def value(families, name, endpoint)
    families.fetch(name)[:samples].find { |labels, _| labels["endpoint"] == endpoint }&.last || 0.0
  end

  def state_seconds(families, endpoint)
    %w[cpu gvl_wait gvl_blocked gc].to_h { |s| [s, value(families, "rperf_#{s}_seconds_total", endpoint)] }
  end

  # --- tests ---------------------------------------------------------------------------------

  def test_per_endpoint_time_by_state_matches_what_the_endpoints_did
    with_loaded_app do |app, port|
      families = scrape(port)
      %w[rperf_cpu_seconds_total rperf_gvl_wait_seconds_total rperf_gvl_blocked_seconds_total rperf_gc_seconds_total
         rperf_samples_total].each { |name| assert_equal "counter", families.fetch(name)[:type] }
      %w[rperf_overhead_ratio rperf_sampling_hz rperf_info].each { |name| assert_equal "gauge", families.fetch(name)[:type] }
      assert_equal [Process.pid.to_s], families.values.flat_map { |f| f[:samples].keys.map { |l| l["pid"] } }.uniq
      assert_equal 1000.0, families["rperf_sampling_hz"][:samples].values.first
      assert_equal "wall", families["rperf_info"][:samples].keys.first["mode"]
      assert_operator families["rperf_samples_total"][:samples].values.first, :>, 0
      overhead = families["rperf_overhead_ratio"][:samples].values.first
      assert_operator overhead, :>, 0
      assert_operator overhead, :<, 0.2

      report = app.measured.map do |path, m|
        "#{path}: #{state_seconds(families, "GET #{path}").transform_values { |s| s.round(4) }} measured #{m.transform_values { |v| v.is_a?(Integer) && v > 1000 ? (v / 1e9).round(4) : v }}"
      end.join("\n")
      app.measured.each do |path, m|
        assert_equal path == "/contend" ? CONTEND_REQUESTS : REQUESTS, m[:count]
        s = state_seconds(families, "GET #{path}")
        total = s.values.sum
        slack = m[:count] * 1e-3 # a millisecond a request for the middleware's own work
        assert_operator total, :>=, m[:inner] / 1e9 * 0.95, "#{path}: the label's time covers the work\n#{report}"
        assert_operator total, :<=, m[:outer] / 1e9 * 1.05 + slack, "#{path}: no more than the requests took\n#{report}"
        case path
        when "/cpu"
          assert_operator s["cpu"] + s["gc"], :>=, m[:inner] / 1e9 * 0.9, "/cpu runs\n#{report}"
          assert_operator s["gvl_blocked"], :<, m[:inner] / 1e9 * 0.05, "/cpu never blocks\n#{report}"
        when "/contend"
          # Holding the GVL is at least the CPU time it burned (more when the OS runs another
          # process meanwhile); it waits for the GVL about as long as the other thread holds it.
          assert_operator s["cpu"] + s["gc"], :>=, m[:cpu] / 1e9 * 0.95, "/contend's CPU\n#{report}"
          assert_operator s["gvl_wait"], :>, m[:inner] / 1e9 * 0.2, "/contend waits for the GVL\n#{report}"
          assert_operator s["gvl_blocked"], :<, m[:inner] / 1e9 * 0.05, "/contend never blocks\n#{report}"
        when "/sleep"
          assert_operator s["gvl_blocked"], :>=, REQUESTS * WORK_S * 0.95, "/sleep is off the GVL\n#{report}"
          assert_operator s["cpu"], :<, s["gvl_blocked"] * 0.2, "/sleep hardly runs\n#{report}"
        end
      end

      # Whoever cuts the session's intervals (the Viewer's auto snapshots, Continuous), the
      # counters go on: the endpoints' series stay as they were (no request since), the rest
      # grows.
      Rperf.snapshot(clear: true)
      again = scrape(port)
      families.each do |name, family|
        next unless family[:type] == "counter"

        family[:samples].each do |labels, v|
          later = again[name][:samples].fetch(labels)
          assert_operator later, :>=, v, "#{name}#{labels} is monotonic across a cut"
          assert_in_delta v, later, 1e-9, "#{name}#{labels}: no request since" if labels["endpoint"]
        end
      end
    end
  end

  def test_label_values_beyond_max_series_are_one_other_series
    metrics = Rperf::Metrics.new(max_series: 2)
    Rperf.start(mode: :wall) do
      %w[a b c d].each { |e| Rperf.label(endpoint: e) { sleep 0.01 } }
      families = parse_exposition(metrics.exposition)
      endpoints = families["rperf_gvl_blocked_seconds_total"][:samples].keys.map { |l| l["endpoint"] }
      # The unlabelled time took a series first (the session's own thread before the labels).
      assert_equal 3, endpoints.size, endpoints.inspect
      assert_includes endpoints, "other"
      assert_operator families["rperf_gvl_blocked_seconds_total"][:samples].find { |l, _| l["endpoint"] == "other" }.last, :>=, 0.019
    end
  ensure
    metrics&.close
  end

  def test_escapes_label_values_and_names
    assert_equal 'a\\\\b\\"c\\nd', Rperf::Metrics.escape("a\\b\"c\nd")
    assert_equal "_1route_name", Rperf::Metrics.label_name("1route-name")
    assert_equal [405, "GET, HEAD"], Rperf::Metrics.new.then { |m| m.call("REQUEST_METHOD" => "POST").then { |s, h, _| m.close; [s, h["allow"]] } }
  end

  # --- Prometheus ----------------------------------------------------------------------------

  def prometheus_bin
    %w[prometheus /usr/bin/prometheus].find { |b| system("command -v #{b} >/dev/null 2>&1") }
  end

  def prometheus_query(port, query)
    uri = URI("http://#{LOOPBACK}:#{port}/api/v1/query")
    uri.query = URI.encode_www_form(query: query)
    body = JSON.parse(Net::HTTP.get(uri))
    assert_equal "success", body["status"], body.inspect
    body["data"]["result"]
  end

  def with_prometheus(target_port)
    bin = prometheus_bin
    skip "prometheus is not installed (script/bootstrap consumers installs Debian's)" unless bin
    Dir.mktmpdir("rperf-prometheus") do |dir|
      config = File.join(dir, "prometheus.yml")
      File.write(config, YAML.dump("global" => { "scrape_interval" => "1s", "scrape_timeout" => "1s" },
                                   "scrape_configs" => [{ "job_name" => "rperf",
                                                          "static_configs" => [{ "targets" => ["#{LOOPBACK}:#{target_port}"] }] }]))
      port = free_port
      log = File.join(dir, "prometheus.log")
      pid = Process.spawn(bin, "--config.file=#{config}", "--storage.tsdb.path=#{dir}/data",
                          "--web.listen-address=#{LOOPBACK}:#{port}", out: log, err: [:child, :out])
      begin
        ready = wait_until(60) do
          flunk "prometheus exited: #{File.read(log)}" if Process.waitpid(pid, Process::WNOHANG)
          http_get(port, "/-/ready").code == "200"
        rescue SystemCallError
          false
        end
        assert ready, "prometheus did not start: #{File.read(log)}"
        yield port
      ensure
        stop_process(pid)
      end
    end
  end

  def wait_until(seconds)
    deadline = monotonic_ns + (seconds * 1e9)
    until (result = yield)
      return false if monotonic_ns > deadline

      sleep 0.2
    end
    result
  end

  def test_prometheus_scrapes_per_endpoint_gvl_wait_and_blocked_time
    skip "prometheus is not installed (script/bootstrap consumers installs Debian's)" unless prometheus_bin
    with_loaded_app do |app, app_port|
      with_prometheus(app_port) do |port|
        # The endpoints' series no longer move (no request since the load): Prometheus's last
        # scrape holds what /metrics serves now.
        ours = scrape(app_port)
        queries = %w[cpu gvl_wait gvl_blocked].product(%w[/cpu /contend /sleep])
        seen = wait_until(60) do
          queries.all? do |state, path|
            result = prometheus_query(port, %(sum by (endpoint) (rperf_#{state}_seconds_total{endpoint="GET #{path}"})))
            result.size == 1 && (Float(result[0]["value"][1]) - value(ours, "rperf_#{state}_seconds_total", "GET #{path}")).abs < 1e-6
          end
        end
        assert seen, "Prometheus has the per-endpoint series /metrics serves: " \
                     "#{prometheus_query(port, 'rperf_gvl_wait_seconds_total').inspect}"
        # Each endpoint's seconds as Prometheus returns them, against what the endpoint measured,
        # within 5%: all states together between the time inside the label and the time around
        # the middleware; running (holding the GVL) at least the CPU it burned; /contend's GVL
        # wait a real share and at most the time it did not burn CPU; /sleep's blocked time its
        # sleeps.
        m = app.measured
        from_prometheus = lambda do |state, path|
          result = prometheus_query(port, %(sum(rperf_#{state}_seconds_total{endpoint="GET #{path}"})))
          result.empty? ? 0.0 : Float(result[0]["value"][1])
        end
        seconds = %w[/cpu /contend /sleep].to_h { |path| [path, %w[cpu gvl_wait gvl_blocked gc].to_h { |st| [st, from_prometheus.(st, path)] }] }
        report = "Prometheus: #{seconds}\nmeasured: #{m}"
        seconds.each do |path, s|
          slack = m[path][:count] * 1e-3 # a millisecond a request for the middleware's own work
          assert_operator s.values.sum, :>=, m[path][:inner] / 1e9 * 0.95, "#{path}: covers the work\n#{report}"
          assert_operator s.values.sum, :<=, m[path][:outer] / 1e9 * 1.05 + slack, "#{path}: no more than the requests\n#{report}"
          assert_operator s["cpu"] + s["gc"], :>=, m[path][:cpu] / 1e9 * 0.95, "#{path}: runs its CPU time\n#{report}"
        end
        wait = seconds["/contend"]["gvl_wait"]
        assert_operator wait, :>, m["/contend"][:inner] / 1e9 * 0.2, report
        assert_operator wait, :<=, (m["/contend"][:outer] - m["/contend"][:cpu]) / 1e9 * 1.05 + CONTEND_REQUESTS * 1e-3, report
        blocked = seconds["/sleep"]["gvl_blocked"]
        assert_operator blocked, :>=, REQUESTS * WORK_S * 0.95, report
        assert_operator blocked, :<=, m["/sleep"][:outer] / 1e9 * 1.05 + REQUESTS * 1e-3, report
        %w[/cpu /contend].each { |path| assert_operator seconds[path]["gvl_blocked"], :<, m[path][:inner] / 1e9 * 0.05, "#{path} never blocks\n#{report}" }
      end
    end
  end
end
