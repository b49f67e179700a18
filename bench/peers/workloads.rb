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

    # Allocation-heavy: small strings, arrays and hashes made by a few methods ALLOC_DEPTH frames
    # deep; one record in KEEP_EVERY outlives the unit in a ring of KEPT_SLOTS (it is freed
    # when overwritten, so retained objects come and go as in a long-running program). Each
    # iteration allocates 7 objects, 4 in make_pair, 2 in make_name, 1 in make_record: sites of
    # distinct weights (4:2:1) to rank, and a period prime to the powers of 2 that counters
    # (stackprof, vernier: every Nth allocation) use, which therefore see every site.
    ALLOC_DEPTH = 30
    ALLOC_ITERATIONS = 10_000
    ALLOC_SITES = %w[make_pair make_name make_record].freeze # heaviest first
    KEEP_EVERY = 100
    KEPT_SLOTS = 5_000
    KEPT = Array.new(KEPT_SLOTS)
    @kept_at = 0

    def self.at_depth(depth, &) = depth <= 1 ? yield : at_depth(depth - 1, &)
    def self.make_name(i) = "item #{i}"
    def self.make_pair(name, i) = [name, [i], [i + 1], [i + 2]]
    def self.make_record(pair) = { key: pair }

    def self.keep(record)
      KEPT[@kept_at] = record
      @kept_at = (@kept_at + 1) % KEPT_SLOTS
    end

    def self.alloc_unit
      at_depth(ALLOC_DEPTH) do
        i = 0
        while i < ALLOC_ITERATIONS
          record = make_record(make_pair(make_name(i), i))
          keep(record) if (i % KEEP_EVERY).zero?
          i += 1
        end
      end
    end

    # The YJIT table's units: a `while` loop method called 300 times; blocks over small
    # collections (times, map, a Hash of Strings); a recursive fib.
    LOOP_ITERATIONS = 3_000
    def self.loop_unit = 300.times { spin(LOOP_ITERATIONS) }

    def self.block_unit
      counts = Hash.new(0)
      200.times { |i| counts["k#{i % 16}"] += [i, i + 1, i + 2].map { |x| x * 2 }.sum }
      counts.sum { |_k, v| v }
    end

    def self.fib_unit = fib(20)

    UNITS = { "cold" => :cold_unit, "hot" => :hot_unit, "alloc" => :alloc_unit,
              "loop" => :loop_unit, "block" => :block_unit, "fib" => :fib_unit }.freeze

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
