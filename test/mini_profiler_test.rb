# frozen_string_literal: true

require "test_helper"
require "json"
require "net/http"
require "tempfile"
require "fileutils"

# rperf as rack-mini-profiler's flamegraph profiler (lib/rperf/integrations/mini_profiler.rb), tested through
# real Puma servers on 127.0.0.1 running rack-mini-profiler 5.0.0 (test/mini_profiler/server.rb),
# speedscope's own schema, and the speedscope that rack-mini-profiler bundles, in Chromium.
class MiniProfilerTest < Minitest::Test
  SERVER = File.join(ROOT, "test/mini_profiler/server.rb")
  SLEEP_NS = 200_000_000 # MiniProfilerTestApp::SLEEP_SECONDS
  CPU_NS = 100_000_000 # MiniProfilerTestApp::CPU_SECONDS
  RPERF_FLAMEGRAPH = "pp=flamegraph&flamegraph_profiler=rperf"
  STACKPROF_MISSING = "Please install the stackprof gem"

  # A speedscope document taken from a flamegraph page, with helpers over its active profile.
  class Graph
    attr_reader :doc

    def initialize(doc) = @doc = doc
    def rperf? = doc.key?("$schema")
    def frame_names = doc["shared"]["frames"].map { |f| f["name"] }
    def active = doc["profiles"][doc["activeProfileIndex"] || 0]

    # Total weight (ns) of the active profile's samples whose stack (root first) passes
    # through `via` and, when given, ends in the frame `leaf`.
    def weight(via:, leaf: nil)
      names = frame_names
      active["samples"].zip(active["weights"]).sum do |stack, w|
        frames = stack.map { |i| names[i] }
        frames.include?(via) && (leaf.nil? || frames.last == leaf) ? w : 0
      end
    end
  end

  def setup
    @servers = []
  end

  def teardown
    @servers.each { |server| stop_server(server) }
    super
  end

  # --- the rperf flamegraph -------------------------------------------------------------------

  def test_rperf_flamegraph_page_shows_cpu_sleep_gvl_and_gc
    server = start_server(csp: 1)
    res = get(server, "/work?#{RPERF_FLAMEGRAPH}")
    assert_equal "200", res.code
    assert_equal "text/html", res["content-type"]
    assert_includes res.body, "<title>Rack::MiniProfiler Flamegraph</title>"
    assert_includes res.body, "/mini-profiler-resources/speedscope/index.html"
    # rack-mini-profiler's CSP nonce handling: the inline script carries the request's nonce.
    nonce = res["content-security-policy"][/'nonce-([^']+)'/, 1]
    assert_includes res.body, %(<script type="text/javascript" nonce="#{nonce}">)

    graph = graph_of(res)
    assert_equal "rperf wall 500 Hz", graph.doc["name"], "flamegraph_sample_rate left at its default: 500 Hz"
    assert_valid_speedscope graph
    assert_match(/ \(this request\)\z/, graph.active["name"])
    %w[[GVL\ blocked] [GVL\ wait] [GC\ marking] [GC\ sweeping]].each { |f| assert_includes graph.frame_names, f }

    # Blocked from the sleep's start to its wake-up: at least the 0.2 s asked for, at most the
    # nap's time as the app measured it (a busy machine wakes it late), no sampling error.
    blocked = graph.weight(via: "MiniProfilerTestApp.nap", leaf: "[GVL blocked]")
    assert_operator blocked, :>=, SLEEP_NS, "sleep 0.2 s is [GVL blocked]"
    assert_operator blocked, :<=, JSON.parse(get(server, "/last_nap").body).fetch("ns")
    # 0.1 s of CPU burned holding the GVL is at least 0.1 s of wall time (plus any time it was
    # descheduled), less the run from the last tick inside burn_cpu to its return, which the next
    # sample charges to its caller: one 2 ms period of the 500 Hz timer while the thread runs,
    # and as much again for the tick's delivery, once more when the timer thread itself waits
    # for a CPU (two periods were short by 0.07 ms once, and by 0.05 ms in a fresh-clone run
    # beside another: a late tick stretches the last interval by up to a period).
    assert_operator graph.weight(via: "MiniProfilerTestApp.burn_cpu"), :>=, CPU_NS - 3 * 2_000_000
    # The woken thread waits while the new thread burns its 50 ms holding the GVL (a new thread
    # is not preempted before it has held it for 100 ms): far more than 5 ms of [GVL wait].
    assert_operator graph.weight(via: "MiniProfilerTestApp.contend", leaf: "[GVL wait]"), :>=, 5_000_000,
                    "waking up while another thread holds the GVL is [GVL wait]"
    assert_operator graph.weight(via: "MiniProfilerTestApp.allocate", leaf: "[GC marking]"), :>, 0
    assert_operator graph.weight(via: "MiniProfilerTestApp.allocate", leaf: "[GC sweeping]"), :>, 0
    # The other thread the request started (contend) has a profile of its own.
    assert_operator graph.doc["profiles"].size, :>=, 2

    # Issue 48.5: rperf's own frames (FlamegraphProfiler.run, Flamegraph.profile, Rperf.label,
    # RequestHook#call) are merged away, and the samples come in time order, as stackprof's raw
    # dump gives them to speedscope's Time Order view: the app's steps in the order it ran them.
    frames = graph.doc["shared"]["frames"]
    own = graph.active["samples"].flatten.uniq.map { |i| frames[i] }.select { |f| f["file"].to_s.start_with?(File.join(ROOT, "lib/rperf")) }
    assert_empty own.map { |f| f["name"] }, "rperf's own frames in the request's profile"
    steps = graph.active["samples"].filter_map do |stack|
      names = stack.map { |i| frames[i]["name"] }
      %w[burn_cpu nap contend allocate].find { |step| names.include?("MiniProfilerTestApp.#{step}") }
    end
    assert_equal %w[burn_cpu nap contend allocate], steps.chunk_while { |a, b| a == b }.map(&:first)
    assert_operator graph.active["samples"].size, :>, graph.active["samples"].uniq.size, "one sample per interval, not one per stack"
  end

  def test_async_flamegraph_is_stored_and_served_and_follows_the_page_into_its_requests
    server = start_server(stackprof: 1) # :auto picks stackprof: rperf only where asked for
    res = get(server, "/work?pp=async-flamegraph&flamegraph_profiler=rperf")
    assert_equal "200", res.code
    assert_includes res.body, "rperf running during the request: true"
    assert_includes res.body, "includes.js", "rack-mini-profiler injected its script"
    stored = get(server, res["x-miniprofiler-flamegraph-path"])
    graph = graph_of(stored)
    assert graph.rperf?
    assert_valid_speedscope graph
    assert_operator graph.weight(via: "MiniProfilerTestApp.nap", leaf: "[GVL blocked]"), :>=, SLEEP_NS * 0.95

    # The page's own requests (XHR, fetch) are profiled too, with the page's profiler.
    page_url = "http://127.0.0.1:#{server[:port]}/work?pp=async-flamegraph"
    ajax = get(server, "/fast", "Referer" => "#{page_url}&flamegraph_profiler=rperf")
    assert graph_of(get(server, ajax["x-miniprofiler-flamegraph-path"])).rperf?
    ajax = get(server, "/fast", "Referer" => page_url)
    refute graph_of(get(server, ajax["x-miniprofiler-flamegraph-path"])).rperf?, "no choice on the page: stackprof"
  end

  def test_auto_uses_rperf_without_stackprof_and_request_options_apply
    server = start_server
    assert graph_of(get(server, "/fast?pp=flamegraph")).rperf?, ":auto without stackprof is rperf"
    graph = graph_of(get(server, "/fast?#{RPERF_FLAMEGRAPH}&flamegraph_mode=cpu&flamegraph_sample_rate=200"))
    assert_equal "rperf cpu 200 Hz", graph.doc["name"]
    assert_valid_speedscope graph
    # Asking for stackprof gets rack-mini-profiler's own answer when it is not installed.
    res = get(server, "/fast?pp=flamegraph&flamegraph_profiler=stackprof")
    assert_equal "text/plain; charset=utf-8", res["content-type"]
    assert_includes res.body, STACKPROF_MISSING
  end

  def test_config_sample_rate_is_hz_for_rperf
    server = start_server(profiler: "rperf", sample_rate: 250)
    assert_equal "rperf wall 250 Hz", graph_of(get(server, "/fast?pp=flamegraph")).doc["name"]
  end

  def test_bad_options_get_a_clear_message
    server = start_server
    {
      "flamegraph_profiler=vernier" => /flamegraph_profiler must be auto, stackprof or rperf \(got "vernier"\)/,
      "flamegraph_profiler=rperf&flamegraph_mode=object" => /flamegraph_mode must be wall or cpu for rperf \(got object/,
      "flamegraph_profiler=rperf&flamegraph_sample_rate=20000" => /frequency in Hz for rperf: 1 to 10000 \(got 20000\.0\)/,
      "flamegraph_profiler=rperf&flamegraph_sample_rate=0.5" => /frequency in Hz for rperf: 1 to 10000 \(got 0\.5\)/,
    }.each do |query, message|
      res = get(server, "/fast?pp=flamegraph&#{query}")
      assert_equal "200", res.code, query
      assert_equal "text/plain; charset=utf-8", res["content-type"], query
      assert_match message, res.body
    end
  end

  # --- rack-mini-profiler's own behaviour stays ------------------------------------------------

  def test_auto_prefers_stackprof_whose_output_is_unchanged
    plain = start_server(rperf: 0, stackprof: 1)
    ours = start_server(stackprof: 1)
    theirs_page = get(plain, "/work?pp=flamegraph")
    ours_page = get(ours, "/work?pp=flamegraph")
    theirs_graph = graph_of(theirs_page).doc
    ours_graph = graph_of(ours_page).doc
    assert_equal theirs_graph.keys.sort, ours_graph.keys.sort
    assert_equal %w[mode interval frames raw], %w[mode interval frames raw] & ours_graph.keys, "a stackprof dump"
    assert_equal theirs_graph.values_at("mode", "interval"), ours_graph.values_at("mode", "interval")
    assert_equal page_shell(theirs_page.body), page_shell(ours_page.body)
    assert graph_of(get(ours, "/fast?#{RPERF_FLAMEGRAPH}")).rperf?

    configured = start_server(stackprof: 1, profiler: "rperf")
    assert graph_of(get(configured, "/fast?pp=flamegraph")).rperf?
    refute graph_of(get(configured, "/fast?pp=flamegraph&flamegraph_profiler=stackprof")).rperf?
  end

  def test_rperf_requested_without_the_integration_gets_rack_mini_profilers_message
    server = start_server(rperf: 0)
    res = get(server, "/fast?#{RPERF_FLAMEGRAPH}")
    assert_equal "200", res.code
    assert_includes res.body, STACKPROF_MISSING
  end

  def test_running_rperf_session_gets_a_message_and_is_left_alone
    server = start_server
    assert_equal({ "running" => true }, JSON.parse(get(server, "/session/start").body))
    ["/fast?#{RPERF_FLAMEGRAPH}", "/fast?pp=async-flamegraph&flamegraph_profiler=rperf", "/fast?pp=flamegraph"].each do |path|
      res = get(server, path)
      assert_equal "200", res.code, path
      assert_equal "text/plain; charset=utf-8", res["content-type"], path
      assert_includes res.body, "rperf is already profiling this process", path
      assert_includes res.body, "That session was left running", path
    end
    assert_equal({ "running" => true }, JSON.parse(get(server, "/session/profile").body))
    summary = JSON.parse(get(server, "/session/stop").body)
    assert_equal "wall", summary["mode"]
    assert_equal 1000, summary["frequency"]
    assert_operator summary["session_ns"], :>=, 40_000_000, "the session still profiles its own blocks"
    # The wall session's own VM states (%GVL, %GC) come and go with scheduling; no other key.
    assert_equal %w[endpoint], summary["label_keys"] - %w[%GVL %GC], "nothing of ours in the app's session"
  end

  def test_allow_authorized_refuses_unauthorized_requests
    server = start_server(auth: 1)
    res = get(server, "/fast?#{RPERF_FLAMEGRAPH}")
    assert_includes res.body, "fast; rperf running during the request: false"
    refute_includes res.body, "Flamegraph"

    # An admin gets rack-mini-profiler's cookie, and with it the flamegraph.
    res = get(server, "/fast?#{RPERF_FLAMEGRAPH}", "X-Test-Admin" => "1")
    assert_includes res.body, "fast; rperf running during the request: false"
    cookie = res["set-cookie"][/\A[^;]+/]
    assert_match(/\A__profilin=/, cookie)
    graph = graph_of(get(server, "/fast?#{RPERF_FLAMEGRAPH}", "X-Test-Admin" => "1", "Cookie" => cookie))
    assert graph.rperf?
  end

  # rack-mini-profiler's own timing results (x-miniprofiler-ids, the results JSON its badge
  # reads) with rperf loaded, compared with a plain rack-mini-profiler (stackprof for the
  # flamegraph requests): same headers, same result shape, a duration that covers the work.
  def test_rack_mini_profilers_own_timing_results_are_undisturbed
    plain = start_server(rperf: 0, stackprof: 1)
    ours = start_server
    work_ms = (CPU_NS + SLEEP_NS) / 1e6

    # pp=flamegraph: the flame graph instead of the page, and (as rack-mini-profiler does it)
    # no stored timing result and no ids header.
    [[plain, "/work?pp=flamegraph"], [ours, "/work?#{RPERF_FLAMEGRAPH}"]].each do |server, path|
      res = get(server, path)
      assert_equal "200", res.code
      assert_includes res.body, "<title>Rack::MiniProfiler Flamegraph</title>"
      assert_nil res["x-miniprofiler-ids"], path
    end

    # A normal request: rperf is not running, rack-mini-profiler times it and says so.
    plain_normal, ours_normal = [plain, ours].map { |server| timed(server, "/work") }
    assert_includes ours_normal[:body], "rperf running during the request: false"
    assert_equal 1, ours_normal[:ids].size, "the flamegraph request stored no result, as without rperf"
    assert_equal plain_normal[:ids].size, ours_normal[:ids].size
    assert_same_timing_result plain_normal, ours_normal, work_ms
    refute ours_normal[:result]["has_flamegraph"]

    # pp=async-flamegraph: the page, its timing result and the stored flame graph.
    plain_async = timed(plain, "/work?pp=async-flamegraph")
    ours_async = timed(ours, "/work?pp=async-flamegraph&flamegraph_profiler=rperf")
    assert_includes ours_async[:body], "rperf running during the request: true"
    assert_equal plain_async[:ids].size, ours_async[:ids].size
    assert_same_timing_result plain_async, ours_async, work_ms
    assert_equal true, ours_async[:result]["has_flamegraph"]
    assert_equal true, plain_async[:result]["has_flamegraph"]
    refute_equal ours_normal[:ids].first, ours_async[:ids].first
  end

  # --- the page in a browser ------------------------------------------------------------------

  def test_speedscope_in_chromium_shows_the_rperf_profile_offline
    server = start_server(csp: 1)
    screenshot = File.join(ROOT, "tmp", "mini_profiler_flamegraph-#{RUBY_VERSION}.png") # one per Ruby: script/test runs the Rubies side by side
    FileUtils.mkdir_p(File.dirname(screenshot))
    FileUtils.rm_f(screenshot)
    url = "http://127.0.0.1:#{server[:port]}/work?#{RPERF_FLAMEGRAPH}"
    out, err, status = Open3.capture3("node", File.join(ROOT, "test/consumers/mini_profiler_render.js"), url, screenshot,
                                      chdir: ROOT)
    assert status.success?, err
    seen = JSON.parse(out)
    assert_equal [], seen["external"], "every request stays on 127.0.0.1"
    assert_equal [], seen["errors"], "no script errors, no CSP violations"
    assert_includes seen["toolbar"], "Flamegraph for /work"
    # speedscope's Sandwich table lists the functions of the profile it loaded.
    %w[MiniProfilerTestApp.burn_cpu MiniProfilerTestApp.nap [GVL\ blocked] [GVL\ wait] [GC\ marking]].each do |name|
      assert_includes seen["text"], name
    end
    assert_operator File.size(screenshot), :>, 20_000, "a screenshot of the flame graph (test artifact)"
  end

  # --- loading --------------------------------------------------------------------------------

  def test_config_option_and_load_order
    code = <<~RUBY
      require "rperf/mini_profiler"   # before rack-mini-profiler's own entry file
      require "rack-mini-profiler"
      c = Rack::MiniProfiler.config
      p c.flamegraph_profiler
      c.flamegraph_profiler = "rperf"
      p c.flamegraph_profiler
      begin
        c.flamegraph_profiler = :vernier
      rescue ArgumentError => e
        puts e.message
      end
      Rack::MiniProfiler.reset_config
      p Rack::MiniProfiler.config.flamegraph_profiler
    RUBY
    out, err, status = run_ruby(code)
    assert status.success?, err
    assert_equal "", err
    assert_equal [":auto", ":rperf", "flamegraph_profiler must be :auto, :stackprof or :rperf (got :vernier)", ":auto"],
                 out.lines.map(&:chomp)
  end

  def test_require_refuses_unsupported_or_missing_rack_mini_profiler
    # Only the series the hook was tested with: a later 5.x minor may move what it hooks into.
    %w[4.0.1 5.1.0 5.2.3 6.0.0].each do |version|
      out, err, status = run_ruby(<<~RUBY)
        module Rack; class MiniProfiler; VERSION = "#{version}"; end; end
        require "rperf/mini_profiler"
        puts "loaded"
      RUBY
      refute status.success?, version
      refute_includes out, "loaded"
      assert_match(/LoadError/, err)
      assert_includes err, "rperf/mini_profiler does not support rack-mini-profiler #{version}: it supports ~> 5.0.0 " \
                           "(tested with 5.0.0;"
      assert_includes err, 'gem "rack-mini-profiler", "~> 5.0.0"'
    end
    # A 5.0.x patch release is taken (the real 5.0.0 files then load over the stub).
    out, err, status = run_ruby(<<~RUBY)
      module Rack; class MiniProfiler; VERSION = "5.0.9"; end; end
      require "rperf/mini_profiler"
      puts Rack::MiniProfiler.config.flamegraph_profiler
    RUBY
    assert status.success?, err
    assert_equal "auto\n", out
    Dir.mktmpdir do |empty|
      # No gems at all, and outside `bundle exec` (which would fail first, on the missing gems).
      env = { "GEM_HOME" => empty, "GEM_PATH" => empty, "RUBYOPT" => nil, "BUNDLER_SETUP" => nil, "BUNDLE_GEMFILE" => nil }
      _, err, status = run_ruby('require "rperf/mini_profiler"', env: env)
      refute status.success?
      assert_match(/needs the rack-mini-profiler gem .*add gem "rack-mini-profiler" to the Gemfile/, err)
    end
  end

  private

  # Starts test/mini_profiler/server.rb with MP_* settings; it stops when its stdin closes.
  def start_server(**settings)
    env = settings.to_h { |k, v| ["MP_#{k.upcase}", v.to_s] }
    log = Tempfile.create(["mini_profiler_server", ".log"])
    io = IO.popen(env, [RUBY, "-I#{ROOT}/lib", SERVER], "r+", err: log.path)
    server = { io: io, pid: io.pid, log: log }
    @servers << server
    # Booting Puma and rack-mini-profiler took over 30 s with load average 25 on 2 cores.
    raise "server did not start: #{File.read(log.path)}" unless io.wait_readable(120)

    line = io.gets
    raise "server did not start: #{File.read(log.path)}" unless line&.start_with?("port ")

    server[:port] = Integer(line.split.last)
    server
  end

  def stop_server(server)
    server[:io].close_write
    unless wait_for_exit(server[:pid], 10)
      Process.kill(:KILL, server[:pid])
      Process.wait(server[:pid])
    end
    server[:io].close
    File.unlink(server[:log].path)
    server[:log].close
  end

  def wait_for_exit(pid, seconds)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
    loop do
      return true if Process.wait(pid, Process::WNOHANG)
      return false if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

      sleep 0.05
    end
  end

  def get(server, path, headers = {})
    Net::HTTP.start("127.0.0.1", server[:port], open_timeout: 10, read_timeout: 60) do |http|
      http.get(path, headers)
    end
  end

  # GETs path and fetches rack-mini-profiler's timing result of that request as its badge does
  # (an XHR POST to <base>/results with the first id of the x-miniprofiler-ids header).
  def timed(server, path)
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    res = get(server, path)
    elapsed_ms = (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0) * 1000
    assert_equal "200", res.code, path
    ids = res["x-miniprofiler-ids"].to_s.split(",")
    refute_empty ids, "#{path}: x-miniprofiler-ids"
    assert_includes res.body, "includes.js", "#{path}: rack-mini-profiler injected its script"
    result = Net::HTTP.start("127.0.0.1", server[:port], open_timeout: 10, read_timeout: 60) do |http|
      http.post("/mini-profiler-resources/results", URI.encode_www_form(id: ids.first),
                "X-Requested-With" => "XMLHttpRequest", "Content-Type" => "application/x-www-form-urlencoded")
    end
    assert_equal "200", result.code, "#{path}: results #{result.body[0, 200]}"
    assert_equal "application/json", result["content-type"]
    { ids: ids, body: res.body, result: JSON.parse(result.body), elapsed_ms: elapsed_ms }
  end

  # Every key path of a JSON value, with the type of its value.
  def json_shape(value, path = "", acc = {})
    case value
    when Hash then value.each { |k, v| json_shape(v, "#{path}/#{k}", acc) }
    when Array then value.each { |v| json_shape(v, "#{path}[]", acc) }
    else acc[path] = value.class.name
    end
    acc
  end

  # The request's duration covers its work (0.1 s of CPU and a 0.2 s sleep take at least 0.3 s)
  # and lies within the request's time measured by the client.
  def assert_same_timing_result(plain_timed, ours_timed, work_ms)
    plain = plain_timed[:result]
    ours = ours_timed[:result]
    # client_timings comes from the badge's form data (none here); the rest is rack-mini-profiler's.
    assert_equal json_shape(plain), json_shape(ours), "the timing result has rack-mini-profiler's shape"
    # The page names differ only by the port and the query parameter that asked for rperf.
    without_port = ->(name) { name.to_s.sub(/:\d+/, ":PORT").sub("&flamegraph_profiler=rperf", "") }
    assert_equal without_port.(plain["name"]), without_port.(ours["name"])
    assert_match %r{\AGET http://127\.0\.0\.1:PORT/work(\?|\z)}, without_port.(ours.dig("root", "name"))
    [plain_timed, ours_timed].each do |timed|
      r = timed[:result]
      assert_operator r["duration_milliseconds"], :>=, work_ms, "the request's duration covers its work"
      assert_operator r["duration_milliseconds"], :<=, timed[:elapsed_ms], "the request's duration vs the client's"
      assert_equal r["duration_milliseconds"], r.dig("root", "duration_milliseconds")
      assert_in_delta Time.now.to_f * 1000, r["started_at"], 60_000
    end
    # How much longer ours takes than plain is a performance figure, not correctness: under load
    # (two CPU hogs) the async request took 2.6-3.9 s with rperf against 1.2-1.4 s with stackprof.
  end

  def graph_of(response)
    json = response.body[/^\s*var graph = (.*);$/, 1]
    assert json, "a flamegraph page: #{response.body[0, 300]}"
    Graph.new(JSON.parse(json))
  end

  # The page without its data and nonce: what rack-mini-profiler's renderer made of it.
  def page_shell(html)
    html.sub(/var graph = .*;$/, "var graph = GRAPH;").sub(/nonce="[^"]*"/, 'nonce=""')
  end

  def assert_valid_speedscope(graph)
    Tempfile.create(["flamegraph", ".speedscope.json"]) do |f|
      f.write(JSON.generate(graph.doc))
      f.close
      out, err, status = Open3.capture3("node", File.join(ROOT, "test/consumers/speedscope_validate.js"), f.path)
      assert status.success?, "speedscope schema: #{err}"
      assert JSON.parse(out)["ok"]
    end
  end
end
