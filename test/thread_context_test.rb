# frozen_string_literal: true

require_relative "test_helper"
require "zlib"

# GVL and GC attribution in wall and cpu modes.
class ThreadContextTest < Minitest::Test
  def gvl(data, state) = weight_where(data) { |_s, labels| labels[:"%GVL"] == state }
  def gc(data, phase) = weight_where(data) { |_s, labels| labels[:"%GC"] == phase }

  # Blocked runs from SUSPENDED (after the thread reads t0) to READY (the wake-up, before it
  # reads the clock again): at least the 0.3 s asleep, at most the time measured around the
  # sleep (a busy machine wakes the thread late: 0.4 s seen), with no sampling error.
  def test_sleeping_thread_is_gvl_blocked_on_the_sleep_stack
    slept = nil
    data = Rperf.start(mode: :wall) do
      Thread.new do
        t0 = monotonic_ns
        sleep 0.3
        slept = monotonic_ns - t0
      end.join
    end
    blocked = data[:aggregated_samples].select { |s| labels_of(data, s)[:"%GVL"] == "blocked" && s[0].first[1] == "Kernel#sleep" }
    assert_operator blocked.sum { |s| s[1] }, :>=, 300e6
    assert_operator blocked.sum { |s| s[1] }, :<=, slept
  end

  # A thread still blocked when a snapshot or stop is taken: its interval so far is GVL
  # blocked (not GVL wait: it never asked for the GVL back) and ends at the snapshot, so each
  # snapshot(clear: true) interval holds that thread's time of the interval. (The end was
  # reported as GVL wait, and a snapshot left it to the next interval.)
  def test_a_thread_blocked_across_snapshot_and_stop_is_blocked_in_each_interval
    now = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) }
    queue = Thread::Queue.new
    thread = snap = blocked_from = snap_at = snap_done = stop_at = nil
    data = Rperf.start(mode: :wall) do
      thread = Thread.new { queue.pop }
      Thread.pass until thread.status == "sleep"
      blocked_from = now.call
      sleep 0.1
      snap_at = now.call
      snap = Rperf.snapshot(clear: true)
      snap_done = now.call
      sleep 0.05
      stop_at = now.call
    end
    after_stop = now.call
    queue << 1
    thread.join
    name_of_test = "#{self.class}##{name}"
    # The boundary lies somewhere inside the snapshot call: the second interval is at least the
    # time from the call's return to the stop (on a busy machine the call itself took 2 ms).
    [[snap, snap_at - blocked_from, now.call - blocked_from], [data, stop_at - snap_done, after_stop - snap_at]].each_with_index do |(profile, low, high), i|
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

  # Each worker's label holds from one label change to the next: its weight (running + wait +
  # blocked) lies between the wall time measured inside the label block and around it. The GVL
  # is held by one thread at a time, so of the workers' summed time all but the session's wall
  # time is spent without it: waiting for it, since burn_cpu never blocks.
  def test_cpu_contention_shows_gvl_wait_and_each_thread_adds_up
    inner = {}
    outer = {}
    before = monotonic_ns
    data = Rperf.start(mode: :wall) do
      4.times.map do |i|
        Thread.new do
          t0 = monotonic_ns
          Rperf.label(worker: i) do
            t1 = monotonic_ns
            burn_cpu(0.15)
            inner[i] = monotonic_ns - t1
          end
          outer[i] = monotonic_ns - t0
        end
      end.each(&:join)
    end
    session = monotonic_ns - before
    waited = weight_where(data) { |_s, labels| labels[:worker] && labels[:"%GVL"] == "wait" }
    assert_operator waited, :>=, inner.values.sum - session, "GVL wait under contention"
    assert_operator waited, :>, 0
    4.times do |i|
      weight = weight_where(data) { |_s, labels| labels[:worker] == i }
      assert_operator weight, :>=, inner[i], "worker #{i}: running + wait + blocked vs its time in the label"
      assert_operator weight, :<=, outer[i], "worker #{i}: running + wait + blocked vs its time around the label"
    end
  end

  # deflate's weight is the CPU measured around its calls (thread CPU clock), within its
  # boundary samples (test_helper).
  def test_cpu_mode_counts_cpu_burned_without_the_gvl
    data_in = Random.new(1).bytes(8 * 1024 * 1024)
    consumed = 0
    data = Rperf.start(mode: :cpu, aggregate: false) do
      3.times do
        c0 = thread_cpu_ns
        Zlib::Deflate.deflate(data_in, Zlib::BEST_COMPRESSION)
        consumed += thread_cpu_ns - c0
      end
    end
    in_deflate = ->(s) { frame?(s, "Zlib::Deflate.deflate") }
    assert_operator consumed, :>, 100e6
    assert_in_delta consumed, raw_weight(data, 1, &in_deflate), boundary_weight(data, 1, &in_deflate),
                    "deflate runs without the GVL; its CPU must be counted"
  end

  def gc_loop(times = 50)
    times.times do
      Array.new(20_000) { |i| [i, i.to_s] }
      GC.start
    end
  end

  # Another thread's CPU clock, as the kernel keeps it (/proc/self/task/TID/schedstat, ns on
  # the CPU). It may lag the thread's clock by the CPU time since the kernel's last update of a
  # running thread: at most one scheduler tick (10 ms at the lowest HZ, 100).
  def cpu_of(thread) = Integer(File.read("/proc/self/task/#{thread.native_thread_id}/schedstat").split.first)
  SCHEDSTAT_LAG_NS = 10_000_000

  # The worker, born in the session (its CPU clock counted from zero), is off the GVL inside
  # deflate when the profile stops: its weight is its CPU clock at stop, read just before and
  # just after stop.
  def test_cpu_mode_counts_off_gvl_work_still_running_at_stop
    input = Random.new(2).bytes(16 * 1024 * 1024)
    done = false
    Rperf.start(mode: :cpu)
    worker = Thread.new { Rperf.label(worker: 1) { Zlib::Deflate.deflate(input, Zlib::BEST_COMPRESSION) }; done = true }
    sleep 0.001 until worker.native_thread_id
    # Until the worker has burned 100 ms, however little CPU the machine gives it (deflate
    # takes about 0.7 s of CPU here).
    sleep 0.01 until cpu_of(worker) >= 100e6 || done
    before_stop = cpu_of(worker)
    data = Rperf.stop
    after_stop = cpu_of(worker)
    refute done, "the worker was inside deflate at stop"
    worker.join
    seqs = data[:aggregated_samples].select { |s| labels_of(data, s)[:worker] == 1 }.map { |s| s[2] }.uniq
    assert_equal 1, seqs.size
    weight = data[:aggregated_samples].select { |s| s[2] == seqs.first }.sum { |s| s[1] } # its start too
    deflating = data[:aggregated_samples].select { |s| frame?(s, "Zlib::Deflate.deflate") }
    assert_equal [1], deflating.map { |s| labels_of(data, s)[:worker] }.uniq, "deflate's time is in the label"
    assert_operator before_stop, :>=, 100e6
    assert_operator weight, :>=, before_stop, "CPU burned off the GVL up to stop is counted"
    assert_operator weight, :<=, after_stop + SCHEDSTAT_LAG_NS, "and no more"
  end

  # The starting thread is observed from inside start to inside stop, in every state: its
  # weight lies between the block's wall time and duration_ns, no sampling error.
  def test_gc_phases_and_wall_conservation
    inner = nil
    data = Rperf.start(mode: :wall) do
      t0 = monotonic_ns
      gc_loop
      inner = monotonic_ns - t0
    end
    assert_operator gc(data, "mark"), :>, 0
    assert_operator gc(data, "sweep"), :>, 0, "a full GC.start shows its sweep phase too"
    main = data[:aggregated_samples].select { |s| s[2] == 1 }.sum { |s| s[1] }
    assert_operator main, :>=, inner, "total weight (all states) vs the block's wall time"
    assert_operator main, :<=, data[:duration_ns], "total weight (all states) vs the profiled wall time"
  end

  # GC.stat(:time) is the process's CPU time (all threads) in Ruby's timed mark and sweep
  # phases, which lie inside GC_ENTER..GC_EXIT, where rperf charges the GC thread's own CPU. So
  # GC.stat may exceed the weight only by the other threads' CPU meanwhile (at most theirs over
  # the session: rperf's worker and timer) and its truncation to whole ms; and the weight of the
  # explicit GCs cannot exceed the CPU measured around the GC.start calls.
  def test_gc_weight_matches_gc_stat_time
    around_gc_start = 0
    gc_ms0 = GC.stat(:time)
    process0 = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :nanosecond)
    thread0 = thread_cpu_ns
    data = Rperf.start(mode: :cpu) do
      50.times do
        Array.new(20_000) { |i| [i, i.to_s] }
        c0 = thread_cpu_ns
        GC.start
        around_gc_start += thread_cpu_ns - c0
      end
    end
    others = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :nanosecond) - process0 - (thread_cpu_ns - thread0)
    gc_stat_ns = (GC.stat(:time) - gc_ms0) * 1_000_000
    gc_total = gc(data, "mark") + gc(data, "sweep")
    assert_operator gc_stat_ns, :>, 0
    assert_operator gc_total, :>=, gc_stat_ns - 1_000_000 - others, "GC weight vs GC.stat(:time)"
    explicit = weight_where(data) { |s, labels| labels[:"%GC"] && s[0].any? { |f| f[1] == "GC.start" } }
    assert_operator explicit, :>, 0
    assert_operator explicit, :<=, around_gc_start, "GC.start's GC weight vs the CPU measured around it"
  end

  # As in wall mode, on the thread's CPU clock: between the block's CPU and that around start..stop.
  def test_gc_in_cpu_mode_conserves_cpu_time
    inner = nil
    before = thread_cpu_ns
    data = Rperf.start(mode: :cpu) do
      c0 = thread_cpu_ns
      30.times { Array.new(20_000) { |i| i.to_s }; GC.start }
      inner = thread_cpu_ns - c0
    end
    outer = thread_cpu_ns - before
    main = data[:aggregated_samples].select { |s| s[2] == 1 }.sum { |s| s[1] }
    assert_operator gc(data, "mark"), :>, 0
    assert_operator main, :>=, inner
    assert_operator main, :<=, outer
  end

  def test_vm_state_frames_option
    data = Rperf.start(mode: :wall, vm_state_frames: true) { Thread.new { sleep 0.05 }.join; GC.start }
    leaves = data[:aggregated_samples].map { |s| s[0].first&.at(1) }
    assert_includes leaves, "[GVL blocked]"
    assert_includes leaves, "[GC marking]"
    assert(data[:label_sets].none? { |h| h.key?(:"%GVL") || h.key?(:"%GC") })
  end

  # The idle thread is blocked for good before the session: asleep in pop, its CPU clock no
  # longer moving (a fixed 10 ms sleep did not get it there beside two CPU hogs and two other
  # suites: it ran into pop inside the session, and its samples were right). Its samples are
  # found by its own frame, not by thread id: a thread another test left running may be sampled.
  def test_threads_that_never_run_during_the_session_produce_no_samples
    q = Queue.new
    idle = Thread.new { q.pop }
    sleep 0.001 until idle.status == "sleep" && idle.native_thread_id
    loop do
      before = cpu_of(idle)
      sleep 0.01
      break if cpu_of(idle) == before
    end
    data = Rperf.start(mode: :cpu) { burn_cpu(0.05) }
    q << 1
    idle.join
    in_idle = data[:aggregated_samples].select { |s| s[0].any? { |f| f[1].start_with?("block in #{self.class}#test_threads_that_never_run") } }
    assert_empty in_idle, "the idle thread never ran in the session"
    burning = data[:aggregated_samples].select { |s| frame?(s, "RperfTestHelper#burn_cpu") }
    assert_equal [1], burning.map { |s| s[2] }.uniq
  end
end
