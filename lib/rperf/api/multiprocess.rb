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

    # The root's session directory, or nil when none can be made (a full or unusable temporary
    # directory: ENOSPC, EFBIG under `ulimit -f`, no temporary directory at all): said once, as
    # rperf 0.11 says it, and the program runs with the root's profile alone. A half-made
    # directory is removed.
    def create_session_dir
      made = nil
      base = base_dir
      clean_stale_sessions(base)
      dir = File.join(base, "session-#{SecureRandom.hex(12)}")
      Dir.mkdir(dir, 0o700)
      made = dir
      File.write(File.join(dir, "root.pid"), Process.pid.to_s)
      dir
    rescue SystemCallError, IOError, ArgumentError => e # ArgumentError: Dir.tmpdir found no directory
      FileUtils.rm_rf(made) if made
      warn "rperf: warning: multi-process aggregation failed (#{e.message}); writing root process data only"
      nil
    end

    # Sessions whose root process is gone (killed before it could merge) are removed, and so
    # are the leftovers of a removal a daemonised child raced (remove_session).
    def clean_stale_sessions(base)
      Dir.glob(File.join(base, "session-*")).each do |dir|
        pid = Integer(File.read(File.join(dir, "root.pid")), exception: false)
        next if pid && process_alive?(pid)

        FileUtils.rm_rf(dir)
      rescue SystemCallError
        next
      end
      Dir.glob(File.join(base, "removed-*")).each { |dir| FileUtils.rm_rf(dir) }
    end

    # The root's end of a session: its directory renamed out of the children's way first, then
    # removed. A child still running (a daemon that outlived the root) that starts writing its
    # profile meanwhile cannot create a file in it (its paths name the old directory): removed in
    # place, such a file created between rm_rf's listing and its rmdir kept the directory.
    def remove_session(dir)
      gone = File.join(File.dirname(dir), "removed-#{File.basename(dir)}")
      File.rename(dir, gone)
      FileUtils.rm_rf(gone)
    rescue SystemCallError
      FileUtils.rm_rf(dir)
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

    # --- children the root waits for ------------------------------------------------------

    # A child says it is profiling (child-<pid>.running), that its stop has begun
    # (child-<pid>.ending) and that its file is written (the marker gone). A root ending while
    # children still run waits (await_children) for those that are ending, and, when a signal
    # ends it (Ctrl-C reaches the whole process group), for all of them: each child got the
    # signal too and writes its profile on its way out.
    CHILD_GRACE = 3.0 # seconds a signalled root waits for a child to begin its stop
    CHILD_WAIT = 10.0 # seconds it waits for a stopping child to write its profile

    def child_marker(dir, state) = File.join(dir, "child-#{Process.pid}.#{state}")

    def register_child(dir)
      File.open(child_marker(dir, "running"), File::WRONLY | File::CREAT, 0o600, &:itself)
    rescue SystemCallError
      nil # a full temporary directory: the root does not wait for this child
    end

    def child_ending(dir)
      File.rename(child_marker(dir, "running"), child_marker(dir, "ending"))
    rescue SystemCallError
      nil
    end

    def child_done(dir)
      %w[ending running].each do |state|
        File.unlink(child_marker(dir, state))
      rescue SystemCallError
        next
      end
    end

    # pid => :running or :ending, for each child marker in the directory.
    def child_markers(dir)
      Dir.children(dir).filter_map do |name|
        m = /\Achild-(\d+)\.(running|ending)\z/.match(name) or next
        [Integer(m[1]), m[2].to_sym]
      end.to_h
    rescue SystemCallError
      {}
    end

    # A process that can still write its profile: not gone, not a zombie (a child the root has
    # not reaped yet: it ended without removing its marker: killed, or exec'd another program).
    def live_process?(pid)
      stat = File.read("/proc/#{pid}/stat")
      !%w[Z X].include?(stat[(stat.rindex(")") || 0) + 2])
    rescue Errno::ENOENT, Errno::ESRCH
      false
    rescue SystemCallError
      process_alive?(pid)
    end

    # Waits until the children the root must wait for (see above) have written their files, or
    # the bounds have passed. Returns how many it waited for in vain, named on stderr: their
    # profiles are missing from the merge.
    def await_children(dir, signalled:, grace: CHILD_GRACE, bound: CHILD_WAIT)
      start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      told = false
      loop do
        elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - start
        live = child_markers(dir).select { |pid, _| live_process?(pid) }
        waiting = live.select { |_, state| elapsed < (state == :ending ? bound : (signalled ? grace : 0)) }
        if waiting.empty?
          missed = live.select { |_, state| state == :ending || signalled }.keys.sort
          unless missed.empty?
            warn "rperf: #{missed.size} child process#{'es' if missed.size > 1} (pid #{missed.join(', ')}) had not written " \
                 "#{missed.size > 1 ? 'their profiles' : 'its profile'} after #{elapsed.round(1)} s: the profile lacks #{missed.size > 1 ? 'them' : 'it'}"
          end
          return missed.size
        end
        if !told && elapsed > 1
          warn "rperf: waiting for #{waiting.size} child process#{'es' if waiting.size > 1} to write #{waiting.size > 1 ? 'their profiles' : 'its profile'}"
          told = true
        end
        sleep 0.01
      end
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
