# frozen_string_literal: true

# Issue 48.6(b): one "running" interval of 3,325.5 ms in a recorded server's raw timeline, while
# no thread took a sample. The timer thread also drains the sample ring into the session's
# samples (Timer::worker_loop's background call), so no tick fires while a drain runs; with
# aggregate: false every interval (and every sampled allocation) is kept, and a container that
# doubles by copying copies hundreds of MB at once (8.4 million 32-byte samples: 3.2 s on a
# loaded 2-core VM). Here the main thread allocates for SECONDS under allocations: 1 (every
# allocation sampled, kept raw), so the session's lists grow to millions while it runs Ruby
# code that only ticks interrupt; its longest running intervals are printed: a drain that
# stalls the timer shows as an interval of a second or more.
#   bundle exec ruby -Ilib test/stress/raw_growth_stall.rb [SECONDS]
require "rperf"

seconds = Float(ARGV[0] || 20)
def allocate_until(deadline)
  n = 0
  while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    100.times { Object.new }
    n += 100
  end
  n
end

Rperf.start(mode: :wall, aggregate: false, frequency: 1000, allocations: 1)
allocated = allocate_until(Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds)
data = Rperf.stop

work = data[:raw_samples].select { |frames, _, seq, lsi| seq == 1 && data[:label_sets][lsi].empty? && frames.any? { |f| f[1] == "Object#allocate_until" } }
longest = work.map { |r| r[1] }.max(5)
puts format("%d objects allocated, %d allocation samples kept, %d time samples; the loop's longest running intervals: %s ms; over 1 s: %d",
            allocated, data[:raw_allocation_samples].size, data[:raw_samples].size,
            longest.map { |w| (w / 1e6).round(1) }.inspect, work.count { |r| r[1] > 1e9 })
