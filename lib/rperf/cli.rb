# frozen_string_literal: true

require "optparse"
require "shellwords"

module Rperf
  # The `rperf` command: record, stat, exec, report, diff, help.
  class CLI
    class UsageError < StandardError; end

    HELP = <<~TEXT
      Usage: rperf <command> [options]

      Commands:
        record [options] command...   Profile a Ruby command and write a profile (default rperf.json.gz)
        stat   [options] command...   Run a command and print a performance summary on stderr
        exec   [options] command...   stat --report: the summary plus flat and cumulative tables
        report [--top|--text|--html] [-o PATH] [file]
                                      Show a profile (.json, .json.gz, or a .pb.gz written by rperf)
        diff   [--top|--text] base target
                                      Compare two profiles, by function, largest change first
        help                          This reference

      Options of record, stat and exec:
        -o, --output PATH         Output file (record: rperf.json.gz; stat: none)
        -f, --frequency HZ        Sampling frequency, 1..10000 (default 1000)
        -m, --mode MODE           cpu or wall (record: cpu; stat/exec: wall)
            --format FORMAT       json, pprof, collapsed, text, speedscope (default: from the extension)
        -p, --print               Print the text report to stdout after the command (record)
            --signal N|false      Timer signal number, or false for a sleeping timer thread
            --no-inherit          Do not profile child processes
            --no-aggregate        Keep every sample with its timestamp (raw_samples)
            --report              Add flat and cumulative tables to the stat summary
            --vm-state-frames     GVL/GC states as leaf frames ([GVL blocked], [GC marking], ...)
                                  instead of %GVL/%GC labels, for viewers that ignore labels
        -v, --verbose             Print sampling statistics and top functions to stderr

      Environment (profiling without the CLI): RPERF_ENABLED=1 ruby -rrperf app.rb, with
        RPERF_MODE, RPERF_FREQUENCY, RPERF_OUTPUT, RPERF_FORMAT, RPERF_VERBOSE, RPERF_SIGNAL,
        RPERF_AGGREGATE, RPERF_DEFER, RPERF_STAT, RPERF_STAT_REPORT, RPERF_VM_STATE_FRAMES.

      Examples:
        rperf record -m wall -o profile.pb.gz ruby app.rb
        rperf stat ruby -e 'sleep 0.3'
        rperf report --top profile.json.gz
        rperf diff before.json.gz after.json.gz
    TEXT

    def self.run(argv, out: $stdout, err: $stderr)
      new(out, err).run(argv)
    end

    def initialize(out, err)
      @out = out
      @err = err
    end

    def run(argv)
      argv = argv.dup
      command = argv.shift
      case command
      when "record" then profile_command(argv, :record)
      when "stat" then profile_command(argv, :stat)
      when "exec" then profile_command(argv, :exec)
      when "report" then report(argv)
      when "diff" then diff(argv)
      when "help", "-h", "--help" then @out.puts(HELP) || 0
      when "--version", "-V", "version" then @out.puts("rperf #{VERSION}") || 0
      when nil then usage("no command given")
      else usage("unknown command #{command.inspect}")
      end
    rescue UsageError, OptionParser::ParseError => e
      usage(e.message)
    rescue Rperf::Error => e
      @err.puts "rperf: #{e.message}"
      1
    end

    private

    def usage(message)
      @err.puts "rperf: #{message}"
      @err.puts HELP
      2
    end

    def profile_command(argv, kind)
      opts = { mode: kind == :record ? "cpu" : "wall", frequency: 1000, inherit: true, aggregate: true,
               report: kind == :exec, print: false }
      parser = OptionParser.new do |o|
        o.on("-o", "--output PATH") { |v| opts[:output] = v }
        o.on("-f", "--frequency HZ", Integer) { |v| opts[:frequency] = v }
        o.on("-m", "--mode MODE", %w[cpu wall]) { |v| opts[:mode] = v }
        o.on("--format FORMAT") { |v| opts[:format] = v }
        o.on("-p", "--print") { opts[:print] = true }
        o.on("--signal VALUE") { |v| opts[:signal] = v }
        o.on("--[no-]inherit") { |v| opts[:inherit] = v }
        o.on("--[no-]aggregate") { |v| opts[:aggregate] = v }
        o.on("--report") { opts[:report] = true }
        o.on("--vm-state-frames") { opts[:vm_state_frames] = true }
        o.on("-v", "--verbose") { opts[:verbose] = true }
      end
      parser.order!(argv) # options stop at the command
      raise UsageError, "#{kind}: no command to run" if argv.empty?
      raise UsageError, "frequency must be in 1..10000" unless (1..10_000).cover?(opts[:frequency])

      env = begin
        profile_env(opts, kind, argv)
      rescue ArgumentError => e
        raise UsageError, e.message
      end
      if opts[:print]
        # -p needs to read the profile after the command: run it as a child instead of exec.
        pid = Process.spawn(env, *argv)
        _, status = Process.wait2(pid)
        report([env["RPERF_OUTPUT"], "--text"]) if File.exist?(env["RPERF_OUTPUT"])
        return status.exitstatus || 128 + status.termsig.to_i
      end
      exec_command(env, argv)
    end

    # The profiled command's environment: the settings serialised once (Settings#child_env),
    # plus what only the CLI sets.
    def profile_env(opts, kind, argv)
      output = opts[:output] || (kind == :record ? "rperf.json.gz" : nil)
      settings = Settings.new(mode: opts[:mode].to_sym, frequency: opts[:frequency], aggregate: opts[:aggregate],
                              inherit: opts[:inherit], vm_state_frames: opts[:vm_state_frames] || false,
                              signal: opts[:signal] && Settings.parse_env(:signal, opts[:signal]),
                              format: opts[:format] && Settings.parse_env(:format, opts[:format]),
                              output: output && File.expand_path(output), verbose: opts[:verbose] || false,
                              stat: kind != :record)
      env = {
        "RPERF_ENABLED" => "1",
        **settings.child_env,
        **settings.process_env,
        "RPERF_ORIGINAL_RUBYOPT" => ENV.fetch("RUBYOPT", ""),
        "RPERF_ORIGINAL_RUBYLIB" => ENV.fetch("RUBYLIB", ""),
        **Autostart.preload_env,
      }
      if kind != :record
        env["RPERF_STAT_COMMAND"] = argv.shelljoin
        env["RPERF_STAT_REPORT"] = "1" if opts[:report]
      end
      env.compact
    end

    def exec_command(env, argv)
      Kernel.exec(env, *argv)
    rescue SystemCallError => e
      @err.puts "rperf: cannot run #{argv.first}: #{e.message}"
      127
    end

    def report(argv)
      mode = :top
      output = nil
      parser = OptionParser.new do |o|
        o.on("--top") { mode = :top }
        o.on("--text") { mode = :text }
        o.on("--html") { mode = :html }
        o.on("-o", "--output PATH") { |v| output = v }
      end
      files = parser.parse(argv)
      raise UsageError, "report takes one file" if files.size > 1

      path = files.first || "rperf.json.gz"
      data = Storage.load_any(path)
      case mode
      when :top then @out.puts HtmlReport.top_table(data)
      when :text then @out.puts Report.text(data, top: 30)
      when :html
        output ||= path.sub(/(\.json|\.pb)?(\.gz)?\z/, "") + ".html"
        File.write(output, HtmlReport.html(data, title: File.basename(path)))
        @out.puts "wrote #{output}"
      end
      0
    end

    def diff(argv)
      mode = :top
      parser = OptionParser.new do |o|
        o.on("--top") { mode = :top }
        o.on("--text") { mode = :text }
      end
      files = parser.parse(argv)
      raise UsageError, "diff needs two files: base target" unless files.size == 2

      base, target = files.map { |f| Storage.load_any(f) }
      @out.puts Diff.new(base, target).render(limit: mode == :top ? 20 : nil)
      0
    end
  end
end
