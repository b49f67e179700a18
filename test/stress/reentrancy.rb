# frozen_string_literal: true

# Re-entrancy of the native label merge and the session's lifetime (issue 30.1), meant to run
# under a Ruby-linked ASan build (script/asan) and valgrind (rake stress:valgrind), where a use
# of freed session memory is reported even when it does not crash:
#   1. a label value whose to_s stops, or stops and restarts, the profiler;
#   2. Thread#raise into a thread inside Rperf.label (its block, and its value's to_s);
#   3. two threads stopping and starting the profiler while others label and take snapshots.
# Exits 1 with a message when a result is wrong; prints one "ok" line otherwise.
# REENTRANCY_ITERATIONS (default 100) sets part 1's rounds, REENTRANCY_SECONDS (default 2)
# bounds parts 2 and 3 each.
require "rperf"

SECONDS = Float(ENV.fetch("REENTRANCY_SECONDS", "2"))
ITERATIONS = Integer(ENV.fetch("REENTRANCY_ITERATIONS", "100"))
def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
def check(what, ok) = ok || abort("reentrancy: #{what}")

# --- 1. to_s that stops or restarts ----------------------------------------------------------
stops = Object.new
def stops.to_s = (Rperf.stop; "x")
restarts = Object.new
def restarts.to_s = (Rperf.stop; Rperf.start(mode: :wall, frequency: 2000); Rperf.label(w: 1); "y")
block_stops = Object.new
def block_stops.to_s = (Rperf.stop; "z")
ITERATIONS.times do |i|
  Rperf.start(mode: i.even? ? :wall : :cpu, frequency: 2000)
  Rperf.label(before: i.to_s)
  check("label with a stopping to_s returns nil", Rperf.label(v: stops).nil?)
  check("stopped by to_s", !Rperf.running?)
  Rperf.start(mode: :wall, frequency: 2000)
  Rperf.label(v: restarts)
  check("the restarted session has the label", Rperf.labels == { w: 1, v: "y" })
  check("stop returns the restarted session", Rperf.stop[:label_sets].include?({ w: 1, v: "y" }))
  Rperf.start(mode: :wall, frequency: 2000)
  ran = false
  Rperf.label(v: block_stops) { ran = true }
  check("the block runs", ran)
  Rperf.stop
end

# --- 2. Thread#raise into a thread inside Rperf.label --------------------------------------
class Poke < StandardError; end
slow = Object.new
def slow.to_s = (Thread.pass; "slow")
Rperf.start(mode: :wall, frequency: 5000)
ready = Queue.new
raised = 0
worker = Thread.new do
  ready << true
  begin
    loop do
      Rperf.label(outer: "o") do
        Rperf.label(inner: slow) { 50.times(&:to_s) }
        Rperf.label(v: slow)
      end
    end
  rescue Poke # anywhere: in a block, a to_s, an ensure restoring the labels
    raised += 1
    retry
  end
end
ready.pop
deadline = now + SECONDS
until now > deadline
  worker.raise(Poke)
  Thread.pass
end
worker.kill.join
data = Rperf.stop
check("Thread#raise reached the labelling thread", raised.positive?)
check("a profile after Thread#raise", data.is_a?(Hash) && !data[:aggregated_samples].empty?)

# --- 3. concurrent stop/start while others label --------------------------------------------
value = Object.new
def value.to_s = (Thread.pass; "v")
Rperf.start(mode: :wall, frequency: 5000)
deadline = now + SECONDS
cycles = Array.new(2, 0)
restarters = 2.times.map do |t|
  Thread.new do
    while now < deadline
      Rperf.stop
      Thread.pass
      begin
        Rperf.start(mode: t.zero? ? :wall : :cpu, frequency: 5000)
      rescue RuntimeError # the other one started it first
        nil
      end
      cycles[t] += 1
      Thread.pass
    end
  end
end
labelled = Array.new(4, 0)
labellers = 4.times.map do |t|
  Thread.new do
    while now < deadline
      Rperf.label(a: value, b: labelled[t]) { Rperf.labels }
      Rperf.label(a: nil, c: value)
      Rperf.label_sets
      Rperf.snapshot(clear: true) if t.zero? && Rperf.aggregating?
      labelled[t] += 1
      Thread.pass
    end
  end
end
(restarters + labellers).each(&:join)
Rperf.stop
check("both restarters cycled", cycles.all?(&:positive?))
check("every labeller labelled", labelled.all?(&:positive?))
check("stopped", !Rperf.running?)

puts "ok: reentrancy: Thread#raise #{raised} times, stop/start #{cycles.sum} cycles, #{labelled.sum} labels"
