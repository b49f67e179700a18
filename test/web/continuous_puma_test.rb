# frozen_string_literal: true

require_relative "web_helper"

# Issue 46: a real Puma in cluster mode (2 workers) with RUBYOPT=-rrperf/continuous and the
# RPERF_CONTINUOUS_* environment, no code: the master and each forked worker write pprof
# files of their own process, each process's files meeting exactly, each read by
# `go tool pprof` with its pid in its comments.
class ContinuousPumaTest < Minitest::Test
  include WebTestHelper
  include RperfTestHelper

  APP = <<~RUBY
    run lambda { |env|
      x = 0
      x += 1 while x < 200_000 # some Ruby work for the worker's profile
      [200, { "content-type" => "text/plain" }, [Process.pid.to_s]]
    }
  RUBY

  def setup
    @dir = Dir.mktmpdir("rperf-puma-cluster")
  end

  def teardown
    super
    FileUtils.rm_rf(@dir)
  end

  def files_by_pid
    Dir.glob(File.join(@dir, "web-*.pb.gz")).group_by { |f| File.basename(f)[/-(\d+)-\d+\.pb\.gz\z/, 1].to_i }
  end

  def wait_for(seconds)
    deadline = monotonic_ns + (seconds * 1e9)
    sleep 0.1 until (done = yield) || monotonic_ns > deadline
    done
  end

  def test_a_cluster_of_two_workers_exports_per_worker_and_the_master_its_own
    port = free_port
    File.write(File.join(@dir, "config.ru"), APP)
    File.write(File.join(@dir, "puma.rb"), <<~RUBY)
      workers 2
      threads 1, 2
      bind "tcp://#{LOOPBACK}:#{port}"
      worker_shutdown_timeout 10
    RUBY
    env = { "RUBYOPT" => "#{ENV['RUBYOPT']} -I#{ROOT}/lib -rrperf/continuous", "RPERF_CONTINUOUS" => "1",
            "RPERF_SERVICE" => "web", "RPERF_CONTINUOUS_DIR" => File.join(@dir, "out"),
            "RPERF_CONTINUOUS_INTERVAL" => "0.3" }
    log = File.join(@dir, "puma.log")
    master = Process.spawn(env, RUBY, Gem.bin_path("puma", "puma"), "-C", "puma.rb", "config.ru",
                           chdir: @dir, out: log, err: [:child, :out])
    @dir = File.join(@dir, "out") # the files; the parent directory is removed at teardown all the same
    workers = Set.new
    begin
      served = wait_for(60) do
        flunk "puma exited: #{File.read(log)}" if Process.waitpid(master, Process::WNOHANG)
        response = http_get(port, "/")
        workers << response.body.to_i if response.code == "200"
        workers.size == 2
      rescue SystemCallError, IOError
        false
      end
      assert served, "both workers answered: #{workers.to_a.inspect}\n#{File.read(log)}"
      refute_includes workers, master
      # Each process cuts every 0.3 s: two files of each, at least, while the workers serve.
      exported = wait_for(60) do
        http_get(port, "/")
        by_pid = files_by_pid
        [master, *workers].all? { |pid| by_pid.fetch(pid, []).size >= 2 }
      rescue SystemCallError, IOError
        false
      end
      assert exported, "files of the master #{master} and the workers #{workers.to_a}: #{files_by_pid.transform_values(&:size)}"
    ensure
      stop_process(master)
    end

    by_pid = files_by_pid
    assert_equal [master, *workers].sort, by_pid.keys.sort, "no other process wrote files"
    by_pid.each do |pid, files|
      files = files.sort_by { |f| File.basename(f)[/-(\d+)\.pb\.gz\z/, 1].to_i }
      intervals = files.map do |f|
        profile = Rperf::Native::Profile.load_pprof(File.binread(f))
        [profile.attribute(:start_time_ns), profile.attribute(:duration_ns)]
      end
      intervals.each_cons(2) { |(start, duration), (next_start, _)| assert_equal start + duration, next_start, "#{pid}: files meet" }
      out, err, status = Open3.capture3("go", "tool", "pprof", "-raw", files.last)
      assert status.success?, "go tool pprof -raw #{files.last}: #{err}"
      assert_match(/^Comment: service: web$/, out)
      assert_match(/^Comment: pid: #{pid}$/, out)
      assert_match(/^Comment: sampling: [\d.]+ Hz effective \(100 Hz asked\), profiler overhead [\d.]+ of the process's CPU$/, out)
    end
    # A worker's files are its own process's profile (a worker's threads, not the master's);
    # which requests they sampled depends on the rate the budget left (an idle worker's is low).
    workers.each do |pid|
      traces = by_pid[pid].map { |f| Open3.capture3("go", "tool", "pprof", "-traces", f).first }.join
      assert traces.include?("Puma::Cluster::Worker#run"), "worker #{pid}'s files have the worker's stacks"
    end
    master_traces = by_pid[master].map { |f| Open3.capture3("go", "tool", "pprof", "-traces", f).first }.join
    refute master_traces.include?("Puma::Cluster::Worker#run"), "the master's files have no worker's stacks"
  end
end
