# frozen_string_literal: true

require "test_helper"

# Out of memory on the drain path and in take_samples (issue 24): injected std::bad_alloc at
# those places loses at most the records it hit (counted in dropped_samples) or raises
# NoMemoryError from snapshot, never ends the process, and never leaves the consumer lock held
# (the next GC marks the session under it: a held lock would hang here).
class FaultInjectionTest < Minitest::Test
  include RperfTestHelper

  def test_a_failed_drain_drops_records_and_the_session_goes_on
    out, err, status = run_ruby(<<~RUBY)
      require "rperf"
      Rperf.start(mode: :cpu, frequency: 1000)
      Rperf::Native.inject_allocation_failures(:drain, 5)
      t0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
      x = 0
      x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t0 < 0.2
      GC.start
      data = Rperf.stop
      puts [data[:dropped_samples].to_i, data[:aggregated_samples].sum { _2 }].join(" ")
    RUBY
    assert status.success?, err
    dropped, weight = out.split.map(&:to_i)
    assert_equal 5, dropped, "each injected failure drops one record and is counted"
    assert_operator weight, :>, 100_000_000, "the rest of the profile is there"
  end

  def test_a_failed_snapshot_raises_no_memory_error_and_keeps_the_samples
    out, err, status = run_ruby(<<~RUBY)
      require "rperf"
      Rperf.start(mode: :cpu, frequency: 1000)
      t0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
      x = 0
      x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t0 < 0.1
      Rperf::Native.inject_allocation_failures(:take_samples, 1)
      begin
        Rperf.snapshot(clear: true)
        puts "no error"
      rescue NoMemoryError
        puts "NoMemoryError"
      end
      GC.start # marks the session under the consumer lock
      data = Rperf.stop
      puts data[:aggregated_samples].sum { _2 }
    RUBY
    assert status.success?, err
    raised, weight = out.lines.map(&:strip)
    assert_equal "NoMemoryError", raised
    assert_operator weight.to_i, :>, 90_000_000, "the samples taken before the failure are still in the profile"
  end
end
