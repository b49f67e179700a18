# frozen_string_literal: true

# The session lifecycle from many threads at once (issue 43.1): RACE_THREADS threads (default 4)
# each loop start / label / snapshot / stop for RACE_SECONDS (default 2), on the capture path
# RACE_CAPTURE (postponed or signal). Every thread's start and stop races the others': a start
# that finds a session raises "Rperf is already running", a stop finds the session or nil, and
# nothing ever touches freed state (run under script/asan this reports a use after free even
# when it does not crash). Exits 1 with a message when a result is wrong; prints one "ok" line.
require "rperf"

SECONDS = Float(ENV.fetch("RACE_SECONDS", "2"))
THREADS = Integer(ENV.fetch("RACE_THREADS", "4"))
CAPTURE = ENV.fetch("RACE_CAPTURE", "postponed").to_sym
def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
def check(what, ok) = ok || abort("lifecycle race: #{what}")

deadline = now + SECONDS
counts = Array.new(THREADS) do |t|
  Thread.new do
    started = stopped = snapshots = 0
    i = 0
    while now < deadline
      i += 1
      begin
        Rperf.start(mode: (i + t).even? ? :wall : :cpu, frequency: 5000, capture: CAPTURE)
        started += 1
      rescue RuntimeError => e
        check("start raised #{e.message.inspect}", e.message == "Rperf is already running")
      end
      Rperf.label(thread: t.to_s, round: (i % 7).to_s) do
        snap = Rperf.snapshot(clear: i.odd?)
        check("a snapshot is a result or nil", snap.nil? || snap[:aggregated_samples].is_a?(Array))
        snapshots += 1 if snap
        200.times(&:to_s)
      end
      data = Rperf.stop
      next unless data

      stopped += 1
      check("a stopped session's result has its mode", %i[cpu wall].include?(data[:mode]))
      check("every sample has a weight", data[:aggregated_samples].all? { |s| s[1].is_a?(Integer) && s[1] >= 0 })
    end
    [started, stopped, snapshots]
  end
end.map(&:value)
last = Rperf.stop ? 1 : 0
check("not running at the end", !Rperf.running?)
started, stopped, snapshots = counts.transpose.map(&:sum)
check("every session started (#{started}) is stopped once (#{stopped + last})", started == stopped + last)
check("sessions ran", started.positive? && snapshots.positive?)
puts "ok #{THREADS} threads, #{SECONDS} s, capture #{CAPTURE}: #{started} sessions, #{snapshots} snapshots"
