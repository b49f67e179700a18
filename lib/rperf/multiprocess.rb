# frozen_string_literal: true

require "fileutils"
require "securerandom"
require "tmpdir"

module Rperf
  # Profiling forked and spawned Ruby children and merging them into the root's profile.
  #
  # The root process owns a session directory; every child profiles itself with the root's
  # settings and writes `profile-<pid>-<random>.json.gz` there at exit; the root merges them at stop and
  # removes the directory. Children are told through RPERF_SESSION_DIR / RPERF_ROOT_PROCESS
  # (and, for spawned programs, RUBYOPT=-rrperf with the RPERF_* settings).
  module Multiprocess
    SESSION_ENV = %w[RPERF_SESSION_DIR RPERF_ROOT_PROCESS].freeze

    module_function

    # --- the session directory -------------------------------------------------------------

    # A per-user base directory under RPERF_TMPDIR, XDG_RUNTIME_DIR or the system's, private to
    # the user. One we cannot trust (wrong owner, group or world access, a symlink) is refused
    # for a fresh private temporary directory.
    def base_dir
      root = [ENV["RPERF_TMPDIR"], ENV["XDG_RUNTIME_DIR"]].find { |d| d && !d.empty? } || Dir.tmpdir
      base = File.join(root, "rperf-#{Process.uid}")
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

    # Unique per process and per write (a reused pid cannot overwrite an earlier child's file);
    # the pid in the name labels the child's samples at merge.
    def child_output(dir) = File.join(dir, "profile-#{Process.pid}-#{SecureRandom.hex(6)}.json.gz")

    # Written under a temporary name and renamed (Storage), so the root never reads half a file.
    # A write that fails while the root still waits (a full temporary directory) is said here
    # and left as a lost-<pid> marker (a name only, no data: it fits where the profile did not),
    # which the root counts.
    def write_child_profile(dir, profile)
      Storage.write_profile(child_output(dir), profile, :json, meta: false)
    rescue Error, SystemCallError => e
      # The root may already have merged and removed the session (a daemonised child): only
      # this child's data is lost, and nothing crashes at exit.
      return nil unless File.directory?(dir)

      warn "rperf: the profile of process #{Process.pid} is lost: #{e.message}"
      begin
        File.open(File.join(dir, "lost-#{Process.pid}-#{SecureRandom.hex(6)}"), File::WRONLY | File::CREAT | File::EXCL, 0o600, &:itself)
      rescue SystemCallError
        nil
      end
      nil
    end

    # --- merging ---------------------------------------------------------------------------

    # Every child file in the session directory merged into the root's native profile (child
    # samples labelled %pid=<pid>, counters summed, process_count).
    # Returns the number of child profiles lost (unreadable, or never written: lost-* markers).
    def merge_into(profile, dir)
      lost = 0
      Dir.glob(File.join(dir, "profile-*.json.gz")).sort.each do |file|
        pid = File.basename(file)[/\Aprofile-(\d+)[-.]/, 1] or next
        child = begin
          Storage.with_path(file) { Native::Profile.load_json(Storage.read_file(file)) }
        rescue Error => e
          warn "rperf: skipping a child profile: #{e.message}"
          lost += 1
          next
        end
        profile.merge_child!(child, pid)
      end
      unwritten = Dir.glob(File.join(dir, "lost-*")).map { |f| File.basename(f)[/\Alost-(\d+)-/, 1] }.compact
      unless unwritten.empty?
        warn "rperf: #{unwritten.size} child profile#{'s' if unwritten.size > 1} could not be written " \
             "(pid #{unwritten.sort_by(&:to_i).join(', ')}): the profile lacks #{unwritten.size > 1 ? 'them' : 'it'}"
      end
      lost + unwritten.size
    end

    # --- spawned children: the environment -------------------------------------------------

    def child_environment(settings, dir)
      {
        "RPERF_ENABLED" => "1",
        "RPERF_SESSION_DIR" => dir,
        "RPERF_ROOT_PROCESS" => Process.pid.to_s,
        **settings.with(inherit: true).child_env,
        # Where the root's own profile goes: children ignore it, a root that exec's another Ruby
        # program (same pid) reads it back to keep writing its output.
        **settings.process_env.compact,
        # and, under `rperf stat`/`exec`, its command line and --report (`exec "ruby", ...`
        # keeps the header and the tables).
        **(settings.stat ? Stat.env : {}),
        **Autostart.preload_env,
      }
    end
  end
end
