# frozen_string_literal: true

module PeerBench
  # The code every profiler is measured on. Loaded in the child processes only.
  module Workloads
    CHAIN_DEPTH = 40
    FIB_N = 27
    HOT_ITERATIONS = 100_000
    DISTINCT_SIDE = 100 # DISTINCT_SIDE**2 distinct stacks
    DISTINCT_VISIT_ITERATIONS = 3_000

    # A chain of CHAIN_DEPTH distinct methods that yields at its end: real frames, each a
    # method of its own, so that every sample walks all of them.
    CHAIN_DEPTH.times do |i|
      class_eval "def self.chain_#{i}(&) = chain_#{i + 1}(&)", __FILE__, __LINE__
    end
    class_eval "def self.chain_#{CHAIN_DEPTH} = yield", __FILE__, __LINE__

    def self.fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)

    def self.spin(iterations)
      i = 0
      i += 1 while i < iterations
      i
    end

    # Cold: about 1 ms of ordinary Ruby between 1 kHz samples, and a stack 45-70 frames deep
    # (the chain, then fib's recursion) that differs from one sample to the next.
    def self.cold_unit = chain_0 { fib(FIB_N) }

    # Hot: a tight loop a few frames deep, the same stack at every sample.
    def self.hot_unit = spin(HOT_ITERATIONS)

    UNITS = { "cold" => :cold_unit, "hot" => :hot_unit }.freeze

    # DISTINCT_SIDE outer x DISTINCT_SIDE inner methods: each (outer, inner) pair is a stack of
    # its own, visited in turn under the chain, for the memory measurement.
    DISTINCT_SIDE.times do |i|
      class_eval "def self.inner_#{i}(n) = spin(n)", __FILE__, __LINE__
      class_eval "def self.outer_#{i}(j, n) = __send__(INNER[j], n)", __FILE__, __LINE__
    end
    INNER = Array.new(DISTINCT_SIDE) { |j| :"inner_#{j}" }.freeze
    OUTER = Array.new(DISTINCT_SIDE) { |i| :"outer_#{i}" }.freeze

    # Visits every distinct stack again and again until the deadline (monotonic seconds): in
    # whole cycles (every stack at least once) unless whole_cycles is false (smoke runs).
    def self.distinct_stacks_until(deadline, whole_cycles: true)
      chain_0 do
        visits = 0
        loop do
          OUTER.each do |outer|
            DISTINCT_SIDE.times { |j| __send__(outer, j, DISTINCT_VISIT_ITERATIONS) }
            visits += DISTINCT_SIDE
            break if !whole_cycles && past?(deadline)
          end
          break if past?(deadline)
        end
        visits
      end
    end

    def self.past?(deadline) = Process.clock_gettime(Process::CLOCK_MONOTONIC) >= deadline
  end
end
