# frozen_string_literal: true

require_relative "test_helper"
require "tmpdir"
require "open3"

# The overhead budget (overhead_target:) in a real session: asked for 10 kHz with 1% on a
# CPU-bound thread, the rate comes down (a sample costs microseconds: 10 kHz is several % of a
# CPU), the samples are the ticks the timer ran, their weights still add up to the time
# profiled, and the profile says the rate and the measured overhead. On both capture paths.
class OverheadBudgetTest < Minitest::Test
  include RperfTestHelper

  def profile_budgeted(capture)
    Rperf.start(mode: :wall, frequency: 10_000, overhead_target: 0.01, capture: capture)
    cpu_before = thread_cpu_ns
    burn_cpu(1.0)
    @burn_cpu_ns = thread_cpu_ns - cpu_before
    Rperf.stop_without_result
  end

  %i[postponed signal].each do |capture|
    define_method(:"test_the_rate_comes_down_and_weights_stay_exact_#{capture}") do
      profile = profile_budgeted(capture)
      duration = profile.attribute(:duration_ns)
      ticks = profile.attribute(:trigger_count)
      samples = profile.attribute(:sampling_count)
      report = "#{capture}: #{ticks} ticks, #{samples} samples in #{duration / 1e6} ms, " \
               "#{profile.sampling_hz.round(1)} Hz, overhead #{profile.overhead_ratio}, " \
               "per thread #{profile.thread_totals.inspect}"
      assert_operator profile.sampling_hz, :<, 5_000, "the budget lowered the rate\n#{report}"
      assert_operator profile.sampling_hz, :>=, 1, report
      assert_in_delta ticks * 1e9 / duration, profile.sampling_hz, 1e-6, "the rate is the ticks over the time"
      # One busy thread: each tick samples it, but for ticks coalesced into one job while the
      # thread waited for a CPU of this loaded machine (its share of the wall time is what the
      # machine gave it).
      cpu_share = [@burn_cpu_ns.fdiv(duration), 1.0].min
      assert_operator samples, :<=, ticks, report
      assert_operator samples, :>=, ticks * [0.8, cpu_share].min * 0.9, report
      # The weights are the intervals between the thread's events, whatever the rate: the busy
      # thread's add up to the time profiled, and no thread has more (the test runner's idle
      # threads may have been seen too).
      busy_thread, busy_weight, = profile.thread_totals.max_by { |_, total, _| total }
      assert_in_delta duration, busy_weight, duration * 0.02, report
      profile.thread_totals.each { |seq, total, _| assert_operator total, :<=, duration, "thread #{seq}: #{report}" unless seq == busy_thread }
      cpu = profile.attribute(:process_cpu_ns)
      assert_operator cpu, :>=, 0.9e9, "the process burned the loop's second, and more"
      assert_operator profile.attribute(:profiler_cpu_ns), :>, 0
      assert_in_delta profile.attribute(:profiler_cpu_ns).fdiv(cpu), profile.overhead_ratio, 1e-12
      # Held near its target; a window of the start at 10 kHz is in it, and a loaded machine's noise.
      assert_operator profile.overhead_ratio, :<, 0.05, report
    end
  end

  def test_the_pprof_file_says_the_effective_rate_and_the_overhead
    profile = profile_budgeted(nil)
    Dir.mktmpdir do |dir|
      path = File.join(dir, "p.pb.gz")
      File.binwrite(path, Rperf::Storage.encode(profile, :pprof, gzip: true))
      out, err, status = Open3.capture3("go", "tool", "pprof", "-raw", path)
      assert status.success?, err
      hz = profile.sampling_hz
      assert_match(/^Comment: sampling: #{format('%.1f', hz)} Hz effective \(10000 Hz asked\), profiler overhead #{format('%.4f', profile.overhead_ratio)} of the process's CPU$/, out)
      assert_match(/^Period: #{(1e9 / hz).round}$/, out)
    end
  end

  def test_without_a_budget_nothing_is_measured
    profile = Rperf.start(mode: :wall, frequency: 1000).then { burn_cpu(0.05) && Rperf.stop_without_result }
    assert_nil profile.attribute(:profiler_cpu_ns)
    assert_nil profile.overhead_ratio
    assert_equal 1000.0, profile.sampling_hz
  end

  def test_bad_targets_are_refused
    [0, 1, 1.5, -0.1, "0.01", true].each do |bad|
      error = assert_raises(ArgumentError) { Rperf.start(overhead_target: bad) }
      assert_match(/overhead_target must be nil or a share of the CPU between 0 and 1/, error.message)
    end
    refute Rperf.running?
    error = assert_raises(ArgumentError) { Rperf::Settings.from_env("RPERF_OVERHEAD_TARGET" => "1%") }
    assert_match(/RPERF_OVERHEAD_TARGET must be a number/, error.message)
    assert_in_delta 0.02, Rperf::Settings.from_env("RPERF_OVERHEAD_TARGET" => "0.02").overhead_target, 1e-12
  end
end
