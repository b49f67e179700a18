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

  # Sleep's weight is the time measured around it, within its boundary samples (test_helper).
  # In cpu mode the CPU clock barely moves asleep, so neither may the weight (a wall-clock
  # charge of the 200 ms asleep would be far out of bounds).
  def test_sleep_shows_in_wall_mode_only
    in_sleep = ->(s) { frame?(s, "Kernel#sleep") }
    { wall: method(:monotonic_ns), cpu: method(:thread_cpu_ns) }.each do |mode, clock|
      slept = nil
      data = Rperf.start(mode: mode, aggregate: false) do
        t0 = clock.call
        sleep 0.2
        slept = clock.call - t0
      end
      assert_operator slept, :>=, 200e6 if mode == :wall
      assert_in_delta slept, raw_weight(data, 1, &in_sleep), boundary_weight(data, 1, &in_sleep),
                      "#{mode}: sleep's weight vs its measured time"
    end
  end

  # The starting thread is observed from inside start to inside stop: its weight is that time
  # exactly, no sampling error, so it lies between the time measured inside the block and
  # duration_ns (start to the end of stop), whatever the machine gave the thread.
  def test_wall_mode_conservation_for_a_busy_thread
    inner = nil
    before = monotonic_ns
    data = Rperf.start(mode: :wall) do
      t0 = monotonic_ns
      burn_cpu(0.5)
      inner = monotonic_ns - t0
    end
    outer = monotonic_ns - before
    mine = data[:aggregated_samples].select { |s| s[2] == 1 }.sum { |s| s[1] }
    assert_operator mine, :>=, inner, "weight vs the block's wall time"
    assert_operator mine, :<=, data[:duration_ns], "weight vs profiled wall time"
    assert_operator data[:duration_ns], :<=, outer
  end

  # The same on the thread's CPU clock: the block's CPU (sleep adds none) <= weight <= the CPU
  # measured around start..stop.
  def test_cpu_mode_conservation_for_a_busy_thread
    inner = nil
    before = thread_cpu_ns
    data = Rperf.start(mode: :cpu) do
      c0 = thread_cpu_ns
      burn_cpu(0.3)
      sleep 0.1 # no CPU: must add nothing
      burn_cpu(0.2)
      inner = thread_cpu_ns - c0
    end
    outer = thread_cpu_ns - before
    mine = data[:aggregated_samples].select { |s| s[2] == 1 }.sum { |s| s[1] }
    assert_operator mine, :>=, inner, "weight vs the block's CPU time"
    assert_operator mine, :<=, outer, "weight vs the CPU time around start and stop"
  end
end
