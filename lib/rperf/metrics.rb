# frozen_string_literal: true

require "rperf"

module Rperf
  # A Rack app serving this process's profiled time in Prometheus's text format (0.0.4), per
  # value of the label keys (the Rack middleware's endpoint by default):
  #
  #   # config.ru
  #   require "rperf/rack"
  #   require "rperf/metrics"
  #   Rperf.start(mode: :wall)
  #   use Rperf::RackMiddleware
  #   map("/metrics") { run Rperf::Metrics.new }
  #   run MyApp
  #
  # Counters (seconds; the model's VM states, per series):
  #   rperf_cpu_seconds_total        running: in wall mode the wall time threads held the GVL
  #                                  outside GC; in cpu mode the CPU time threads burned outside
  #                                  GC (off the GVL too)
  #   rperf_gvl_wait_seconds_total   wall mode: time threads were ready to run but waited for
  #                                  the GVL (contention); 0 in cpu mode
  #   rperf_gvl_blocked_seconds_total wall mode: time threads were off the GVL (I/O, sleep, C
  #                                  code that releases it); 0 in cpu mode
  #   rperf_gc_seconds_total         GC marking and sweeping (wall or CPU time, as the mode)
  # Per process: rperf_samples_total (samples taken), rperf_overhead_ratio (with an overhead
  # budget, overhead_target: or Rperf::Continuous: the profiler's measured CPU over the
  # process's; else its sample jobs and hooks over the time profiled; since this app started
  # counting), rperf_sampling_hz (the rate the timer ran at: its ticks over the time
  # profiled, below the frequency when the budget lowered it), rperf_info{mode,version} 1.
  #
  # Every series has a pid label: each process (a Puma or Sidekiq worker after fork) counts its
  # own from zero, so a series never goes down when another process answers the scrape; add
  # them up with `sum by (endpoint)`. Time outside every label key (a server's idle threads)
  # is the series without the key. At most max_series value combinations get series of their
  # own; later ones are added up under the value "other".
  #
  # The counters add up every interval of the session (Rperf::Intervals: whoever cuts them, the
  # Viewer's auto snapshots or Rperf::Continuous, nothing is lost) and the open one, read
  # without cutting it. Counting starts when the app is made; sessions started and stopped
  # later add up.
  class Metrics
    CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
    OVERFLOW_VALUE = "other"
    # name, help, the VM states (Profile#label_state_totals's keys) it adds up.
    TIME_COUNTERS = [
      ["rperf_cpu_seconds_total", "Time running Ruby outside GC (wall mode: holding the GVL; cpu mode: CPU time)", %i[running]],
      ["rperf_gvl_wait_seconds_total", "Time waiting for the GVL held by another thread (wall mode)", %i[gvl_wait]],
      ["rperf_gvl_blocked_seconds_total", "Time off the GVL: I/O, sleep, C code releasing it (wall mode)", %i[gvl_blocked]],
      ["rperf_gc_seconds_total", "Time in GC marking and sweeping", %i[gc_mark gc_sweep]],
    ].freeze

    # One process's running totals: per series the nanoseconds of each TIME_COUNTERS entry, and
    # the process's own counters.
    class Totals
      attr_reader :series, :samples, :profiler_ns, :duration_ns, :ticks, :profiler_cpu_ns, :process_cpu_ns, :mode

      def initialize
        @series = {}
        @samples = @profiler_ns = @duration_ns = @ticks = @profiler_cpu_ns = @process_cpu_ns = 0
        @mode = nil
      end

      def initialize_copy(other)
        super
        @series = other.series.transform_values(&:dup)
      end

      # Adds a profile's time; `slot` maps a combination of values to its series' key.
      def add(profile, keys, &slot)
        profile.label_state_totals(keys).each do |values, states|
          ns = (@series[slot.call(values)] ||= Array.new(TIME_COUNTERS.size, 0))
          TIME_COUNTERS.each_with_index { |(_, _, names), i| ns[i] += names.sum { |state| states.fetch(state) } }
        end
        @samples += profile.attribute(:sampling_count).to_i
        @profiler_ns += Stat.profiler_time_ns(profile)
        duration = profile.attribute(:duration_ns).to_i
        @duration_ns += duration
        @ticks += profile.sampling_hz * duration / 1e9
        @profiler_cpu_ns += profile.attribute(:profiler_cpu_ns).to_i
        @process_cpu_ns += profile.attribute(:process_cpu_ns).to_i
        @mode = profile.attribute(:mode)
        self
      end

      # The budget's measure when a session had one, else the sampler's own account of its time.
      def overhead_ratio
        return profiler_cpu_ns.fdiv(process_cpu_ns) if process_cpu_ns.positive?

        duration_ns.positive? ? profiler_ns.fdiv(duration_ns) : 0.0
      end

      def sampling_hz = duration_ns.positive? ? ticks * 1e9 / duration_ns : 0.0
    end

    attr_reader :label_keys, :max_series

    def initialize(label_keys: [:endpoint], max_series: 100)
      unless max_series.is_a?(Integer) && max_series.positive?
        raise ArgumentError, "max_series must be a positive Integer, got #{max_series.inspect}"
      end

      @label_keys = Array(label_keys).map(&:to_s).freeze
      @label_names = @label_keys.map { |k| self.class.label_name(k) }.freeze
      @max_series = max_series
      @lock = Mutex.new
      reset
      @listener = Intervals.listen { |profile| @lock.synchronize { own_totals.add(profile, @label_keys) { |v| slot(v) } } }
    end

    # Stops adding intervals up (the app is being thrown away).
    def close = Intervals.unlisten(@listener)

    def call(env)
      method = env["REQUEST_METHOD"]
      return [405, { "content-type" => "text/plain", "allow" => "GET, HEAD" }, ["Method Not Allowed\n"]] unless %w[GET HEAD].include?(method)

      body = exposition
      [200, { "content-type" => CONTENT_TYPE }, [method == "HEAD" ? "" : body]]
    end

    # The exposition text: the intervals so far and the open one.
    def exposition
      reading = Rperf.running? && Rperf.aggregating?
      Intervals.synchronize do
        open = reading ? Native.snapshot(false, false) : nil
        @lock.synchronize do
          totals = own_totals.dup
          totals.add(open, @label_keys) { |v| slot(v) } if open
          render(totals)
        end
      end
    end

    # A label key as a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*).
    def self.label_name(key)
      name = key.gsub(/[^a-zA-Z0-9_]/, "_")
      name.match?(/\A[0-9]/) ? "_#{name}" : name
    end

    def self.escape(value) = value.gsub("\\") { "\\\\" }.gsub("\n", "\\n").gsub('"') { "\\\"" }

    private

    def reset
      @pid = Process.pid
      @totals = Totals.new
      @slots = {}
      @reported = {} # [metric, series] => the last value served: a counter never goes down
    end

    # This process's totals: a forked child starts its own.
    def own_totals
      reset unless @pid == Process.pid
      @totals
    end

    # A combination of values keeps the series it got first; past max_series, "other".
    def slot(values)
      @slots.fetch(values) do
        next Array.new(values.size, OVERFLOW_VALUE) if @slots.size >= @max_series

        @slots[values] = values
      end
    end

    # Between a session's stop and its last interval reaching the listeners, the open interval
    # is gone but not yet counted: the value served before stands.
    def counter(metric, series, value)
      key = [metric, series]
      @reported[key] = [@reported[key] || 0, value].max
    end

    def render(totals)
      pid = %(pid="#{@pid}")
      out = +""
      TIME_COUNTERS.each_with_index do |(name, help, _), i|
        header(out, name, help, "counter")
        totals.series.each do |values, ns|
          labels = @label_names.zip(values).reject { |_, v| v.empty? }.map { |n, v| %(,#{n}="#{self.class.escape(v)}") }.join
          out << "#{name}{#{pid}#{labels}} #{seconds(counter(name, values, ns[i]))}\n"
        end
      end
      header(out, "rperf_samples_total", "Samples taken", "counter")
      out << "rperf_samples_total{#{pid}} #{counter(:samples, nil, totals.samples)}\n"
      header(out, "rperf_overhead_ratio", "The profiler's own CPU over the process's (overhead budget), else its sample jobs and hooks over the time profiled", "gauge")
      out << "rperf_overhead_ratio{#{pid}} #{format('%.6f', totals.overhead_ratio)}\n"
      header(out, "rperf_sampling_hz", "The rate the sampling timer ran at (ticks per second profiled)", "gauge")
      out << "rperf_sampling_hz{#{pid}} #{format('%.3f', totals.sampling_hz)}\n"
      header(out, "rperf_info", "The profiler: its mode (what the seconds measure) and version", "gauge")
      out << %(rperf_info{#{pid},mode="#{totals.mode}",version="#{VERSION}"} 1\n)
      out
    end

    def header(out, name, help, type)
      out << "# HELP #{name} #{help}\n# TYPE #{name} #{type}\n"
    end

    def seconds(ns) = format("%.9f", ns / 1e9)
  end
end
