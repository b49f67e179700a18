# frozen_string_literal: true

require_relative "test_helper"

# Rperf.start / stop / snapshot: arguments, errors and the shape of the result.
class EngineApiTest < Minitest::Test
  def test_argument_validation_matches_the_seed
    assert_raises(ArgumentError) { Rperf.start(frequency: 0) }
    assert_raises(ArgumentError) { Rperf.start(frequency: 1.5) }
    e = assert_raises(ArgumentError) { Rperf.start(frequency: 10_001) }
    assert_match(/<= 10000/, e.message)
    assert_raises(ArgumentError) { Rperf.start(mode: :io) }
    assert_raises(ArgumentError) { Rperf.start(signal: "USR1") }
    e = assert_raises(ArgumentError) { Rperf.start(signal: Signal.list["KILL"]) }
    assert_match(/cannot be caught/, e.message)
    assert_raises(ArgumentError) { Rperf.start(signal: Signal.list["STOP"]) }
    assert_raises(ArgumentError) { Rperf.start(inherit: :spawn) }
    assert_raises(ArgumentError) { Rperf.start(max_depth: 0) }
    refute Rperf.running?
  end

  # start, snapshot and stop must not hand the GVL to a CPU-bound thread: a Thread.pass at start
  # and a File read of /proc at snapshot and stop each waited for a whole time slice (~100 ms).
  # Whether a call let the busy thread run is seen in the busy thread's counter, whatever the
  # machine's load does to the call's duration. Ruby's own timer preemption would let it run
  # too (Ruby 3.3 and 3.4 switch every 10 ms once a thread has held the GVL for its quantum), so
  # the calls are made by a fresh thread of priority 3, whose quantum is 800 ms of holding the
  # GVL: more than it holds it here. Both threads are sampled.
  def test_start_snapshot_and_stop_return_at_once_beside_a_busy_thread
    count = 0
    busy = Thread.new { loop { count += 1 } }
    sleep 0.02
    let_run = {}
    checked = lambda do |call, &blk|
      before = count
      result = blk.call
      let_run[call] = count - before
      result
    end
    snapshot = data = burned = nil
    Thread.new do
      Thread.current.priority = 3
      sleep 0.01
      checked.(:start) { Rperf.start(mode: :wall) }
      c0 = thread_cpu_ns
      burn_cpu(0.01) # short: the quantum counts while this thread holds the GVL, stretched by load
      burned = thread_cpu_ns - c0
      snapshot = checked.(:snapshot) { Rperf.snapshot }
      sleep 0.05 # the busy thread runs meanwhile
      data = checked.(:stop) { Rperf.stop }
    end.join
    assert_equal({ start: 0, snapshot: 0, stop: 0 }, let_run, "the busy thread's progress during each call")
    assert_operator count, :>, 0
    assert_kind_of Integer, snapshot[:maxrss_mb]
    # CPU burned holding the GVL is running time at least as long, whatever else waited.
    assert_operator weight_where(data) { |s, labels| s[2] == 1 && labels.empty? }, :>=, burned, "the calling thread's CPU work"
    assert_operator weight_where(data) { |s, labels| s[2] != 1 && labels.empty? }, :>, 0, "the busy thread, running"
  ensure
    Rperf.stop if Rperf.running?
    busy&.kill&.join
  end

  def test_start_while_running_raises_and_stop_while_stopped_returns_nil
    assert_nil Rperf.stop
    Rperf.start
    assert Rperf.running?
    assert_raises(RuntimeError) { Rperf.start }
    assert_kind_of Hash, Rperf.stop
    refute Rperf.running?
    assert_nil Rperf.stop
    assert_nil Rperf.snapshot
  end

  def test_result_has_the_seed_keys_and_frame_shapes
    data = Rperf.start(frequency: 1000) { burn_cpu(0.1) }
    %i[mode frequency trigger_count sampling_count sampling_time_ns detected_thread_count start_time_ns
       duration_ns aggregated_samples label_sets unique_frames unique_stacks].each do |key|
      assert data.key?(key), "missing #{key}"
    end
    assert_equal :cpu, data[:mode]
    assert_equal 1000, data[:frequency]
    assert_operator data[:sampling_count], :>, 30
    assert_operator data[:trigger_count], :>=, data[:sampling_count]
    assert_equal [{}], data[:label_sets].first(1)
    assert_in_delta Time.now.to_f * 1e9, data[:start_time_ns], 5e9
    data[:aggregated_samples].each do |frames, weight, thread_seq, label_set_id, *rest|
      assert_empty rest
      assert_kind_of Integer, weight
      assert_operator thread_seq, :>=, 1
      assert data[:label_sets][label_set_id]
      frames.each { |f| assert_equal 2, f.size; f.each { |s| assert_kind_of String, s } }
    end
    labels = data[:aggregated_samples].flat_map { |s| s[0] }.map { |path, label| [label, path] }.uniq.to_h
    assert_equal "<C method>", labels["Process.clock_gettime"]
    assert_equal __FILE__, labels["EngineApiTest#test_result_has_the_seed_keys_and_frame_shapes"]
    # rb_profile_frames reports a block's frame as its method (3.3.8 and 3.4.5 alike), as rperf 0.11.
    refute(labels.keys.any? { |l| l.start_with?("block in ") }, labels.keys.inspect)
    assert(labels.keys.all? { |l| l.encoding == Encoding::UTF_8 })
    leaf_first = data[:aggregated_samples].max_by { |s| s[1] }[0]
    assert_equal "Process.clock_gettime", leaf_first.first[1], "frames are leaf-first"
  end

  def test_main_label_and_integer_times
    out, err, status = run_ruby(<<~RUBY)
      require "rperf"
      data = Rperf.start { 3_000_000.times { |i| i * i } }
      labels = data[:aggregated_samples].flat_map { |s| s[0].map { |f| f[1] } }.uniq
      puts labels.sort.join("|")
    RUBY
    assert status.success?, err
    assert_includes out.chomp.split("|"), "Integer#times"
    assert_includes out.chomp.split("|"), "<main>"
  end

  def test_lines_option_returns_line_numbers
    line = __LINE__ + 1
    data = Rperf.start(lines: true) { burn_cpu(0.1) }
    frames = data[:aggregated_samples].flat_map { |s| s[0] }
    assert(frames.all? { |f| f.size == 3 && f[2].is_a?(Integer) })
    mine = frames.select { |f| f[0] == __FILE__ }
    assert_includes mine.map { |f| f[2] }, line
    default = Rperf.start { burn_cpu(0.05) }
    assert(default[:aggregated_samples].all? { |s| s[0].all? { |f| f.size == 2 } })
  end

  def test_raw_samples_keep_timestamps
    data = Rperf.start(aggregate: false, mode: :wall) { burn_cpu(0.2) }
    raw = data[:raw_samples]
    assert_operator raw.size, :>, 50
    times = raw.map { |s| s[5] }
    assert(times.all? { |t| t.between?(0, data[:duration_ns]) })
    # Threads alive at start (other tests') are closed at stop, at one time, after this thread's.
    raw.group_by { |s| s[2] }.each_value do |own|
      own_times = own.map { |s| s[5] }
      assert_equal own_times.sort, own_times, "timestamps of one thread are ordered"
    end
    assert_equal raw.sum { |s| s[1] }, data[:aggregated_samples].sum { |s| s[1] }
    assert_raises(RuntimeError) do
      Rperf.start(aggregate: false)
      begin
        Rperf.snapshot
      ensure
        Rperf.stop
      end
    end
  end

  # At 1 Hz the timer fires once a second of wall time: running until the first sample is
  # taken (a loaded machine delays the timer thread: none within 1.15 s was seen), the profile
  # holds at most one trigger per whole second it lasted (a delayed first sample may let the
  # second tick in before the loop sees it), a sample for each at most.
  def test_frequency_one_and_sleep_mode_timer
    Rperf.start(frequency: 1, mode: :wall)
    deadline = monotonic_ns + 30e9
    while Rperf.snapshot[:sampling_count].zero? && monotonic_ns < deadline
      t = monotonic_ns
      nil while monotonic_ns - t < 10_000_000 # running: the tick samples the GVL holder
    end
    data = Rperf.stop
    assert_operator data[:sampling_count], :>=, 1
    assert_operator data[:trigger_count], :>=, data[:sampling_count]
    assert_operator data[:trigger_count], :<=, data[:duration_ns] / 1_000_000_000
    data = Rperf.start(frequency: 500, signal: false) { burn_cpu(0.2) }
    assert_operator data[:sampling_count], :>, 50
  end

  def test_explicit_signal_number
    data = Rperf.start(frequency: 500, signal: Signal.list["RTMIN"] ? Signal.list["RTMIN"] + 3 : 37) { burn_cpu(0.1) }
    assert_operator data[:sampling_count], :>, 20
  end

  # Issue 30 (8): 11 turned a real segfault into an endless hang, 2 disabled Ctrl-C, 14 swallowed
  # the application's ALRM handler. Only real-time signals are taken, and nothing is installed.
  def test_standard_signals_are_refused
    app = proc { :app }
    original = Signal.trap("ALRM", app)
    [2, 11, 14, 10, 31].each do |sig|
      e = assert_raises(ArgumentError) { Rperf.start(signal: sig) }
      assert_match(/\Asignal #{sig} \(\w+\) is not a real-time signal: .*34\.\.64/, e.message)
      refute Rperf.running?
    end
    assert_same app, Signal.trap("ALRM", original), "the application's handler is in place"
    out, err, status = Open3.capture3({ "RPERF_ENABLED" => "1", "RPERF_SIGNAL" => "11", "RPERF_OUTPUT" => File::NULL },
                                      RUBY, "-I#{ROOT}/lib", "-rrperf", "-e", "puts Rperf.running?")
    assert status.success?, err
    assert_equal "false", out.chomp, "the program runs unprofiled"
    assert_match(/signal 11 \(SEGV\) is not a real-time signal/, err)
  end

  def test_a_signal_the_system_refuses_is_a_clear_error_and_leaves_no_state
    e = assert_raises(RuntimeError) { Rperf.start(signal: 32) } # reserved by glibc's threads
    assert_match(/cannot start the sampling timer/, e.message)
    refute Rperf.running?
    data = Rperf.start { burn_cpu(0.05) }
    assert_operator data[:sampling_count], :>, 10
  end

  def test_deep_recursion_keeps_the_leaf_side_and_marks_truncation
    recurse = ->(n) { n.zero? ? burn_cpu(0.1) : recurse.(n - 1) }
    data = Rperf.start { recurse.(2000) }
    deep = data[:aggregated_samples].select { |s| s[0].size == 513 }
    refute_empty deep
    deep.each { |s| assert_equal "[truncated]", s[0].last[1] }
    # The heaviest deep stack is the leaf that burns the CPU (a sample may also land on the way down).
    assert_includes ["Process.clock_gettime", "RperfTestHelper#burn_cpu"], deep.max_by { |s| s[1] }[0].first[1]
    data = Rperf.start(max_depth: 20) { recurse.(100) }
    assert_equal 21, data[:aggregated_samples].map(&:first).map(&:size).max
  end

  # Wall mode: each interval's weight is the wall time it lasted: it lies between the times
  # measured just inside and just outside the calls that open and close it (no sampling error),
  # whatever the CPU work took on a loaded machine; this thread's weight (other threads, such as
  # minitest's workers starting up, may be blocked across the intervals).
  def test_snapshot_and_clear
    now = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) }
    mine = ->(profile) { profile[:aggregated_samples].select { |s| s[2] == 1 }.sum { |s| s[1] } }
    before_start = now.call
    Rperf.start(mode: :wall)
    t0 = now.call
    burn_cpu(0.1)
    cleared_before = now.call
    first = Rperf.snapshot(clear: true)
    t1 = now.call
    # The interval runs from inside start to inside the snapshot.
    weight = mine.(first)
    assert_operator weight, :>=, cleared_before - t0
    assert_operator weight, :<=, t1 - before_start
    burn_cpu(0.05)
    second_before = now.call
    second = Rperf.snapshot
    t2 = now.call
    weight = mine.(second)
    assert_operator weight, :>=, second_before - t1
    assert_operator weight, :<=, t2 - cleared_before
    assert_operator second[:duration_ns], :<=, t2 - cleared_before
    # The counters restart too. A count that was not reset would carry all of the first
    # interval's ticks (>= 100 ms of them), so half of those is the slack; it absorbs what the
    # clock legitimately adds: ticks at the interval's two ends, late timer expirations the
    # kernel delivers as separate signals after the timer thread was descheduled (seen on
    # Linux 6.18: three signals within 0.12 ms after a 2.87 ms gap), and forwarded ticks that
    # were triggered before the clear and sampled after it.
    assert_operator first[:trigger_count], :>, 0
    assert_operator first[:sampling_count], :>, 0
    slack = first[:trigger_count] / 2
    assert_operator second[:trigger_count], :<=, (t2 - cleared_before) / 1_000_000 + 2 + slack,
                    "duration_ns #{second[:duration_ns]}"
    assert_operator second[:sampling_count], :<=, second[:trigger_count] + slack
    final = Rperf.stop
    assert_operator mine.(final), :>=, mine.(second)
  end

  # Issue 43 (6): the next interval's wall-clock start was read once the previous profile was
  # built (up to 195 ms later in a soak), so consecutive snapshots' [start, start + duration]
  # spans left gaps while their durations were contiguous. The start is read with the
  # boundary's monotonic clock now: what is left is the two clocks' reading and their drift over
  # an interval. Each interval here resolves ~2000 distinct frames (10 stacks of 200 methods),
  # which took milliseconds before: the gap grew with the build.
  CHAINS = Module.new do
    10.times do |c|
      200.times { |d| module_eval("def chain_#{c}_#{d} = #{d == 199 ? 'sleep(0.0001)' : "chain_#{c}_#{d + 1}"}", __FILE__, __LINE__) }
    end
  end

  def test_snapshot_intervals_follow_each_other_in_wall_clock_time
    runner = Object.new.extend(CHAINS)
    Rperf.start(mode: :wall)
    spans = Array.new(6) do
      10.times { |c| runner.send(:"chain_#{c}_0") }
      data = Rperf.snapshot(clear: true)
      assert_operator data[:aggregated_samples].sum { |s| s[0].size }, :>=, 2000
      [data[:start_time_ns], data[:duration_ns]]
    end
    gaps = spans.each_cons(2).map { |(start, duration), (next_start, _)| next_start - (start + duration) }
    assert_operator gaps.map(&:abs).max, :<, 100_000, "ns between an interval's end and the next one's start: #{gaps}"
  ensure
    Rperf.stop
  end

end
