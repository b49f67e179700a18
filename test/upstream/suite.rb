# frozen_string_literal: true

# Runs rperf 0.11.1's own test suite (ko1/rperf `test/`, test-unit and the multi-process shell
# script) against the published 0.11.1 gem and against this checkout, and prints per file how many
# tests pass on each. Every test that passes on 0.11.1 must pass on ours unless
# docs/compat-0.11.1.md lists it (a private internal, or a difference we keep) with its reason:
# the exit status is 1 when one is missing from that list or listed but passing.
#
# The upstream files are another project's code and stay out of this repository: they are read at
# run time from a fetched snapshot of ko1/rperf (a bare git directory, $RPERF_UPSTREAM_MIRROR)
# and from a directory of newer test files ($RPERF_UPSTREAM_TESTS/test/*, replacing or adding to
# the snapshot's). Started by script/upstream-suite, which installs the gems it needs.
#
#   suite.rb [--side ours|0.11.1] [--reuse ours|0.11.1] [--no-shell] [NAME...]
#     NAME: test file names to run (test_rperf_meta or test_rperf_meta.rb); default all.
#     --reuse SIDE: take that side's results from the last run (tmp/upstream-suite/SIDE.json);
#     --side SIDE: run that side only (with --reuse of the other, the comparison).

require "fileutils"
require "json"
require "open3"
require "optparse"
require "tmpdir"

module UpstreamSuite
  ROOT = File.expand_path("../..", __dir__)
  WORK = File.join(ROOT, "tmp", "upstream-suite")
  DOC = File.join(ROOT, "docs", "compat-0.11.1.md")
  SHELL_SUITE = "test_rperf_multiprocess.sh"
  VIEWER_FILES = %w[test_rperf_viewer.rb test_rperf_viewer_dir.rb].freeze
  UNMASKED_ENV = { "RPERF_VIEWER_ALLOW" => "any" }.freeze
  UNMASKED = "[RPERF_VIEWER_ALLOW=any]"
  FILE_TIMEOUT = 1200 # seconds per file: go tool pprof and forks are slow on a loaded 2-core machine

  module_function

  # The upstream test directory, assembled in WORK/src/test; returns a description of its sources.
  def assemble_sources(mirror, newer)
    src = File.join(WORK, "src")
    FileUtils.rm_rf(src)
    FileUtils.mkdir_p(src)
    sources = []
    if mirror && File.directory?(mirror)
      tag, = Open3.capture2("git", "--git-dir", mirror, "describe", "--tags", "--always", "HEAD")
      tar, status = Open3.capture2("git", "--git-dir", mirror, "archive", "HEAD", "test", binmode: true)
      raise "git archive failed in #{mirror}" unless status.success?
      _, status = Open3.capture2("tar", "-x", "-C", src, stdin_data: tar, binmode: true)
      raise "tar failed" unless status.success?
      sources << "#{mirror} (#{tag.strip}): test/"
    else
      warn "upstream-suite: no fetched snapshot of ko1/rperf at #{mirror.inspect} (RPERF_UPSTREAM_MIRROR)"
    end
    newer_files = newer ? Dir[File.join(newer, "test", "*")].sort : []
    unless newer_files.empty?
      FileUtils.mkdir_p(File.join(src, "test"))
      FileUtils.cp(newer_files, File.join(src, "test"))
      sources << "#{newer}/test: #{newer_files.map { |f| File.basename(f) }.join(', ')}"
    end
    unless File.exist?(File.join(src, "test", "test_helper.rb"))
      abort "upstream-suite: the upstream test files are absent (no test/test_helper.rb from " \
            "#{mirror.inspect} nor #{newer.inspect}): fetch ko1/rperf first; nothing was run"
    end
    sources
  end

  # One directory per library under test, laid out as upstream's checkout (test/, lib/, exe/): the
  # tests find the library and the command as ../lib and ../exe of their own directory, and check
  # that path (not a symlink's target) in RUBYLIB, so lib/ and exe/ are copies (the built
  # extension with them).
  def lay_out(side, lib, exe)
    dir = File.join(WORK, side)
    FileUtils.rm_rf(%w[test lib exe docs].map { |d| File.join(dir, d) }) # the logs of other files stay
    FileUtils.mkdir_p(dir)
    FileUtils.cp_r(File.join(WORK, "src", "test"), dir)
    FileUtils.cp_r(lib, File.join(dir, "lib"))
    FileUtils.cp_r(exe, File.join(dir, "exe"))
    # `rperf help` prints the manual from ../docs of exe/ (both gems ship it).
    docs = File.expand_path("../docs", exe)
    FileUtils.cp_r(docs, File.join(dir, "docs")) if File.directory?(docs)
    dir
  end

  # Runs one test-unit file; returns {tests: [names], failed: [names], summary:, loaded:}.
  def run_unit_file(dir, file, env, log: "#{file}.log")
    loaded_file = File.join(dir, ".loaded-#{log}")
    FileUtils.rm_f(loaded_file)
    # Which rperf.rb the test process loaded, and its VERSION, written when it ends.
    probe = File.join(dir, ".loaded_probe.rb")
    File.write(probe, <<~RUBY)
      at_exit do
        path = $LOADED_FEATURES.find { |f| f.end_with?("/rperf.rb") }
        version = defined?(Rperf::VERSION) ? Rperf::VERSION : nil
        File.write(#{loaded_file.inspect}, [path, version].join("\\t"))
      end
    RUBY
    cmd = [RbConfig.ruby, "-r", probe, "-Ilib", "-Itest", File.join("test", file), "--verbose=verbose", "--no-use-color"]
    out = run_with_timeout(env, cmd, dir)
    File.write(File.join(dir, log), out)
    parse_unit(out).merge(loaded: File.exist?(loaded_file) ? File.read(loaded_file).split("\t") : nil)
  end

  def run_with_timeout(env, cmd, dir)
    out = +""
    Open3.popen2e(env, *cmd, chdir: dir, pgroup: true) do |stdin, io, wait|
      stdin.close
      reader = Thread.new { io.read }
      unless wait.join(FILE_TIMEOUT)
        Process.kill(:KILL, -wait.pid) rescue nil
        out << "upstream-suite: killed after #{FILE_TIMEOUT} s\n"
      end
      out.prepend(reader.value.to_s)
    end
    out
  end

  # test-unit's verbose output: "Class: " headers, "  test_x:\t\t.: (0.1)" lines, and one
  # "Failure:/Error:/Omission:/Pending:" block per fault naming test_x(Class).
  def parse_unit(out)
    tests = []
    klass = nil
    out.each_line(chomp: true) do |line|
      if (m = line.match(/\A(\s*)([A-Z][\w:]*): \z/))
        klass = m[2]
      elsif klass && (m = line.match(/\A\s+(test\S*?):\s/))
        tests << "#{klass}##{m[1]}"
      end
    end
    failed = out.scan(/^(?:Failure|Error|Omission|Pending): (test\S*?)\(([\w:]+)\)/).map { |t, c| "#{c}##{t}" }
    failed += out.scan(/^(?:Omission|Pending): .*\[(test\S*?)\(([\w:]+)\)\]/).map { |t, c| "#{c}##{t}" }
    summary = out[/^\d+ tests, .*$/]
    # A file that stopped before its summary (a crash, the timeout): every test not seen passing fails.
    failed += tests if summary.nil?
    { tests: tests.uniq, failed: failed.uniq, summary: summary }
  end

  # The shell suite: "# N. Title" scenarios of "  PASS: what" / "  FAIL: what (got: ...)" checks.
  def run_shell(dir, env)
    out = run_with_timeout(env, ["bash", File.join("test", SHELL_SUITE)], dir)
    File.write(File.join(dir, "#{SHELL_SUITE}.log"), out)
    scenario = nil
    checks = []
    failed = []
    seen = Hash.new(0)
    out.each_line(chomp: true) do |line|
      if (m = line.match(/\A# (\d+)\. /))
        scenario = m[1]
      elsif (m = line.match(/\A  (PASS|FAIL): (.*)\z/))
        what = m[2].sub(/ \(got[: ].*\z/m, "").strip
        name = "#{SHELL_SUITE}: #{scenario}. #{what}"
        seen[name] += 1
        name += " (#{seen[name]})" if seen[name] > 1
        checks << name
        failed << name if m[1] == "FAIL"
      end
    end
    { tests: checks, failed: failed, summary: out[/^=== Results: .*$/], scenarios: out.scan(/^# (\d+)\. /).uniq.size }
  end

  def run_side(side, dir, lib, files, shell, env, partial)
    results = {}
    files.each do |file|
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      r = run_unit_file(dir, file, env)
      path, version = r[:loaded]
      real = path && File.realpath(path) rescue path
      unless real&.start_with?(File.realpath(lib) + "/")
        abort "upstream-suite: #{side} #{file} loaded #{path.inspect}, not #{lib}/rperf.rb"
      end
      results[file] = r
      $stderr.printf("  %-8s %-34s %-90s %5.0fs  rperf %s from %s\n", side, file, r[:summary] || "(no summary: see #{dir}/#{file}.log)",
                     Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, version, real)
    end
    # Ours refuses a request without a loopback REMOTE_ADDR (kept: docs/compat-0.11.1.md), which the
    # viewer tests do not set: run them once more with the documented switch that allows any client,
    # so the 403 does not hide what is behind it. 0.11.1 has no such check: its results stand for both.
    (files & VIEWER_FILES).each do |file|
      key = "#{file} #{UNMASKED}"
      results[key] =
        if side == "ours"
          r = run_unit_file(dir, file, env.merge(UNMASKED_ENV), log: "#{file}.allow-any.log")
          $stderr.printf("  %-8s %-34s %s\n", side, key, r[:summary] || "(no summary)")
          r
        else
          results[file]
        end
      results[key] = results[key].merge(tests: results[key][:tests].map { |t| "#{t} #{UNMASKED}" },
                                         failed: results[key][:failed].map { |t| "#{t} #{UNMASKED}" })
    end
    if shell
      r = run_shell(dir, env)
      results[SHELL_SUITE] = r
      $stderr.printf("  %-8s %-34s %s (%d scenarios)\n", side, SHELL_SUITE, r[:summary] || "(no summary)", r[:scenarios])
    end
    saved = File.join(WORK, "#{side}.json")
    # A run of some files updates the last run's results of the others.
    if partial && File.exist?(saved)
      results = JSON.parse(File.read(saved), symbolize_names: true).transform_keys(&:to_s).merge(results)
    end
    File.write(saved, JSON.pretty_generate(results))
    results
  end

  # The documented exceptions: docs/compat-0.11.1.md table rows whose first cell is a test
  # (`TestClass#test_name`) or a shell check (`test_rperf_multiprocess.sh: N. what`), with the
  # second cell, the reason. A test refused by ours' loopback check ("refused ...") must pass
  # when the viewer allows any client; any other listed test is listed for both runs.
  def documented
    File.readlines(DOC).each_with_object({}) do |line, listed|
      m = line.match(/\A\| `((?:Test\w+#test\w*[?!]?)|(?:#{Regexp.escape(SHELL_SUITE)}: [^`]+))` \| ([^|]*)/)
      listed[m[1]] = m[2].strip if m
    end
  end

  def listed?(name, listed)
    base = name.delete_suffix(" #{UNMASKED}")
    reason = listed[base]
    reason && (base == name || !reason.start_with?("refused"))
  end

  def main(argv)
    side_only = nil
    reuse = []
    shell = true
    OptionParser.new do |o|
      o.on("--side SIDE", %w[ours 0.11.1]) { |s| side_only = s }
      o.on("--reuse SIDE", %w[ours 0.11.1]) { |s| reuse << s }
      o.on("--no-shell") { shell = false }
    end.parse!(argv)

    mirror = ENV.fetch("RPERF_UPSTREAM_MIRROR")
    newer = ENV["RPERF_UPSTREAM_TESTS"]
    theirs_lib = ENV.fetch("RPERF_PEER_LIB")
    FileUtils.mkdir_p(WORK)
    sources = assemble_sources(mirror, newer)
    all = Dir[File.join(WORK, "src", "test", "test_*.rb")].map { |f| File.basename(f) }.sort - ["test_helper.rb"]
    wanted = argv.map { |a| a.end_with?(".rb", ".sh") ? a : "#{a}.rb" }
    files = wanted.empty? ? all : all & wanted
    shell &&= (wanted.empty? || wanted.include?(SHELL_SUITE)) && File.exist?(File.join(WORK, "src", "test", SHELL_SUITE))
    puts "upstream test files: #{sources.join('; ')}"

    # No Bundler (the tests require test-unit, which is no gem of our bundle) and the gems the
    # script names: test-unit, rackup for 0.11.1's `report` server, and the project's (Rack, Puma).
    env = { "RUBYOPT" => nil, "RUBYLIB" => nil, "BUNDLE_GEMFILE" => nil, "BUNDLE_BIN_PATH" => nil,
            "BUNDLER_SETUP" => nil, "BUNDLER_VERSION" => nil }
    sides = {
      "0.11.1" => [theirs_lib, File.expand_path("../exe", theirs_lib)],
      "ours" => [File.join(ROOT, "lib"), File.join(ROOT, "exe")]
    }
    results = {}
    sides.each do |side, (lib, exe)|
      saved = File.join(WORK, "#{side}.json")
      if reuse.include?(side) && File.exist?(saved)
        results[side] = JSON.parse(File.read(saved), symbolize_names: true).transform_keys(&:to_s)
        puts "#{side}: results of the last run (#{saved})"
        next
      end
      next if side_only && side != side_only

      dir = lay_out(side, lib, exe)
      puts "#{side}: #{dir}/lib and exe are copies of #{lib} and #{exe}"
      # A temporary directory per side: the tests remove every session directory they find under
      # Dir.tmpdir, which would take those of another run (or of another program) on this machine.
      # Outside any git checkout: tests check that a profile made in a temporary directory has no git meta.
      tmp = Dir.mktmpdir("rperf-upstream-#{side}-")
      side_env = env.merge("TMPDIR" => tmp, "RPERF_TMPDIR" => nil, "XDG_RUNTIME_DIR" => nil)
      warn "running the upstream suite against #{side} (#{dir})"
      begin
        results[side] = run_side(side, dir, File.join(dir, "lib"), files, shell, side_env, !wanted.empty?)
      ensure
        FileUtils.rm_rf(tmp)
      end
    end
    rows = files.flat_map { |f| VIEWER_FILES.include?(f) ? [f, "#{f} #{UNMASKED}"] : [f] }
    report(results, rows + (shell ? [SHELL_SUITE] : []))
  end

  def report(results, files)
    theirs = results["0.11.1"] || {}
    ours = results["ours"] || {}
    rows = files.map do |f|
      t = theirs[f]
      o = ours[f]
      count = (t || o)&.dig(:tests)&.size
      pass = ->(r) { r ? (r[:tests] - r[:failed]).size.to_s : "-" }
      [f, count.to_s, pass.(t), pass.(o)]
    end
    counted = files.reject { |f| f.end_with?(UNMASKED) } # the same tests once more
    total = ->(side) { side.empty? ? "-" : counted.sum { |f| side[f] ? (side[f][:tests] - side[f][:failed]).size : 0 }.to_s }
    rows << ["total", counted.sum { |f| (theirs[f] || ours[f])&.dig(:tests)&.size.to_i }.to_s, total.(theirs), total.(ours)]
    header = ["file", "tests", "pass on 0.11.1", "pass on ours"]
    widths = (0..3).map { |i| ([header[i]] + rows.map { |r| r[i] }).map(&:size).max }
    line = ->(r) { "| " + r.each_with_index.map { |c, i| i.zero? ? c.ljust(widths[i]) : c.rjust(widths[i]) }.join(" | ") + " |" }
    puts
    puts line.(header)
    puts "|" + widths.each_with_index.map { |w, i| i.zero? ? "-" * (w + 2) : "-" * (w + 1) + ":" }.join("|") + "|"
    rows.each { |r| puts line.(r) }
    return 0 if theirs.empty? || ours.empty?

    listed = documented
    regressions = files.flat_map do |f|
      next [] unless theirs[f] && ours[f]
      passing_theirs = theirs[f][:tests] - theirs[f][:failed]
      passing_theirs - (ours[f][:tests] - ours[f][:failed])
    end
    undocumented = regressions.reject { |name| listed?(name, listed) }
    # A listed test must still fail on ours (in the run without the viewer switch), or the list is stale.
    passing_listed = listed.keys.select do |name|
      f = files.find { |file| !file.end_with?(UNMASKED) && ours[file] && ours[file][:tests].include?(name) }
      f && !ours[f][:failed].include?(name)
    end
    puts
    puts "pass on 0.11.1, fail on ours: #{regressions.size} (#{regressions.size - undocumented.size} listed in docs/compat-0.11.1.md)"
    undocumented.each { |n| puts "  NOT LISTED: #{n}" }
    passing_listed.each { |n| puts "  listed but passing on ours: #{n}" }
    puts "logs: #{WORK}/<side>/<file>.log"
    undocumented.empty? && passing_listed.empty? ? 0 : 1
  end
end

exit UpstreamSuite.main(ARGV) if $PROGRAM_NAME == __FILE__
