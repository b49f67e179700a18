# frozen_string_literal: true

# Writes small profile files with whichever rperf is first on the load path, for the file round
# trip between the gems (compat_test.rb, record_fixtures.rb):
#   ruby -I <lib of one gem> test/compat/support/write_profiles.rb DIR
# DIR/profile.json.gz and DIR/profile.pb.gz hold the same profile (two threads, labels, GVL
# states), DIR/raw.json.gz one with raw samples (aggregate: false).
require "rperf"

module CompatProbe
  module Writes
    module_function

    def spin(iterations)
      i = 0
      i += 1 while i < iterations
      i
    end

    # ~50 ms each: long enough that 0.11.1's sampler catches both threads' spins as a rule.
    def worker_part = spin(2_000_000)
    def main_part = spin(2_000_000)

    def two_threads
      worker = Thread.new { Rperf.label(role: "worker") { worker_part } }
      Rperf.label(role: "main") do
        main_part
        sleep 0.005
      end
      # Busy, not in Thread#join: a join waiting on a CPU-starved worker is an idle wait, which our
      # `rperf report` leaves out by default and 0.11.1's counts (the files must report alike).
      Thread.pass while worker.alive?
      worker.join
    end

    def run(dir)
      data = Rperf.start(mode: :wall, frequency: 500, inherit: false) { two_threads }
      Rperf.save(File.join(dir, "profile.json.gz"), data)
      Rperf.save(File.join(dir, "profile.pb.gz"), data)
      raw = Rperf.start(mode: :cpu, frequency: 1000, aggregate: false, inherit: false) { two_threads }
      Rperf.save(File.join(dir, "raw.json.gz"), raw)
    end
  end
end

CompatProbe::Writes.run(ARGV.fetch(0))
