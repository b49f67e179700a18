# frozen_string_literal: true

module Rperf
  # One profiling session of this process: its settings, the process counters taken at start,
  # and its place among processes (a root that collects children, or a child writing into its
  # root's session directory). Rperf holds at most one.
  class Session
    attr_reader :settings, :session_dir, :child_session_dir, :pid

    class << self
      # Why this process's last output: file could not be written (nil when it was), and how
      # many child profiles its last merge lost, for the exit status of an autostarted session
      # (Autostart).
      attr_accessor :output_error, :lost_children
    end

    # root_session_dir: a root that exec'd itself keeps the session its children write into.
    # forked: a child made by fork, whose CPU since the fork is counted (cpu mode).
    def initialize(settings, child_session_dir: nil, root_session_dir: nil, forked: false)
      @settings = settings
      @forked = forked
      @pid = Process.pid
      @child_session_dir = child_session_dir
      @session_dir = root_session_dir
      @saved_env = nil
      @start_times = Process.times
      @gc_base = GC.stat
      @snapshot_gc_base = @gc_base
    end

    def child? = !@child_session_dir.nil?

    # A child's stop has begun (Rperf.stop): its root, if it is ending, waits for its file.
    def ending
      Multiprocess.child_ending(@child_session_dir) if child? && @pid == Process.pid
    end
    def forked? = @forked

    # Whether the sampler records line numbers: only what the output needs (the returned
    # profile with lines: true, or a pprof file), since reading them costs at every sample.
    def capture_lines?
      return true if settings.lines
      return false if child? || settings.output.nil?

      (settings.format || Storage.detect_format(settings.output)) == :pprof
    end

    # Spawned children (inherit: true) profile themselves through the environment.
    def start_inheritance
      return unless settings.inherit == true && !child?
      return unless ensure_session_dir

      env = Multiprocess.child_environment(settings, @session_dir)
      @saved_env = env.keys.to_h { |k| [k, ENV[k]] }
      env.each { |k, v| ENV[k] = v }
    end

    # Forked children need a directory to write into; made on the first fork. nil when none
    # could be made (Multiprocess.create_session_dir said why, once: it is not tried again):
    # children are then not profiled.
    def ensure_session_dir
      return @child_session_dir if child?
      return @session_dir if @session_dir || @session_dir_failed

      @session_dir = Multiprocess.create_session_dir
      @session_dir_failed = @session_dir.nil?
      @session_dir
    end

    # Native::Profile -> the result: process counters added, children merged (root), the
    # output file written, lines folded unless asked for. result: true returns the Hash view
    # (Rperf.stop's, as rperf 0.11); false builds none (a session's end at exit: nobody reads
    # it) and returns the native profile.
    def finish(profile, result: true)
      Intervals.cut { with_work_events(profile, clear: true) } # the last interval: this process's own, before any child's
      add_process_counters(profile, @gc_base)
      return finish_child(profile, result) if child?

      merge_children(profile) if @session_dir
      write_output(profile) if settings.output
      profile.fold_lines! unless settings.lines
      Report.print_verbose(profile) if settings.verbose || ENV["RPERF_VERBOSE"] == "1"
      Stat.print(profile) if settings.stat
      result ? profile.to_h : profile
    end

    # The profile so far: the Hash view (Rperf.snapshot), or the native profile with
    # result: false (the Viewer's snapshots).
    def snapshot(clear:, result: true)
      profile = if clear
                  Intervals.cut { with_work_events(Native.snapshot(true, settings.vm_state_frames), clear: true) }
                else
                  with_work_events(Native.snapshot(false, settings.vm_state_frames), clear: false)
                end
      return nil unless profile

      gc_now = GC.stat
      add_process_counters(profile, @snapshot_gc_base, gc_now)
      @snapshot_gc_base = gc_now if clear
      profile.fold_lines! unless settings.lines
      result ? profile.to_h : profile
    end

    private

    # The interval's events per unit of work (WorkEvents), when the program recorded any.
    def with_work_events(profile, clear:)
      return nil unless profile

      events = WorkEvents.take(clear: clear)
      profile.set_attribute(:work_events, events) if events
      profile
    end

    def add_process_counters(profile, gc_base, gc_now = GC.stat)
      times = Process.times
      profile.set_attribute(:user_ns, ((times.utime - @start_times.utime) * 1e9).to_i)
      profile.set_attribute(:sys_ns, ((times.stime - @start_times.stime) * 1e9).to_i)
      profile.set_attribute(:gc_stats, Result.gc_delta(gc_base, gc_now))
      profile.set_attribute(:maxrss_mb, Result.maxrss_mb)
    end

    def finish_child(profile, result)
      profile.fold_lines! unless settings.lines
      Multiprocess.write_child_profile(@child_session_dir, profile)
      result ? profile.to_h : profile
    ensure
      Multiprocess.child_done(@child_session_dir) # written, or a lost-<pid> marker says why not
    end

    def merge_children(profile)
      dir = @session_dir
      @session_dir = nil
      @saved_env&.each { |k, v| v.nil? ? ENV.delete(k) : ENV[k] = v }
      @saved_env = nil
      profile.fold_lines! unless settings.lines || settings.output
      missing = Multiprocess.await_children(dir, signalled: Shutdown.signalled?)
      Session.lost_children = Multiprocess.merge_into(profile, dir) + missing
    rescue StandardError => e
      warn "rperf: could not merge child profiles (#{e.message}); keeping this process's profile"
    ensure
      Multiprocess.remove_session(dir) if dir
    end

    # pprof keeps line numbers even when the returned profile is method-level.
    def write_output(profile)
      format = settings.format || Storage.detect_format(settings.output)
      profile.fold_lines! unless settings.lines || format == :pprof
      Storage.write_profile(settings.output, profile, format)
      Session.output_error = nil
    rescue Error, SystemCallError, IOError => e
      # Never lose the profile: the caller still gets the data back.
      Session.output_error = e.message
      warn "rperf: could not write #{settings.output}: #{e.message}"
    end
  end
end
