# frozen_string_literal: true

require_relative "test_helper"
require "json"

# Forked and spawned Ruby children, profiled and merged into the root's profile.
class MultiprocessTest < Minitest::Test
  RPERF = File.join(ROOT, "exe/rperf")

  def setup
    @dir = Dir.mktmpdir("rperf-mp")
    @runtime = Dir.mktmpdir("rperf-runtime") # private base directory for session dirs
    @env = { "XDG_RUNTIME_DIR" => @runtime }
  end

  def teardown
    super
    FileUtils.rm_rf(@dir)
    FileUtils.rm_rf(@runtime)
  end

  def sessions_left = Dir.glob(File.join(@runtime, "rperf-*", "session-*"))

  # A process not ours (a daemon, reparented): running, not a zombie its new parent has yet to reap.
  def process_alive?(pid)
    File.read("/proc/#{pid}/stat")[/\) (\S)/, 1] != "Z"
  rescue Errno::ENOENT, Errno::ESRCH
    false
  end

  def run_ruby_in(code, env: {})
    Open3.capture3(@env.merge(env), RUBY, "-I#{ROOT}/lib", "-e", code, chdir: @dir)
  end

  def by_pid(data)
    totals = Hash.new(0)
    data[:aggregated_samples].each { |s| totals[data[:label_sets][s[3]][:"%pid"]] += s[1] }
    totals
  end

  # Long enough (~70 ms of CPU) that per-child differences from fork and page faults stay small.
  WORK = "def work = (i = 0; i += 1 while i < 8_000_000; i)"

  # Each child reports its own thread CPU clock at the end of its work; its profile (cpu mode,
  # counted from the fork, where that clock starts at zero) must account for that CPU, and for
  # no more than the child's whole CPU usage as its parent's wait reports it (getrusage: every
  # thread, up to exit). Comparing children with each other instead fails on a shared VM, where
  # identical work costs 60 ms of CPU in one child and 105 ms in another.
  def test_stat_of_four_forked_children
    _o, err, status = Open3.capture3(@env, RUBY, RPERF, "stat", RUBY, "-e", "#{WORK}; 4.times { fork { work } }; Process.waitall", chdir: @dir)
    assert status.success?, err
    assert_match(/\b5\s+\[Rperf\] Ruby processes profiled/, err)
    out = File.join(@dir, "forks.json.gz")
    report = "fork { work; puts [:cpu, Process.pid, Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)].join(' ') }"
    usage = "t = Process.times; Process.wait(pid); u = Process.times; " \
            "puts [:rusage, pid, ((u.cutime + u.cstime - t.cutime - t.cstime) * 1e9).round].join(' ')"
    stdout, err, status = Open3.capture3(@env, RUBY, RPERF, "record", "-o", out, RUBY, "-e",
                                         "#{WORK}; 4.times.map { #{report} }.each { |pid| #{usage} }", chdir: @dir)
    assert status.success?, err
    reported = stdout.lines.map(&:split).group_by(&:first)
    child_cpu = reported.fetch("cpu").to_h { |_, pid, ns| [pid, Integer(ns)] }
    child_usage = reported.fetch("rusage").to_h { |_, pid, ns| [pid, Integer(ns)] }
    assert_equal 4, child_cpu.size, stdout
    data = Rperf.load(out)
    totals = by_pid(data)
    assert_equal 5, totals.size, totals.inspect
    child_cpu.each do |pid, cpu|
      assert_operator totals[pid], :>=, cpu, "child #{pid}: profile weight vs its CPU clock after its work"
      assert_operator totals[pid], :<=, child_usage.fetch(pid) + 2_000, "child #{pid}: profile weight vs its CPU usage (us rounding)"
    end
    data[:aggregated_samples].select { |s| s[0].any? { |f| f[1] == "Object#work" } }.each do |s|
      assert data[:label_sets][s[3]][:"%pid"]
    end
    assert_empty sessions_left
  end

  # A reused pid must not overwrite an earlier child's file: every write has its own name.
  def test_child_files_have_unguessable_unique_names
    names = Array.new(3) { Rperf::Multiprocess.child_output(@dir) }
    assert_equal 3, names.uniq.size, names.inspect
    names.each { |n| assert_match(/\Aprofile-#{Process.pid}-\h{12}\.json\.gz\z/, File.basename(n)) }
  end

  def test_api_fork_child_uses_the_parents_mode_and_frequency
    out, err, status = run_ruby_in(<<~RUBY)
      require "rperf"
      Rperf.start(mode: :cpu, frequency: 250)
      r, w = IO.pipe
      pid = fork do
        snap = Rperf.snapshot
        w.puts [Rperf.running?, snap[:mode], snap[:frequency]].inspect
        w.close
      end
      w.close
      child = r.read
      Process.wait(pid)
      data = Rperf.stop
      puts child
      puts data[:process_count]
    RUBY
    assert status.success?, err
    lines = out.lines.map(&:chomp)
    assert_equal "[true, :cpu, 250]", lines[0]
    assert_equal "2", lines[1]
    assert_empty sessions_left
  end

  def test_spawned_ruby_child_under_record
    child = File.join(@dir, "child script.rb") # a path with a space
    File.write(child, "def child_hot = (i = 0; i += 1 while i < 4_000_000; i)\nchild_hot\n")
    out = File.join(@dir, "spawn.json.gz")
    _o, err, status = Open3.capture3(@env, RUBY, RPERF, "record", "-o", out, RUBY, "-e",
                                     "system(#{RUBY.inspect}, #{child.inspect}) or abort; puts ENV['RUBYOPT'].to_s", chdir: @dir)
    assert status.success?, err
    data = Rperf.load(out)
    assert_operator weight_including(data, "Object#child_hot"), :>, 0
    assert_equal 2, by_pid(data).size
    assert_empty sessions_left
  end

  def test_environment_is_restored_after_stop
    out, err, status = run_ruby_in(<<~RUBY, env: { "RUBYOPT" => "-W0" })
      require "rperf"
      before = ENV["RUBYOPT"]
      Rperf.start(inherit: true)
      during = ENV["RUBYOPT"]
      Rperf.stop
      puts before, during, ENV["RUBYOPT"], ENV.key?("RPERF_SESSION_DIR")
    RUBY
    assert status.success?, err
    before, during, after, session = out.lines.map(&:chomp)
    assert_match(/-W0/, before)
    assert_match(/-rrperf/, during)
    assert_equal before, after
    assert_equal "false", session
  end

  def test_merged_total_is_the_sum_of_each_processes_own_total
    out, err, status = run_ruby_in(<<~RUBY)
      require "rperf"
      #{WORK}
      clock = Process::CLOCK_THREAD_CPUTIME_ID
      r, w = IO.pipe
      root_cpu = nil
      data = Rperf.start(mode: :cpu) do
        3.times do
          fork do
            r.close
            work
            own = Rperf.stop # the child's own profile, as written to the session
            w.puts "\#{Process.pid} \#{own[:aggregated_samples].sum { |s| s[1] }}"
          end
        end
        w.close
        cpu0 = Process.clock_gettime(clock, :nanosecond)
        Process.waitall
        work
        root_cpu = Process.clock_gettime(clock, :nanosecond) - cpu0
      end
      children = r.read.lines.to_h { |l| l.split.map(&:to_i) }
      per_pid = Hash.new(0)
      data[:aggregated_samples].each { |s| per_pid[data[:label_sets][s[3]][:"%pid"].to_i] += s[1] }
      puts children.map { |pid, own| "\#{own} \#{per_pid[pid]}" }
      puts "root \#{root_cpu} \#{per_pid[0]}" # the root's samples carry no %pid label (as in rperf 0.11)
    RUBY
    assert status.success?, err
    lines = out.lines.map(&:split)
    children = lines.reject { |l| l[0] == "root" }
    assert_equal 3, children.size
    # The merge adds each child's profile as written: the same samples, no estimate.
    children.each { |own, merged| assert_equal own.to_i, merged.to_i, "a child's own total vs its weight in the merged profile" }
    assert_operator children.sum { |own, _| own.to_i }, :>, 0
    # The root's weight covers start..stop on its CPU clock: at least the CPU measured inside.
    _, root_cpu, root_weight = lines.find { |l| l[0] == "root" }
    assert_operator root_weight.to_i, :>=, root_cpu.to_i, "the root's own CPU is all there"
  end

  # Every sampling setting reaches the children, forked or spawned: max_depth and lines (once
  # not passed on), vm_state_frames, mode and frequency. Each child recurses 50 deep and sleeps.
  def test_children_inherit_every_sampling_setting
    out, err, status = run_ruby_in(<<~RUBY)
      require "rperf"
      require "json"
      CHILD = 'def deep(n) = n.zero? ? sleep(0.05) : deep(n - 1); deep(50)'
      data = Rperf.start(mode: :wall, frequency: 250, max_depth: 8, lines: true, vm_state_frames: true, inherit: true) do
        fork { eval(CHILD) }
        system(#{RUBY.inspect}, "-e", CHILD) or abort "spawned child failed"
        Process.waitall
      end
      children = data[:aggregated_samples].reject { |s| data[:label_sets][s[3]][:"%pid"].nil? }
      puts JSON.generate(
        "pids" => children.map { |s| data[:label_sets][s[3]][:"%pid"] }.uniq.size,
        "depth" => children.map { |s| s[0].size }.max,
        "deep_frames" => children.select { |s| s[0].any? { |f| f[1] == "Object#deep" } }.map { |s| s[0].map { |f| f[1] } }.uniq,
        "lines" => children.flat_map { |s| s[0] }.select { |f| f[1] == "Object#deep" }.map { |f| f[2] }.uniq,
        "labels" => children.map { |s| data[:label_sets][s[3]].keys.map(&:to_s).sort }.uniq,
        "mode" => data[:mode], "frequency" => data[:frequency])
    RUBY
    assert status.success?, err
    result = JSON.parse(out.lines.last)
    assert_equal 2, result["pids"], "a forked and a spawned child"
    assert_equal 10, result["depth"], "max_depth 8, + the [truncated] frame and the VM state's leaf frame"
    refute_empty result["deep_frames"]
    # A stack cut at max_depth ends in [truncated]; one sampled while the recursion was still
    # shallower (a tick during the descent: seen once beside CPU hogs) is whole, at most 8 frames.
    result["deep_frames"].each do |frames|
      assert(frames.last == "[truncated]" || frames.size <= 8, "cut at max_depth or whole: #{frames.inspect}")
    end
    assert(result["deep_frames"].any? { |frames| frames.last == "[truncated]" }, "the sleep 50 deep is cut")
    assert_includes result["deep_frames"].map(&:first), "[GVL blocked]", "vm_state_frames: the sleep's state is a leaf frame"
    assert_equal [1], result["lines"], "lines: the line of the call inside deep"
    assert_equal [["%pid"]], result["labels"], "no %GVL labels with vm_state_frames"
    assert_equal ["wall", 250], [result["mode"], result["frequency"]]
  end

  def test_thirty_two_workers_and_four_generations
    out, err, status = run_ruby_in(<<~RUBY)
      require "rperf"
      def work = (i = 0; i += 1 while i < 200_000; i)
      data = Rperf.start(mode: :cpu, frequency: 2000) do
        32.times { fork { work } }
        Process.waitall
        fork { work; fork { work; fork { work; fork { work }; Process.waitall }; Process.waitall }; Process.waitall }
        Process.waitall
      end
      puts data[:process_count]
    RUBY
    assert status.success?, err
    assert_equal "37", out.chomp, "root + 32 workers + 4 generations"
    assert_empty sessions_left
  end

  def test_crashed_or_killed_child_loses_only_its_own_data
    out, err, status = run_ruby_in(<<~RUBY)
      require "rperf"
      def work = (i = 0; i += 1 while i < 500_000; i)
      data = Rperf.start(mode: :cpu) do
        2.times { fork { work } }
        fork { work; Process.kill(:KILL, Process.pid) }
        fork { work; raise "boom in child" }
        Process.waitall
      end
      puts data[:process_count]
    RUBY
    assert status.success?, err
    assert_equal "4", out.chomp, "root + 2 good + the child that raised (it still exits normally)"
    assert_match(/boom in child/, err)
    assert_empty sessions_left
  end

  # Issue 30 (6): with a full temporary directory, children's profiles were dropped without a
  # word. A child whose write fails (here a file size limit: EFBIG) says so and leaves a
  # marker; the root names the lost children, and `rperf record` exits 1.
  def test_a_child_profile_that_cannot_be_written_is_reported
    out = File.join(@dir, "p.json.gz")
    script = <<~RUBY
      def work = (i = 0; i += 1 while i < 300_000; i)
      2.times { fork { work } }
      lost = fork do
        work
        Signal.trap("XFSZ", "IGNORE")
        Process.setrlimit(:FSIZE, 64) # its profile cannot be written
      end
      Process.waitall
      File.write("lost.pid", lost.to_s)
    RUBY
    _o, err, status = Open3.capture3(@env, RUBY, RPERF, "record", "-o", out, RUBY, "-e", script, chdir: @dir)
    lost = File.read(File.join(@dir, "lost.pid"))
    assert_equal 1, status.exitstatus, err
    assert_match(/rperf: the profile of process #{lost} is lost: .*File too large/, err)
    assert_match(/rperf: 1 child profile could not be written \(pid #{lost}\)/, err)
    data = Rperf.load(out)
    assert_equal 3, by_pid(data).size, "the root and the two other children are in it"
    refute_includes by_pid(data).keys.map(&:to_s), lost
    assert_empty sessions_left
  end

  # Issue 43 (3): a session directory that cannot be written (RPERF_TMPDIR on a full disk) made
  # `rperf stat`/`record` exit 1 with a backtrace without running the program, and left the
  # half-made session directory. Now, as rperf 0.11.1 does, the program runs, one warning says
  # the children are not aggregated, and the root's profile is written. Here the write of the
  # session's root.pid fails under a file size limit of 0 (EFBIG; SIGXFSZ ignored, so the
  # program's own writes fail the same way, as on a full disk); the profile goes to a pipe,
  # which no file size limit applies to.
  def test_a_session_directory_that_cannot_be_written_leaves_the_roots_profile
    limited = ["sh", "-c", 'trap "" XFSZ; ulimit -f 0; exec "$@"', "sh", RUBY, RPERF]
    program = "#{WORK}; work; 2.times { fork { work } }; Process.waitall; $stderr.puts 'ran'; exit 3"
    out, err, status = Open3.capture3(@env, *limited, "record", "--format", "collapsed", "-o", "/dev/stdout",
                                      RUBY, "-e", program, chdir: @dir)
    assert_equal 3, status.exitstatus, err
    assert_equal 1, err.scan(/rperf: warning: multi-process aggregation failed \(.*File too large.*\); writing root process data only/).size, err
    assert_match(/^ran$/, err)
    refute_match(/\.rb:\d+:in /, err, "no backtrace")
    assert_match(/Object#work \d+$/, out, "the root's profile")
    assert_empty Dir.glob(File.join(@runtime, "rperf-*", "*")), "no session directory is left"

    _o, err, status = Open3.capture3(@env, *limited, "stat", RUBY, "-e", program, chdir: @dir)
    assert_equal 3, status.exitstatus, err
    assert_equal 1, err.scan(/multi-process aggregation failed/).size, err
    assert_match(/^ran$/, err)
    assert_match(/\[Rperf\] CPU execution/, err, "the root's summary")
    assert_empty Dir.glob(File.join(@runtime, "rperf-*", "*"))
  end

  def test_corrupt_child_file_is_skipped_with_a_warning
    out, err, status = run_ruby_in(<<~RUBY)
      require "rperf"
      data = Rperf.start(inherit: true) do
        File.write(File.join(ENV["RPERF_SESSION_DIR"], "profile-999999.json.gz"), "garbage")
        fork { 1000.times(&:to_s) }
        Process.waitall
      end
      puts data[:process_count]
    RUBY
    assert status.success?, err
    assert_equal "2", out.chomp
    assert_match(/rperf: skipping a child profile: .*profile-999999/, err)
    assert_empty sessions_left
  end

  def test_daemonised_child_outliving_the_root
    marker = File.join(@dir, "child-done")
    _o, err, status = run_ruby_in(<<~RUBY)
      require "rperf"
      Rperf.start(mode: :wall)
      fork { Process.setsid; sleep 0.5; File.write(#{marker.inspect}, Process.pid.to_s) }
      Rperf.stop
    RUBY
    assert status.success?, err
    deadline = Time.now + 30
    sleep 0.05 until File.exist?(marker) || Time.now > deadline
    assert File.exist?(marker), "the daemon finished"
    # Its session files go when it exits (after the marker: beside two CPU hogs that took
    # longer than the 0.2 s this test once waited), so wait for the process itself to be gone.
    daemon = Integer(File.read(marker))
    sleep 0.05 while process_alive?(daemon) && Time.now < deadline
    refute process_alive?(daemon), "the daemon exited"
    assert_empty sessions_left
  end

  def test_child_spawned_after_the_root_finished_writes_nothing
    env = Rperf::Multiprocess.child_environment(Rperf::Settings.new(mode: :cpu, frequency: 100), File.join(@dir, "gone"))
    env["RPERF_ROOT_PROCESS"] = "1"
    out, err, status = Open3.capture3(env, RUBY, "-e", "puts Rperf.running?", chdir: @dir)
    assert status.success?, err
    assert_equal "false\n", out
    assert_empty Dir.glob(File.join(@dir, "*.json.gz"))
  end

  def test_child_calling_start_gets_a_clear_error
    out, err, status = run_ruby_in(<<~RUBY)
      require "rperf"
      Rperf.start
      pid = fork do
        begin
          Rperf.start
        rescue RuntimeError => e
          puts e.message
        end
      end
      Process.wait(pid)
      Rperf.stop
    RUBY
    assert status.success?, err
    assert_equal "Rperf is already running", out.chomp
  end

  def test_session_directory_safety_and_stale_cleanup
    base = File.join(@runtime, "rperf-#{Process.uid}")
    Dir.mkdir(base, 0o700)
    stale = File.join(base, "session-stale")
    Dir.mkdir(stale, 0o700)
    dead = Process.spawn(RUBY, "-e", "exit")
    Process.wait(dead)
    File.write(File.join(stale, "root.pid"), dead.to_s)
    dir = with_env(@env) { Rperf::Multiprocess.create_session_dir }
    refute File.exist?(stale), "stale session of a dead root removed"
    assert_equal File.join(base, File.basename(dir)), dir
    assert_equal 0o700, File.stat(dir).mode & 0o777
    assert_match(/session-\h{24}\z/, dir)
    FileUtils.rm_rf(dir)

    File.chmod(0o777, base)
    dir = nil
    _o, err = capture_io { dir = with_env(@env) { Rperf::Multiprocess.create_session_dir } }
    assert_match(/not a private directory/, err)
    refute dir.start_with?(base)
    assert_equal 0o700, File.stat(File.dirname(dir)).mode & 0o777
    FileUtils.rm_rf(File.dirname(dir))
  end

  def with_env(env)
    saved = env.keys.to_h { |k| [k, ENV[k]] }
    env.each { |k, v| ENV[k] = v }
    yield
  ensure
    saved.each { |k, v| v ? ENV[k] = v : ENV.delete(k) }
  end
end
