# frozen_string_literal: true

require_relative "web_helper"
require "rperf/rack"
require "rperf/viewer"

# The viewer's setup as users write it: the README's config.ru booted by a real Puma (a child
# process on 127.0.0.1), auto_snapshot with a session that cannot be snapshotted, and a
# snapshot history that keeps the useful intervals.
class ViewerSetupTest < Minitest::Test
  include WebTestHelper

  README = File.join(RperfTestHelper::ROOT, "README.md")

  def teardown
    Rperf.stop if Rperf.running?
    Rperf::Viewer.instance&.stop_auto_snapshot
  end

  # The README's config.ru, exactly, but for the interval (1 s instead of 60).
  def readme_config_ru
    block = File.read(README).scan(/^```ruby\n(# config\.ru\n.*?)^```$/m).map(&:first)
                .find { |code| code.include?("use Rperf::Viewer, auto_snapshot: 60") }
    refute_nil block, "the README has a config.ru with `use Rperf::Viewer, auto_snapshot: 60`"
    block.sub("auto_snapshot: 60", "auto_snapshot: 1")
  end

  # Boots `puma -b tcp://127.0.0.1:PORT config.ru` in dir; yields [port, log path] once it
  # answers, stops it after. Returns [status, log] when it exits by itself instead (with no block
  # run).
  def with_puma_process(dir)
    port = free_port
    log = File.join(dir, "puma.log")
    env = { "RUBYLIB" => File.join(RperfTestHelper::ROOT, "lib"), "BUNDLE_GEMFILE" => File.join(RperfTestHelper::ROOT, "Gemfile"),
            "RUBYOPT" => "-rbundler/setup" }
    pid = Process.spawn(env, RperfTestHelper::RUBY, Gem.bin_path("puma", "puma"), "-b", "tcp://#{LOOPBACK}:#{port}",
                        "config.ru", chdir: dir, out: log, err: [:child, :out])
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 30
    loop do
      if (done = Process.waitpid2(pid, Process::WNOHANG))
        pid = nil
        return [done[1], File.read(log)]
      end
      begin
        TCPSocket.new(LOOPBACK, port).close
        break
      rescue SystemCallError
        nil # not listening yet
      end
      flunk "Puma did not boot in 30 s:\n#{File.read(log)}" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep 0.1
    end
    yield port, log
    nil
  ensure
    stop_process(pid) if pid
  end

  def snapshots(port) = JSON.parse(http_get(port, "/rperf/snapshots").body)

  def test_readme_config_ru_boots_on_puma_and_keeps_useful_snapshots
    Dir.mktmpdir("rperf-configru") do |dir|
      File.write(File.join(dir, "config.ru"), readme_config_ru)
      failed = with_puma_process(dir) do |port, log|
        5.times { assert_equal "hello\n", http_get(port, "/").body }
        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
        sleep 0.2 while snapshots(port).empty? && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
        list = snapshots(port)
        assert_equal 1, list.size, "one snapshot of the requests' interval: #{list.inspect}\n#{File.read(log)}"
        assert_operator list[0]["total_weight_ns"], :>, 0
        assert_equal "wall", list[0]["mode"]
        # Idle intervals (the viewer's own requests are not profiled): nothing more is kept.
        sleep 2.5
        assert_equal [list[0]["id"]], snapshots(port).map { |s| s["id"] }, "no empty snapshot kept"
        body = JSON.parse(http_get(port, "/rperf/snapshots/#{list[0]['id']}").body)
        assert_includes body["frames"].map(&:first), "Rperf::RackMiddleware#call"
        refute_match(/snapshot failed|Error/, File.read(log))
      end
      assert_nil failed, "Puma exited: #{failed.inspect}"
    end
  end

  # aggregate: false (the Timeline's raw samples) cannot be snapshotted: the README's
  # config.ru with such a session refuses to boot, and says why and what to do.
  def test_auto_snapshot_refuses_a_raw_session_at_setup
    Dir.mktmpdir("rperf-configru") do |dir|
      File.write(File.join(dir, "config.ru"), readme_config_ru.sub("defer: true)", "defer: true, aggregate: false)"))
      status, log = with_puma_process(dir) { flunk "Puma booted with auto_snapshot and aggregate: false" }
      refute status.success?
      assert_match(/ArgumentError/, log)
      assert_match(/auto_snapshot needs a session that aggregates its samples.*aggregate: false.*add_snapshot/, log)
    end

    Rperf.start(mode: :wall, aggregate: false)
    error = assert_raises(ArgumentError) { Rperf::Viewer.new(nil, auto_snapshot: 1) }
    assert_match(/Start it with aggregate: true/, error.message)
    viewer = Rperf::Viewer.new(nil)
    assert_raises(ArgumentError) { viewer.auto_snapshot(every: 1) }
    assert_raises(ArgumentError) { Rperf::Viewer.new(nil, auto_snapshot: 0) }
  end

  # A session started with aggregate: false after auto_snapshot was set up (Puma's
  # on_worker_boot, say): one warning, and the thread ends instead of failing every interval.
  def test_auto_snapshot_stops_once_for_a_raw_session_started_later
    viewer = Rperf::Viewer.new(nil, auto_snapshot: 0.05)
    thread = viewer.instance_variable_get(:@auto_snapshot)
    _out, err = capture_io do
      Rperf.start(mode: :wall, aggregate: false)
      assert thread.join(5), "the snapshot thread ended"
    end
    assert_equal 1, err.scan("auto_snapshot stopped").size, err
    assert_match(/aggregate: false/, err)
    assert_empty viewer.snapshot_list
  end

  # take_snapshot! keeps no empty interval; an empty snapshot added by hand is the first to go.
  def test_history_keeps_the_useful_snapshots
    viewer = Rperf::Viewer.new(nil, max_snapshots: 2)
    Rperf.start(mode: :wall, defer: true)
    Rperf.profile { busy(0.02) }
    useful = viewer.take_snapshot!
    refute_nil useful
    5.times { assert_nil viewer.take_snapshot!, "an idle interval (no profile block ran) is not kept" }
    assert_equal [useful[:id]], viewer.snapshot_list.map { |s| s[:id] }

    empty = viewer.add_snapshot(Rperf.snapshot(clear: true))
    assert Rperf::Viewer.empty_profile?(empty[:data])
    Rperf.profile { busy(0.02) }
    second = viewer.take_snapshot!
    assert_equal [useful[:id], second[:id]], viewer.snapshot_list.map { |s| s[:id] },
                 "the empty one was evicted, not the oldest useful one"
    Rperf.profile { busy(0.02) }
    third = viewer.take_snapshot!
    assert_equal [second[:id], third[:id]], viewer.snapshot_list.map { |s| s[:id] }
  end

  def busy(seconds)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
    nil while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
  end
end
