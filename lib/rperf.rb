# frozen_string_literal: true

if RUBY_VERSION < "3.3"
  raise LoadError, "rperf needs Ruby >= 3.3 (running #{RUBY_VERSION})"
end

require_relative "rperf/version"
require_relative "rperf/rperf"
require_relative "rperf/errors"
require_relative "rperf/settings"
require_relative "rperf/session"
require_relative "rperf/meta"
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
  TOP_N = 10
  DEFAULT_MAX_DEPTH = Settings::DEFAULTS[:max_depth]

  @session = nil

  class << self
    # Starts profiling. With a block, profiles the block and returns the result of #stop.
    def start(frequency: 1000, mode: :cpu, output: nil, verbose: false, format: nil, stat: false,
              signal: nil, aggregate: true, defer: false, inherit: :fork, lines: false,
              max_depth: DEFAULT_MAX_DEPTH, vm_state_frames: false)
      settings = Settings.new(frequency: frequency, mode: mode, output: output, verbose: verbose, format: format,
                              stat: stat, signal: signal, aggregate: aggregate, defer: defer, inherit: inherit,
                              lines: lines, max_depth: max_depth, vm_state_frames: vm_state_frames)
      start_session(Session.new(settings))
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
      profile = Native.stop(@session&.settings&.vm_state_frames)
      session = @session
      @session = nil
      return nil unless profile && session

      session.finish(profile)
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
      @session&.snapshot(clear: clear)
    end

    # Sets labels on the current thread (merged; nil deletes a key). With a block, the previous
    # labels come back when the block exits. Ignored when not profiling.
    def label(**kw)
      return (block_given? ? yield : nil) unless Native.running?

      previous = Native.merge_labels(kw)
      return unless block_given?

      begin
        yield
      ensure
        Native.label_set_id = previous
      end
    end

    def labels
      Native.running? ? Native.labels : {}
    end

    # With start(defer: true): samples only while at least one profile block runs.
    def profile(**kw)
      raise ArgumentError, "Rperf.profile requires a block" unless block_given?
      raise RuntimeError, "Rperf is not started" unless Native.running?

      previous = Native.merge_labels(kw)
      Native.profile_inc
      begin
        yield
      ensure
        Native.profile_dec
        Native.label_set_id = previous
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
      Native.label_sets
    end

    # --- child processes (see Multiprocess) ----------------------------------------------

    # Called by the fork hook in the parent, just before fork: children need a session.
    def prepare_fork
      @session.ensure_session_dir if Native.running? && @session&.settings&.inherit
    end

    # Called by the fork hook in the child: profile it like the parent, into the session.
    def restart_in_child
      labels = self.labels
      session = @session
      @session = nil
      Native.after_fork_child
      return unless session && session.settings.inherit && (dir = session.child_session_dir || session.session_dir)

      start_child(dir, session.settings)
      label(**labels) unless labels.empty?
    end

    # A child process (forked, or spawned with the RPERF_* environment) profiles itself into the
    # root's session directory and writes its profile there at exit.
    def start_child(dir, settings)
      start_session(Session.new(settings.with(output: nil, stat: false), child_session_dir: dir))
      at_exit { stop if running? }
    end

    private

    def start_session(session)
      raise RuntimeError, "Rperf is already running" if Native.running?

      s = session.settings
      Native.start(s.frequency, s.wall?, s.aggregate, s.native_signal, s.defer, s.max_depth, session.capture_lines?)
      @session = session
      session.start_inheritance
      # Ruby 3.3 delivers a postponed job triggered from our (non-Ruby) timer thread to the
      # ractor's running_ec, which can still name the last thread that blocked. A thread
      # switch point makes it name this thread again.
      Thread.pass
      ForkHook.install
    end
  end
end

require_relative "rperf/fork_hook"
require_relative "rperf/autostart"

Rperf::Autostart.run if ENV["RPERF_ENABLED"] == "1" && !Rperf.running?
