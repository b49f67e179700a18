# frozen_string_literal: true

if RUBY_VERSION < "3.3"
  raise LoadError, "rperf needs Ruby >= 3.3 (running #{RUBY_VERSION})"
end

require_relative "rperf/version"
require_relative "rperf/rperf"
require_relative "rperf/errors"
require_relative "rperf/result"
require_relative "rperf/report"
require_relative "rperf/storage"
require_relative "rperf/stat"
require_relative "rperf/pprof_reader"
require_relative "rperf/html_report"
require_relative "rperf/diff"
require_relative "rperf/multiprocess"

# rperf: a sampling profiler for Ruby. See README.md for usage.
module Rperf
  # VM state integer -> label pair merged into label_sets (compatible with rperf 0.10).
  VM_STATE_LABELS = {
    1 => ["%GVL", "blocked"],
    2 => ["%GVL", "wait"],
    3 => ["%GC", "mark"],
    4 => ["%GC", "sweep"],
  }.freeze
  TOP_N = 10
  DEFAULT_MAX_DEPTH = 512

  @label_set_table = nil
  @label_set_index = nil

  class << self
    # Starts profiling. With a block, profiles the block and returns the result of #stop.
    def start(frequency: 1000, mode: :cpu, output: nil, verbose: false, format: nil, stat: false,
              signal: nil, aggregate: true, defer: false, inherit: :fork, lines: false,
              max_depth: DEFAULT_MAX_DEPTH, vm_state_frames: false)
      validate_start!(frequency, mode, signal, inherit, max_depth)
      Storage.check_format!(format) if format
      raise RuntimeError, "Rperf is already running" if Native.running?

      @verbose = verbose || ENV["RPERF_VERBOSE"] == "1"
      @settings = { mode: mode, frequency: frequency, signal: signal, aggregate: aggregate, defer: defer,
                    lines: lines, max_depth: max_depth, vm_state_frames: vm_state_frames }
      @inherit = inherit
      @output = output
      @format = format
      @stat = stat
      @start_times = Process.times
      @gc_stat_start = GC.stat
      @gc_stat_snapshot_base = @gc_stat_start
      init_label_sets
      c_signal = signal.nil? ? -1 : (signal ? signal : 0)
      Native.start(frequency, mode == :wall, aggregate, c_signal, defer, max_depth)
      start_inheritance
      # Ruby 3.3 delivers a postponed job triggered from our (non-Ruby) timer thread to the
      # ractor's running_ec, which can still name the last thread that blocked. A thread
      # switch point makes it name this thread again.
      Thread.pass
      ForkHook.install
      return unless block_given?

      begin
        yield
      ensure
        result = stop
      end
      result
    end

    # Stops profiling and returns the result Hash (nil when not running).
    def stop
      data = stop_own_profile
      return nil unless data
      return finish_child(data) if @child_session_dir

      data = finish_root(data) if @session_dir
      if @output
        output = @output
        @output = nil
        begin
          Storage.write(output, data, @format)
        rescue Error, SystemCallError, IOError => e
          # Never lose the profile: the caller still gets the data back.
          warn "rperf: could not write #{output}: #{e.message}"
        end
      end
      data = Result.without_lines(data) if @stopped_with_lines && !@settings[:lines]
      Report.print_verbose(data) if @verbose
      Stat.print(data) if @stat
      data
    end

    private def stop_own_profile
      # pprof files carry line numbers even when the returned profile is method-level.
      with_lines = @settings[:lines] || (@output && (@format || Storage.detect_format(@output)) == :pprof)
      @stopped_with_lines = with_lines
      data = Native.stop(with_lines)
      return nil unless data

      times = Process.times
      data[:user_ns] = ((times.utime - @start_times.utime) * 1e9).to_i
      data[:sys_ns] = ((times.stime - @start_times.stime) * 1e9).to_i
      data[:gc_stats] = Result.gc_delta(@gc_stat_start, GC.stat)
      data[:maxrss_mb] = Result.maxrss_mb
      finish_result!(data)
    end

    def running?
      Native.running?
    end

    # True while a session started with defer: true runs (sampling only inside profile blocks).
    # (@session: the session object of the restructured main branch; @settings: this one.)
    def deferred?
      return false unless Native.running?

      (@session ? @session.settings.defer : @settings&.fetch(:defer, false)) == true
    end

    # Returns the profile so far without stopping; clear: true starts a new interval.
    def snapshot(clear: false)
      data = Native.snapshot(clear, @settings[:lines])
      return nil unless data

      gc = GC.stat
      data[:gc_stats] = Result.gc_delta(@gc_stat_snapshot_base, gc)
      @gc_stat_snapshot_base = gc if clear
      data[:maxrss_mb] = Result.maxrss_mb
      finish_result!(data)
      data
    end

    # Sets labels on the current thread (merged; nil deletes a key). With a block, the previous
    # labels come back when the block exits. Ignored when not profiling.
    def label(**kw)
      return (block_given? ? yield : nil) unless Native.running?

      previous = merge_and_set_label(kw)
      return unless block_given?

      begin
        yield
      ensure
        Native.set_label(previous)
      end
    end

    def labels
      return {} unless @label_set_table && Native.running?

      @label_set_table[Native.get_label] || {}
    end

    # With start(defer: true): samples only while at least one profile block runs.
    def profile(**kw)
      raise ArgumentError, "Rperf.profile requires a block" unless block_given?
      raise RuntimeError, "Rperf is not started" unless Native.running?

      previous = merge_and_set_label(kw)
      Native.profile_inc
      begin
        yield
      ensure
        Native.profile_dec
        Native.set_label(previous)
      end
    end

    def save(path, data, format: nil)
      Storage.write(path, data, format)
    end

    def load(path)
      Storage.load(path)
    end

    def read_meta(path)
      Storage.read_meta(path)
    end

    # The label-set table of the running session (index = label_set_id).
    def label_sets
      @label_set_table&.dup || [{}]
    end

    # --- child processes (see Multiprocess) ----------------------------------------------

    # Called by the fork hook in the parent, just before fork: children need a session.
    def prepare_fork
      return unless Native.running? && @inherit
      return if @session_dir || @child_session_dir

      @session_dir = Multiprocess.create_session_dir
    end

    # Called by the fork hook in the child: profile it like the parent, into the session.
    def restart_in_child
      labels = self.labels
      Native.after_fork_child
      return unless @settings && @inherit && (@session_dir || @child_session_dir)

      start_child(@child_session_dir || @session_dir, **@settings, inherit: @inherit)
      label(**labels) unless labels.empty?
    end

    # A child process (forked, or spawned with the RPERF_* environment) profiles itself into the
    # root's session directory and writes its profile there at exit.
    def start_child(dir, **opts)
      reset_process_state
      @child_session_dir = dir
      start(**opts, output: nil, stat: false)
      at_exit { stop if running? }
    end

    private

    def reset_process_state
      @session_dir = nil
      @child_session_dir = nil
      @saved_env = nil
      @output = nil
      @stat = false
    end

    def start_inheritance
      return unless @inherit == true && !@child_session_dir

      @session_dir = Multiprocess.create_session_dir
      env = Multiprocess.child_environment(@settings, @session_dir)
      @saved_env = env.keys.to_h { |k| [k, ENV[k]] }
      env.each { |k, v| ENV[k] = v }
    end

    def finish_child(data)
      dir = @child_session_dir
      @child_session_dir = nil
      Multiprocess.write_child_profile(dir, data)
      data
    end

    def finish_root(data)
      dir = @session_dir
      @session_dir = nil
      @saved_env&.each { |k, v| v.nil? ? ENV.delete(k) : ENV[k] = v }
      @saved_env = nil
      merged = Multiprocess.merge(data, dir)
      FileUtils.rm_rf(dir)
      merged
    rescue StandardError => e
      warn "rperf: could not merge child profiles (#{e.message}); keeping this process's profile"
      FileUtils.rm_rf(dir) if dir
      data
    end

    def validate_start!(frequency, mode, signal, inherit, max_depth)
      unless frequency.is_a?(Integer) && frequency > 0
        raise ArgumentError, "frequency must be a positive integer (got #{frequency.inspect})"
      end
      raise ArgumentError, "frequency must be <= 10000 (10KHz), got #{frequency}" if frequency > 10_000
      raise ArgumentError, "mode must be :cpu or :wall, got #{mode.inspect}" unless %i[cpu wall].include?(mode)
      unless [true, false, :fork].include?(inherit)
        raise ArgumentError, "inherit must be :fork, true, or false, got #{inherit.inspect}"
      end
      unless max_depth.is_a?(Integer) && max_depth.between?(1, 10_000)
        raise ArgumentError, "max_depth must be an Integer in 1..10000, got #{max_depth.inspect}"
      end
      return if signal.nil? || signal == false
      raise ArgumentError, "signal must be nil, false, or an Integer, got #{signal.inspect}" unless signal.is_a?(Integer)
      raise ArgumentError, "signal mode is only supported on Linux" unless RUBY_PLATFORM.include?("linux")

      if [Signal.list["KILL"], Signal.list["STOP"]].include?(signal)
        raise ArgumentError, "signal #{signal} (#{Signal.signame(signal)}) cannot be caught; use a different signal"
      end
      raise ArgumentError, "signal must be between 1 and 64, got #{signal}" unless signal.between?(1, 64)
    end

    def init_label_sets
      @label_set_table = [{}.freeze]
      @label_set_index = { {} => 0 }
    end

    def intern_label_set(hash)
      hash = hash.dup.freeze
      @label_set_index[hash] ||= begin
        @label_set_table << hash
        @label_set_table.size - 1
      end
    end

    # Returns the previous label_set_id.
    def merge_and_set_label(kw)
      current = Native.get_label
      merged = (@label_set_table[current] || {}).merge(kw).compact
      Native.set_label(intern_label_set(merged))
      current
    end

    def finish_result!(data)
      Result.merge_vm_states!(data, @label_set_table || [{}], vm_state_frames: @settings[:vm_state_frames])
    end
  end
end

require_relative "rperf/fork_hook"
require_relative "rperf/autostart"

Rperf::Autostart.run if ENV["RPERF_ENABLED"] == "1" && !Rperf.running?
