# frozen_string_literal: true

require_relative "web_helper"

# Issue 46: Rperf::Continuous in real processes. The pprof files of consecutive intervals meet
# exactly (time_nanos + duration_nanos is the next one's time_nanos, as our reader and
# `go tool pprof` read them) and add up to the time profiled; the environment turns it on; a
# forked child exports its own; uploads follow Pyroscope's /ingest protocol, checked by a
# receiver here (no Pyroscope server is installable) that hands the body to `go tool pprof`.
class ContinuousTest < Minitest::Test
  include WebTestHelper
  include RperfTestHelper

  def setup
    @dir = Dir.mktmpdir("rperf-continuous")
  end

  def teardown
    super
    FileUtils.rm_rf(@dir)
  end

  def go_pprof_raw(path)
    out, err, status = Open3.capture3("go", "tool", "pprof", "-raw", path)
    assert status.success?, "go tool pprof -raw #{path} failed: #{err}"
    out
  end

  # [start_time_ns, duration_ns] of a pprof file, as our reader reads it.
  def interval_of(path)
    profile = Rperf::Native::Profile.load_pprof(File.binread(path))
    [profile.attribute(:start_time_ns), profile.attribute(:duration_ns)]
  end

  def assert_contiguous(files)
    intervals = files.map { |f| interval_of(f) }
    intervals.each_cons(2).with_index do |((start, duration), (next_start, _)), i|
      assert_equal start + duration, next_start, "interval #{i + 1} ends where interval #{i + 2} starts"
    end
    intervals
  end

  # Computes until the exporter has cut `cuts` intervals, then stops (the last interval is
  # exported at stop); prints the files and the time around and inside the session.
  FIVE_INTERVALS = <<~RUBY
    require "rperf/continuous"
    require "json"
    mono = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) }
    dir, cuts = ARGV[0], ARGV[1].to_i
    t0 = mono.()
    c = Rperf::Continuous.start(service: "shop", interval: 0.5, dir: dir)
    t1 = mono.()
    until c.files.size >= cuts
      x = 0
      x += 1 while x < 100_000
      sleep 0.005
    end
    t2 = mono.()
    Rperf::Continuous.stop
    t3 = mono.()
    puts JSON.generate(files: c.files, inner_ns: t2 - t1, outer_ns: t3 - t0, pid: Process.pid)
  RUBY

  def test_five_intervals_meet_exactly_and_add_up_to_the_profiled_time
    out, err, status = run_ruby(FIVE_INTERVALS, @dir, "4")
    assert status.success?, err
    result = JSON.parse(out)
    files = result["files"]
    # Four cuts and the stop's interval (a fifth cut only if this machine stalled the script
    # for a whole interval between its check and its stop).
    assert_operator files.size, :>=, 5, files.inspect
    assert_equal files.sort, Dir.glob(File.join(@dir, "*.pb.gz")).sort, "every file written, in order"
    files.each { |f| assert_match(/\Ashop-\d{8}T\d{6}\.\d{9}Z-.+-#{result['pid']}-\d+\.pb\.gz\z/, File.basename(f)) }

    intervals = assert_contiguous(files)
    total = intervals.sum(&:last)
    assert_operator total, :>=, result["inner_ns"], "the files cover the time the program ran"
    assert_operator total, :<=, result["outer_ns"], "and no more than start to stop"
    intervals[0...-1].each { |_, d| assert_operator d, :>=, 0.4e9, "a cut interval is about 0.5 s long" }

    files.each do |f|
      raw = go_pprof_raw(f)
      assert_match(/^Comment: service: shop$/, raw)
      assert_match(/^Comment: pid: #{result['pid']}$/, raw)
      assert_match(/^Comment: rperf #{Regexp.escape(Rperf::VERSION)}$/, raw)
      assert_match(/^PeriodType: wall nanoseconds$/, raw)
      # The overhead budget (Continuous's default, 1%): the rate it ran at and what it cost.
      assert_match(/^Comment: sampling: [\d.]+ Hz effective \(100 Hz asked\), profiler overhead 0\.\d{4} of the process's CPU$/, raw)
      assert_match(/^Samples:$/, raw)
    end
  end

  # RUBYOPT=-rrperf/continuous: a parent and the child it forks, each computing a while.
  FORKING = <<~RUBY
    def work(seconds)
      t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      x = 0
      x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t < seconds
    end
    child = fork { work(0.8) }
    work(0.5)
    Process.wait(child)
    puts child
  RUBY

  def test_the_environment_turns_it_on_and_a_forked_child_exports_its_own
    env = { "RUBYOPT" => "-I#{ROOT}/lib -rrperf/continuous", "RPERF_CONTINUOUS" => "1", "RPERF_SERVICE" => "worker",
            "RPERF_CONTINUOUS_DIR" => @dir, "RPERF_CONTINUOUS_INTERVAL" => "0.3", "RPERF_FREQUENCY" => "200" }
    out, err, status = Open3.capture3(env, RUBY, "-e", FORKING)
    assert status.success?, err
    assert_empty err
    child = out.to_i
    by_pid = Dir.glob(File.join(@dir, "worker-*.pb.gz")).group_by { |f| File.basename(f)[/-(\d+)-\d+\.pb\.gz\z/, 1].to_i }
    assert_equal [child, status.pid].sort, by_pid.keys.sort, "the parent's and the child's files"
    by_pid.each do |pid, files|
      files = files.sort_by { |f| File.basename(f)[/-(\d+)\.pb\.gz\z/, 1].to_i }
      assert_operator files.size, :>=, 2, "#{pid}: cut at least once (0.3 s) and at exit"
      assert_contiguous(files)
      raw = go_pprof_raw(files.first)
      assert_match(/^Comment: service: worker$/, raw)
      assert_match(/^Comment: pid: #{pid}$/, raw)
      assert_match(/^Comment: frequency: 200Hz$/, raw)
    end
    child_time = by_pid[child].sum { |f| interval_of(f).last }
    assert_operator child_time, :>=, 0.8e9, "the child's files cover its work"
  end

  def test_the_directory_keeps_the_newest_files_within_max_bytes
    code = <<~RUBY
      require "rperf/continuous"
      c = Rperf::Continuous.start(service: "small", interval: 0.2, dir: ARGV[0], max_bytes: ARGV[1].to_i)
      sleep 0.01 until c.files.size >= 4
      Rperf::Continuous.stop
      puts c.files
    RUBY
    out, err, status = run_ruby(code, @dir, "1")
    assert status.success?, err
    written = out.split("\n")
    assert_operator written.size, :>=, 5
    assert_equal [written.last], Dir.glob(File.join(@dir, "*")), "only the newest is kept when one file exceeds max_bytes"
  end

  # A Pyroscope-shaped receiver: the first upload is refused (503), the rest accepted.
  class Receiver
    attr_reader :requests

    def initialize
      @requests = []
      @lock = Mutex.new
    end

    def call(env)
      body = env["rack.input"].read
      @lock.synchronize do
        @requests << { method: env["REQUEST_METHOD"], path: env["PATH_INFO"], query: URI.decode_www_form(env["QUERY_STRING"]).to_h,
                       type: env["CONTENT_TYPE"], body: body }
        @requests.size == 1 ? [503, {}, ["busy\n"]] : [200, {}, ["ok\n"]]
      end
    end
  end

  def test_uploads_follow_pyroscope_ingest_and_are_retried
    receiver = Receiver.new
    with_puma(receiver, threads: 2) do |port|
      code = <<~RUBY
        require "rperf/continuous"
        c = Rperf::Continuous.start(service: "api", interval: 0.3, url: "http://127.0.0.1:#{port}/base")
        # A server's load: work between waits (a CPU-bound loop would hold the GVL from the
        # exporter for a time slice at each of its network calls).
        t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t < 1.5
          x = 0
          x += 1 while x < 50_000
          sleep 0.005
        end
        Rperf::Continuous.stop
        puts Process.pid
      RUBY
      out, err, status = run_ruby(code)
      assert status.success?, err
      assert_match(/503/, err, "the refusal is reported")
      pid = out.to_i
      requests = receiver.requests
      assert_operator requests.size, :>=, 4, "three or more intervals, the first sent twice"
      again = requests.drop(1).find { |r| r[:body] == requests[0][:body] }
      assert again, "the refused upload is sent again"
      assert_equal requests[0][:query], again[:query]
      requests.each do |r|
        assert_equal "POST", r[:method]
        assert_equal "/base/ingest", r[:path]
        q = r[:query]
        assert_match(/\Aapi\{host=[^,{}]+,pid=#{pid}\}\z/, q["name"])
        assert_equal "pprof", q["format"]
        # The rate the interval ran at: the overhead budget keeps it within [1 Hz, 100 Hz asked].
        assert_includes 1..100, Integer(q["sampleRate"])
        assert_operator Integer(q["from"]), :<=, Integer(q["until"])
        assert_in_delta Time.now.to_i, Integer(q["from"]), 120
        assert_equal "application/octet-stream", r[:type]
        path = File.join(@dir, "upload.pb.gz")
        File.binwrite(path, r[:body])
        assert_match(/^Comment: service: api$/, go_pprof_raw(path))
      end
      froms = requests.uniq { |r| r[:body] }.map { |r| Integer(r[:query]["from"]) }
      assert_equal froms.sort, froms, "intervals in order"
    end
  end
end
