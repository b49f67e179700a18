# frozen_string_literal: true

# Command-line facts of the rperf whose lib is first on the load path (its exe is ../exe/rperf
# beside that lib), as JSON on stdout:
#   ruby -I <lib of one gem> test/compat/support/cli_probe.rb <dir>
# Runs every command and option in <dir> on two small programs and records exit status,
# stdout, stderr (the directory's path replaced by $DIR) and the files made.
# The probe itself never loads rperf: each command is a process of its own.
require "json"
require "open3"
require "rbconfig"
require "zlib"
require_relative "shape"

module CompatProbe
  module CLI
    APP = <<~RUBY
      def work(n) = n < 2 ? n : work(n - 1) + work(n - 2)
      work(24)
      sleep 0.05
      GC.start
    RUBY
    FORKING_APP = <<~RUBY
      def work(n) = n < 2 ? n : work(n - 1) + work(n - 2)
      # The child also waits a little: a child that ends before its first tick (a loaded machine
      # can stretch 1 ms) leaves 0.11.1 without a child profile to merge.
      pid = fork { work(23); sleep 0.05 }
      work(23)
      Process.wait(pid)
    RUBY

    module_function

    def lib = $LOAD_PATH.find { |p| File.exist?(File.join(p, "rperf.rb")) } || abort("no rperf.rb on the load path")
    def exe = File.expand_path("../exe/rperf", lib)

    def clean_env
      ENV.keys.grep(/\A(RPERF_|BUNDLE|RUBYOPT\z|RUBYLIB\z)/).to_h { |k| [k, nil] }
    end

    def normalize(text, dir)
      text.to_s.gsub(dir, "$DIR").gsub(/rperf-\d+-\h+/, "rperf-<pid>-<hex>")
    end

    def lines(text, limit) = text.lines.first(limit).map(&:chomp)

    # Runs `ruby <exe> *args` (or a plain command) in dir; records what it printed and made.
    def run(dir, args, env: {}, limit: 40, command: nil)
      before = Dir.glob("**/*", base: dir)
      # -I lib: rperf 0.11.1's exe finds its rperf.so on the load path (an installed gem's is).
      argv = command || [RbConfig.ruby, "-I", lib, exe, *args]
      out, err, status = Open3.capture3(clean_env.merge(env), *argv, chdir: dir)
      made = Dir.glob("**/*", base: dir) - before
      {
        "argv" => (command ? ["ruby", *argv.drop(1)] : ["rperf", *args]).join(" ").gsub(dir, "$DIR").gsub(lib, "<lib>"),
        "status" => status.exitstatus || "signal #{status.termsig}",
        "stdout" => lines(normalize(out, dir), limit),
        "stderr" => lines(normalize(err, dir), limit),
        "made" => made.sort,
      }
    end

    def profile_facts(path)
      doc = JSON.parse(Zlib.gunzip(File.binread(path)))
      pid_key = doc["label_sets"]&.flat_map(&:keys)&.find { |k| k == "%pid" }
      without_pid = doc["aggregated_samples"].count { |s| !doc["label_sets"].to_a[s[3]].to_h.key?("%pid") }
      {
        "top_level_keys" => doc.keys,
        "meta" => doc["meta"]&.except("created_at", "hostname", "git")&.merge("git" => doc.dig("meta", "git")&.keys),
        "summary_keys" => doc["summary"]&.keys,
        "process_count" => doc["process_count"],
        "total_duration_ns" => doc.key?("total_duration_ns"),
        "pid_label" => !pid_key.nil?,
        "samples_without_pid_label" => without_pid,
        "samples" => doc["aggregated_samples"].size,
      }
    rescue StandardError => e
      "unreadable: #{e.class}: #{e.message}"
    end

    def runs(dir)
      File.write(File.join(dir, "app.rb"), APP)
      File.write(File.join(dir, "fork_app.rb"), FORKING_APP)
      app = %w[ruby app.rb]
      facts = {}
      record = lambda do |key, args, **kw|
        facts[key] = run(dir, args, **kw)
      end

      record.("-v", ["-v"])
      record.("--version", ["--version"])
      record.("-h", ["-h"])
      record.("no arguments", [])
      record.("unknown command", ["bogus"])
      facts["help"] = run(dir, ["help"], limit: 12).merge("line_count" => run(dir, ["help"], limit: 10_000)["stdout"].size)
      %w[record stat exec report diff].each { |c| record.("#{c} --help", [c, "--help"], limit: 60) }

      record.("stat", ["stat", *app])
      record.("stat --report", ["stat", "--report", *app], limit: 60)
      record.("exec", ["exec", *app], limit: 60)
      record.("record -v", ["record", "-v", "-o", "v.json.gz", *app], limit: 60)
      record.("record", ["record", *app])
      facts["record file"] = profile_facts(File.join(dir, "rperf.json.gz"))
      record.("record -o pb.gz", ["record", "-o", "p.pb.gz", *app])
      record.("record -o unknown extension", ["record", "-o", "p.prof", *app])
      facts["unknown extension magic"] = File.exist?(File.join(dir, "p.prof")) ? File.binread(File.join(dir, "p.prof"), 2).unpack1("H*") : "no file"
      record.("record -p", ["record", "-p", *app], limit: 30)
      record.("record --label", ["record", "--label", "ci=yes", "--label", "pr=12", "-o", "l.json.gz", *app])
      facts["record --label file"] = profile_facts(File.join(dir, "l.json.gz"))
      record.("record --label bad", ["record", "--label", "novalue", *app])
      record.("record --snapshot-dir", ["record", "--snapshot-dir", "snaps", *app])
      record.("record --snapshot-dir with -o", ["record", "--snapshot-dir", "snaps", "-o", "x.json.gz", *app])
      record.("record --print-env", ["record", "--print-env", "-m", "wall", "--label", "a=b"])
      record.("stat --print-env", ["stat", "--print-env"])

      record.("second profile", ["record", "-o", "b.json.gz", "ruby", "-e", "def f(n) = n < 2 ? n : f(n-1) + f(n-2); f(25)"])
      record.("report (default file, --top)", ["report", "--top"])
      record.("report --text", ["report", "--text", "rperf.json.gz"])
      record.("report --format table", ["report", "--format", "table", "rperf.json.gz"], limit: 12)
      record.("report --format table-json", ["report", "--format", "table-json", "rperf.json.gz"], limit: 3)
      record.("report --format table of pprof", ["report", "--format", "table", "p.pb.gz"])
      record.("report --format foo", ["report", "--format", "foo", "rperf.json.gz"], limit: 5)
      record.("report --top pprof", ["report", "--top", "p.pb.gz"], limit: 12)
      record.("report missing file", ["report", "--top", "missing.json.gz"], limit: 5)
      record.("diff --format table", ["diff", "--format", "table", "rperf.json.gz", "b.json.gz"], limit: 12)
      record.("diff --format table-json", ["diff", "--format", "table-json", "rperf.json.gz", "b.json.gz"], limit: 3)
      record.("diff --top", ["diff", "--top", "rperf.json.gz", "b.json.gz"], limit: 15)
      record.("diff one file", ["diff", "--top", "rperf.json.gz"], limit: 5)

      record.("--signal abc", ["record", "--signal", "abc", "-o", "s1.json.gz", *app], limit: 5)
      record.("--signal 9", ["record", "--signal", "9", "-o", "s2.json.gz", *app], limit: 5)
      record.("--signal false", ["record", "--signal", "false", "-o", "s3.json.gz", *app], limit: 5)
      record.("--format foo", ["record", "--format", "foo", "-o", "s4.json.gz", *app], limit: 5)
      record.("-f 0", ["record", "-f", "0", "-o", "s5.json.gz", *app], limit: 5)
      record.("-f 20000", ["record", "-f", "20000", "-o", "s6.json.gz", *app], limit: 5)
      record.("-m foo", ["stat", "-m", "foo", *app], limit: 5)
      record.("unwritable -o", ["record", "-o", "/nonexistent/dir/x.json.gz", *app], limit: 5)
      record.("no command", ["record"], limit: 5)
      record.("command not found", ["record", "-o", "nf.json.gz", "no-such-command-xyz"], limit: 5)
      record.("command exit status", ["record", "-o", "ex.json.gz", "ruby", "-e", "exit 3"], limit: 5)

      record.("stat fork", ["stat", "ruby", "fork_app.rb"], limit: 40)
      record.("record fork", ["record", "-m", "wall", "-o", "fork.json.gz", "ruby", "fork_app.rb"])
      facts["record fork file"] = profile_facts(File.join(dir, "fork.json.gz"))
      record.("record --no-inherit fork", ["record", "--no-inherit", "-m", "wall", "-o", "nofork.json.gz", "ruby", "fork_app.rb"])
      facts["record --no-inherit fork file"] = profile_facts(File.join(dir, "nofork.json.gz"))

      env_run = { "RPERF_ENABLED" => "1", "RPERF_MODE" => "wall", "RPERF_OUTPUT" => "env.json.gz" }
      record.("RPERF_ENABLED=1 ruby -rrperf fork_app.rb", nil, env: env_run,
                                                          command: [RbConfig.ruby, "-I", lib, "-rrperf", "fork_app.rb"])
      facts["RPERF_ENABLED fork file"] = profile_facts(File.join(dir, "env.json.gz"))
      tmpbase = File.join(dir, "tmpbase")
      Dir.mkdir(tmpbase)
      run(dir, ["record", "-o", "tmpdir.json.gz", "ruby", "fork_app.rb"], env: { "RPERF_TMPDIR" => tmpbase })
      facts["RPERF_TMPDIR used"] = !Dir.empty?(tmpbase)
      record.("RPERF_MODE=bogus", nil, env: { "RPERF_ENABLED" => "1", "RPERF_MODE" => "bogus" },
                                       command: [RbConfig.ruby, "-I", lib, "-rrperf", "-e", "p 1"], limit: 5)
      record.("RPERF_META_LABELS", nil,
             env: { "RPERF_ENABLED" => "1", "RPERF_OUTPUT" => "ml.json.gz", "RPERF_META_LABELS" => '{"k":"v"}',
                    "RPERF_META_GIT" => '{"sha":"abc1234","branch":"b"}' },
             command: [RbConfig.ruby, "-I", lib, "-rrperf", "app.rb"])
      facts["RPERF_META_LABELS file meta"] = profile_facts(File.join(dir, "ml.json.gz"))
      facts
    end
  end
end

dir = File.realpath(ARGV.fetch(0))
CompatProbe::Shape.emit(CompatProbe::CLI.runs(dir))
