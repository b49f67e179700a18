# frozen_string_literal: true

require_relative "test_helper"
require "zlib"

# GVL and GC attribution in wall and cpu modes.
class ThreadContextTest < Minitest::Test
  def gvl(data, state) = weight_where(data) { |_s, labels| labels[:"%GVL"] == state }
  def gc(data, phase) = weight_where(data) { |_s, labels| labels[:"%GC"] == phase }

  def test_sleeping_thread_is_gvl_blocked_on_the_sleep_stack
    data = Rperf.start(mode: :wall) { Thread.new { sleep 0.3 }.join }
    blocked = data[:aggregated_samples].select { |s| labels_of(data, s)[:"%GVL"] == "blocked" && s[0].first[1] == "Kernel#sleep" }
    assert_within 300e6, blocked.sum { |s| s[1] }, 0.10
  end

  # A thread still blocked when a snapshot or stop is taken: its interval so far is GVL
  # blocked (not GVL wait: it never asked for the GVL back) and ends at the snapshot, so each
  # snapshot(clear: true) interval holds that thread's time of the interval. (The end was
  # reported as GVL wait, and a snapshot left it to the next interval.)
  def test_a_thread_blocked_across_snapshot_and_stop_is_blocked_in_each_interval
    now = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) }
    queue = Thread::Queue.new
    thread = snap = blocked_from = snap_at = stop_at = nil
    data = Rperf.start(mode: :wall) do
      thread = Thread.new { queue.pop }
      Thread.pass until thread.status == "sleep"
      blocked_from = now.call
      sleep 0.1
      snap_at = now.call
      snap = Rperf.snapshot(clear: true)
      sleep 0.05
      stop_at = now.call
    end
    after_stop = now.call
    queue << 1
    thread.join
    name_of_test = "#{self.class}##{name}"
    [[snap, snap_at - blocked_from, now.call - blocked_from], [data, stop_at - snap_at, after_stop - snap_at]].each_with_index do |(profile, low, high), i|
      # the blocked thread's samples (others may start in the interval: minitest's workers)
      seqs = profile[:aggregated_samples].select { |s| s[0].map { |f| f[1] } == ["Thread::Queue#pop", name_of_test] }.map { |s| s[2] }.uniq
      assert_equal 1, seqs.size, "interval #{i}: one thread in the test's Queue#pop"
      other = profile[:aggregated_samples].select { |s| s[2] == seqs.first }
      blocked = other.select { |s| labels_of(profile, s)[:"%GVL"] == "blocked" }
      weight = blocked.sum { |s| s[1] }
      assert_operator weight, :>=, low * 0.97, "interval #{i}: blocked until the snapshot/stop"
      assert_operator weight, :<=, high * 1.03, "interval #{i}"
      assert_equal ["Thread::Queue#pop"], blocked.map { |s| s[0].first[1] }.uniq, "interval #{i}"
      # the second interval: blocked all along (the first has the thread's start too)
      assert_operator other.sum { |s| s[1] } - weight, :<, 1_000_000, "no GVL wait (nor running) while blocked" if i == 1
    end
  end

  def test_cpu_contention_shows_gvl_wait_and_each_thread_adds_up
    lifetimes = {}
    data = Rperf.start(mode: :wall) do
      4.times.map do |i|
        Thread.new do
          t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
          Rperf.label(worker: i) { burn_cpu(0.15) }
          lifetimes[i] = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
        end
      end.each(&:join)
    end
    total = data[:aggregated_samples].sum { |s| s[1] }
    assert_operator gvl(data, "wait"), :>, total * 0.3, "GVL wait is a large share under contention"
    lifetimes.each do |i, lifetime|
      weight = weight_where(data) { |_s, labels| labels[:worker] == i }
      assert_within lifetime, weight, 0.05, "worker #{i}: running + wait + blocked vs its lifetime"
    end
  end

  def test_cpu_mode_counts_cpu_burned_without_the_gvl
    data_in = Random.new(1).bytes(8 * 1024 * 1024)
    clock = Process::CLOCK_THREAD_CPUTIME_ID
    cpu0 = Process.clock_gettime(clock, :nanosecond)
    data = Rperf.start(mode: :cpu) { 3.times { Zlib::Deflate.deflate(data_in, Zlib::BEST_COMPRESSION) } }
    consumed = Process.clock_gettime(clock, :nanosecond) - cpu0
    deflate = weight_including(data, "Zlib::Deflate.deflate")
    assert_operator consumed, :>, 100e6
    assert_within consumed, deflate, 0.05, "deflate runs without the GVL; its CPU must be counted"
  end

  def gc_loop(times = 50)
    times.times do
      Array.new(20_000) { |i| [i, i.to_s] }
      GC.start
    end
  end

  def test_cpu_mode_counts_off_gvl_work_still_running_at_stop
    input = Random.new(2).bytes(16 * 1024 * 1024)
    # The process's CPU clock around the session: the worker's share of it, not a fixed amount
    # (on a loaded machine it gets less than the 0.3 s of wall time).
    cpu0 = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :nanosecond)
    Rperf.start(mode: :cpu)
    worker = Thread.new { Rperf.label(worker: 1) { Zlib::Deflate.deflate(input, Zlib::BEST_COMPRESSION) } }
    sleep 0.3 # the worker is inside deflate, off the GVL, when the profile stops
    data = Rperf.stop
    process_cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :nanosecond) - cpu0
    worker.join
    weight = weight_where(data) { |_s, labels| labels[:worker] == 1 }
    assert_operator weight, :>, 50e6, "the worker was inside deflate at stop"
    # The process's CPU also holds the main thread's and rperf's own threads' (a few ms).
    assert_operator weight, :>, 0.8 * process_cpu, "CPU burned off the GVL up to stop is counted"
    assert_operator weight, :<=, process_cpu
  end

  def test_gc_phases_and_wall_conservation
    data = Rperf.start(mode: :wall) { gc_loop }
    assert_operator gc(data, "mark"), :>, 0
    assert_operator gc(data, "sweep"), :>, 0, "a full GC.start shows its sweep phase too"
    main = data[:aggregated_samples].select { |s| s[2] == 1 }.sum { |s| s[1] }
    assert_within data[:duration_ns], main, 0.03, "total weight (all states) conserves wall time"
  end

  # GC.stat(:time) is measured on the process CPU clock, so compare it with cpu mode.
  def test_gc_weight_matches_gc_stat_time
    gc_ms0 = GC.stat(:time)
    data = Rperf.start(mode: :cpu) { gc_loop }
    gc_ms = GC.stat(:time) - gc_ms0
    gc_total = gc(data, "mark") + gc(data, "sweep")
    assert_within gc_ms * 1e6, gc_total, 0.20, "GC weight vs GC.stat(:time)"
  end

  def test_gc_in_cpu_mode_conserves_cpu_time
    clock = Process::CLOCK_THREAD_CPUTIME_ID
    cpu0 = Process.clock_gettime(clock, :nanosecond)
    data = Rperf.start(mode: :cpu) { 30.times { Array.new(20_000) { |i| i.to_s }; GC.start } }
    consumed = Process.clock_gettime(clock, :nanosecond) - cpu0
    main = data[:aggregated_samples].select { |s| s[2] == 1 }.sum { |s| s[1] }
    assert_operator gc(data, "mark"), :>, 0
    assert_within consumed, main, 0.03
  end

  def test_vm_state_frames_option
    data = Rperf.start(mode: :wall, vm_state_frames: true) { Thread.new { sleep 0.05 }.join; GC.start }
    leaves = data[:aggregated_samples].map { |s| s[0].first&.at(1) }
    assert_includes leaves, "[GVL blocked]"
    assert_includes leaves, "[GC marking]"
    assert(data[:label_sets].none? { |h| h.key?(:"%GVL") || h.key?(:"%GC") })
  end

  def test_threads_that_never_run_during_the_session_produce_no_samples
    q = Queue.new
    idle = Thread.new { q.pop }
    sleep 0.01
    data = Rperf.start(mode: :cpu) { burn_cpu(0.05) }
    q << 1
    idle.join
    assert_equal [1], data[:aggregated_samples].map { |s| s[2] }.uniq
  end
end
