# frozen_string_literal: true

# What a rperf 0.11.1 user does beyond the basics (issue 25), as JSON facts on stdout:
#   ruby -I <lib of one gem> test/compat/support/usage_probe.rb <dir>
# - the environment: RPERF_ENABLED=1 with the user's own RUBYOPT and RUBYLIB (and a child they start);
# - Rperf::ActiveJobMiddleware as an ActiveSupport::Concern (included into a concern of the app);
# - Rperf.save to an unwritable path: which `rescue` clauses catch the error;
# - Rperf.save of what Rperf.load returned: each top-level key once;
# - label sets: the same labels in another order, and a forked child's labels;
# - `rperf exec` / `stat --report` of a Ruby program that execs Ruby;
# - report/diff flag combinations (--port/--host with --top/--format, a directory, three files).
# Every snippet runs in a process of its own with the gem's lib first on the load path; the
# probe itself never loads rperf.
require "json"
require "open3"
require "rbconfig"
require "zlib"
require_relative "shape"

module CompatProbe
  module Usage
    APP = <<~RUBY
      def work(n) = n < 2 ? n : work(n - 1) + work(n - 2)
      work(29) # about 50 ms of CPU: a busy machine still samples it (work(24), 4 ms, was missed;
               # work(27), 20 ms, once at load 10, when the timer thread waited that long for a CPU)
    RUBY

    module_function

    def lib = $LOAD_PATH.find { |p| File.exist?(File.join(p, "rperf.rb")) } || abort("no rperf.rb on the load path")
    def exe = File.expand_path("../exe/rperf", lib)

    def clean_env
      ENV.keys.grep(/\A(RPERF_|BUNDLE|RUBYOPT\z|RUBYLIB\z)/).to_h { |k| [k, nil] }.merge("RPERF_META_GIT" => "null")
    end

    def normalize(text, dir)
      text.to_s.gsub(dir, "$DIR").gsub(lib, "<lib>").gsub(/\b#{Process.pid}\b/, "<pid>")
    end

    # Runs argv in dir; status, and stdout/stderr lines (at most `limit`).
    def run(dir, argv, env: {}, limit: 20, timeout: 60)
      out, err, status = Open3.capture3(clean_env.merge(env), "timeout", timeout.to_s, *argv, chdir: dir)
      { "status" => status.exitstatus, "stdout" => normalize(out, dir).lines.first(limit).map(&:chomp),
        "stderr" => normalize(err, dir).lines.first(limit).map(&:chomp) }
    end

    # A Ruby snippet with the gem's lib first on the load path: what it printed as JSON (its
    # last line), or how it failed.
    def ruby(dir, code, env: {}, args: [])
      r = run(dir, [RbConfig.ruby, "-I", lib, *args, "-e", code], env: env, limit: 1000)
      JSON.parse(r["stdout"].last || "null")
    rescue JSON::ParserError
      r
    end

    def rperf(dir, *args, limit: 20) = run(dir, [RbConfig.ruby, "-I", lib, exe, *args], limit: limit)

    # --- 4: RPERF_ENABLED=1 with the user's RUBYOPT/RUBYLIB --------------------------------

    def environment(dir)
      child = 'p [ENV["RUBYOPT"], $LOAD_PATH.include?("/user/lib"), $LOADED_FEATURES.any? { |f| f.end_with?("/set.rb") }, defined?(Rperf) ? "rperf loaded" : "no rperf"]'
      code = <<~RUBY
        require "json"
        out = IO.popen([RbConfig.ruby, "-e", #{child.inspect}], &:read)
        puts JSON.generate("RUBYOPT" => ENV["RUBYOPT"], "RUBYLIB" => ENV["RUBYLIB"]&.gsub(#{lib.inspect}, "<lib>"),
                           "RPERF_ENABLED" => ENV["RPERF_ENABLED"], "child" => out.chomp, "running" => Rperf.running?)
      RUBY
      env = { "RPERF_ENABLED" => "1", "RPERF_OUTPUT" => File.join(dir, "env.json.gz"),
              "RUBYOPT" => "-rset -rrperf -W0", "RUBYLIB" => "/user/lib:#{lib}" }
      {
        "RPERF_ENABLED with the user's RUBYOPT and RUBYLIB" => ruby(dir, code, env: env),
        "RPERF_ENABLED with only -rrperf" => ruby(dir, code, env: env.merge("RUBYOPT" => "-rrperf", "RUBYLIB" => lib)),
        "record --no-inherit with the user's RUBYOPT" =>
          run(dir, [RbConfig.ruby, "-I", lib, exe, "record", "--no-inherit", "-o", "ni.json.gz", RbConfig.ruby, "-e", "p ENV['RUBYOPT'], ENV['RUBYLIB']"],
              env: { "RUBYOPT" => "-W0", "RUBYLIB" => "/user/lib" })["stdout"],
      }
    end

    # --- 5: ActiveJobMiddleware as a concern ----------------------------------------------

    def active_job(dir)
      code = <<~RUBY
        require "json"
        require "active_job"
        ActiveJob::Base.logger = Logger.new(nil)
        require "rperf/active_job"
        facts = { "concern" => Rperf::ActiveJobMiddleware.singleton_class.include?(ActiveSupport::Concern) }
        module Profiled
          extend ActiveSupport::Concern
          include Rperf::ActiveJobMiddleware
        end
        class ReportJob < ActiveJob::Base
          include Profiled
          def perform(n) = Rperf.labels[:job]
        end
        class MailJob < ActiveJob::Base
          include Rperf::ActiveJobMiddleware
          def perform = Rperf.labels[:job]
        end
        facts["not a job"] = begin
          Class.new { include Rperf::ActiveJobMiddleware }
          "accepted"
        rescue Exception => e
          e.class.name
        end
        facts["perform without a session"] = begin
          ReportJob.perform_now(1)
        rescue Exception => e
          "\#{e.class}: \#{e.message}"
        end
        Rperf.start(mode: :wall)
        facts["label in perform, through a concern"] = ReportJob.perform_now(1)
        facts["label in perform"] = MailJob.perform_now
        facts["labels after"] = Rperf.labels.inspect
        Rperf.stop
        Rperf.start(mode: :wall, defer: true)
        facts["label in perform, deferred"] = ReportJob.perform_now(1)
        Rperf.stop
        puts JSON.generate(facts)
      RUBY
      ruby(dir, code)
    end

    # --- 11: Rperf.save to an unwritable path ----------------------------------------------

    def write_error(dir)
      code = <<~RUBY
        require "json"
        data = { mode: :cpu, frequency: 1000, aggregated_samples: [[[["a.rb", "Foo#bar"]], 1_000_000, 1, 0]] }
        facts = {}
        { "missing directory" => "/nonexistent-dir/p.json.gz", "missing directory, pprof" => "/nonexistent-dir/p.pb.gz" }.each do |what, path|
          begin
            Rperf.save(path, data)
            facts[what] = "saved"
          rescue Exception => e
            facts[what] = {
              "class" => e.class.name,
              "errno" => e.respond_to?(:errno) ? e.errno : nil,
              "rescue SystemCallError" => SystemCallError === e,
              "rescue Errno::ENOENT" => Errno::ENOENT === e,
              "rescue StandardError" => StandardError === e,
              "names the path" => e.message.include?("/nonexistent-dir/p."),
            }
          end
        end
        puts JSON.generate(facts)
      RUBY
      ruby(dir, "require 'rperf'\n#{code}")
    end

    # --- 9: re-saving a loaded profile -------------------------------------------------------

    def resave(dir)
      code = <<~RUBY
        require "json"
        require "zlib"
        # A Hash that says which keys a JSON object repeats (JSON.parse keeps the last silently).
        class KeyLog < Hash
          REPEATED = []
          def []=(k, v)
            REPEATED << k if key?(k)
            super
          end
        end
        data = Rperf.start(mode: :wall) { Rperf.label(r: "1") { sleep 0.01 } }
        Rperf.save("first.json.gz", data)
        loaded = Rperf.load("first.json.gz")
        facts = { "loaded pid/ppid" => [loaded.key?(:pid), loaded.key?(:ppid)] }
        %w[again.json again.json.gz].each do |name|
          Rperf.save(name, Rperf.load("first.json.gz"))
          text = File.binread(name)
          text = Zlib.gunzip(text) if name.end_with?(".gz")
          KeyLog::REPEATED.clear
          doc = JSON.parse(text, object_class: KeyLog)
          facts[name] = { "repeated keys" => KeyLog::REPEATED.uniq, "pid is the writer's" => doc["pid"] == Process.pid,
                          "rperf_version" => doc.key?("rperf_version"), "samples kept" => doc["aggregated_samples"].size == data[:aggregated_samples].size,
                          "loads" => Rperf.load(name)[:aggregated_samples].size == data[:aggregated_samples].size }
        end
        puts JSON.generate(facts)
      RUBY
      ruby(dir, "require 'rperf'\n#{code}", args: ["-W0"])
    end

    # --- 12: label sets ----------------------------------------------------------------------

    def label_sets(dir)
      code = <<~RUBY
        require "json"
        def burn(t) = (s = Process.clock_gettime(Process::CLOCK_MONOTONIC); nil while Process.clock_gettime(Process::CLOCK_MONOTONIC) - s < t)
        facts = {}
        Rperf.start(mode: :wall, inherit: :fork)
        Rperf.label(a: 1) { Rperf.label(b: 2) { burn(0.005); facts["inner a then b"] = Rperf.labels.inspect } }
        Rperf.label(b: 2) { Rperf.label(a: 1) { burn(0.005); facts["inner b then a"] = Rperf.labels.inspect } }
        Rperf.label(b: 2, a: 1) { burn(0.005) }
        Rperf.label(parent: "p") do
          r, w = IO.pipe
          pid = fork do
            r.close
            w.write(JSON.generate(Rperf.labels.to_h { |k, v| [k.inspect, k == :"%pid" ? (v == Process.pid.to_s ? "<own pid>" : v) : v] }))
            w.close
            Rperf.label(c: 3) { burn(0.02) }
          end
          w.close
          facts["labels in a forked child"] = JSON.parse(r.read)
          Process.wait(pid)
        end
        data = Rperf.stop
        sets = data[:label_sets]
        facts["sets holding a=1 and b=2 only"] = sets.count { |s| s.reject { |k, _| k.to_s.start_with?("%") } == { a: 1, b: 2 } }
        child = sets.select { |s| s.key?(:"%pid") }
        facts["child sets"] = child.map { |s| s.keys.reject { |k| %i[%GVL %GC].include?(k) }.map(&:inspect).sort }.uniq.sort
        facts["child samples with the parent's label"] = data[:aggregated_samples].count { |s| sets[s[3]].key?(:"%pid") && sets[s[3]].key?(:parent) }
        facts["child samples"] = data[:aggregated_samples].any? { |s| sets[s[3]].key?(:"%pid") }
        puts JSON.generate(facts)
      RUBY
      ruby(dir, "require 'rperf'\n#{code}")
    end

    # --- 3: the profiled command execs Ruby ------------------------------------------------

    def exec_ruby(dir)
      File.write(File.join(dir, "app.rb"), APP)
      execs = 'exec "ruby", "app.rb"'
      facts = {}
      { "exec" => ["exec"], "stat --report" => %w[stat --report], "stat" => ["stat"] }.each do |name, cmd|
        r = rperf(dir, *cmd, "ruby", "-e", execs, limit: 200)
        facts["#{name} of a program that execs Ruby"] = {
          "status" => r["status"],
          "header" => r["stderr"].find { |l| l.include?("Performance stats for") },
          "tables" => r["stderr"].map(&:strip).select { |l| ["Flat:", "Cumulative:"].include?(l) },
          "app.rb in the tables" => r["stderr"].any? { |l| l.include?("Object#work (app.rb)") },
          "footer" => r["stderr"].any? { |l| l.match?(/\d+ samples \/ \d+ triggers/) },
        }
      end
      r = rperf(dir, "record", "-o", "execd.json.gz", "ruby", "-e", execs)
      facts["record of a program that execs Ruby"] = {
        "status" => r["status"],
        "app.rb sampled" => begin
          JSON.parse(Zlib.gunzip(File.binread(File.join(dir, "execd.json.gz"))))["aggregated_samples"]
              .any? { |s| s[0].any? { |f| f[1] == "Object#work" } }
        rescue StandardError => e
          e.class.name
        end,
      }
      facts
    end

    # --- 10: report/diff flag combinations ------------------------------------------------------

    def flags(dir)
      File.write(File.join(dir, "app.rb"), APP)
      rperf(dir, "record", "-o", "a.json.gz", "ruby", "app.rb")
      rperf(dir, "record", "-o", "b.json.gz", "ruby", "app.rb")
      Dir.mkdir(File.join(dir, "profiles"))
      File.binwrite(File.join(dir, "profiles", "a.json.gz"), File.binread(File.join(dir, "a.json.gz")))
      shape = lambda do |r|
        # The first line up to the first number or method name: the report's kind, not the run's.
        { "status" => r["status"], "stdout head" => r["stdout"].first(1).map { |l| l.sub(/("method":").*/, '\1').sub(/\d.*/, "") },
          "stderr" => r["stderr"].first(3) }
      end
      runs = {
        "report --top --port N FILE" => %w[report --top --port 54329 a.json.gz],
        "report --port N --text FILE" => %w[report --port 54329 --text a.json.gz],
        "report --host H --format table FILE" => %w[report --host 127.0.0.1 --format table a.json.gz],
        "report --port N --format table-json FILE" => %w[report --port 54329 --format table-json a.json.gz],
        "report --top DIR" => %w[report --top profiles],
        "report --text DIR" => %w[report --text profiles],
        "report --format table DIR" => %w[report --format table profiles],
        "report FILE --top" => %w[report a.json.gz --top],
        "report --port abc" => %w[report --port abc --top a.json.gz],
        "diff --port N --format table" => %w[diff --port 54329 --format table a.json.gz b.json.gz],
        "diff --host H --format table-json" => %w[diff --host 127.0.0.1 --format table-json a.json.gz b.json.gz],
        "diff three files" => %w[diff --format table a.json.gz b.json.gz a.json.gz],
        "diff one file" => %w[diff --format table a.json.gz],
        "diff --port 0" => %w[diff --port 0 --format table a.json.gz b.json.gz],
        "diff --port 70000" => %w[diff --port 70000 --format table a.json.gz b.json.gz],
      }
      runs.transform_values { |args| shape.(rperf(dir, *args, limit: 5)) }
    end
  end
end

dir = File.realpath(ARGV.fetch(0))
u = CompatProbe::Usage
CompatProbe::Shape.emit(
  "environment" => u.environment(dir),
  "active_job" => u.active_job(dir),
  "write_error" => u.write_error(dir),
  "resave" => u.resave(dir),
  "label_sets" => u.label_sets(dir),
  "exec_ruby" => u.exec_ruby(dir),
  "flags" => u.flags(dir),
)
