# frozen_string_literal: true

require_relative "test_helper"
require "json"
require "zlib"
require "fileutils"
require "socket"
require "stringio"
require "rperf/cli"

# The Firefox Profiler export (--format firefox, .firefox.json(.gz), io/firefox.cc), checked
# by its real consumer: the Firefox Profiler that the profile-viewer gem serves offline
# (installed by script/bootstrap consumers into a test-only gem directory), on 127.0.0.1, in
# headless Chromium (test/consumers/firefox_check.js); and the file against a schema of the
# processed format version that viewer's build reads (test/consumers/firefox_validate.js).
class FirefoxTest < Minitest::Test
  CACHE = ENV.fetch("RPERF_CACHE") { File.join(ENV.fetch("XDG_CACHE_HOME", File.join(Dir.home, ".cache")), "rperf") }
  TEST_GEMS = File.join(CACHE, "test-gems")
  PROFILE_VIEWER = File.join(TEST_GEMS, "bin/profile-viewer")
  OUR_VERSION = 55

  include TempDirTest

  def read_firefox(path)
    raw = File.binread(path)
    JSON.parse(raw.start_with?("\x1f\x8b".b) ? Zlib.gunzip(raw) : raw)
  end

  def need_node!
    skip "npm packages are not installed (script/bootstrap consumers)" unless File.directory?(File.join(ROOT, "node_modules/ajv"))
  end

  def need_browser!
    need_node!
    skip "chromium is not installed (script/bootstrap consumers)" unless File.executable?(ENV.fetch("CHROMIUM", "/usr/bin/chromium"))
    skip "profile-viewer is not installed (script/bootstrap consumers)" unless File.executable?(PROFILE_VIEWER)
  end

  # Self time in Ruby code (no C calls), so the inverted call tree has it as a root.
  def crunch(n)
    i = 0
    i += 1 while i < n
    i
  end

  # A wall profile of two processes, in a Ruby of its own (a fork here would run the tests'
  # exit hooks): the root's main thread crunches under an endpoint label while a second
  # thread sleeps (GVL blocked) and then competes for the GVL (GVL wait); the root runs a full
  # GC (GC mark/sweep); a forked child crunches under a job label. Not aggregated: one sample
  # per interval, with times. Returns the Firefox file and what rperf's own result says:
  # {"pid", "aggregated_samples", "label_sets"}.
  MULTI_PROCESS = <<~'RUBY'
    require "rperf"
    require "json"
    def crunch(n)
      i = 0
      i += 1 while i < n
      i
    end
    Rperf.start(mode: :wall, aggregate: false, frequency: 500)
    Process.wait(fork { Rperf.label(job: "child-job") { crunch(3_000_000) } })
    worker = Thread.new do
      sleep 0.05
      crunch(2_000_000)
    end
    Rperf.label(endpoint: "GET /report") do
      crunch(4_000_000)
      GC.start
    end
    worker.join
    data = Rperf.stop
    Rperf.save(ARGV[0], data)
    File.write(ARGV[1], JSON.generate(pid: Process.pid.to_s, aggregated_samples: data[:aggregated_samples], label_sets: data[:label_sets]))
  RUBY

  def multi_process_profile
    path, facts = tmp("mp.firefox.json.gz"), tmp("mp.facts.json")
    _out, err, status = run_ruby(MULTI_PROCESS, path, facts)
    assert status.success?, err
    [path, JSON.parse(File.read(facts))]
  end

  # pid => thread seq => { weight:, crunch:, "state blocked": ..., "label k=v": ... } from the
  # profile's own (aggregated) samples.
  def expected_threads(facts)
    out = Hash.new { |h, k| h[k] = Hash.new { |t, seq| t[seq] = Hash.new(0) } }
    facts["aggregated_samples"].each do |frames, weight, seq, set|
      labels = facts["label_sets"][set]
      t = out[labels["%pid"] || facts["pid"]][seq]
      t[:weight] += weight
      state = [labels["%GVL"], labels["%GC"]].compact.first
      t[:"state #{state}"] += weight if state
      t[:crunch] += weight if state.nil? && frames.first&.dig(1).to_s.end_with?("#crunch")
      labels.each { |k, v| t[:"label #{k}=#{v}"] += weight unless k.start_with?("%") }
    end
    out
  end

  def test_save_format_and_extension
    data = Rperf.start(mode: :wall, aggregate: false) { crunch(500_000) }
    assert_equal :firefox, Rperf::Storage.detect_format("a.firefox.json")
    assert_equal :firefox, Rperf::Storage.detect_format("a.firefox.json.gz")
    assert_equal :json, Rperf::Storage.detect_format("a.json.gz")
    Rperf.save(tmp("p.firefox.json.gz"), data)
    Rperf.save(tmp("p.json"), data, format: :firefox)
    Rperf.save(tmp("q.out"), data, format: "firefox")
    gz, plain, named = [tmp("p.firefox.json.gz"), tmp("p.json"), tmp("q.out")].map { |f| read_firefox(f) }
    assert_equal "\x1f\x8b".b, File.binread(tmp("p.firefox.json.gz"), 2)
    [gz, plain, named].each do |doc|
      assert_equal OUR_VERSION, doc.dig("meta", "preprocessedProfileVersion")
      assert_equal data[:raw_samples].size, doc["threads"].sum { |t| t.dig("samples", "length") }
      assert_in_delta data[:raw_samples].sum { |s| s[1] } / 1e6, doc["threads"].sum { |t| t.dig("samples", "weight").sum }, 1e-3
      assert doc.dig("meta", "rperf", "timeline")
    end

    # An aggregated profile: a call tree with no timeline, and the file says so.
    Rperf.save(tmp("agg.firefox.json"), Rperf.start(mode: :wall) { crunch(300_000) })
    agg = read_firefox(tmp("agg.firefox.json"))
    refute agg.dig("meta", "rperf", "timeline")
    assert_match(/aggregated/, agg.dig("meta", "extra", 0, "entries").find { |e| e["label"] == "Timeline" }["value"])
    assert agg["threads"].all? { |t| t.dig("samples", "time").all?(&:zero?) }
  end

  def test_cli_record_format_and_report_firefox
    out_file = tmp("rec.firefox.json")
    _out, err, status = Open3.capture3(RUBY, "-I#{ROOT}/lib", File.join(ROOT, "exe/rperf"), "record", "-m", "wall", "--no-aggregate",
                                       "--format", "firefox", "-o", out_file, RUBY, "-e", "i = 0; i += 1 while i < 2_000_000; sleep 0.02")
    assert status.success?, err
    doc = read_firefox(out_file)
    assert doc.dig("meta", "rperf", "timeline")
    assert_operator doc["threads"].first.dig("samples", "length"), :>, 0

    json = tmp("prof.json.gz")
    Rperf.save(json, Rperf.start(mode: :wall, aggregate: false) { crunch(300_000) })
    cli_out = StringIO.new
    assert_equal 0, Rperf::CLI.run(["report", "--firefox", json], out: cli_out, err: StringIO.new)
    written = tmp("prof.firefox.json.gz")
    assert_match(/wrote #{Regexp.escape(written)}/, cli_out.string)
    assert_match(/profile-viewer #{Regexp.escape(written)}/, cli_out.string)
    assert_match(/Load a profile from file/, cli_out.string)
    assert read_firefox(written).dig("meta", "rperf", "timeline")
    # A Firefox file is only named; -o PATH picks the file's name (and its format).
    cli_out = StringIO.new
    assert_equal 0, Rperf::CLI.run(["report", "--firefox", written], out: cli_out, err: StringIO.new)
    refute_match(/wrote/, cli_out.string)
    assert_match(/profile-viewer/, cli_out.string)
    other = tmp("other.firefox.json")
    assert_equal 0, Rperf::CLI.run(["report", "-o", other, json], out: StringIO.new, err: StringIO.new)
    assert_equal OUR_VERSION, read_firefox(other).dig("meta", "preprocessedProfileVersion")
  end

  # The processed format version: the one profile-viewer's bundled profiler upgrades from (not
  # newer than its own), with the per-thread string arrays profile-viewer rewrites when it
  # serves a file; and the file matches that version's schema (ajv and index checks).
  def test_processed_format_version_and_schema
    need_node!
    skip "profile-viewer is not installed (script/bootstrap consumers)" unless File.executable?(PROFILE_VIEWER)
    gem_dir = Dir[File.join(TEST_GEMS, "gems/profile-viewer-*")].max
    constants = Dir[File.join(gem_dir, "dist/*.js.map")].lazy.filter_map do |map|
      JSON.parse(File.read(map))["sourcesContent"]&.find { |s| s&.include?("export const PROCESSED_PROFILE_VERSION") }
    end.first
    refute_nil constants, "the viewer's build names its processed profile version"
    viewer_version = constants[/PROCESSED_PROFILE_VERSION\s*=\s*(\d+)/, 1].to_i
    assert_operator OUR_VERSION, :<=, viewer_version, "the viewer upgrades older versions, never reads newer ones"
    server = File.read(File.join(gem_dir, "ruby-bin/profile-viewer"))
    assert_includes server, 'thread["stringArray"]', "profile-viewer rewrites each thread's string array"
    # Version 56 moved the string arrays out of the threads: 55 is the newest it can serve.
    upgraders = Dir[File.join(gem_dir, "dist/*.js.map")].lazy.filter_map do |map|
      JSON.parse(File.read(map))["sourcesContent"]&.find { |s| s&.include?("profile.shared = { stringArray }") }
    end.first
    assert_match(/\[56\]: \(profile: any\) => \{\s*\/\/ The stringArray is now shared across all threads/, upgraders)

    path, facts = multi_process_profile
    out, err, status = Open3.capture3("node", File.join(ROOT, "test/consumers/firefox_validate.js"), path)
    assert status.success?, "firefox_validate.js: #{out}#{err}"
    assert_equal expected_threads(facts).values.sum(&:size), JSON.parse(out)["threads"]
  end

  # Starts profile-viewer on `path` (bound to 127.0.0.1, its `open` call caught) and yields
  # the profiler's URL for the file.
  def with_profile_viewer(path)
    bin = tmp("bin")
    FileUtils.mkdir_p(bin)
    urls = tmp("urls")
    File.write(File.join(bin, "open"), "#!/bin/sh\necho \"$1\" >> #{urls}\n")
    File.chmod(0o755, File.join(bin, "open"))
    preload = tmp("bind_loopback.rb")
    File.write(preload, "require \"webrick\"\nWEBrick::Config::HTTP[:BindAddress] = \"127.0.0.1\"\n")
    # profile-viewer's own gems only: not the project's bundle.
    env = ENV.keys.grep(/\A(BUNDLE|BUNDLER)_/).to_h { |k| [k, nil] }
    env.update("GEM_HOME" => TEST_GEMS, "GEM_PATH" => TEST_GEMS, "PATH" => "#{bin}:#{ENV.fetch('PATH')}", "RUBYOPT" => nil, "RUBYLIB" => nil)
    log = tmp("viewer.log")
    pid = Process.spawn(env, RUBY, "-r#{preload}", PROFILE_VIEWER, path, out: log, err: log)
    begin
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 30
      # The shell creates the file before it writes the line (seen empty once under load).
      written = -> { File.exist?(urls) && File.read(urls).include?("\n") }
      sleep 0.1 until written.call || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      assert written.call, "profile-viewer did not start:\n#{File.read(log)}"
      url = File.read(urls).lines.first.strip
      port = url[%r{\Ahttp://localhost:(\d+)/}, 1].to_i
      assert_raises(SystemCallError, "profile-viewer listens on 127.0.0.1 only") do
        Socket.tcp(Socket.ip_address_list.find { |a| a.ipv4? && !a.ipv4_loopback? }&.ip_address || "0.0.0.0", port,
                   connect_timeout: 1).close
      end
      yield url.gsub("localhost", "127.0.0.1")
    ensure
      Process.kill(:INT, pid)
      Process.wait(pid)
    end
  end

  def test_profile_viewer_shows_tracks_samples_call_tree_and_markers
    need_browser!
    path, facts = multi_process_profile
    expected = expected_threads(facts)
    assert_equal 2, expected.size, "two processes"
    assert_operator expected[facts["pid"]].size, :>=, 2, "two threads in the root"
    doc = read_firefox(path)
    shot = ENV["RPERF_FIREFOX_SCREENSHOT"]

    result = nil
    with_profile_viewer(path) do |url|
      out, err, status = Open3.capture3("node", File.join(ROOT, "test/consumers/firefox_check.js"), url, *shot, chdir: ROOT)
      assert status.success?, "firefox_check.js failed:\n#{err}\n#{out}"
      result = JSON.parse(out.lines.last)
    end

    assert_empty result["external"], "requests outside 127.0.0.1"
    # profile-viewer's build asks for optional hooks of its own; nothing else may fail.
    assert_equal ["404 /ruby-custom-hooks.js"], result["failed"].uniq
    assert_empty result["errors"].reject { |e| e.include?("404") }, "errors in the page"
    assert_equal viewer_processed_version, result.dig("profile", "version"), "upgraded to the viewer's version"
    assert_equal "rperf wall", result.dig("profile", "product")

    # Tracks: one per thread, named with its seq and, the profile having two processes, its pid;
    # each process's main thread shows the process's PID.
    names = expected.flat_map { |pid, threads| threads.keys.sort.map { |seq| "Thread #{seq} (pid #{pid})" } }
    assert_equal names, result.dig("profile", "threads").map { |t| t["name"] }
    expected.each do |pid, threads|
      main = "Thread #{threads.keys.min} (pid #{pid})"
      assert_includes result["tracks"], "#{main}PID: #{pid}"
    end
    assert_equal names.size, result["tracks"].size

    result["threads"].each_with_index do |shown, i|
      pid, seq = shown["name"].match(/\AThread (\d+) \(pid (\d+)\)\z/).captures.reverse
      want = expected[pid][seq.to_i]
      written = doc["threads"][i]
      # Samples: every sample written, with the thread's weight (ms).
      assert_equal written.dig("samples", "length"), shown["samples"], shown["name"]
      assert_operator shown["samples"], :>, 0
      assert_in_delta want[:weight] / 1e6, shown["weight"], 1e-3, "#{shown['name']} weight"
      # The call tree (inverted): crunch's self time, as a share of the thread, as rperf has it.
      crunch = shown["roots"].find { |r| r["name"].end_with?("#crunch") }
      if want[:crunch].positive?
        refute_nil crunch, "#{shown['name']}: crunch in the inverted call tree"
        assert_in_delta want[:crunch].to_f / want[:weight], crunch["totalRelative"], 1e-6, "#{shown['name']} crunch share"
        row = shown["rows"].find { |r| r.start_with?("#{crunch['name']},") }
        refute_nil row, "#{shown['name']}: a drawn root row for crunch"
        percent = row[/\(([\d.]+)%\)/, 1].to_f
        assert_in_delta 100.0 * want[:crunch] / want[:weight], percent, 1.0, row
      end
      # Markers: the GVL/GC states and the labels, their durations adding up to the weights.
      by_name = shown["markers"].group_by { |m| m["name"] }
      durations = by_name.transform_values { |ms| ms.sum { |m| m["end"] - m["start"] } }
      { "GVL blocked" => :"state blocked", "GVL wait" => :"state wait", "GC mark" => :"state mark",
        "GC sweep" => :"state sweep" }.each do |marker, key|
        next unless want[key].positive? || durations[marker]

        assert_in_delta want[key] / 1e6, durations[marker].to_f, [0.02 * want[key] / 1e6, 0.05].max, "#{shown['name']} #{marker}"
      end
      want.each_key.grep(/\Alabel /).each do |key|
        value = key.to_s.split("=", 2).last
        assert by_name[value], "#{shown['name']}: a marker named #{value}"
        assert by_name[value].all? { |m| m["data"]["type"] == "Label" }
        assert_operator durations[value], :>=, want[key] / 1e6 * 0.98, "#{shown['name']} #{key}"
      end
    end
    states = result["threads"].flat_map { |t| t["markers"].map { |m| m["name"] } }
    assert_includes states, "GVL blocked"
    assert_includes states, "GC mark"
    assert_includes states, "GET /report"
    assert_includes states, "child-job"
    # The marker table draws them with the schema's label.
    refute_empty result["markerTableRows"]
  end

  def viewer_processed_version
    gem_dir = Dir[File.join(TEST_GEMS, "gems/profile-viewer-*")].max
    Dir[File.join(gem_dir, "dist/*.js.map")].each do |map|
      text = File.read(map)
      return text[/PROCESSED_PROFILE_VERSION = (\d+)/, 1].to_i if text.include?("PROCESSED_PROFILE_VERSION = ")
    end
    nil
  end
end
