# frozen_string_literal: true

require_relative "test_helper"
require "json"
require "shellwords"
require "net/http"
require_relative "web/method_view_assertions"

# The rperf command, run as a real subprocess on real scripts.
class CliTest < Minitest::Test
  RPERF = File.join(ROOT, "exe/rperf")

  def setup
    @dir = Dir.mktmpdir("rperf-cli")
  end

  def teardown
    super
    FileUtils.rm_rf(@dir)
  end

  def rperf(*args, env: {})
    Open3.capture3(env, RUBY, RPERF, *args, chdir: @dir)
  end

  def script(name, code)
    path = File.join(@dir, name)
    File.write(path, code)
    path
  end

  def hot_script(slow_factor: 3, exit_code: 0)
    script("hot.rb", <<~RUBY)
      def steady = (i = 0; i += 1 while i < 1_000_000; i)
      def target = (i = 0; i += 1 while i < #{1_000_000 * slow_factor}; i)
      2.times { steady; target }
      exit #{exit_code}
    RUBY
  end

  def test_record_writes_a_loadable_profile_and_keeps_the_exit_status
    out = File.join(@dir, "p.json.gz")
    _o, err, status = rperf("record", "-o", out, RUBY, hot_script(exit_code: 3))
    assert_equal 3, status.exitstatus, err
    data = Rperf.load(out)
    assert_equal :cpu, data[:mode]
    top = Rperf::Result.flat_and_cumulative(data)[:cum].reject { |(l, _), _| l =~ /<main>|Integer#times/ }.max_by { |_, w| w }
    assert_equal "Object#target", top[0][0]
  end

  # Issue 30 (6): a profile that could not be written (here its directory is gone when the
  # program ends) said so but exited 0. A program that succeeded now exits 1; one that failed
  # keeps its own status.
  def test_record_exits_non_zero_when_the_profile_cannot_be_written
    [["", 1], ["exit 3", 3]].each do |tail, expected|
      Dir.mkdir(File.join(@dir, "out"))
      _o, err, status = rperf("record", "-o", "out/p.json.gz", RUBY, "-rfileutils", "-e", "FileUtils.rm_rf('out'); #{tail}")
      assert_equal expected, status.exitstatus, err
      assert_match(%r{rperf: could not write .*out/p\.json\.gz: .*No such file or directory}, err)
    end
    _o, err, status = rperf("record", "-o", "p.json.gz", RUBY, "-e", "1")
    assert status.success?, err
  end

  # Issue 43 (4): under a file size limit (`ulimit -f`, SIGXFSZ at its default) the final write
  # ended the process by SIGXFSZ (exit 153): no message, a temporary file left, the program's
  # buffered output lost. Now the write fails with EFBIG: said, exit 1, nothing left over.
  def test_record_under_a_file_size_limit_says_the_profile_could_not_be_written
    program = script("many.rb", <<~RUBY)
      $stdout.puts "buffered until exit" # a pipe: flushed only when the program ends normally
      100.times do |i| # ~140 KB of JSON: past the limit (64 blocks: 32 KiB for dash, 64 KiB for bash)
        name = "method_\#{i}_" + ("abcdefghij" * 20)
        eval("def \#{name} = sleep(0.001)")
        send(name)
      end
    RUBY
    out, err, status = Open3.capture3("sh", "-c", 'ulimit -f 64; exec "$@"', "sh", RUBY, RPERF, "record", "-m", "wall",
                                      "-o", "p.json", RUBY, program, chdir: @dir)
    assert_equal 1, status.exitstatus, "#{status.inspect}: #{err}"
    assert_match(%r{rperf: could not write \S*p\.json: File too large}, err)
    refute_match(/\.rb:\d+:in /, err, "no backtrace")
    assert_equal "buffered until exit\n", out
    assert_equal ["many.rb"], Dir.children(@dir), "no temporary file, no partial profile"
  end

  def test_record_default_output_and_options
    _o, err, status = rperf("record", "-m", "wall", "-f", "500", RUBY, "-e", "sleep 0.05")
    assert status.success?, err
    data = Rperf.load(File.join(@dir, "rperf.json.gz"))
    assert_equal :wall, data[:mode]
    assert_equal 500, data[:frequency]
    _o, _e, status = rperf("record", "-o", File.join(@dir, "x.pb.gz"), RUBY, "-e", "1")
    assert status.success?
    assert_equal "\x1f\x8b".b, File.binread(File.join(@dir, "x.pb.gz"), 2)
  end

  # Blocked holds the sleep (from its start to its wake-up): at least the 300 ms asked for. The
  # process's time is split between the table's rows, so blocked and CPU execution together fit
  # in the real time (the profile's duration; a busy machine stretches the sleep: 370 ms seen). Rows show ms to
  # one decimal.
  def test_stat_shows_gvl_blocked_for_sleep
    _o, err, status = rperf("stat", RUBY, "-e", "sleep 0.3")
    assert status.success?, err
    row = ->(name) { err[/([\d.,]+) ms\s+[\d.]+%\s+\[Rperf\] #{name}/, 1].delete(",").to_f }
    blocked = row.("GVL blocked")
    real = err[/([\d.,]+) ms\s+real$/, 1].delete(",").to_f
    assert_operator blocked, :>=, 300 - 0.05, err
    assert_operator blocked + row.("CPU execution") + row.("GVL wait"), :<=, real + 0.15, err
    assert_match(/ms\s+user/, err)
    assert_match(/ms\s+real/, err)
    assert_match(/ Performance stats for '.*sleep.*0\.3':/, err)
    assert_match(/^\s+[\d,.]+ ms\s+[\d.]+%  \[Rperf\] GVL blocked \(I\/O, sleep\)$/, err)
    assert_match(/^\s+\d+ MB\s+\[OS   \] peak memory \(maxrss\)$/, err)
    assert_match(/\[OS   \] page faults \([\d,]+ minor, [\d,]+ major\)/, err)
    assert_match(/\[OS   \] disk I\/O \(\d+ MB read, \d+ MB write\)/, err)
    assert_match(/^  \d+ samples \/ \d+ triggers, \d+\.\d% profiler overhead$/, err)
  end

  def test_stat_on_a_gc_heavy_script_shows_gc_lines
    _o, err, status = rperf("stat", RUBY, "-e", "20.times { Array.new(50_000) { |i| i.to_s }; GC.start }")
    assert status.success?, err
    assert_match(/GC marking/, err)
    assert_match(/GC sweeping/, err)
    assert_match(/\[Ruby \] GC time \([\d,]+ count: [\d,]+ minor, [\d,]+ major\)/, err)
    assert_match(/^\s+[\d,]+\s+\[Ruby \] allocated objects$/, err)
  end

  def test_vm_state_frames_option
    out = File.join(@dir, "vm.json.gz")
    _o, err, status = rperf("record", "-m", "wall", "--vm-state-frames", "-o", out, RUBY, "-e", "sleep 0.05; GC.start")
    assert status.success?, err
    data = Rperf.load(out)
    leaves = data[:aggregated_samples].map { |s| s[0].first&.at(1) }
    assert_includes leaves, "[GVL blocked]"
    assert_includes leaves, "[GC marking]"
  end

  def test_exec_adds_the_report_tables
    _o, err, status = rperf("exec", RUBY, hot_script)
    assert status.success?, err
    assert_match(/Flat:/, err)
    assert_match(/Cumulative:/, err)
    assert_match(/Object#target/, err)
  end

  def test_report_top_text_and_pprof_input
    json = File.join(@dir, "p.json.gz")
    pb = File.join(@dir, "p.pb.gz")
    rperf("record", "-o", json, RUBY, hot_script)
    rperf("record", "-o", pb, RUBY, hot_script)
    out, err, status = rperf("report", "--top", json)
    assert status.success?, err
    assert_match(/\A Flat:\n\s+[\d,.]+ ms\s+[\d.]+%  Object#target/, out)
    assert_match(/Object#target/, out)
    out, _e, status = rperf("report", "--text", pb)
    assert status.success?
    assert_match(/Cumulative:/, out)
    assert_match(/Object#target/, out)
  end

  # target grows from 1 to 6 units of work, steady stays at 1: target's change is the larger
  # unless the second process runs a unit 3.5 times faster than the first ((6 + 1) / 2); the
  # largest difference seen between two processes on a shared VM is 1.75 times.
  def test_diff_ranks_the_slowed_function_first
    base = File.join(@dir, "base.json.gz")
    target = File.join(@dir, "target.json.gz")
    rperf("record", "-o", base, RUBY, hot_script(slow_factor: 1))
    rperf("record", "-o", target, RUBY, hot_script(slow_factor: 6))
    out, err, status = rperf("diff", base, target)
    assert status.success?, err
    first = out.lines[2]
    assert_match(/Object#target/, first, out)
    assert_match(/base total: [\d.]+ms\s+target total: [\d.]+ms/, out)
  end

  def test_help_version_and_usage_errors
    out, _e, status = rperf("help")
    assert status.success?
    %w[record stat exec report diff RPERF_MODE].each { |w| assert_includes out, w }
    out, _e, status = rperf("--version")
    assert status.success?
    assert_equal "rperf #{Rperf::VERSION}\n", out
    out, _e, status = rperf("-v")
    assert status.success?
    assert_equal "rperf #{Rperf::VERSION}\n", out
    {
      %w[frobnicate] => /\AUnknown subcommand: "frobnicate"\nUsage: rperf record/,
      %w[record --bogus ruby] => /invalid option: --bogus\nUsage: rperf record \[options\]/,
      %w[record] => /\ANo command specified\.\nUsage: rperf record/,
      %w[record -f 0 ruby] => /\AError: frequency must be a positive integer \(got 0\)\n\z/,
      %w[record -f 20000 ruby] => /\AError: frequency must be <= 10000 \(10KHz\), got 20000\n\z/,
      %w[record --signal abc ruby] => /\AError: --signal must be a signal number or 'false', got: "abc"\n\z/,
      %w[record --signal 9 ruby] => /\AError: signal 9 \(KILL\) cannot be caught/,
      # Issue 30 (8): a standard signal is the application's (SEGV, INT, ALRM): only real-time ones.
      %w[record --signal 11 ruby] => /\AError: signal 11 \(SEGV\) is not a real-time signal: .* use 34\.\.64 .* or false/,
      %w[record --signal 2 ruby] => /\AError: signal 2 \(INT\) is not a real-time signal/,
      %w[stat --signal 14 ruby] => /\AError: signal 14 \(ALRM\) is not a real-time signal/,
      %w[record --format foo ruby] => /invalid argument: --format foo/,
      %w[record -o /nonexistent/dir/x.json.gz ruby] => %r{\AError: output path is not writable: /nonexistent/dir/x.json.gz},
      %w[record --label novalue ruby] => /\AError: --label must be KEY=VALUE, got: "novalue"/,
      %w[diff one] => /\ATwo profile files required\.\nUsage: rperf diff/,
      [] => /\AUsage: rperf record/,
    }.each do |args, message|
      # A bad option never runs the command: it would touch this file.
      marker = File.join(@dir, "ran")
      command = args.include?("ruby") ? ["-e", "File.write(#{marker.inspect}, '')"] : []
      _o, err, status = rperf(*args.map { |a| a == "ruby" ? RUBY : a }, *command)
      assert_equal 1, status.exitstatus, "rperf #{args.join(' ')}: #{err}"
      assert_match message, err
      refute File.exist?(marker), "rperf #{args.join(' ')} ran the command"
    end
    _o, err, status = rperf("report", File.join(@dir, "missing.json.gz"))
    assert_equal 1, status.exitstatus
    assert_match(/missing\.json\.gz/, err)
  end

  # `rperf help` prints docs/cli.md, the one manual. Each command's option block there is the
  # parser's own --help text, so an option added, renamed or redescribed in the parser fails here
  # until the manual says the same; every RPERF_* variable lib/ reads is documented there too.
  def test_help_is_the_manual_and_covers_every_option_and_variable
    manual = %w[cli.md reference.md].map { |name| File.read(File.join(ROOT, "docs", name)) }.join("\n")
    out, err, status = rperf("help")
    assert status.success?, err
    assert_equal manual, out
    assert_empty err

    %w[record stat exec report diff].each do |command|
      help, _e, status = rperf(command, "--help")
      assert status.success?
      block = help.split("\n\nRun 'rperf help'").first
      assert_match(/\AUsage: rperf #{command} /, block)
      assert_includes manual, "```\n#{block}\n```\n",
                      "docs/cli.md's block for `rperf #{command}` differs from `rperf #{command} --help`:\n#{block}"
      switches = block.scan(/^ {4}(?:(-\w), )?\s*(--[\w-]+)/).flatten.compact
      assert_operator switches.size, :>=, 5, block
      undescribed = switches.reject { |switch| manual.match?(/`#{Regexp.escape(switch)}[` =\[]/) }
      assert_empty undescribed, "options of `rperf #{command}` that docs/cli.md's text does not describe (in `backquotes`)"
    end

    variables = Dir[File.join(ROOT, "lib/**/*.rb")].flat_map { |f| File.read(f).scan(/\bRPERF_[A-Z][A-Z_]*[A-Z]\b/) }.uniq
    variables -= %w[RPERF_MODES] # a constant of lib/rperf/integrations/mini_profiler.rb, not a variable
    variables -= %w[RPERF_DATA_SOURCE] # the viewer page's JavaScript global (README), not a variable
    assert_operator variables.size, :>=, 20, variables.inspect
    assert_empty variables.reject { |name| manual.include?("`#{name}") }, "RPERF_* variables docs/cli.md does not describe"
  end

  # The Ruby half of the manual (issue 44.7): every public method of Rperf, every keyword of
  # Rperf.start and every integration's constant is in what `rperf help` prints, so a method or
  # keyword added without its documentation fails here.
  def test_help_covers_the_ruby_api
    manual, err, status = rperf("help")
    assert status.success?, err
    # Public because rperf's own hooks call them (ForkHook, Autostart, Multiprocess), not API.
    internal = %i[prepare_fork restart_in_child start_child start_root_after_exec]
    methods = Rperf.singleton_methods(false) - internal
    assert_operator methods.size, :>=, 15, methods.inspect
    undocumented = methods.reject { |m| manual.match?(/`(Rperf\.)?#{Regexp.escape(m.to_s)}[`( ]/) || manual.include?("Rperf.#{m}") }
    assert_empty undocumented, "public Rperf methods the manual does not name"
    keywords = Rperf.method(:start).parameters.map(&:last)
    assert_operator keywords.size, :>=, 15
    assert_empty keywords.reject { |k| manual.include?("`#{k}") }, "Rperf.start keywords the manual does not describe"
    %w[Rperf::RackMiddleware Rperf::Viewer Rperf::SidekiqMiddleware Rperf::ActiveJobMiddleware Rperf::Metrics
       Rperf::Continuous Rperf::CallTree Rperf::MethodTable Rperf::FormatError].each do |name|
      assert_includes manual, name
    end
  end

  def test_sigterm_and_ctrl_c_still_write_the_profile
    handler = script("term.rb", <<~RUBY)
      trap("TERM") { $stdout.puts "graceful"; $stdout.flush; exit 0 }
      $stdout.puts "ready"; $stdout.flush
      loop { 1000.times { |i| i * i } }
    RUBY
    out_path = File.join(@dir, "term.json.gz")
    Open3.popen3(RUBY, RPERF, "record", "-o", out_path, RUBY, handler, chdir: @dir) do |_in, out, _err, wait|
      assert_equal "ready\n", out.gets
      sleep 0.2
      Process.kill("TERM", wait.pid)
      assert_equal "graceful\n", out.gets
      assert_equal 0, wait.value.exitstatus
    end
    assert_operator Rperf.load(out_path)[:aggregated_samples].size, :>, 0

    busy = script("busy.rb", "$stdout.puts 'ready'; $stdout.flush; loop { 1000.times { |i| i * i } }\n")
    int_path = File.join(@dir, "int.json.gz")
    Open3.popen3(RUBY, RPERF, "record", "-o", int_path, RUBY, busy, chdir: @dir) do |_in, out, _err, wait|
      assert_equal "ready\n", out.gets
      sleep 0.2
      Process.kill("INT", wait.pid)
      status = wait.value
      assert(status.signaled? || status.exitstatus != 0)
    end
    assert_operator Rperf.load(int_path)[:aggregated_samples].size, :>, 0
  end

  def test_stdin_and_stdout_pass_through
    out, _e, status = Open3.capture3(RUBY, RPERF, "record", "-o", File.join(@dir, "io.json.gz"), RUBY, "-e",
                                     "puts $stdin.read.upcase", stdin_data: "hello\n", chdir: @dir)
    assert status.success?
    assert_equal "HELLO\n", out
  end

  def test_environment_autostart_and_invalid_values
    env = { "RPERF_ENABLED" => "1", "RPERF_MODE" => "wall", "RPERF_OUTPUT" => File.join(@dir, "env.json.gz"),
            "RUBYLIB" => File.join(ROOT, "lib") }
    _o, err, status = Open3.capture3(env, RUBY, "-rrperf", "-e", "sleep 0.05", chdir: @dir)
    assert status.success?, err
    assert_equal :wall, Rperf.load(env["RPERF_OUTPUT"])[:mode]
    out, err, status = Open3.capture3(env.merge("RPERF_FREQUENCY" => "abc"), RUBY, "-rrperf", "-e", "puts :still_running", chdir: @dir)
    assert status.success?
    assert_equal "still_running\n", out
    assert_match(/RPERF_FREQUENCY must be an integer.*running without profiling/, err)
  end

  def test_labels_snapshot_dir_and_print_only
    out_path = File.join(@dir, "l.json.gz")
    _o, err, status = rperf("record", "--label", "ci=1", "--label", "build=a=b", "-o", out_path, RUBY, "-e", "1")
    assert status.success?, err
    meta = Rperf.read_meta(out_path)[:meta]
    assert_equal({ ci: "1", build: "a=b" }, meta[:labels])
    assert_kind_of String, meta[:git][:sha] if meta[:git] # the checkout is a git repository in CI

    _o, err, status = rperf("record", "--snapshot-dir", "snaps", RUBY, "-e", "1")
    assert status.success?, err
    files = Dir.children(File.join(@dir, "snaps"))
    assert_equal 1, files.size
    assert_match(/\Arperf-(\h{7}|nogit)-\d{8}T\d{6}Z(-\d+)?\.json\.gz\z/, files.first)
    _o, err, status = rperf("record", "--snapshot-dir", "snaps", "-o", "x.json.gz", RUBY, "-e", "1")
    assert_equal 1, status.exitstatus
    assert_equal "Error: --snapshot-dir and -o/--output (or -p) are mutually exclusive\n", err

    out, err, status = rperf("record", "-p", RUBY, hot_script)
    assert status.success?, err
    assert_match(/\ATotal: [\d.]+ms \(cpu\)\nSamples: \d+, Frequency: 1000Hz\n\n Flat:\n/, out)
    refute File.exist?(File.join(@dir, "rperf.json.gz")), "-p prints only"
  end

  def test_print_env_prints_the_environment_and_runs_nothing
    out, err, status = rperf("stat", "--print-env", "-m", "cpu", "--label", "a=b")
    assert status.success?, err
    env = out.lines.to_h do |line|
      assert_match(/\Aexport [A-Z_]+=/, line)
      line.delete_prefix("export ").chomp.split("=", 2)
    end
    assert_equal %w[RUBYLIB RUBYOPT RPERF_ENABLED], env.keys.first(3)
    assert_equal "cpu", env["RPERF_MODE"]
    assert_equal "1", env["RPERF_STAT"]
    # Sourced by a shell, the lines give a profiled Ruby.
    script = "#{out}\nexport RPERF_STAT_COMMAND=probe\nexec #{RUBY.shellescape} -e 'x = 0; 2_000_000.times { x += 1 }'"
    _o, err, status = Open3.capture3("bash", "-c", script, chdir: @dir)
    assert status.success?, err
    assert_match(/Performance stats for 'probe'/, err)
    assert_match(/\[Rperf\] CPU execution/, err)
  end

  def test_report_and_diff_tables
    base = File.join(@dir, "base.json.gz")
    target = File.join(@dir, "target.json.gz")
    rperf("record", "-o", base, RUBY, hot_script(slow_factor: 1))
    rperf("record", "-o", target, RUBY, hot_script(slow_factor: 3))
    out, err, status = rperf("report", "--format", "table", target)
    assert status.success?, err
    lines = out.lines(chomp: true)
    assert_equal "method\tself_pct\ttotal_pct\tself_ms", lines.first
    assert_match(/\AObject#target\t[\d.]+\t[\d.]+\t[\d.]+\z/, lines[1])
    assert_match(/\A# summary\ttotal_ms=[\d.]+\tcpu_ms=[\d.]+\tallocated_objects=\d+/, lines.last)
    out, _e, status = rperf("report", "--format", "table-json", target)
    assert status.success?
    rows = JSON.parse(out)
    assert_equal "Object#target", rows.first["method"]
    # Samples without a Ruby frame (a thread starting or between methods) are no method's self
    # time: their share depends on scheduling (1-2% on a busy machine), the rest is the methods'.
    self_total = rows[0...-1].sum { |r| r["self_pct"] }
    assert_operator self_total, :>, 90.0
    assert_operator self_total, :<=, 100.05
    assert rows.last.key?("summary")
    out, err, status = rperf("diff", "--format", "table", base, target)
    assert status.success?, err
    assert_equal "method\tself_pct_base\tself_pct_head\tdelta_pt", out.lines.first.chomp
    assert_match(/\A# summary\ttotal_ms_base=/, out.lines.last)
    _o, err, status = rperf("report", "--format", "table", File.join(@dir, "missing.json.gz"))
    assert_equal 1, status.exitstatus
    assert_equal "File not found: #{File.join(@dir, 'missing.json.gz')}\n", err
  end


  # The table is per method name: two methods of one name in two files, both on a stack, are
  # one row whose total counts each sample once (it summed the files' totals: 200%).
  def test_table_counts_a_name_once_per_sample
    path = File.join(@dir, "same_name.json.gz")
    Rperf.save(path, { mode: :cpu, frequency: 1000, sampling_count: 2, duration_ns: 40_000_000, label_sets: [{}],
                       aggregated_samples: [[[%w[a.rb Foo#bar], %w[b.rb Foo#bar], %w[m.rb main]], 30_000_000, 1, 0],
                                            [[%w[m.rb main]], 10_000_000, 1, 0]] })
    out, err, status = rperf("report", "--format", "table-json", path)
    assert status.success?, err
    rows = JSON.parse(out)[0...-1].to_h { |r| [r["method"], [r["self_pct"], r["total_pct"]]] }
    assert_equal({ "Foo#bar" => [75.0, 75.0], "main" => [25.0, 100.0] }, rows)
  end

  # As rperf 0.11: `report FILE` serves the viewer (on loopback, any free port) by default.
  def test_report_serves_the_viewer_until_sigterm
    json = File.join(@dir, "p.json.gz")
    rperf("record", "-o", json, RUBY, hot_script)
    [["--port", "0"], []].each { |args| assert_serves_until_sigterm(args, json) }
  end

  # Issue 44 (2): as rperf 0.11, a directory without profiles is an error, not a viewer with
  # nothing in it that serves until killed.
  def test_report_of_a_directory_without_profiles_exits_1
    empty = File.join(@dir, "empty")
    FileUtils.mkdir_p(empty)
    File.write(File.join(empty, "notes.txt"), "not a profile")
    out, err, status = rperf("report", empty)
    assert_equal 1, status.exitstatus, err
    assert_equal "No .json(.gz) profiles found in #{empty}\n", err
    assert_empty out
  end

  # Issue 44 (6): the environment widens the server's Host check without a code change (a
  # reverse proxy on the same machine passes the site's name).
  def test_report_server_accepts_the_hosts_of_rperf_viewer_hosts
    json = File.join(@dir, "p.json.gz")
    _o, err, status = rperf("record", "-o", json, RUBY, "-e", "i = 0; i += 1 while i < 300_000")
    assert status.success?, err
    Open3.popen3({ "RPERF_VIEWER_HOSTS" => "app.example.com" }, RUBY, RPERF, "report", json, chdir: @dir) do |_in, _out, stderr, wait|
      line = stderr.gets
      url = URI(line[%r{http://127\.0\.0\.1:\d+/}] || flunk(line))
      Net::HTTP.start(url.host, url.port) do |http|
        assert_equal "200", http.get("#{url.path}snapshots", "host" => "app.example.com").code
        refused = http.get("#{url.path}snapshots", "host" => "other.example.com")
        assert_equal "403", refused.code
        assert_includes refused.body, "RPERF_VIEWER_HOSTS=other.example.com"
      end
      Process.kill("TERM", wait.pid)
      assert wait.value.success?
    end
  end

  # Issue 30 (5): the server `rperf report` starts answers only requests whose Host names
  # loopback (a DNS-rebinding page carries its own name).
  def test_report_server_refuses_a_host_that_is_not_loopback
    json = File.join(@dir, "p.json.gz")
    _o, err, status = rperf("record", "-o", json, RUBY, "-e", "i = 0; i += 1 while i < 300_000")
    assert status.success?, err
    Open3.popen3(RUBY, RPERF, "report", json, chdir: @dir) do |_in, _out, stderr, wait|
      line = stderr.gets
      url = URI(line[%r{http://127\.0\.0\.1:\d+/}] || flunk(line))
      Net::HTTP.start(url.host, url.port) do |http|
        refused = http.get("#{url.path}snapshots", "host" => "attacker.example:#{url.port}")
        assert_equal "403", refused.code
        refute_includes refused.body, "sampling_count"
        assert_equal "200", http.get("#{url.path}snapshots").code
        assert_equal "200", http.get("#{url.path}snapshots", "host" => "localhost:#{url.port}").code
      end
      Process.kill("TERM", wait.pid)
      assert wait.value.success?
    end
  end

  # Issue 30 (6): `report --html -o` writes a temporary file beside the target and renames it:
  # a failed write says why, exits 1 and leaves the previous page; a symlink keeps pointing to
  # the new page (its target is replaced, the link is not written through).
  def test_report_html_output_is_atomic_and_follows_a_symlink
    json = File.join(@dir, "p.json.gz")
    _o, err, status = rperf("record", "-o", json, RUBY, "-e", "i = 0; i += 1 while i < 300_000")
    assert status.success?, err
    page = File.join(@dir, "page.html")
    File.write(page, "the previous page")
    # A file size limit (ulimit -f; SIGXFSZ at its default) makes the write fail with EFBIG mid-page.
    _o, err, status = Open3.capture3("sh", "-c", 'ulimit -f 64; exec "$@"', "sh", RUBY, RPERF, "report", "--html",
                                     "-o", "page.html", json, chdir: @dir)
    assert_equal 1, status.exitstatus, err
    assert_match(/\AError: File too large - .*page\.html/, err)
    refute_match(/\.rb:\d+:in /, err, "no backtrace")
    assert_equal "the previous page", File.read(page)
    assert_equal ["page.html", "p.json.gz"].sort, Dir.children(@dir).sort, "no temporary file is left"

    _o, err, status = rperf("report", "--html", "-o", "/dev/full", json)
    assert_equal 1, status.exitstatus, err
    assert_match(/\AError: .*No space left on device/, err)

    Dir.mkdir(File.join(@dir, "real"))
    File.write(File.join(@dir, "real/target.html"), "old")
    File.symlink("real/target.html", File.join(@dir, "link.html"))
    _o, err, status = rperf("report", "--html", "-o", "link.html", json)
    assert status.success?, err
    assert File.symlink?(File.join(@dir, "link.html")), "the link is kept"
    assert_match(/\A<!DOCTYPE html>/i, File.read(File.join(@dir, "real/target.html")))
    assert_equal ["target.html"], Dir.children(File.join(@dir, "real"))
    File.symlink("real/new.html", File.join(@dir, "dangling.html"))
    _o, err, status = rperf("report", "--html", "-o", "dangling.html", json)
    assert status.success?, err
    assert_match(/\A<!DOCTYPE html>/i, File.read(File.join(@dir, "real/new.html")))
  end

  # Issue 30 (4): a profile whose meta cannot be put in a page (1e400, deep nesting): a clear
  # error and exit 1, no backtrace.
  def test_report_html_of_a_profile_with_an_unservable_meta
    json = File.join(@dir, "p.json")
    _o, err, status = rperf("record", "-o", json, RUBY, "-e", "i = 0; i += 1 while i < 300_000")
    assert status.success?, err
    File.write(json, File.read(json).sub('"meta":{', '"meta":{"odd":1e400,'))
    out, err, status = rperf("report", "--html", json)
    assert_equal 1, status.exitstatus, err
    assert_empty out
    assert_match(/\AError: cannot put the profile in a page: .+\n\z/, err)
  end

  def assert_serves_until_sigterm(args, json)
    Open3.popen3(RUBY, RPERF, "report", *args, json, chdir: @dir) do |_in, _out, err, wait|
      line = err.gets
      # At the root, as rperf 0.11 serves it (issue 25); the /rperf/ of earlier versions redirects.
      url = line[%r{http://127\.0\.0\.1:\d+/ }]&.chomp(" ")
      assert url, line
      list = JSON.parse(Net::HTTP.get(URI("#{url}snapshots")))
      entries = list.is_a?(Hash) ? list["snapshots"] : list
      assert_equal 1, entries.size, list
      assert_match(/<html/i, Net::HTTP.get(URI(url)))
      { "rperf" => "/", "rperf/" => "/", "rperf/snapshots" => "/snapshots", "rperf/snapshots/1?x=1" => "/snapshots/1?x=1" }.each do |old, new|
        moved = Net::HTTP.get_response(URI("#{url}#{old}"))
        assert_equal ["301", new], [moved.code, moved["location"]], old
      end
      Process.kill("TERM", wait.pid)
      assert wait.value.success?
    end
  end
end

class CliHtmlTest < Minitest::Test
  include MethodViewAssertions

  # Two threads with known work, labelled by role, in wall mode with raw samples (a timeline).
  TWO_THREADS = <<~RUBY
    def main_loop(n)
      i = 0
      i += 1 while i < n
      i
    end

    def worker_loop(n)
      i = 0
      i += 1 while i < n
      i
    end

    # The worker has a third of the main thread's work: the main thread's heaviest function is
    # its loop, not the wait in Thread#join, however the two are scheduled.
    worker = Thread.new { Rperf.label(role: "worker") { worker_loop(2_000_000) } }
    Rperf.label(role: "main") { main_loop(6_000_000) }
    worker.join
  RUBY

  def setup
    skip "chromium is not installed (script/bootstrap consumers)" unless File.executable?(ENV.fetch("CHROMIUM", "/usr/bin/chromium"))
    skip "npm packages are not installed (script/bootstrap consumers)" unless File.directory?(File.join(ROOT, "node_modules/playwright-core"))
  end

  def rperf(*args, chdir:) = Open3.capture3(RUBY, File.join(ROOT, "exe/rperf"), *args, chdir: chdir)

  # Runs a command with a pseudo-terminal as its stdin, stdout and stderr; returns what it printed.
  def on_terminal(*cmd, chdir:)
    require "pty"
    screen = +""
    PTY.spawn(*cmd, chdir: chdir) do |reader, _writer, pid|
      begin
        reader.each_line { |line| screen << line }
      rescue Errno::EIO # the child closed the terminal
        nil
      end
      Process.wait(pid)
    end
    assert $?.success?, screen
    screen.delete("\r")
  end

  def weight_of(data) = data[:aggregated_samples].sum { |s| s[1] }

  # `rperf report --html` writes the viewer's own page (Rperf::Viewer.static_html), one file
  # with every view that works offline: flame graph, icicle, top, call tree, threads, timeline
  # and the label filter, each checked against the profile it was made from.
  def test_html_report_renders_offline_in_headless_chromium
    dir = Dir.mktmpdir("rperf-html")
    json = File.join(dir, "p.json.gz")
    File.write(File.join(dir, "two_threads.rb"), TWO_THREADS)
    _o, err, status = rperf("record", "-m", "wall", "--no-aggregate", "-o", json, RUBY, "two_threads.rb", chdir: dir)
    assert status.success?, err
    data = Rperf.load(json)
    threads = data[:aggregated_samples].map { |s| s[2] }.uniq.sort
    assert_equal 2, threads.size, "the profile has the main thread and the worker"

    # --html prints the page when stdout is redirected (rperf 0.11); -o writes it to a file
    # instead, and so does a terminal (NAME.html here, its path printed, no HTML on the screen).
    page, err, status = rperf("report", "--html", json, chdir: dir)
    assert status.success?, err
    assert_match(/\A<!DOCTYPE html>/i, page)
    screen = on_terminal(RUBY, File.join(ROOT, "exe/rperf"), "report", "--html", json, chdir: dir)
    assert_equal "wrote p.html (open it in a browser: #{File.realpath(dir)}/p.html)", screen.strip
    assert_equal page, File.read(File.join(dir, "p.html"))
    File.delete(File.join(dir, "p.html"))
    _out, err, status = rperf("report", "--html", "-o", "p.html", json, chdir: dir)
    assert status.success?, err
    assert_equal "wrote p.html\n", err
    html = File.read(File.join(dir, "p.html"))
    assert_equal page, html
    assert_includes html, %(<script id="rperf-data" type="application/json">), "the Viewer's page, data inline"
    assert_match(/<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/, html)
    refute html.match?(/<(script|link|img)\s[^>]*\b(src|href)=/), "nothing is loaded from elsewhere"

    plan = { static: true, views: true, label: %w[role worker], method: "Object#main_loop" }
    out, err, status = Open3.capture3("node", File.join(ROOT, "test/consumers/viewer_check.js"), "file://#{File.join(dir, 'p.html')}",
                                      JSON.generate(plan), chdir: ROOT)
    assert status.success?, "viewer_check.js failed:\n#{err}\n#{out}"
    result = JSON.parse(out.lines.last)
    assert_equal [], result["external"], "no network requests"
    assert_equal [], result["errors"]
    assert_equal "p.json.gz", result["title"]
    %w[flame icicle timeline top].each { |view| assert_operator result[view], :>, 1, view }

    # Call tree: expand and collapse, and both loops are in it.
    assert_operator result.dig("tree", "afterExpand"), :>, result.dig("tree", "before")
    assert_operator result.dig("tree", "collapsed"), :<, result.dig("tree", "before")
    assert_includes result.dig("tree", "expandedNames"), "Object#main_loop"
    assert_includes result.dig("tree", "expandedNames"), "Object#worker_loop"
    # It is Rperf::CallTree's (issue 17), under a filter too (a label, then a time range): the
    # page model's tree of the kept samples, nothing marked (issue 45).
    tree_total = Rperf::CallTree.new(data).total_ns
    assert_equal tree_total, result.dig("tree", "total")
    labelled = Rperf::CallTree.new(data, filter: { plan[:label][0].to_sym => plan[:label][1] }).total_ns
    assert_operator labelled, :<, tree_total
    assert_equal labelled, result.dig("filteredTree", "total")
    assert_in_delta result.dig("ranged", "shown"), result.dig("rangedTree", "total"), 1
    [result["filteredTree"], result["rangedTree"]].each do |shown|
      refute shown["marked"]
      assert_operator shown["rows"], :>, 0
    end
    assert_operator result.dig("ranged", "shown"), :<, weight_of(data), "the dragged range narrowed the header"
    assert_equal tree_total, result.dig("clearedTree", "total")
    assert_in_delta weight_of(data), result.dig("clearedTree", "totals", "shown"), 1
    refute result.dig("clearedTree", "marked")
    # One profile: nothing to compare, and the Diff tab says so.
    assert result.dig("diffTab", "marked")
    assert_equal "There is no other snapshot to compare with.", result.dig("diffTab", "title")

    # Methods: Rperf::MethodTable's rows, and main_loop's callers and callees; under a filter
    # the same as the tree.
    table = Rperf::MethodTable.new(data)
    assert_equal method_rows(table), shown_rows(result["methods"])
    assert_graph table, "Object#main_loop", result.dig("methods", "selected")
    filtered = result["filteredMethods"]
    labelled_table = Rperf::MethodTable.new(data, filter: { plan[:label][0].to_sym => plan[:label][1] })
    refute filtered["marked"]
    assert_equal labelled_table.total_ns, filtered["total"]
    assert_operator filtered["rows"], :>, 0
    assert filtered["tableShown"]
    assert_equal method_rows(table), shown_rows(result["clearedMethods"])
    assert_equal table.total_ns, result.dig("clearedMethods", "total")

    # Threads: exactly the profile's two, each with its own loop as heaviest function and,
    # when clicked, exactly its own weight.
    total = weight_of(data)
    assert_in_delta total, result.dig("unfiltered", "shown"), 1
    assert_equal threads, result["threads"].map { |t| t["thread"] }
    by_thread = data[:aggregated_samples].group_by { |s| s[2] }.transform_values { |ss| ss.sum { |s| s[1] } }
    threads.each do |th|
      assert_in_delta by_thread[th], result.dig("threadTotals", th.to_s, "shown"), 1, "thread #{th}"
      assert_operator by_thread[th], :<, total
    end
    heaviest = result["threads"].map { |t| t["heaviest"][/\A\S+/] }
    assert_equal %w[Object#main_loop Object#worker_loop].sort, heaviest.sort, result["threads"].inspect

    # Label filter: only the worker's samples, on the worker's thread only.
    worker_ns = data[:aggregated_samples].sum { |s| data[:label_sets][s[3]][:role] == "worker" ? s[1] : 0 }
    assert_operator worker_ns, :>, 0
    assert_in_delta worker_ns, result.dig("filtered", "shown"), 1
    worker_thread = data[:aggregated_samples].find { |s| data[:label_sets][s[3]][:role] == "worker" }[2]
    assert_equal [worker_thread.to_s], result["filteredThreads"]
    assert_in_delta total, result.dig("reset", "shown"), 1
  ensure
    FileUtils.rm_rf(dir) if dir
  end
end
