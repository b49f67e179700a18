# frozen_string_literal: true

require_relative "test_helper"

# Weights are real elapsed time on the mode's clock, so they add up.
class AccuracyTest < Minitest::Test
  # CPU burned in a 1:3 ratio. Each call's real cost is measured around it on the mode's clock
  # (the thread's CPU clock in cpu mode; in wall mode another process on a shared machine can
  # stretch calls unevenly), and each method's weight is compared with it. A sample charges the
  # interval since the thread's previous event to the stack it finds, so at each of the 2n call
  # boundaries at most the one sample that spans it lands on the neighbouring call: the error is
  # bounded by the 2n heaviest samples (raw samples, aggregate: false). On a busy machine a
  # thread descheduled for a while makes a heavy sample, and the bound follows what the machine
  # gave instead of a fixed tolerance.
  def work_one = burn_cpu(0.02)
  def work_three = burn_cpu(0.06)

  %i[cpu wall].each do |mode|
    define_method("test_known_cpu_ratio_1_to_3_in_#{mode}_mode") do
      clock = mode == :cpu ? Process::CLOCK_THREAD_CPUTIME_ID : Process::CLOCK_MONOTONIC
      spent = Hash.new(0)
      timed = lambda do |name|
        t0 = Process.clock_gettime(clock, :nanosecond)
        send(name)
        spent[name] += Process.clock_gettime(clock, :nanosecond) - t0
      end
      calls = 5
      data = Rperf.start(mode: mode, frequency: 1000, aggregate: false) do
        calls.times do
          timed.(:work_one)
          timed.(:work_three)
        end
      end
      one = weight_including(data, "AccuracyTest#work_one")
      three = weight_including(data, "AccuracyTest#work_three")
      interval = data[:aggregated_samples].sum { |s| s[1] }.fdiv([data[:sampling_count], 1].max)
      bound = data[:raw_samples].map { |s| s[1] }.max(2 * calls).sum + 1_000_000 # + 1 ms: clock reads around calls
      { work_one: one, work_three: three }.each do |name, weight|
        assert_in_delta spent[name], weight, bound,
                        "#{mode}: #{name}'s weight vs its measured time (sampling interval #{(interval / 1e6).round(2)} ms)"
      end
      assert_in_delta 3.0, three.fdiv(one), 0.05 + 3 * bound.fdiv(spent[:work_one]), "#{mode} ratio" if mode == :cpu
    end
  end

  def test_sleep_shows_in_wall_mode_only
    wall = Rperf.start(mode: :wall) { sleep 0.2 }
    assert_within 200e6, weight_including(wall, "Kernel#sleep"), 0.10
    cpu = Rperf.start(mode: :cpu) { sleep 0.2 }
    assert_operator weight_including(cpu, "Kernel#sleep"), :<, 5e6
  end

  def test_wall_mode_conservation_for_a_busy_thread
    data = nil
    elapsed = nil
    data = Rperf.start(mode: :wall) do
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
      burn_cpu(0.5)
      elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
    end
    mine = data[:aggregated_samples].select { |s| s[2] == 1 }.sum { |s| s[1] }
    assert_within data[:duration_ns], mine, 0.03, "weight vs profiled wall time"
    assert_operator mine, :>=, elapsed * 0.97
  end

  def test_cpu_mode_conservation_for_a_busy_thread
    clock = Process::CLOCK_THREAD_CPUTIME_ID
    cpu_before = Process.clock_gettime(clock, :nanosecond)
    data = Rperf.start(mode: :cpu) do
      burn_cpu(0.3)
      sleep 0.1 # no CPU: must add nothing
      burn_cpu(0.2)
    end
    consumed = Process.clock_gettime(clock, :nanosecond) - cpu_before
    mine = data[:aggregated_samples].select { |s| s[2] == 1 }.sum { |s| s[1] }
    assert_within consumed, mine, 0.03, "weight vs consumed CPU time"
  end

  timing_sensitive :test_sleep_shows_in_wall_mode_only,
                   :test_wall_mode_conservation_for_a_busy_thread,
                   :test_cpu_mode_conservation_for_a_busy_thread
end
