# frozen_string_literal: true

module Rperf
  # Profiling without code changes: `RPERF_ENABLED=1 ruby app.rb` (the CLI sets these variables
  # and RUBYOPT=-rrperf). Invalid values leave the program running unprofiled, with a message.
  module Autostart
    ENV_KEYS = %w[RPERF_ENABLED RPERF_MODE RPERF_FREQUENCY RPERF_OUTPUT RPERF_FORMAT RPERF_VERBOSE
                  RPERF_SIGNAL RPERF_AGGREGATE RPERF_DEFER RPERF_STAT RPERF_STAT_REPORT RPERF_STAT_COMMAND
                  RPERF_INHERIT RPERF_ORIGINAL_RUBYOPT RPERF_ORIGINAL_RUBYLIB
                  RPERF_SESSION_DIR RPERF_ROOT_PROCESS RPERF_VM_STATE_FRAMES].freeze

    class InvalidSetting < StandardError; end

    module_function

    # RUBYOPT and RUBYLIB that make every Ruby program started with them load rperf first.
    def preload_env(env = ENV)
      lib = File.expand_path("..", __dir__)
      {
        "RUBYOPT" => ["-rrperf", env["RUBYOPT"]].compact.reject(&:empty?).uniq.join(" "),
        "RUBYLIB" => [lib, env["RUBYLIB"]].compact.reject(&:empty?).uniq.join(File::PATH_SEPARATOR),
      }
    end

    def options_from_env(env = ENV)
      mode = (env["RPERF_MODE"] || "cpu").to_sym
      raise InvalidSetting, "RPERF_MODE must be cpu or wall (got #{env['RPERF_MODE'].inspect})" unless %i[cpu wall].include?(mode)

      {
        mode: mode,
        frequency: integer(env, "RPERF_FREQUENCY", 1000, 1..10_000),
        output: env["RPERF_OUTPUT"] || (env["RPERF_STAT"] == "1" ? nil : "rperf.json.gz"),
        format: format_setting(env["RPERF_FORMAT"]),
        verbose: env["RPERF_VERBOSE"] == "1",
        signal: signal_setting(env["RPERF_SIGNAL"]),
        aggregate: env["RPERF_AGGREGATE"] != "0",
        defer: env["RPERF_DEFER"] == "1",
        stat: env["RPERF_STAT"] == "1",
        vm_state_frames: env["RPERF_VM_STATE_FRAMES"] == "1",
        inherit: { "1" => true, "0" => false }.fetch(env["RPERF_INHERIT"], :fork),
      }
    end

    def integer(env, key, default, range)
      return default if env[key].nil? || env[key].empty?

      value = Integer(env[key], 10)
      raise InvalidSetting, "#{key} must be in #{range} (got #{value})" unless range.cover?(value)

      value
    rescue ArgumentError
      raise InvalidSetting, "#{key} must be an integer (got #{env[key].inspect})"
    end

    def format_setting(value)
      return nil if value.nil? || value.empty?

      format = value.to_sym
      format = :text if format == :txt
      format = :pprof if format == :pb
      raise InvalidSetting, "RPERF_FORMAT must be one of #{Storage::FORMATS.join(', ')} (got #{value.inspect})" unless Storage::FORMATS.include?(format)

      format
    end

    def signal_setting(value)
      return nil if value.nil? || value.empty?
      return false if value == "false" || value == "0"

      Integer(value, 10)
    rescue ArgumentError
      raise InvalidSetting, "RPERF_SIGNAL must be an integer or false (got #{value.inspect})"
    end

    # Children of this process are not profiled by the autostarted session (single process):
    # restore the environment the user had before the CLI added to it.
    def restore_child_environment
      %w[RUBYOPT RUBYLIB].each do |key|
        original = ENV.delete("RPERF_ORIGINAL_#{key}")
        if original.nil? || original.empty? then ENV.delete(key) else ENV[key] = original end
      end
      ENV_KEYS.each { |k| ENV.delete(k) }
    end

    # A spawned child of a profiled root: the session variables name another process.
    def child_session_dir(env = ENV)
      dir = env["RPERF_SESSION_DIR"]
      dir if dir && env["RPERF_ROOT_PROCESS"] != Process.pid.to_s && File.directory?(dir)
    end

    def orphaned_child?(env = ENV)
      env["RPERF_SESSION_DIR"] && env["RPERF_ROOT_PROCESS"] != Process.pid.to_s
    end

    def run
      opts = options_from_env
      if (dir = child_session_dir)
        # Keep the environment: this child's own children are profiled too.
        Rperf.start_child(dir, **opts.except(:output, :stat), inherit: true)
        return
      end
      if orphaned_child?
        # Spawned after its root finished and merged: nobody would collect this profile.
        restore_child_environment
        return
      end
      Stat.configure(command: ENV["RPERF_STAT_COMMAND"], report: ENV["RPERF_STAT_REPORT"] == "1")
      restore_child_environment
      Rperf.start(**opts)
      at_exit { Rperf.stop if Rperf.running? }
    rescue InvalidSetting, ArgumentError => e
      restore_child_environment
      warn "rperf: #{e.message}; running without profiling"
    end
  end
end
