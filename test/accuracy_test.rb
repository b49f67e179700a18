# frozen_string_literal: true

require_relative "test_helper"

# Weights are real elapsed time on the mode's clock, so they add up.
class AccuracyTest < Minitest::Test
  # CPU burned in a 1:3 ratio, by the thread's own CPU clock (robust to a noisy machine). In
  # wall mode the weights follow the wall time each call took, which another process on a
  # shared machine can stretch unevenly: they are compared with that wall time, measured around
  # each call.
  def work_one = burn_cpu(0.02)
  def work_three = burn_cpu(0.06)

  %i[cpu wall].each do |mode|
    define_method("test_known_cpu_ratio_1_to_3_in_#{mode}_mode") do
      wall = Hash.new(0)
      timed = lambda do |name|
        t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
        send(name)
        wall[name] += Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
      end
      data = Rperf.start(mode: mode, frequency: 1000) do
        5.times do
          timed.(:work_one)
          timed.(:work_three)
        end
      end
      one = weight_including(data, "AccuracyTest#work_one")
      three = weight_including(data, "AccuracyTest#work_three")
      expected = mode == :cpu ? 3.0 : wall[:work_three].to_f / wall[:work_one]
      assert_within expected, three.to_f / one, 0.05, "#{mode} ratio"
      assert_within wall[:work_one] + wall[:work_three], one + three, 0.05, "wall time of the calls" if mode == :wall
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

  timing_sensitive :test_known_cpu_ratio_1_to_3_in_cpu_mode,
                   :test_known_cpu_ratio_1_to_3_in_wall_mode,
                   :test_sleep_shows_in_wall_mode_only,
                   :test_wall_mode_conservation_for_a_busy_thread,
                   :test_cpu_mode_conservation_for_a_busy_thread
end
