# frozen_string_literal: true

require "fileutils"
require "securerandom"
require "tmpdir"

module Rperf
  # Profiling forked and spawned Ruby children and merging them into the root's profile.
  #
  # The root process owns a session directory; every child profiles itself with the root's
  # settings and writes `profile-<pid>.json.gz` there at exit; the root merges them at stop and
  # removes the directory. Children are told through RPERF_SESSION_DIR / RPERF_ROOT_PROCESS
  # (and, for spawned programs, RUBYOPT=-rrperf with the RPERF_* settings).
  module Multiprocess
    SESSION_ENV = %w[RPERF_SESSION_DIR RPERF_ROOT_PROCESS].freeze

    module_function

    # --- the session directory -------------------------------------------------------------

    # A per-user base directory, private to the user. One we cannot trust (wrong owner, group
    # or world access, a symlink) is refused for a fresh private temporary directory.
    def base_dir
      base = File.join(ENV["XDG_RUNTIME_DIR"] || Dir.tmpdir, "rperf-#{Process.uid}")
      begin
        Dir.mkdir(base, 0o700)
      rescue Errno::EEXIST
        nil
      end
      st = File.lstat(base)
      return base if st.directory? && !st.symlink? && st.uid == Process.uid && (st.mode & 0o077).zero?

      warn "rperf: #{base} is not a private directory of this user; using a temporary one"
      Dir.mktmpdir("rperf-")
    rescue SystemCallError
      Dir.mktmpdir("rperf-")
    end

    def create_session_dir
      base = base_dir
      clean_stale_sessions(base)
      dir = File.join(base, "session-#{SecureRandom.hex(12)}")
      Dir.mkdir(dir, 0o700)
      File.write(File.join(dir, "root.pid"), Process.pid.to_s)
      dir
    end

    # Sessions whose root process is gone (killed before it could merge) are removed.
    def clean_stale_sessions(base)
      Dir.glob(File.join(base, "session-*")).each do |dir|
        pid = Integer(File.read(File.join(dir, "root.pid")), exception: false)
        next if pid && process_alive?(pid)

        FileUtils.rm_rf(dir)
      rescue SystemCallError
        next
      end
    end

    def process_alive?(pid)
      Process.kill(0, pid)
      true
    rescue Errno::ESRCH
      false
    rescue Errno::EPERM
      true
    end

    def child_output(dir) = File.join(dir, "profile-#{Process.pid}.json.gz")

    # Children write to a temporary name and rename, so the root never reads half a file.
    def write_child_profile(dir, data)
      path = child_output(dir)
      tmp = "#{path}.#{SecureRandom.hex(4)}.tmp"
      Storage.write(tmp, with_pid_label(data), :json)
      File.rename(tmp, path)
    rescue Error, SystemCallError
      # The root may already have merged and removed the session (a daemonised child): only
      # this child's data is lost, and nothing crashes at exit.
      FileUtils.rm_f(tmp) if tmp
    end

    # --- merging ---------------------------------------------------------------------------

    def with_pid_label(data, pid = Process.pid)
      return data if data[:label_sets].any? { |h| h.key?("%pid") }

      data.merge(label_sets: data[:label_sets].map { |h| h.merge("%pid" => pid.to_s).freeze })
    end

    SUMMED = %i[trigger_count sampling_count sampling_time_ns user_ns sys_ns].freeze

    # Root data plus every child file in the session directory, as one profile.
    def merge(root_data, dir)
      merged = with_pid_label(root_data).dup
      label_sets = merged[:label_sets].dup
      index = {}
      label_sets.each_with_index { |h, i| index[h] ||= i }
      samples = merged[:aggregated_samples].dup
      processes = 1
      Dir.glob(File.join(dir, "profile-*.json.gz")).sort.each do |file|
        child = begin
          Storage.load(file)
        rescue Error => e
          warn "rperf: skipping a child profile: #{e.message}"
          next
        end
        processes += 1
        remap = child[:label_sets].map { |h| index[h] ||= (label_sets << h).size - 1 }
        child[:aggregated_samples].each { |frames, w, seq, lsi| samples << [frames, w, seq, remap[lsi]] }
        SUMMED.each { |k| merged[k] = merged[k].to_i + child[k].to_i }
        merged[:function_start_lines] = (merged[:function_start_lines] || []) | (child[:function_start_lines] || [])
      end
      merged[:aggregated_samples] = samples
      merged[:label_sets] = label_sets
      merged[:process_count] = processes
      merged
    end

    # --- spawned children: the environment -------------------------------------------------

    def child_environment(settings, dir)
      {
        "RPERF_ENABLED" => "1",
        "RPERF_SESSION_DIR" => dir,
        "RPERF_ROOT_PROCESS" => Process.pid.to_s,
        "RPERF_MODE" => settings[:mode].to_s,
        "RPERF_FREQUENCY" => settings[:frequency].to_s,
        "RPERF_AGGREGATE" => settings[:aggregate] ? "1" : "0",
        "RPERF_DEFER" => settings[:defer] ? "1" : "0",
        "RPERF_SIGNAL" => settings[:signal].nil? ? nil : settings[:signal].to_s,
        "RPERF_VM_STATE_FRAMES" => settings[:vm_state_frames] ? "1" : nil,
        **Autostart.preload_env,
      }
    end
  end
end
