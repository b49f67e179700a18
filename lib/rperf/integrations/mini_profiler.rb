# frozen_string_literal: true

# rperf as rack-mini-profiler's flamegraph profiler (rack-mini-profiler 5.0.x, tested with 5.0.0).
#
#   # Gemfile
#   gem "rack-mini-profiler"
#   gem "rperf", require: ["rperf", "rperf/mini_profiler"]
#
#   # optional; :auto (the default) uses stackprof when it is loaded, else rperf
#   Rack::MiniProfiler.config.flamegraph_profiler = :rperf
#
# Then `?pp=flamegraph` (or `pp=async-flamegraph`) draws rperf's profile in rack-mini-profiler's own
# speedscope page, with `[GVL blocked]`, `[GVL wait]`, `[GC marking]` and `[GC sweeping]` frames;
# `&flamegraph_profiler=rperf|stackprof|auto` chooses per request. For rperf,
# `flamegraph_sample_rate` is a frequency in Hz (500 when left at rack-mini-profiler's default)
# and `flamegraph_mode` is :wall (default) or :cpu. docs/rack-mini-profiler.md explains the hook.

require "json"
require_relative "../../rperf"

module Rperf
  # The integration. Everything rack-mini-profiler-specific is in this file.
  module MiniProfiler
    # The hook relies on how Rack::MiniProfiler#call runs the flamegraph profiler (see
    # FlamegraphProfiler), which any minor release may change: only the series it was tested
    # with is accepted; others are refused at require time.
    TESTED_VERSION = "5.0.0"
    SUPPORTED_VERSIONS = Gem::Requirement.new("~> 5.0.0")
    PROFILERS = %i[auto stackprof rperf].freeze
    RPERF_MODES = %i[wall cpu].freeze
    # rack-mini-profiler's own rule for `?flamegraph_mode=`: other values fall back to the config.
    REQUEST_MODES = %w[cpu wall object custom].freeze
    DEFAULT_FREQUENCY = 500
    MAX_FREQUENCY = 10_000
    ENV_KEY = :rperf_mini_profiler_env # Thread.current: the env of the request being handled
    PLAN_KEY = "rperf.mini_profiler.plan" # env: that request's Plan, once asked for
    REQUEST_LABEL = :"rack-mini-profiler" # marks the request's thread in the profile

    ALREADY_RUNNING = <<~TEXT
      rperf is already profiling this process (another flamegraph request, or a session started
      with Rperf.start, for example with defer: true or RPERF_ENABLED=1), so it cannot take a
      flamegraph of this request. That session was left running. Try again when it has ended,
      or use &flamegraph_profiler=stackprof.
    TEXT
    STOPPED_BY_APP = "rperf: the application stopped the profiling session during the request; no flamegraph.\n"

    # What one flamegraph request asks for: the profiler, for rperf its mode and frequency, and
    # the reason rperf cannot take it (a message that replaces the response), if any.
    Plan = Struct.new(:profiler, :mode, :frequency, :refusal) do
      def rperf? = profiler == :rperf
    end

    class << self
      # :auto, :stackprof or :rperf for a Symbol or String naming one, else nil.
      def profiler_name(value)
        name = value.to_s.strip.downcase.to_sym
        PROFILERS.include?(name) ? name : nil
      end

      def stackprof_loaded?
        !!(defined?(::StackProf) && ::StackProf.respond_to?(:run))
      end

      # The Plan of the flamegraph request this thread is handling (nil outside requests).
      def current_plan
        env = Thread.current[ENV_KEY]
        env && (env[PLAN_KEY] ||= Planner.plan(env, ::Rack::MiniProfiler.config))
      end
    end

    # Builds a request's Plan from its query string, its Referer (requests of a page opened with
    # pp=async-flamegraph are profiled too) and the config.
    module Planner
      module_function

      def plan(env, config)
        params = query(env["QUERY_STRING"])
        asked = requested_profiler(params, env) || config.flamegraph_profiler
        profiler = MiniProfiler.profiler_name(asked)
        unless profiler
          return Plan.new(nil, nil, nil, "rperf: flamegraph_profiler must be auto, stackprof or rperf (got #{asked.to_s.inspect}).\n")
        end

        profiler = MiniProfiler.stackprof_loaded? ? :stackprof : :rperf if profiler == :auto
        return Plan.new(:stackprof) if profiler == :stackprof

        rperf_plan(params, config)
      end

      def rperf_plan(params, config)
        mode = rperf_mode(params, config)
        frequency = rperf_frequency(params, config)
        refusal =
          if !RPERF_MODES.include?(mode)
            "rperf: flamegraph_mode must be wall or cpu for rperf (got #{mode}; object and custom are stackprof modes).\n"
          elsif !frequency
            "rperf: flamegraph_sample_rate is a frequency in Hz for rperf: 1 to #{MAX_FREQUENCY} " \
            "(got #{sample_rate(params, config).inspect}).\n"
          elsif Rperf.running?
            ALREADY_RUNNING
          end
        Plan.new(:rperf, mode, frequency, refusal)
      end

      def requested_profiler(params, env)
        return params["flamegraph_profiler"] if params.key?("flamegraph_profiler")

        referer = env["HTTP_REFERER"].to_s
        # The same test rack-mini-profiler makes to profile the requests of an async page.
        query(referer[/\?([^#]*)/, 1])["flamegraph_profiler"] if referer.match?(/pp=async-flamegraph/)
      end

      def rperf_mode(params, config)
        asked = params["flamegraph_mode"]
        (REQUEST_MODES.include?(asked) ? asked : config.flamegraph_mode).to_s.to_sym
      end

      # Hz, or nil when the rate is not a frequency rperf takes. In the config, rack-mini-profiler's
      # default (a 0.5 ms stackprof interval) means "not set": DEFAULT_FREQUENCY.
      def rperf_frequency(params, config)
        asked = asked_rate(params)
        return hz(asked) if asked

        rate = config.flamegraph_sample_rate
        rate.nil? || rate == STACKPROF_DEFAULT_RATE ? DEFAULT_FREQUENCY : hz(rate)
      end

      def sample_rate(params, config) = asked_rate(params) || config.flamegraph_sample_rate

      # The request's flamegraph_sample_rate when it is a non-zero number (rack-mini-profiler's
      # rule), else nil.
      def asked_rate(params)
        rate = params["flamegraph_sample_rate"].to_s.to_f
        rate.zero? ? nil : rate
      end

      def hz(rate)
        hz = Float(rate)
        hz.round if hz.finite? && hz >= 1 && hz <= MAX_FREQUENCY
      rescue ArgumentError, TypeError
        nil
      end

      def query(string)
        params = ::Rack::Utils.parse_nested_query(string.to_s)
        params.is_a?(Hash) ? params : {}
      rescue ArgumentError, TypeError # malformed query strings
        {}
      end
    end

    # Profiles the request with rperf and returns speedscope's file format as a Hash (what
    # rack-mini-profiler JSON-encodes into its page, and stores for async-flamegraph).
    module Flamegraph
      module_function

      def profile(plan)
        unless start(plan)
          yield # the application still answers; the refusal message replaces the page
          return nil
        end
        data = nil
        begin
          Rperf.label(REQUEST_LABEL => "request") { yield }
        ensure
          data = Rperf.stop
        end
        return refuse(plan, STOPPED_BY_APP) unless data

        speedscope(data, plan)
      end

      # aggregate: false: each sample with its time, so speedscope's Time Order view is the
      # request's real sequence (as stackprof's raw dump gives it), not one stack per path.
      def start(plan)
        Rperf.start(mode: plan.mode, frequency: plan.frequency, vm_state_frames: true, inherit: false, aggregate: false)
        true
      rescue StandardError => e
        # Another session started since the plan was made, or rperf could not start at all.
        refuse(plan, Rperf.running? ? ALREADY_RUNNING : "rperf could not start: #{e.message}\n")
        false
      end

      def refuse(plan, message)
        plan.refusal = message
        nil
      end

      def speedscope(data, plan)
        doc = JSON.parse(Rperf::Storage.encode(without_own_frames(data), :speedscope))
        doc["name"] = "rperf #{plan.mode} #{plan.frequency} Hz"
        select_request_thread(doc, data)
        doc
      end

      # rperf's own frames between rack-mini-profiler's and the app's (FlamegraphProfiler.run,
      # Flamegraph.profile, Rperf.label, RequestHook#call) merged away: their time goes to their
      # callers, as the model's "merge" transform does it for the Viewer.
      def without_own_frames(data)
        own = data.fetch(:raw_samples, data[:aggregated_samples]).each_with_object({}) do |sample, found|
          sample[0].each { |path, label| found[[label, path]] = true if path.to_s.start_with?(OWN_SOURCE_PREFIX) }
        end
        own.empty? ? data : Storage.native(data).transformed(own.keys.map { |label, path| ["merge", label, path] })
      end

      # One speedscope profile per thread: open the request's own (Puma's other threads may
      # have samples too) and say which it is in speedscope's profile switcher.
      def select_request_thread(doc, data)
        labelled = data[:label_sets].each_index.select { |i| data[:label_sets][i].key?(REQUEST_LABEL) }
        sample = data[:aggregated_samples].find { |s| labelled.include?(s[3]) } or return
        name = / thread #{sample[2]}( \(.*\))?\z/ # a named thread's profile ends with its name
        index = doc["profiles"].index { |p| p["name"].match?(name) } or return
        doc["profiles"][index]["name"] += " (this request)"
        doc["activeProfileIndex"] = index
      end
    end

    # The hook. In rack-mini-profiler 5.0.x, Rack::MiniProfiler#call runs the flamegraph
    # profiler inline, with no method of its own that could be prepended:
    #
    #   if defined?(StackProf) && StackProf.respond_to?(:run)
    #     flamegraph = StackProf.run(mode:, raw: true, aggregate: false, interval:, ignore_gc:) { app }
    #   else  # runs the app and answers "Please install the stackprof gem" as text/plain
    #
    # and hands `flamegraph` to its speedscope page (JSON.generate) or stores it for
    # async-flamegraph. `StackProf` there is a lexical constant lookup from inside
    # `class Rack::MiniProfiler`, so a constant Rack::MiniProfiler::StackProf is found before
    # ::StackProf, and only by that code. It is this module: it answers and forwards to
    # ::StackProf unchanged unless the request's Plan says rperf; then `run` returns rperf's
    # speedscope document, which the page and the storage take as they take stackprof's dump.
    # When rperf cannot profile the request, `respond_to?(:run)` is false, so rack-mini-profiler
    # takes its own "no profiler" branch, and RequestHook puts rperf's reason in its message.
    module FlamegraphProfiler
      class << self
        def respond_to?(name, include_all = false)
          return super unless name.to_s == "run"

          plan = MiniProfiler.current_plan
          return MiniProfiler.stackprof_loaded? if plan.nil? || plan.profiler == :stackprof

          plan.refusal.nil?
        end

        def run(**options, &request)
          plan = MiniProfiler.current_plan
          return ::StackProf.run(**options, &request) unless plan&.rperf?

          Flamegraph.profile(plan, &request)
        end
      end
    end

    # Prepended to Rack::MiniProfiler: makes the request's env reachable from
    # FlamegraphProfiler, and replaces the response by rperf's message when it refused.
    module RequestHook
      def call(env)
        outer = Thread.current[ENV_KEY]
        Thread.current[ENV_KEY] = env
        response = super
        refusal = env[PLAN_KEY]&.refusal
        refusal ? RequestHook.message_response(response, refusal) : response
      ensure
        Thread.current[ENV_KEY] = outer
      end

      # Keeps status and headers (rack-mini-profiler's cookie included), as its own message does.
      def self.message_response(response, message)
        status, headers, body = response
        body.close if body.respond_to?(:close)
        headers = headers.reject { |key, _| %w[content-type content-length].include?(key.to_s.downcase) }
        headers["content-type"] = "text/plain; charset=utf-8"
        [status, headers, [message]]
      end
    end

    # Rack::MiniProfiler.config.flamegraph_profiler = :auto | :stackprof | :rperf
    module ConfigOption
      def flamegraph_profiler
        @flamegraph_profiler || :auto
      end

      def flamegraph_profiler=(value)
        name = MiniProfiler.profiler_name(value)
        raise ArgumentError, "flamegraph_profiler must be :auto, :stackprof or :rperf (got #{value.inspect})" unless name

        @flamegraph_profiler = name
      end
    end

    class << self
      # Loads rack-mini-profiler's core, refusing versions the hook was not made for.
      def load_rack_mini_profiler
        unless defined?(::Rack::MiniProfiler::VERSION)
          begin
            require "mini_profiler/version"
          rescue LoadError
            raise LoadError, "rperf/mini_profiler needs the rack-mini-profiler gem (#{SUPPORTED_VERSIONS}): " \
                             "add gem \"rack-mini-profiler\" to the Gemfile"
          end
        end
        version = Gem::Version.new(::Rack::MiniProfiler::VERSION)
        unless SUPPORTED_VERSIONS.satisfied_by?(version)
          raise LoadError, "rperf/mini_profiler does not support rack-mini-profiler #{version}: it supports " \
                           "#{SUPPORTED_VERSIONS} (tested with #{TESTED_VERSION}; it hooks into rack-mini-profiler's " \
                           "internals). Use rack-mini-profiler #{TESTED_VERSION} " \
                           "(gem \"rack-mini-profiler\", \"#{SUPPORTED_VERSIONS}\") or remove \"rperf/mini_profiler\" " \
                           "from the require list"
        end
        # Not "rack-mini-profiler": that file also loads the Railtie, which would initialize a
        # second time in apps that require it themselves (require: false + initialize!).
        require "rack"
        require "mini_profiler/asset_version"
        require "mini_profiler"
      end

      def install
        return if ::Rack::MiniProfiler < RequestHook

        if ::Rack::MiniProfiler::Config.method_defined?(:flamegraph_profiler) ||
           ::Rack::MiniProfiler.const_defined?(:StackProf, false)
          raise LoadError, "rack-mini-profiler #{::Rack::MiniProfiler::VERSION} already chooses its flamegraph " \
                           "profiler itself: remove \"rperf/mini_profiler\" from the require list"
        end
        ::Rack::MiniProfiler::Config.include(ConfigOption)
        ::Rack::MiniProfiler.prepend(RequestHook)
        ::Rack::MiniProfiler.const_set(:StackProf, FlamegraphProfiler)
      end
    end

    load_rack_mini_profiler
    STACKPROF_DEFAULT_RATE = ::Rack::MiniProfiler::Config.default.flamegraph_sample_rate
    install
  end
end
