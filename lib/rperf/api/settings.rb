# frozen_string_literal: true

module Rperf
  # The settings of one profiling session, in one place: parsed and validated once (from
  # `Rperf.start`'s keywords, the CLI's options or the RPERF_* environment), and serialised once
  # to the environment that child processes inherit.
  class Settings
    DEFAULTS = {
      mode: :cpu, frequency: 1000, signal: nil, aggregate: true, defer: false, lines: false,
      max_depth: 512, vm_state_frames: false, output: nil, format: nil, inherit: :fork,
      verbose: false, stat: false, allocations: nil, retained: false, max_label_sets: 10_000, capture: nil,
      overhead_target: nil,
    }.freeze
    # How a tick's stack is captured: in the GVL holder's signal handler (YJIT code keeps
    # running) or by a postponed job (an interrupt: YJIT code side-exits to the interpreter).
    CAPTURES = %i[signal postponed].freeze
    # `allocations: true` / `--alloc` without a number: one allocation in this many is sampled.
    DEFAULT_ALLOCATION_INTERVAL = 512
    MAX_ALLOCATION_INTERVAL = 2**31
    FORMATS = Native::PROFILE_FORMATS # the encoders' own list (ruby/encode_binding.cc)
    MAX_FREQUENCY = 10_000
    MAX_DEPTH_LIMIT = 10_000

    # Setting => environment variable. Children inherit the sampling settings (the first
    # group); output/format/verbose/stat belong to the process the user started.
    SAMPLING_ENV = {
      mode: "RPERF_MODE", frequency: "RPERF_FREQUENCY", signal: "RPERF_SIGNAL", aggregate: "RPERF_AGGREGATE",
      defer: "RPERF_DEFER", lines: "RPERF_LINES", max_depth: "RPERF_MAX_DEPTH", vm_state_frames: "RPERF_VM_STATE_FRAMES",
      allocations: "RPERF_ALLOCATIONS", retained: "RPERF_RETAINED", max_label_sets: "RPERF_MAX_LABEL_SETS",
      capture: "RPERF_CAPTURE", overhead_target: "RPERF_OVERHEAD_TARGET",
    }.freeze
    PROCESS_ENV = { output: "RPERF_OUTPUT", format: "RPERF_FORMAT", verbose: "RPERF_VERBOSE", stat: "RPERF_STAT" }.freeze
    INHERIT_ENV = "RPERF_INHERIT"

    attr_reader(*DEFAULTS.keys)

    # Raises ArgumentError (or UnknownFormatError) naming the bad value.
    def initialize(**options)
      unknown = options.keys - DEFAULTS.keys
      raise ArgumentError, "unknown keyword#{'s' if unknown.size > 1}: #{unknown.map(&:inspect).join(', ')}" unless unknown.empty?

      DEFAULTS.merge(options).each { |key, value| instance_variable_set(:"@#{key}", value) }
      normalize!
      validate!
      freeze
    end

    def self.from_env(env = ENV)
      new(**SAMPLING_ENV.merge(PROCESS_ENV).filter_map { |key, name| [key, parse_env(key, env[name])] if present?(env[name]) }.to_h,
          inherit: { "1" => true, "0" => false }.fetch(env[INHERIT_ENV], :fork))
    end

    def self.present?(value) = !value.nil? && !value.empty?

    # A format named by a Symbol or String (rperf 0.11 accepts both), as a Symbol: the one check of
    # a format's name (an unknown one is an error here, where rperf 0.11 would silently write pprof).
    def self.format!(format)
      format = format.to_sym if format.is_a?(String)
      return format if FORMATS.include?(format)

      raise UnknownFormatError, "unknown format #{format.inspect} (expected one of #{FORMATS.join(', ')})"
    end

    # A setting from its text form (environment, command line).
    def self.parse_env(key, value)
      case key
      when :mode, :capture then value.to_sym
      when :frequency, :max_depth, :max_label_sets then Integer(value, 10)
      when :allocations then value == "0" ? nil : Integer(value, 10)
      when :signal then %w[false 0].include?(value) ? false : Integer(value, 10)
      when :aggregate then value != "0"
      when :defer, :lines, :vm_state_frames, :verbose, :stat, :retained then value == "1"
      when :format then { txt: :text, pb: :pprof }.fetch(value.to_sym, value.to_sym)
      when :overhead_target then Float(value)
      else value
      end
    rescue ArgumentError
      raise ArgumentError, "#{SAMPLING_ENV.merge(PROCESS_ENV)[key]} must be a number (got #{value.inspect})" if key == :overhead_target

      raise ArgumentError, "#{SAMPLING_ENV.merge(PROCESS_ENV)[key]} must be an integer (got #{value.inspect})"
    end

    def with(**changes) = self.class.new(**to_h.merge(changes))

    def to_h = DEFAULTS.keys.to_h { |key| [key, public_send(key)] }

    def wall? = mode == :wall

    # The capture path the session uses: the one asked for, else the signal handler when YJIT
    # is on (its code then stays compiled; measured in docs/benchmarks.md) and there is a
    # signal, else the postponed job (without YJIT it costs the Ruby thread no signal).
    def capture_path
      return capture if capture
      return :postponed if signal == false

      defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled? ? :signal : :postponed
    end

    # One allocation in this many is sampled; nil: no allocation profiling.
    def allocation_interval = allocations

    # The environment of a child process that profiles itself with these sampling settings.
    def child_env
      SAMPLING_ENV.to_h do |key, name|
        value = public_send(key)
        [name, case value
               when true then "1"
               when false then key == :signal ? "false" : "0"
               when nil then nil
               else value.to_s
               end]
      end.merge(INHERIT_ENV => { true => "1", false => "0", fork: nil }.fetch(inherit))
    end

    # The environment of the process the user started (the CLI's command): where its profile goes.
    def process_env
      PROCESS_ENV.to_h do |key, name|
        value = public_send(key)
        [name, value == true ? "1" : (value || nil)&.to_s]
      end
    end

    private

    # rperf 0.11's spellings: a format given as a String, signal 0 for the sleeping timer thread
    # (as false) and a negative signal for the default one (as nil).
    def normalize!
      @format = Settings.format!(@format) if @format
      @capture = @capture.to_sym if @capture.is_a?(String)
      @signal = @signal.zero? ? false : nil if @signal.is_a?(Integer) && @signal <= 0
      @allocations = { true => DEFAULT_ALLOCATION_INTERVAL, false => nil, 0 => nil }.fetch(@allocations, @allocations)
      @retained = false if @retained.nil?
      @overhead_target = @overhead_target.to_f if @overhead_target.is_a?(Rational) || @overhead_target.is_a?(Integer)
    end

    def validate!
      unless frequency.is_a?(Integer) && frequency.positive?
        raise ArgumentError, "frequency must be a positive integer (got #{frequency.inspect})"
      end
      raise ArgumentError, "frequency must be <= #{MAX_FREQUENCY} (10KHz), got #{frequency}" if frequency > MAX_FREQUENCY
      raise ArgumentError, "mode must be :cpu or :wall, got #{mode.inspect}" unless %i[cpu wall].include?(mode)
      raise ArgumentError, "inherit must be :fork, true, or false, got #{inherit.inspect}" unless [true, false, :fork].include?(inherit)
      unless max_label_sets.is_a?(Integer) && max_label_sets.between?(1, 2**31)
        raise ArgumentError, "max_label_sets must be an Integer in 1..#{2**31}, got #{max_label_sets.inspect}"
      end
      unless max_depth.is_a?(Integer) && max_depth.between?(1, MAX_DEPTH_LIMIT)
        raise ArgumentError, "max_depth must be an Integer in 1..#{MAX_DEPTH_LIMIT}, got #{max_depth.inspect}"
      end
      validate_signal!
      validate_allocations!
      validate_capture!
      validate_overhead_target!
    end

    # The overhead budget: the share of the process's CPU the profiler holds itself to, the rate
    # adapting between 1 Hz and `frequency` (sampler/overhead_budget.hh); nil: a fixed rate.
    def validate_overhead_target!
      return if overhead_target.nil?
      return if overhead_target.is_a?(Numeric) && overhead_target.positive? && overhead_target < 1

      raise ArgumentError, "overhead_target must be nil or a share of the CPU between 0 and 1 (0.01 is 1%), " \
                           "got #{overhead_target.inspect}"
    end

    def validate_capture!
      return if capture.nil? || capture == :postponed
      raise ArgumentError, "capture must be :signal or :postponed, got #{capture.inspect}" unless capture == :signal
      raise ArgumentError, "capture: :signal needs a timer signal (signal: false has none)" if signal == false
    end

    def validate_allocations!
      validate_retained!
      return if allocations.nil?
      return if allocations.is_a?(Integer) && allocations.between?(1, MAX_ALLOCATION_INTERVAL)

      raise ArgumentError, "allocations must be true, false, nil or an Integer in 1..#{MAX_ALLOCATION_INTERVAL} " \
                           "(sample one allocation in N), got #{allocations.inspect}"
    end

    # retained: true follows the sampled objects' frees (Ruby then calls a hook for every freed
    # object): the retained estimate is of sampled allocations, so it needs allocations: N.
    def validate_retained!
      raise ArgumentError, "retained must be true or false, got #{retained.inspect}" unless [true, false].include?(retained)
      return unless retained && allocations.nil?

      raise ArgumentError, "retained: true estimates which sampled allocations are still alive: it needs allocations: N " \
                           "(or true)"
    end

    # Linux's first real-time signal (glibc keeps 32 and 33 for its threads and refuses them
    # itself; SIGRTMIN is 34).
    FIRST_REALTIME_SIGNAL = 32

    def validate_signal!
      return if signal.nil? || signal == false
      raise ArgumentError, "signal must be nil, false, or an Integer, got #{signal.inspect}" unless signal.is_a?(Integer)
      raise ArgumentError, "signal mode is only supported on Linux" unless RUBY_PLATFORM.include?("linux")
      if [Signal.list["KILL"], Signal.list["STOP"]].include?(signal)
        raise ArgumentError, "signal #{signal} (#{Signal.signame(signal)}) cannot be caught; use a different signal"
      end
      raise ArgumentError, "signal must be between 1 and 64, got #{signal}" unless signal.between?(1, 64)
      return if signal >= FIRST_REALTIME_SIGNAL

      # The timer's signal handler replaces the application's: a standard signal is someone's
      # (11 turned a real segfault into an endless hang, 2 disabled Ctrl-C, 14 swallowed the
      # application's ALRM handler).
      raise ArgumentError, "signal #{signal} (#{Signal.signame(signal) || 'unnamed'}) is not a real-time signal: its handler " \
                           "would replace the application's or Ruby's; use #{FIRST_REALTIME_SIGNAL + 2}..64 " \
                           "(SIGRTMIN..SIGRTMAX), or false for no signal"
    end
  end
end
