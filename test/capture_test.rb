# frozen_string_literal: true

require_relative "test_helper"
require "json"

# capture: :signal samples in the GVL holder's signal handler; capture: :postponed through a
# postponed job. Both must charge the same time to the same stacks.
class CaptureTest < Minitest::Test
  def yjit? = defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled?

  # [ticks the handler sampled, ticks the job sampled] just before stop.
  def profile_with_paths(**opts)
    Rperf.start(**opts)
    yield
    paths = Rperf::Native.sampling_paths
    [Rperf.stop, paths]
  end

  %i[cpu wall].each do |mode|
    define_method("test_signal_path_samples_in_the_handler_in_#{mode}_mode") do
      data, (handler, job) = profile_with_paths(mode: mode, capture: :signal) { burn_cpu(0.2) }
      assert_operator handler, :>, 20, "ticks sampled in the handler"
      assert_operator job, :<=, handler / 4, "fallbacks to the job (GC, rperf's own code)"
      assert_operator data[:sampling_count], :>=, handler + job # and the ticks up to stop
      top = data[:aggregated_samples].sort_by { -_2 }.first(5).map { |f, w, t, l| [w, t, data[:label_sets][l], f.first(3).map { _1[1] }] }
      assert_operator weight_including(data, "RperfTestHelper#burn_cpu"), :>, 0.8 * data[:aggregated_samples].sum { _2 }, top.inspect
    end

    define_method("test_postponed_path_never_samples_in_the_handler_in_#{mode}_mode") do
      _, (handler, job) = profile_with_paths(mode: mode, capture: :postponed) { burn_cpu(0.1) }
      assert_equal 0, handler
      assert_operator job, :>, 10
    end
  end

  # burn_cpu's weight is the time measured around it, up to the weight of the samples that
  # straddle its edges (test_helper's boundary_weight: a descheduled thread makes a heavy one).
  def test_signal_path_wall_conservation
    elapsed = nil
    in_burn = ->(s) { frame?(s, "RperfTestHelper#burn_cpu") }
    data = Rperf.start(mode: :wall, capture: :signal, aggregate: false) do
      t0 = monotonic_ns
      burn_cpu(0.3)
      elapsed = monotonic_ns - t0
    end
    assert_in_delta elapsed, raw_weight(data, 1, &in_burn), boundary_weight(data, 1, &in_burn)
  end

  def test_signal_path_cpu_conservation_per_thread
    cpu = {}
    data = Rperf.start(mode: :cpu, capture: :signal, frequency: 2000) do
      3.times.map do |i|
        Thread.new do
          burn_cpu(0.05 * (i + 1))
          cpu[i] = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
        end
      end.each(&:join)
    end
    by_thread = data[:aggregated_samples].group_by { _1[2] }.transform_values { |ss| ss.sum { _2 } }
    # The three threads are the last seen, in order of creation; each is charged its CPU time
    # (its last interval closes at its exit: the instructions after the clock read are included).
    created = by_thread.keys.sort.last(3)
    cpu.sort.each_with_index do |(_, spent), k|
      assert_within spent, by_thread.fetch(created[k]), 0.05, "thread #{created[k]}"
    end
  end

  # cpu mode on a CPU shared with a busy loop: the thread is descheduled for whole periods, and
  # the timer's ticks (on the monotonic clock) keep coming. A tick during which the thread burned
  # no CPU has nothing to charge: it must not become a sample of almost no weight (each a clock
  # read and a stack walk; the signal path took one per waiting tick, a third of its samples
  # here), and the weights must still add up to the CPU the thread burned.
  CONTENDED_PROGRAM = <<~RUBY
    require "rperf"
    def burn(seconds)
      t0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
      x = 0
      x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t0 < seconds
    end
    cpu = -> { Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond) }
    # The times this thread was given a CPU (schedstat's third field: timeslices run).
    slices = -> { File.read("/proc/thread-self/schedstat").split[2].to_i }
    burn(0.02)
    spent = nil
    slices_before = slices_during = nil
    data = Rperf.start(mode: :cpu, frequency: 1000, capture: ARGV[0].to_sym, aggregate: false, inherit: false) do
      slices_before = slices.()
      c0 = cpu.()
      burn(0.3)
      spent = cpu.() - c0
      slices_during = slices.() - slices_before
    end
    weights = data[:raw_samples].map { _2 }
    in_burn = data[:raw_samples].select { |s| s[0].any? { |f| f[1] == "Object#burn" } }.sum { _2 }
    puts [weights.size, weights.count { _1 < 50_000 }, in_burn, spent, slices_during].join(" ")
  RUBY

  %w[signal postponed].each do |capture|
    define_method("test_cpu_mode_#{capture}_path_skips_ticks_while_the_thread_waits_for_its_cpu") do
      skip "taskset not available" unless system("taskset -c 0 true", out: File::NULL, err: File::NULL)
      hog = spawn("taskset", "-c", "0", RbConfig.ruby, "-e", "loop {}")
      begin
        out, err, status = Open3.capture3("taskset", "-c", "0", RbConfig.ruby, "-I#{RperfTestHelper::ROOT}/lib", "-e", CONTENDED_PROGRAM, capture)
      ensure
        Process.kill(:KILL, hog)
        Process.wait(hog)
      end
      assert status.success?, err
      samples, light, in_burn, spent, slices = out.split.map(&:to_i)
      assert_operator samples, :>, 100
      # A thread given the CPU less than 50 us before a tick makes a light sample too: a tick
      # finds it that fresh with a chance of about 50 us x its slices / its CPU time (the kernel
      # gave it `slices` slices; 400-500 of ~0.6 ms beside one hog). The bound is that many
      # samples, plus 3 sigma; ticks taken for the periods it waited made a third of them light.
      expected = samples * [1.0, 50_000.0 * slices / spent].min
      assert_operator light, :<=, expected + 3 * Math.sqrt(expected) + 3,
                      "samples of < 5% of a period, of #{samples}; #{slices} slices (#{expected.round(1)} expected)"
      assert_within spent, in_burn, 0.05, "burn's weight vs its CPU time"
    end
  end

  def test_signal_path_under_gc_stress_compaction_and_thread_churn
    data = Rperf.start(mode: :wall, capture: :signal, frequency: 10_000) do
      GC.stress = true
      200.times { |i| "x#{i}" }
      GC.stress = false
      5.times do
        Array.new(20_000) { |i| "s#{i}" }
        GC.compact
        10.times.map { Thread.new { 500.times { |i| i.to_s } } }.each(&:join)
      end
    ensure
      GC.stress = false
    end
    refute_empty data[:aggregated_samples]
    data[:aggregated_samples].each do |frames, *|
      frames.each { |path, label| assert_kind_of String, path; assert_kind_of String, label }
    end
  end

  def test_signal_path_start_stop_loop_and_fork
    200.times { Rperf.start(mode: :cpu, capture: :signal, frequency: 10_000); 200.times { |j| j * j }; Rperf.stop }
    Rperf.start(mode: :wall, capture: :signal, inherit: false, frequency: 5000)
    pid = fork { exit!(Rperf.running? ? 1 : (Rperf.start(capture: :signal) { burn_cpu(0.02) }[:sampling_count] > 0 ? 0 : 2)) }
    burn_cpu(0.05)
    _, status = Process.wait2(pid)
    data = Rperf.stop
    assert_equal 0, status.exitstatus
    assert_operator data[:sampling_count], :>, 0
  end

  # Under YJIT a leaf method running only JIT code has a frame whose pc YJIT never wrote:
  # rb_profile_frames skips it when the stale value is 0 (the leaf then read as its caller).
  # vm_frames.hh puts it back; its line is unknown (0). Both paths must name it.
  LEAF_PROGRAM = <<~RUBY
    require "rperf"
    def loop_method(n) = (i = 0; i += 1 while i < n; i)
    def work(rounds) = rounds.times { loop_method(20_000) }
    work(60)
    lines = ARGV[1] == "lines"
    data = Rperf.start(mode: :cpu, frequency: 2000, capture: ARGV[0].to_sym, lines: lines) { work(10_000) }
    total = data[:aggregated_samples].sum { _2 }
    leaf = data[:aggregated_samples].select { |f, _| f.first[1] == "Object#loop_method" }.sum { _2 }
    leaf_lines = data[:aggregated_samples].select { |f, _| f.first[1] == "Object#loop_method" }.map { |f, _| f.first[2] }.uniq
    puts [leaf.fdiv(total).round(3), RubyVM::YJIT.enabled?, leaf_lines.inspect].join(" ")
  RUBY

  %w[signal postponed].each do |capture|
    define_method("test_yjit_leaf_method_is_named_with_#{capture}_capture") do
      skip "no YJIT in this Ruby" unless defined?(RubyVM::YJIT)
      %w[nolines lines].each do |lines|
        out, err, status = Open3.capture3(RbConfig.ruby, "--yjit", "-I#{RperfTestHelper::ROOT}/lib", "-e", LEAF_PROGRAM, capture, lines)
        assert status.success?, err
        share, yjit, line_list = out.split(" ", 3)
        assert_equal "true", yjit
        assert_operator share.to_f, :>=, 0.9, "#{capture}/#{lines}: share of weight with Object#loop_method as leaf"
        next unless lines == "lines"

        # The method's lines (2) or, for a frame YJIT pushed without a pc, 0.
        eval(line_list).each { |l| assert_includes [0, 2], l, "#{capture}: loop_method's line" } # rubocop:disable Security/Eval
      end
    end
  end

  # Issue 44 (1): every new thread's first interval was charged to an empty stack (one sample
  # with `[]` frames per thread; rperf 0.11 records none). A walk without a Ruby frame leaves
  # the interval for the thread's first real stack (or its last one, after its block returned),
  # in both capture paths and both modes, and each thread's weight is still its CPU time.
  THREAD_STARTS_PROGRAM = <<~RUBY
    require "rperf"
    require "json"
    mode, capture = ARGV.map(&:to_sym)
    cpu = {}
    data = Rperf.start(mode: mode, capture: capture, frequency: 10_000, inherit: false) do
      50.times { 4.times.map { Thread.new { 2_000.times {} } }.each(&:join) }
      4.times.map do |i|
        Thread.new do
          3_000_000.times {}
          cpu[i] = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
        end
      end.each(&:join)
    end
    samples = data[:aggregated_samples]
    by_thread = samples.group_by { _1[2] }.transform_values { |ss| ss.sum { _2 } }
    puts JSON.generate(empty: samples.count { |f, *| f.empty? }, threads: by_thread.size,
                       thread_start: samples.count { |f, *| f.any? { _1[1] == "[thread start]" } },
                       cpu: cpu.sort.map(&:last), weights: by_thread.sort.last(4).map(&:last))
  RUBY

  %w[signal postponed].each do |capture|
    define_method("test_no_empty_stack_over_many_thread_starts_with_#{capture}_capture") do
      %w[cpu wall].each do |mode|
        out, err, status = Open3.capture3(RbConfig.ruby, "-I#{RperfTestHelper::ROOT}/lib", "-e", THREAD_STARTS_PROGRAM, mode, capture)
        assert status.success?, err
        r = JSON.parse(out, symbolize_names: true)
        assert_equal 0, r[:empty], "#{capture}/#{mode}: samples with an empty stack (#{r.inspect})"
        assert_operator r[:threads], :>, 200, "#{capture}/#{mode}: the new threads were sampled"
        next unless mode == "cpu"

        # The last four threads, in order of creation: each charged its CPU time (its clock
        # counts from zero; the last interval closes at its exit, after the read).
        r[:cpu].zip(r[:weights]).each_with_index { |(spent, weight), i| assert_within spent, weight, 0.05, "#{capture}: thread #{i}" }
      end
    end
  end

  def test_settings
    assert_raises(ArgumentError) { Rperf.start(capture: :bogus) }
    err = assert_raises(ArgumentError) { Rperf.start(capture: :signal, signal: false) }
    assert_match(/needs a timer signal/, err.message)
    refute Rperf.running?
    assert_equal :signal, Rperf::Settings.from_env("RPERF_CAPTURE" => "signal").capture
    assert_equal({ "RPERF_CAPTURE" => "postponed" }, Rperf::Settings.new(capture: :postponed).child_env.slice("RPERF_CAPTURE"))
    assert_equal :postponed, Rperf::Settings.new(signal: false).capture_path
    assert_equal(yjit? ? :signal : :postponed, Rperf::Settings.new.capture_path)
  end
end
