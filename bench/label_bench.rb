# frozen_string_literal: true

# Cost of a label change on the calling thread (issue 23: a label change closes the running
# interval under the old labels). One Rperf.label block (two changes: enter and exit) and one
# Rperf.profile block of a deferred session, per mode, against the same loop without a session.
# Thread CPU time per call, the median of 5 rounds: prints a table.
require "rperf"

CALLS = Integer(ENV.fetch("LABEL_BENCH_CALLS", "200000"))

def cpu_ns = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)

def per_call(&blk)
  rounds = Array.new(5) do
    t0 = cpu_ns
    i = 0
    while i < CALLS
      blk.call
      i += 1
    end
    (cpu_ns - t0).fdiv(CALLS)
  end
  rounds.sort[2]
end

rows = []
empty = per_call { nil }
label = ->() { Rperf.label(endpoint: "GET /users/:id") { nil } }
rows << ["no session: Rperf.label block", per_call(&label) - empty]
%i[wall cpu].each do |mode|
  Rperf.start(mode: mode, frequency: 1000)
  rows << ["#{mode}: Rperf.label block", per_call(&label) - empty]
  Rperf.stop
  Rperf.start(mode: mode, frequency: 1000, defer: true)
  rows << ["#{mode}, defer: Rperf.profile block", per_call { Rperf.profile(endpoint: "GET /users/:id") { nil } } - empty]
  Rperf.stop
end

puts "Label changes (#{CALLS} calls per round, median of 5, thread CPU time per block)"
puts format("%-40s %12s", "case", "ns per block")
rows.each { |name, ns| puts format("%-40s %12.0f", name, ns) }
