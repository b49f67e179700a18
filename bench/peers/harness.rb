# frozen_string_literal: true

require "json"
require "open3"
require "rbconfig"

module PeerBench
  # A profiler in one mode; profiler "none" is the unprofiled baseline.
  Variant = Struct.new(:profiler, :mode) do
    def label = profiler == "none" ? "unprofiled" : "#{profiler} #{mode}"
    def baseline? = profiler == "none"
  end

  # A fixed workload (a number of units calibrated to the target duration) at one frequency.
  Experiment = Struct.new(:key, :unit, :frequency, :yjit)

  ALL_VARIANTS = [
    Variant.new("ours", :cpu), Variant.new("ours", :wall),
    Variant.new("rperf", :cpu), Variant.new("rperf", :wall),
    Variant.new("stackprof", :cpu), Variant.new("stackprof", :wall),
    Variant.new("vernier", :wall),
    Variant.new("none", :wall),
  ].freeze

  EXPERIMENTS = [
    Experiment.new(:cold, "cold", 1000, false),
    Experiment.new(:cold_yjit, "cold", 1000, true),
    Experiment.new(:hot, "hot", 10_000, false),
    Experiment.new(:hot_yjit, "hot", 10_000, true),
    Experiment.new(:cold_10k, "cold", 10_000, false),
  ].freeze

  RSS_FREQUENCY = 10_000

  # Allocation profiling: one allocation in N sampled, on the allocation-heavy unit (interpreter).
  ALLOC_INTERVALS = (ENV["RPERF_BENCH_ALLOC_N"]&.split(",")&.map { |n| Integer(n, 10) } || [1, 64, 1024, 4096]).freeze
  ALLOC_FREQUENCY = 1000 # the time sampling that ours and vernier do besides (stackprof: none)
  ALLOC_EXPERIMENT = Experiment.new(:alloc, "alloc", ALLOC_FREQUENCY, false)

  # A profiler sampling allocations, one in `interval` (nil: time samples only, for reference);
  # retained: ours with retained: true (the sampled objects' frees followed); frequency: ours'
  # time sampling besides (nil: ALLOC_FREQUENCY; 1: about none, stackprof's :object mode's terms).
  AllocVariant = Struct.new(:profiler, :interval, :retained, :frequency) do
    def baseline? = profiler == "none"
    # ours: cpu time samples at 1 kHz besides; vernier: wall (its only mode); stackprof: :object.
    def mode = { "ours" => :cpu, "vernier" => :wall }.fetch(profiler, :object)

    def label
      return "unprofiled" if baseline?

      "#{profiler} #{interval ? "allocations #{interval}" : "time only"}#{" retained" if retained}" \
        "#{" (time 1 Hz)" if frequency == 1}"
    end

    def time_frequency = frequency || ALLOC_FREQUENCY

    # The setting as the profiler's API spells it.
    def setting
      case [profiler, interval.nil?]
      when ["none", true] then "–"
      when ["ours", true] then "time only (cpu, 1 kHz)"
      when ["ours", false]
        "`allocations: #{interval}#{", retained: true" if retained}`" \
          "#{frequency == 1 ? ", `frequency: 1` (cpu)" : " (+ cpu, 1 kHz)"}"
      when ["stackprof", false] then "`mode: :object, interval: #{interval}`"
      when ["vernier", true] then "time only (wall, 1 kHz)"
      when ["vernier", false] then "`allocation_interval: #{interval}` (+ wall, 1 kHz)"
      end
    end
  end

  # Per N: ours (1 kHz, then 1 Hz time sampling besides), ours retained, stackprof, vernier (interleaved in this order).
  ALL_ALLOC_VARIANTS = [
    AllocVariant.new("ours", nil), AllocVariant.new("vernier", nil),
    *ALLOC_INTERVALS.flat_map do |n|
      [AllocVariant.new("ours", n), AllocVariant.new("ours", n, false, 1), AllocVariant.new("ours", n, true),
       AllocVariant.new("stackprof", n),
       AllocVariant.new("vernier", n)]
    end,
    AllocVariant.new("none", nil),
  ].freeze

  # What one `rake bench:peers` does, from the environment:
  #   RPERF_BENCH_QUICK=1        1 run per cell, 0.1 s workloads, 0.5 s for the RSS run (a smoke test)
  #   RPERF_BENCH_RUNS=N         runs per cell (default 7; medians are taken over them)
  #   RPERF_BENCH_SECONDS=S      target duration of one fixed workload (default 0.6)
  #   RPERF_BENCH_RSS_SECONDS=S  duration of the peak-RSS run (default 30)
  #   RPERF_BENCH_PROFILERS=a,b  a subset of ours,rperf,stackprof,vernier (default: all)
  #   RPERF_BENCH_ALLOC=0        no allocation table (default 1: after the time table; rperf
  #                              0.11.1 has no allocation profiling and is not in it)
  #   RPERF_BENCH_ALLOC_N=64,1024 the allocation table's N (default 1,64,1024,4096)
  #   RPERF_BENCH_TIME=0         no time table (nor peak RSS): the allocation table alone
  #   RPERF_BENCH_YJIT=0         no YJIT table (default 1: share of instructions in YJIT while
  #                              profiled, bench/peers/yjit.rb)
  Config = Struct.new(:runs, :seconds, :rss_seconds, :profilers, :quick, :alloc, :time, :yjit, keyword_init: true) do
    def self.from_env(env = ENV)
      quick = env["RPERF_BENCH_QUICK"] == "1"
      profilers = (env["RPERF_BENCH_PROFILERS"] || "ours,rperf,stackprof,vernier").split(",").map(&:strip)
      unknown = profilers - %w[ours rperf stackprof vernier]
      raise ArgumentError, "RPERF_BENCH_PROFILERS: unknown #{unknown.join(", ")}" unless unknown.empty?

      alloc, time, yjit = %w[RPERF_BENCH_ALLOC RPERF_BENCH_TIME RPERF_BENCH_YJIT].map do |name|
        value = env.fetch(name, "1")
        raise ArgumentError, "#{name}: 0 or 1, got #{value.inspect}" unless %w[0 1].include?(value)

        value == "1"
      end
      raise ArgumentError, "RPERF_BENCH_TIME=0, RPERF_BENCH_ALLOC=0 and RPERF_BENCH_YJIT=0: nothing to measure" unless alloc || time || yjit

      new(runs: Integer(env["RPERF_BENCH_RUNS"] || (quick ? 1 : 7)),
          seconds: Float(env["RPERF_BENCH_SECONDS"] || (quick ? 0.1 : 0.6)),
          rss_seconds: Float(env["RPERF_BENCH_RSS_SECONDS"] || (quick ? 0.5 : 30)),
          profilers: profilers, quick: quick, alloc: alloc, time: time, yjit: yjit)
    end

    def variants = ALL_VARIANTS.select { |v| v.baseline? || profilers.include?(v.profiler) }
    def alloc_variants = ALL_ALLOC_VARIANTS.select { |v| v.baseline? || profilers.include?(v.profiler) }
    # The allocation table, when asked for and some profiler in it was chosen.
    def alloc? = alloc && alloc_variants.any? { |v| !v.baseline? }
    def peers_needed?
      measured = (time ? variants : []) + (alloc? ? alloc_variants : [])
      measured.any? { |v| !%w[ours none].include?(v.profiler) } || (yjit && profilers.any? { |p| p != "ours" })
    end
  end

  # Runs every measurement in a fresh child process and collects the parsed JSON lines.
  class Runner
    CHILD = File.expand_path("child.rb", __dir__)

    attr_reader :config, :results, :rss, :counts, :versions, :alloc_results

    # peers: what Locate.peers returns (nil when only ours is measured).
    def initialize(config, root:, peers:, log: $stderr)
      @config = config
      @root = root
      @peers = peers || {}
      @log = log
      @results = {} # experiment key => { variant label => [child report, ...] }
      @rss = {}     # variant label => child report
      @counts = {}  # experiment key => units per run
      @versions = {}
      @alloc_results = nil # variant label => [child report, ...] (nil: not measured)
    end

    def run
      if config.time
        EXPERIMENTS.each { |exp| run_experiment(exp) }
        run_rss
      end
      run_allocations if config.alloc?
      self
    end

    # Interleaved as the time experiments; the allocation-heavy unit, interpreter only.
    def run_allocations
      exp = ALLOC_EXPERIMENT
      count = calibrate(exp)
      @counts[exp.key] = count
      @alloc_results = Hash.new { |h, k| h[k] = [] }
      config.runs.times do |i|
        @log.print "\rallocations: run #{i + 1}/#{config.runs}   "
        # Every other round in reverse (ABBA): a drift of the machine's speed over the rounds
        # weighs on every variant alike.
        (i.odd? ? config.alloc_variants.reverse : config.alloc_variants).each do |v|
          spec = { task: "fixed", profiler: v.profiler, mode: v.mode, frequency: v.time_frequency,
                   unit: exp.unit, count: count, allocations: v.interval, retained: v.retained || false }
          @alloc_results[v.label] << run_child(v, spec, yjit: exp.yjit)
        end
      end
      @log.puts
    end

    # Interleaved: every variant once (ours, rperf, stackprof, vernier, unprofiled), then again.
    def run_experiment(exp)
      count = calibrate(exp)
      @counts[exp.key] = count
      per_variant = @results[exp.key] = Hash.new { |h, k| h[k] = [] }
      config.runs.times do |i|
        @log.print "\r#{exp.key}: run #{i + 1}/#{config.runs}   "
        config.variants.each do |v|
          spec = { task: "fixed", profiler: v.profiler, mode: v.mode, frequency: exp.frequency,
                   unit: exp.unit, count: count }
          per_variant[v.label] << run_child(v, spec, yjit: exp.yjit)
        end
      end
      @log.puts
    end

    def run_rss
      config.variants.each do |v|
        @log.print "\rpeak RSS: #{v.label} (#{config.rss_seconds} s)          "
        # Quick runs may stop before every distinct stack was visited.
        spec = { task: "rss", profiler: v.profiler, mode: v.mode, frequency: RSS_FREQUENCY,
                 seconds: config.rss_seconds, whole_cycles: !config.quick }
        @rss[v.label] = run_child(v, spec, yjit: false)
      end
      @log.puts
    end

    # Units of `unit` per run (the YJIT table's workloads).
    def calibrate_unit(unit, yjit:) = calibrate(Experiment.new(:"#{unit}_yjit", unit, 0, yjit))

    # One child for a profiler by name (the YJIT table's variants); extra Ruby options first.
    def run_child_for(profiler, label, spec, yjit:, ruby_args: [])
      variant = Variant.new(profiler, :wall)
      argv = [RbConfig.ruby, *("--yjit" if yjit), *ruby_args, *load_path(variant), CHILD, JSON.generate(spec)]
      out, err, status = Open3.capture3(child_env, *argv)
      raise "#{label} child failed (#{status}):\n#{err}" unless status.success?

      report = JSON.parse(out.lines.last)
      check_loaded!(variant, report)
      report
    end

    private

    def calibrate(exp)
      spec = { task: "calibrate", unit: exp.unit, seconds: config.quick ? 0.05 : 0.3 }
      report = run_child(ALL_VARIANTS.last, spec, yjit: exp.yjit)
      count = (config.seconds / report.fetch("seconds_per_unit")).round
      [count, config.quick ? 1 : 3].max
    end

    def run_child(variant, spec, yjit:)
      argv = [RbConfig.ruby, *("--yjit" if yjit), *load_path(variant), CHILD, JSON.generate(spec)]
      out, err, status = Open3.capture3(child_env, *argv)
      raise "#{variant.label} child failed (#{status}):\n#{err}" unless status.success?

      report = JSON.parse(out.lines.last)
      check_loaded!(variant, report)
      report
    end

    def load_path(variant)
      case variant.profiler
      when "ours" then ["-I", File.join(@root, "lib")]
      when "rperf" then ["-I", @peers.fetch("rperf_lib")]
      else []
      end
    end

    # A clean child: no Bundler or RUBYOPT from the parent, no RPERF_* settings, the peers' gems.
    def child_env
      env = ENV.keys.grep(/\A(RPERF_|BUNDLE|RUBYOPT\z|RUBYLIB\z)/).to_h { |k| [k, nil] }
      env["GEM_PATH"] = @peers["gems"] if @peers["gems"]
      env
    end

    # Ours and rperf 0.11.1 are both `require "rperf"`: prove which one each child loaded.
    def check_loaded!(variant, report)
      return unless report.key?("version")

      lib = load_path(variant).last
      if lib && !report["feature"].to_s.start_with?("#{lib}/")
        raise "#{variant.label}: loaded #{report["feature"].inspect}, not the rperf in #{lib}"
      end
      @versions[variant.profiler] ||= report["version"] unless variant.baseline?
    end
  end
end
