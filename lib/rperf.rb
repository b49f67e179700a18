# frozen_string_literal: true

if RUBY_VERSION < "3.3"
  raise LoadError, "rperf needs Ruby >= 3.3 (running #{RUBY_VERSION})"
end

# rperf 0.11 loads these, and scripts written against it use StringIO and Zlib after
# `require "rperf"` alone.
require "zlib"
require "stringio"
require_relative "rperf/version"
require_relative "rperf/native"
require_relative "rperf/api/errors"
require_relative "rperf/api/settings"
require_relative "rperf/api/intervals"
require_relative "rperf/api/work_events"
require_relative "rperf/api/session"
require_relative "rperf/formats/meta"
require_relative "rperf/api/result"
require_relative "rperf/reports/report"
require_relative "rperf/formats/storage"
require_relative "rperf/reports/stat"
require_relative "rperf/reports/diff"
require_relative "rperf/reports/shown_profile"
require_relative "rperf/api/multiprocess"
require_relative "rperf/api/shutdown"
require_relative "rperf/formats/encoders"
require_relative "rperf/formats/table"
require_relative "rperf/api/call_tree"
require_relative "rperf/reports/call_tree_report"

# rperf: a sampling profiler for Ruby. See README.md for usage.
module Rperf
  # rperf's own Ruby files (lib/rperf.rb, lib/rperf/): allocations made there are not sampled.
  OWN_SOURCE_PREFIX = File.join(__dir__, "rperf").freeze
  TOP_N = 10
  DEFAULT_MAX_DEPTH = Settings::DEFAULTS[:max_depth]
  UNSET = Object.new.freeze # a keyword of Rperf.start not given: Settings' default applies
  private_constant :UNSET
  # rperf 0.11's table of VM states (raw_samples' 5th element) and the label each one becomes.
  VM_STATE_LABELS = Native::VM_STATES.transform_values { |key, value, _frame| [key.to_s, value].freeze }.freeze

  class << self
    # Starts profiling. With a block, profiles the block and returns the result of #stop.
    # allocations: N (or true: Settings::DEFAULT_ALLOCATION_INTERVAL) also samples one allocation
    # in N on average: the result's :allocation_samples are
    # [frames, objects, thread_seq, label_set_id, class_name, retained_objects] (estimates); with
    # aggregate: false, :raw_allocation_samples has one per sampled allocation, its time_ns last.
    # retained_objects is nil (not measured) unless retained: true, which follows the sampled
    # objects' frees: Ruby then calls a hook for every object it frees, sampled or not.
    # overhead_target: 0.01 holds the profiler's own CPU near 1% of the process's, the rate
    # adapting between 1 Hz and `frequency` (the result's profiler_cpu_ns and process_cpu_ns).
    # Its keywords are rperf 0.11's, named one by one as there; their defaults are Settings'.
    def start(frequency: UNSET, mode: UNSET, output: UNSET, verbose: UNSET, format: UNSET, stat: UNSET,
              signal: UNSET, aggregate: UNSET, defer: UNSET, inherit: UNSET, lines: UNSET,
              max_depth: UNSET, vm_state_frames: UNSET, allocations: UNSET, retained: UNSET,
              max_label_sets: UNSET, capture: UNSET, overhead_target: UNSET)
      given = Settings::DEFAULTS.keys.to_h { |key| [key, binding.local_variable_get(key)] }.reject { |_, value| UNSET.equal?(value) }
      start_session(Session.new(Settings.new(**given)))
      return unless block_given?

      begin
        yield
      ensure
        result = stop
      end
      result
    end

    # Stops profiling and returns the result Hash (nil when not running).
    def stop = stop_session(result: true)

    # Stops profiling as Rperf.stop does (output: written, stat: and verbose: printed, a
    # child's file written) without building the result Hash, which nobody reads at a
    # session's end at exit (Shutdown, Autostart). Returns the Native::Profile, or nil when not
    # running.
    def stop_without_result = stop_session(result: false)

    def running?
      adopt_unhooked_fork
      Native.running?
    end

    # True while a session started with defer: true runs (sampling only inside profile blocks).
    def deferred?
      return false unless running?

      Native.session&.settings&.defer == true
    end

    # True while a session runs that aggregates its samples (aggregate: true, the default), the
    # sessions Rperf.snapshot can read; one started with aggregate: false keeps every sample
    # until Rperf.stop.
    def aggregating?
      return false unless running?

      Native.session&.settings&.aggregate != false
    end

    # Returns the profile so far without stopping; clear: true starts a new interval.
    def snapshot(clear: false)
      adopt_unhooked_fork
      Native.session&.snapshot(clear: clear)
    end

    # Sets labels on the current thread (merged; nil deletes a key). With a block, the previous
    # labels come back when the block exits. Ignored when not profiling.
    def label(**kw, &block)
      return (block ? yield : nil) unless Native.running?

      # block_given?, not block.nil?: calling a method on the block makes a Proc (and its
      # environment) at every call, half the cost of a label block.
      previous = Native.merge_labels(kw, block_given?)
      return unless block

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
    def profile(**kw, &block)
      raise ArgumentError, "Rperf.profile requires a block" unless block
      raise RuntimeError, "Rperf is not started" unless Native.running?

      previous = Native.merge_labels(kw, true)
      Native.profile_inc
      begin
        yield
      ensure
        Native.profile_dec
        Native.label_set_id = previous
      end
    end

    # Writes `data` (a result Hash) to `path`, the format from `format:` (Symbol or String) or
    # the extension. Returns 0, as rperf 0.11 (the status of its atomic rename).
    def save(path, data, format: nil)
      Storage.write(path, data, format)
      0
    end

    # A .json.gz / .json profile, or a .pb.gz one that rperf wrote (told apart by content).
    def load(path)
      Storage.load_any(path)
    end

    def read_meta(path)
      Storage.read_meta(path)
    end

    # rperf 0.11's printers, public there: the verbose statistics, the stat summary, the top tables.
    def print_stats(data) = Report.print_verbose(data)
    def print_stat(data) = Stat.print(data)
    def print_top(data) = Report.print_top(data)

    # The label-set table of the running session (index = label_set_id).
    def label_sets
      Native.label_sets
    end

    # --- child processes (see Multiprocess) ----------------------------------------------

    # Called by the fork hook in the parent, just before fork: children need a session.
    def prepare_fork
      session = Native.session
      session.ensure_session_dir if session&.settings&.inherit
    end

    # Called by the fork hook in the child: profile it like the parent, into the session.
    # The parent's labels are not carried over (as in rperf 0.11): the child starts a session
    # of its own, labelled `%pid` (start_child).
    def restart_in_child
      session = Native.after_fork_child
      return unless session && session.settings.inherit && (dir = session.child_session_dir || session.session_dir)

      start_child(dir, session.settings, forked: true)
    end

    # A child process (forked, or spawned with the RPERF_* environment) profiles itself into the
    # root's session directory and writes its profile there at exit. Its thread is labelled
    # `%pid: "<pid>"` (Rperf.labels says so, as in rperf 0.11); the merge labels every sample of
    # the child's file so, the child's other threads' too.
    def start_child(dir, settings, forked: false)
      start_session(Session.new(settings.with(output: nil, stat: false), child_session_dir: dir, forked: forked))
      label("%pid": Process.pid.to_s)
      Multiprocess.register_child(dir)
      at_exit { Shutdown.stop($!) }
    end

    # A root process that exec'd a new Ruby program resumes its session (Autostart).
    def start_root_after_exec(settings, dir)
      start_session(Session.new(settings, root_session_dir: dir))
      at_exit { Shutdown.stop($!) }
    end

    private

    # The running session is the one Native holds (Native.session): started and stopped with it
    # in one native call each, so two threads starting and stopping at once never see one
    # without the other (the lifecycle's rule: docs/architecture.md).
    def stop_session(result:)
      adopt_unhooked_fork
      running = Native.session
      running&.ending # a child: its root waits for the profile from now on
      profile, session = Native.stop(running&.settings&.vm_state_frames)
      return nil unless profile && session

      session.finish(profile, result: result)
    end

    # Process.daemon and forks from C extensions do not go through Process._fork: the child
    # finds its parent's session, whose timer and worker threads do not exist here. It is
    # handled as the fork hook would have (profiled as a child when the settings inherit).
    def adopt_unhooked_fork
      session = Native.session
      restart_in_child if session && session.pid != Process.pid
    end

    def start_session(session)
      raise RuntimeError, "Rperf is already running" if Native.running?

      s = session.settings
      Native.start({ frequency: s.frequency, mode: s.wall? ? :wall : :cpu, aggregate: s.aggregate, signal: s.signal,
                     defer: s.defer, max_depth: s.max_depth, lines: session.capture_lines?, forked_child: session.forked?,
                     allocation_interval: s.allocation_interval, max_label_sets: s.max_label_sets,
                     capture: s.capture_path, retained: s.retained, overhead_target: s.overhead_target }, session)
      session.start_inheritance
      ForkHook.install
      ExecHook.install
      ThreadNameHook.install
      # Allocation sampling (allocations: N) begins here: rperf's own start-up above (session
      # files, child environment) and, under the CLI, its requires are not the program's, nor
      # are later allocations made by rperf's files (stop, the at_exit handler, labels).
      Native.start_allocations(OWN_SOURCE_PREFIX)
    end
  end
end

require_relative "rperf/api/fork_hook"
require_relative "rperf/api/exec_hook"
require_relative "rperf/api/thread_name_hook"
require_relative "rperf/api/autostart"

# A session still running when the program ends is stopped before the VM goes away (its timer
# would otherwise interrupt a VM that is being torn down), and its output: file is written.
# Registered at require time, so it runs after the program's own at_exit handlers.
at_exit { Rperf::Shutdown.stop($!) }

Rperf::Autostart.run if ENV["RPERF_ENABLED"] == "1" && !Rperf.running?

# A Rails app (Bundler.require after Rails is loaded): the Railtie, development mode only.
require_relative "rperf/railtie" if defined?(Rails::Railtie)
