# frozen_string_literal: true

require_relative "test_helper"

# Lifecycle and robustness: none of these may crash, leak or lose the parent's profile.
class StressTest < Minitest::Test
  # test/stress/reentrancy.rb (also under ASan and valgrind): a label's to_s that stops or
  # restarts the profiler, Thread#raise inside Rperf.label, concurrent stop/start. In a child
  # process: a crash or a hang fails the test (before, a Thread#raise landing in to_s was
  # swallowed: the script's thread never saw one).
  def test_reentrancy_script
    out, err, status = Open3.capture3({ "REENTRANCY_ITERATIONS" => "30", "REENTRANCY_SECONDS" => "1" },
                                      RUBY, "-I#{ROOT}/lib", File.join(ROOT, "test/stress/reentrancy.rb"))
    assert status.success?, "#{status.inspect}\n#{err.lines.first(30).join}"
    assert_match(/\Aok: reentrancy: Thread#raise [1-9]\d* times/, out)
  end

  # The extension's initialisation under GC.stress: every object it makes while it defines its
  # constants runs a GC first, so one it holds but has not registered yet is swept. The frame
  # categories' Array was registered only after it was filled: loading failed here every time
  # (NoMemoryError from a push onto the freed slot), and in one `rperf record` of a few hundred
  # on a loaded machine.
  def test_loading_the_extension_under_gc_stress
    out, err, status = run_ruby(<<~RUBY)
      GC.stress = true
      require "rperf/native"
      GC.stress = false
      GC.start
      p Rperf::Native::FRAME_CATEGORIES
    RUBY
    assert status.success?, err.lines.first(10).join
    assert_equal %w[app gem stdlib native gc gvl other].inspect, out.strip
  end

  # Thread#kill of a thread inside a label value's to_s ends it (rb_protect swallowed the kill:
  # the thread went on, and the process hung at exit waiting for it).
  def test_thread_kill_during_a_label_values_to_s
    out, err, status = Open3.capture3(RUBY, "-I#{ROOT}/lib", "-rrperf", "-e", <<~RUBY)
      entered = Queue.new
      value = Object.new
      value.define_singleton_method(:to_s) { entered << true; sleep; "v" }
      Rperf.start(mode: :wall)
      t = Thread.new { Rperf.label(k: value); :returned }
      entered.pop
      t.kill
      p t.join(10) ? t.value : :still_running
      Rperf.stop
    RUBY
    assert status.success?, err
    assert_equal "nil\n", out, "killed: no value"
  end
  def test_thousand_start_stop_cycles
    1000.times do |i|
      Rperf.start(mode: i.even? ? :cpu : :wall, frequency: 10_000)
      i.times { |j| j * j } if i % 100 == 0
      Rperf.stop
    end
    refute Rperf.running?
    data = Rperf.start { burn_cpu(0.05) }
    assert_operator data[:sampling_count], :>, 10
  end

  def test_two_hundred_threads_created_and_finished_while_profiling
    data = Rperf.start(mode: :wall, frequency: 2000) do
      200.times.each_slice(20) do |slice|
        slice.map { Thread.new { 2_000.times { |i| i.to_s } } }.each(&:join)
      end
    end
    assert_operator data[:detected_thread_count], :>, 100
    seqs = data[:aggregated_samples].map { |s| s[2] }.uniq
    assert_operator seqs.size, :>, 10
  end

  def test_gc_compact_during_profiling
    data = Rperf.start(mode: :wall, frequency: 5000) do
      5.times do
        Array.new(50_000) { |i| "s#{i}" }
        GC.compact
        burn_cpu(0.01)
      end
    end
    refute_empty data[:aggregated_samples]
    data[:aggregated_samples].each { |frames, *| frames.each { |path, label| assert_kind_of String, path; assert_kind_of String, label } }
  end

  def test_fork_while_profiling_leaves_a_clean_child
    Rperf.start(mode: :wall, inherit: false)
    burn_cpu(0.05)
    pid = fork do
      exit!(Rperf.running? ? 1 : (Rperf.start { burn_cpu(0.02) }[:sampling_count] > 0 ? 0 : 2))
    end
    burn_cpu(0.05)
    _, status = Process.wait2(pid)
    data = Rperf.stop
    assert_equal 0, status.exitstatus, "child is clean and can profile on its own"
    assert_within data[:duration_ns], data[:aggregated_samples].select { |s| s[2] == 1 }.sum { |s| s[1] }, 0.05
  end

  def test_fork_child_exits_zero_from_a_fresh_process
    _, err, status = run_ruby(<<~RUBY)
      require "rperf"
      Rperf.start(mode: :wall, frequency: 5000)
      pids = 4.times.map { fork { x = 0; 200_000.times { |i| x += i }; exit!(0) } }
      statuses = pids.map { |p| Process.wait2(p)[1] }
      data = Rperf.stop
      abort "child failed" unless statuses.all?(&:success?)
      # wall mode: the parent's one thread is accounted for the whole session, waits included;
      # duration_ns ends where stop closed the intervals, not after the worker's join (under
      # load that join left up to 11% of the duration outside every weight)
      main = data[:aggregated_samples].select { |s| s[2] == 1 }.sum { |s| s[1] }
      abort "parent weight \#{main} vs duration \#{data[:duration_ns]}" unless (main - data[:duration_ns]).abs < data[:duration_ns] * 0.01
    RUBY
    assert status.success?, err
  end

  def test_snapshot_clear_from_another_thread
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
    Rperf.start(mode: :wall, frequency: 5000)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
    workers = 3.times.map { Thread.new { 20.times { burn_cpu(0.005); sleep 0.001 } } }
    # Each snapshot's interval runs from inside the previous clear (or start) to inside this
    # one: at most the time from before the previous call to after this one.
    bounds = []
    snaps = Thread.new do
      previous = t0
      20.times.map do
        sleep 0.005
        before = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
        snap = Rperf.snapshot(clear: true)
        bounds << Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - previous
        previous = before
        snap
      end
    end.value
    workers.each(&:join)
    stopping = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
    final = Rperf.stop
    elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
    # Weights add up across the cleared intervals: the main thread (seq 1) is accounted for the
    # whole session exactly once, whichever interval each part fell in. The session covers at
    # least from Rperf.start's return to Rperf.stop's call and at most the time around both
    # (Rperf.start took 0.4-15 ms beside two CPU hogs, so `elapsed` alone is no lower bound).
    intervals = snaps + [final]
    main = intervals.sum { |d| d[:aggregated_samples].select { |s| s[2] == 1 }.sum { |s| s[1] } }
    assert_operator intervals.sum { |d| d[:duration_ns] }, :<=, elapsed
    assert_operator main, :<=, intervals.sum { |d| d[:duration_ns] }
    assert_operator main, :>=, stopping - started, "main thread: #{main} ns, profiled at least #{stopping - started} ns"
    snaps.zip(bounds).each { |d, bound| assert_operator d[:duration_ns], :<=, bound }
  end
end

class FrameLifetimeTest < Minitest::Test
  # The frames of code that is unreachable after it ran (eval'd strings, a required file's top
  # level) must stay valid until stop resolves them: the profiler keeps them alive. Each method
  # runs long enough to be sampled also where eval's compile time is charged to Kernel#eval (the
  # signal capture path samples it there; a postponed job charges it to the eval'd code).
  def test_frames_of_unreferenced_code_survive_gc
    out, err, status = run_ruby(<<~RUBY)
      require "rperf"
      Rperf.start(mode: :cpu, frequency: 10_000)
      20.times do |k|
        eval("def tmp_method_\#{k} = (x = 0; 100_000.times { x += 1 }; x)\\ntmp_method_\#{k}\\n", binding, "evaluated_\#{k}.rb")
        Object.send(:remove_method, :"tmp_method_\#{k}")
      end
      4.times { GC.start(full_mark: true, immediate_sweep: true); Array.new(100_000) { Object.new } }
      GC.compact
      data = Rperf.stop
      puts data[:aggregated_samples].flat_map { |s| s[0].map { |f| f[0] } }.grep(/evaluated_/).uniq.size
    RUBY
    assert status.success?, err
    assert_operator out.to_i, :>, 5
  end
end
