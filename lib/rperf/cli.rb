# frozen_string_literal: true

require "optparse"
require "shellwords"
require "stringio"
require_relative "../rperf"

module Rperf
  # The `rperf` command: record, stat, exec, report, diff, help. Options, messages and exit
  # statuses follow rperf 0.11 (scripts parse them); ours are added where it has none.
  class CLI
    # Ends the command with a status once its message is printed.
    class Exit < StandardError
      attr_reader :status

      def initialize(status)
        super("exit #{status}")
        @status = status
      end
    end

    USAGE = <<~TEXT
      Usage: rperf record [options] command [args...]
             rperf stat [options] command [args...]
             rperf exec [options] command [args...]
             rperf report [options] [file]
             rperf diff [options] base target
             rperf help
    TEXT
    MORE = "Run 'rperf help' for full documentation"

    # The full manual `rperf help` prints: docs/cli.md (the command line) then docs/reference.md
    # (the Ruby API, environment, formats, integrations), the one place each is written (the
    # README links them; the gem ships them). The option blocks of cli.md are the parsers' own
    # --help texts, and every option, RPERF_* variable, public method and start keyword is in the
    # manual (test/cli_test.rb checks both).
    MANUAL_PATHS = %w[cli.md reference.md].map { |name| File.expand_path("../../docs/#{name}", __dir__) }.freeze

    def self.manual
      MANUAL_PATHS.map { |path| File.read(path) }.join("\n")
    rescue SystemCallError # an installation without it: the usage, and what is missing
      "#{USAGE}\nThe full manual, docs/cli.md and docs/reference.md, is missing from this installation.\n"
    end

    PROFILE_FORMATS = Settings::FORMATS.map(&:to_s).freeze
    # rperf 0.11's order of --print-env; variables it does not set follow.
    PRINT_ENV_ORDER = %w[RUBYLIB RUBYOPT RPERF_ENABLED RPERF_OUTPUT RPERF_FREQUENCY RPERF_MODE RPERF_FORMAT
                         RPERF_VERBOSE RPERF_SIGNAL RPERF_AGGREGATE RPERF_META_GIT RPERF_SESSION_DIR RPERF_STAT
                         RPERF_STAT_COMMAND RPERF_STAT_REPORT].freeze

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
      when "record", "stat", "exec" then profile_command(argv, command.to_sym)
      when "report" then report(argv)
      when "diff" then diff(argv)
      when "help" then @out.print(CLI.manual) || 0
      when "-h", "--help" then @out.puts(USAGE, "", MORE) || 0
      when "-v", "--version", "-V", "version" then @out.puts("rperf #{VERSION}") || 0
      when nil then @err.puts(USAGE) || 1
      else
        @err.puts "Unknown subcommand: #{command.inspect}", USAGE
        1
      end
    rescue Exit => e
      e.status
    rescue Rperf::Error, Rperf::WriteError => e
      @err.puts "Error: #{e.message}"
      1
    end

    private

    def fail_with(message)
      @err.puts message
      raise Exit, 1
    end

    def parse(parser, argv, order: true)
      order ? parser.order!(argv) : parser.parse!(argv)
    rescue OptionParser::ParseError => e
      @err.puts e.message, parser
      raise Exit, 1
    end

    # --- record / stat / exec --------------------------------------------------------------

    def profile_command(argv, kind)
      opts = { mode: kind == :record ? "cpu" : "wall", frequency: Settings::DEFAULTS[:frequency], inherit: true,
               aggregate: Settings::DEFAULTS[:aggregate], report: kind == :exec, labels: {} }
      parser = profile_parser(kind, opts)
      parse(parser, argv) # options stop at the command
      return print_help(parser) if opts[:help]

      env = profile_env(opts, kind, argv)
      return print_env(env) if opts[:print_env]

      fail_with("No command specified.\n#{parser}") if argv.empty?
      exec_command(env, argv)
    end

    def print_help(parser)
      @out.puts parser, "", "#{MORE} (modes, formats, diagnostics guide, etc.)"
      0
    end

    def profile_parser(kind, opts)
      OptionParser.new do |o|
        o.banner = "Usage: rperf #{kind} [options] command [args...]"
        o.on("-o", "--output PATH", "Output file (default: #{kind == :record ? 'rperf.json.gz' : 'none'})") { |v| opts[:output] = v }
        o.on("-f", "--frequency HZ", Integer, "Sampling frequency in Hz (default: 1000)") { |v| opts[:frequency] = v }
        o.on("-m", "--mode MODE", %w[cpu wall], "Profiling mode: cpu or wall (default: #{opts[:mode]})") { |v| opts[:mode] = v }
        if kind == :record
          o.on("--format FORMAT", PROFILE_FORMATS,
               "Output format: #{PROFILE_FORMATS[0...-1].join(', ')}, or #{PROFILE_FORMATS.last} (default: auto from extension)") { |v| opts[:format] = v }
          o.on("-p", "--print", "Print text profile to stdout (same as --format=text --output=/dev/stdout)") { opts[:print] = true }
          o.on("--snapshot-dir DIR", "Save output as rperf-<sha7>-<timestamp>.json.gz in DIR") { |v| opts[:snapshot_dir] = v }
        end
        o.on("--label KEY=VALUE", "Add a label to profile metadata (repeatable)") { |v| add_label(opts, v) }
        o.on("--signal VALUE", "Timer signal (Linux only): signal number, or 'false' for nanosleep thread") { |v| opts[:signal] = signal_option(v) }
        o.on("--capture PATH", %w[signal postponed],
             "Stack capture: signal (in the signal handler) or postponed (default: signal under YJIT)") { |v| opts[:capture] = v.to_sym }
        o.on("--no-aggregate", "Disable sample aggregation (keep raw samples)") { opts[:aggregate] = false }
        o.on("--report", "Include flat/cumulative profile tables in output") { opts[:report] = true } if kind == :stat
        if kind != :record
          o.on("--idle", "Count idle waits too (threads waiting for work: hidden by default, with a line saying how much)") do
            opts[:idle] = true
          end
        end
        o.on("--no-inherit", "Do not profile forked/spawned child processes (default: inherit)") { opts[:inherit] = false }
        o.on("--vm-state-frames", "GVL/GC states as leaf frames ([GVL blocked], ...) instead of labels") { opts[:vm_state_frames] = true }
        o.on("--alloc[=N]", Integer, "Also sample one allocation in N (default: #{Settings::DEFAULT_ALLOCATION_INTERVAL})") do |v|
          opts[:allocations] = v || true
        end
        o.on("--retained", "With --alloc: also count the sampled objects still alive at exit (follows every free)") do
          opts[:retained] = true
        end
        o.on("--print-env", "Print the environment rperf would set (export KEY=VALUE lines), then exit without running a command") { opts[:print_env] = true }
        o.on("-v", "--verbose", "Print sampling statistics to stderr") { opts[:verbose] = true }
        o.on("-h", "--help", "Show this help") { opts[:help] = true }
      end
    end

    def add_label(opts, text)
      key, value = text.split("=", 2)
      fail_with("Error: --label must be KEY=VALUE, got: #{text.inspect}") if value.nil? || key.empty?
      opts[:labels][key] = value
    end

    def signal_option(text)
      return false if text == "false"
      return Integer(text, 10) if text.match?(/\A\d+\z/)

      fail_with("Error: --signal must be a signal number or 'false', got: #{text.inspect}")
    end

    # The profiled command's environment: the settings serialised once (Settings#child_env),
    # plus what only the CLI sets. Every check happens here, before anything runs.
    def profile_env(opts, kind, argv)
      output = output_path(opts, kind)
      settings = begin
        Settings.new(mode: opts[:mode].to_sym, frequency: opts[:frequency], aggregate: opts[:aggregate],
                     inherit: opts[:inherit], vm_state_frames: opts[:vm_state_frames] || false, signal: opts[:signal],
                     allocations: opts[:allocations], retained: opts[:retained] || false, capture: opts[:capture],
                     format: opts[:print] ? :text : opts[:format]&.to_sym, output: output,
                     verbose: opts[:verbose] || false, stat: kind != :record)
      rescue ArgumentError => e
        fail_with("Error: #{e.message}")
      end
      env = {
        "RPERF_ENABLED" => "1",
        **settings.child_env,
        **settings.process_env,
        "RPERF_ORIGINAL_RUBYOPT" => ENV.fetch("RUBYOPT", ""),
        "RPERF_ORIGINAL_RUBYLIB" => ENV.fetch("RUBYLIB", ""),
        **Autostart.preload_env,
        # Collected now, before the command can chdir elsewhere.
        "RPERF_META_GIT" => meta_git_json,
        "RPERF_META_LABELS" => opts[:labels].empty? ? nil : json(opts[:labels]),
      }
      if kind != :record
        env["RPERF_STAT_COMMAND"] = argv.join(" ") # as rperf 0.11 shows it: the words, unquoted
        env["RPERF_STAT_REPORT"] = "1" if opts[:report]
        env["RPERF_STAT_IDLE"] = "1" if opts[:idle]
      end
      env.compact
    end

    def output_path(opts, kind)
      if opts[:snapshot_dir]
        fail_with("Error: --snapshot-dir and -o/--output (or -p) are mutually exclusive") if opts[:output] || opts[:print]
        fail_with("Error: --snapshot-dir requires JSON format (got --format=#{opts[:format]})") if opts[:format] && opts[:format] != "json"
        return snapshot_path(opts[:snapshot_dir])
      end
      return "/dev/stdout" if opts[:print]

      output = opts[:output] || (kind == :record ? "rperf.json.gz" : nil)
      return nil unless output

      output = File.expand_path(output)
      dir = File.dirname(output)
      fail_with("Error: output path is not writable: #{output}") unless File.directory?(dir) && File.writable?(dir)
      output
    end

    def snapshot_path(dir)
      require "fileutils"
      FileUtils.mkdir_p(dir)
      path = File.join(File.expand_path(dir), Meta.snapshot_filename(Meta.collect_git))
      File.exist?(path) ? path.sub(/\.json\.gz\z/, "-#{Process.pid}.json.gz") : path
    rescue SystemCallError => e
      fail_with("Error: cannot create --snapshot-dir #{dir}: #{e.message}")
    end

    def meta_git_json
      git = Meta.collect_git
      git ? json(git) : "null"
    end

    def json(value)
      require "json"
      JSON.generate(value)
    end

    def print_env(env)
      keys = PRINT_ENV_ORDER.select { |k| env.key?(k) } + (env.keys - PRINT_ENV_ORDER).sort
      keys.each { |k| @out.puts "export #{k}=#{Shellwords.escape(env[k])}" }
      0
    end

    # The command replaces this process, so its exit status is the command's.
    def exec_command(env, argv)
      Kernel.exec(env, *argv)
    rescue SystemCallError => e
      @err.puts "rperf: failed to execute #{argv.first.inspect}: #{e.message}"
      e.is_a?(Errno::ENOENT) ? 127 : 126
    end

    # --- report / diff -----------------------------------------------------------------------

    def viewer_parser(banner, files, opts)
      OptionParser.new do |o|
        o.banner = banner
        # As in rperf 0.11, --port/--host say where the viewer listens when it is served (no
        # --top/--text/--format/--html): with one of those the report is printed and the command
        # exits. diff accepts them too (0.11's go tool pprof web view); ours prints its table.
        where = files == 1 ? "the viewer" : "nothing here: diff prints its table (no web view); accepted as rperf 0.11 does"
        o.on("--port PORT", Integer, "Port of #{files == 1 ? 'the viewer (0: any free one). Useful for SSH port forwarding' : where}") do |v|
          fail_with("Error: --port must be 0..65535, got #{v}") unless v.between?(0, 65_535)
          opts[:port] = v
        end
        o.on("--host HOST", "Bind address of #{files == 1 ? 'the viewer (default: 127.0.0.1); other hosts may connect only with this option' : where}") do |v|
          opts[:host] = v
        end
        o.on("--top", "Print top functions by #{files > 1 ? 'diff' : 'flat time'}") { opts[:mode] = :top }
        o.on("--text", "Print text #{files > 1 ? 'diff report' : 'report'}") { opts[:mode] = :text }
        o.on("--idle", "Show idle waits too (threads waiting for work: the printed views hide them by default, with a line " \
                       "saying how much)") { opts[:idle] = true }
        o.on("--thread N", "Only thread N (its number, as the Viewer's Threads tab shows it; repeatable) in the printed views") do |v|
          (opts[:threads] ||= []) << ShownProfile.thread_number(v)
        end
        o.on("--app-first", "App code first: each run of gem and standard-library frames is one [framework] frame " \
                            "in the printed views (the Viewer's \"app code first\")") { opts[:app_first] = true }
        text_rows = files == 1 ? "50" : "all"
        o.on("--limit N", Integer, "Rows of --top (default: 20), --text (default: #{text_rows}) and --format table/table-json " \
                                   "(default: 50, as rperf 0.11); 0: all") do |v|
          fail_with("Error: --limit must be >= 0, got #{v}") if v.negative?
          opts[:limit] = v
        end
        if files == 1
          o.on("--alloc", "Print top allocation sites and classes (a profile recorded with --alloc)") { opts[:mode] = :alloc }
        else
          o.on("--alloc", "Compare estimated objects allocated instead of time (profiles recorded with --alloc)") { opts[:alloc] = true }
        end
        if files == 1
          o.on("--format FORMAT", %w[table table-json callgrind],
               "Flat table for AI/machine consumption: 'table' (TSV) or 'table-json' (JSON); " \
               "'callgrind' for KCachegrind/callgrind_annotate (stdout, or -o PATH)") do |v|
            opts[:mode] = { "table" => :table, "table-json" => :table_json, "callgrind" => :callgrind }.fetch(v)
          end
          o.on("--html", "Write the viewer as one self-contained, offline HTML page to -o PATH, to stdout when it is " \
                         "redirected, else to NAME.html in the current directory") { opts[:mode] = :html }
          o.on("--firefox", "Write FILE for the Firefox Profiler (FILE.firefox.json.gz, or -o PATH) and print how to open it") do
            opts[:mode] = :firefox
          end
          o.on("-o", "--output PATH", "Write the --html page, the callgrind file or the Firefox profile to PATH " \
                                      "(callgrind.out.*: callgrind, *.firefox.json(.gz): Firefox)") { |v| opts[:output] = v }
          call_tree_options(o, opts)
        else
          o.on("--format FORMAT", %w[table table-json],
               "Flat diff table for AI/machine consumption: 'table' (TSV) or 'table-json' (JSON)") do |v|
            opts[:mode] = v == "table" ? :table : :table_json
          end
        end
        o.on("-h", "--help", "Show this help") { opts[:help] = true }
      end
    end

    # The call-tree views of `report` (CallTree, MethodTable, CallTreeReport).
    def call_tree_options(o, opts)
      o.on("--tree", "Print the call tree (indented, heaviest first)") { opts[:mode] = :tree }
      o.on("--graph", "Print the call graph: each method with its callers and callees") { opts[:mode] = :graph }
      o.on("--callers METHOD", "Print the callers of METHOD (a name, or part of one)") { |v| opts.update(mode: :callers, method: v) }
      o.on("--callees METHOD", "Print the callees of METHOD (a name, or part of one)") { |v| opts.update(mode: :callees, method: v) }
      o.on("--max-depth N", Integer, "Print the call tree down to depth N (totals still count everything)") do |v|
        fail_with("Error: --max-depth must be >= 0, got #{v}") if v.negative?
        opts[:max_depth] = v
      end
      o.on("--min-percent P", Float, "Leave out what takes less than P% of the total (tree and graph)") do |v|
        fail_with("Error: --min-percent must be 0..100, got #{v}") unless v.between?(0, 100)
        opts[:min_percent] = v
      end
    end

    REPORT_BANNER = <<~TEXT.chomp
      Usage: rperf report [options] [file|dir]
             Serves the offline viewer on 127.0.0.1 (default, as rperf 0.11) or prints a summary.
             Default file: rperf.json.gz
             Reads .json.gz / .json and .pb.gz (pprof written by rperf); no Go needed.
    TEXT
    DIFF_BANNER = <<~TEXT.chomp
      Usage: rperf diff [options] base target
             Compare two profiles (shows target - base).
             Accepts .json.gz / .json or .pb.gz files; no Go needed.
    TEXT

    def report(argv)
      opts = { mode: :serve }
      parser = viewer_parser(REPORT_BANNER, 1, opts)
      parse(parser, argv)
      return print_help(parser) if opts[:help]
      unexpected_arguments(argv.drop(1), parser)

      path = argv.first || "rperf.json.gz"
      if opts[:mode] == :serve && opts[:output]
        opts[:mode] = { callgrind: :callgrind, firefox: :firefox }.fetch(Storage.detect_format(opts[:output]), :serve)
      end
      if opts[:mode] != :serve && File.directory?(path)
        fail_with("Directory input opens the time-travel viewer; --top/--text/--html/--format are not supported")
      end
      return serve(path, opts) if opts[:mode] == :serve
      return firefox(path, opts[:output]) if opts[:mode] == :firefox

      data = load_profile(path, opts[:mode])
      return export(path, data, opts) if %i[alloc html callgrind].include?(opts[:mode])

      shown = ShownProfile.new(data, idle: opts[:idle], threads: opts[:threads], app_first: opts[:app_first])
      data = shown.profile
      case opts[:mode]
      when :top then @out.print Text.encode(data, top_n: rows_limit(opts, 20), header: false)
      when :text then @out.print Text.encode(data, top_n: rows_limit(opts, 50))
      when :table then @out.print Table.report_tsv(data, limit: rows_limit(opts, Table::ROWS_LIMIT))
      when :table_json then @out.puts Table.report_json(data, limit: rows_limit(opts, Table::ROWS_LIMIT))
      else print_call_tree_view(data, opts)
      end
      print_note(shown.note, opts[:mode])
      0
    end

    # The views of the whole profile: allocations (never idle), the Viewer's page (its own idle
    # filter) and callgrind's file.
    def export(path, data, opts)
      case opts[:mode]
      when :alloc then @out.print Report.allocations(data, top: 20)
      when :html then write_html(path, data, opts[:output])
      else write_callgrind(data, opts[:output])
      end
      0
    end

    # What the view left out, after it: on stdout under a text view, on stderr beside a table
    # (whose readers parse stdout).
    def print_note(note, mode)
      return unless note

      (%i[table table_json].include?(mode) ? @err : @out).puts note
    end

    def print_call_tree_view(data, opts)
      min_percent = opts[:min_percent] || 0
      tree = CallTree.new(data, max_depth: opts[:max_depth])
      return CallTreeReport.tree(tree, @out, min_percent: min_percent) if opts[:mode] == :tree

      table = tree.method_table
      return CallTreeReport.graph(table, @out, min_percent: min_percent) if opts[:mode] == :graph

      only = table.matching(opts[:method])
      fail_with("No method matching #{opts[:method].inspect} in the profile") if only.empty?
      CallTreeReport.graph(table, @out, only: only, sections: [opts[:mode]])
    end

    def write_callgrind(data, output)
      return @out.print(Storage.encode(data, :callgrind)) unless output

      Storage.write(output, data, :callgrind)
      @err.puts "wrote #{output}"
    end

    # `report --firefox`: the profile in the Firefox Profiler's format (a file already in it is
    # only named), and the two ways to open it: profile-viewer serves the profiler offline.
    def firefox(path, output)
      fail_with("File not found: #{path}") unless File.exist?(path)
      if path.match?(Storage::FIREFOX_PATTERN)
        output = path
        timeline = nil
      else
        output ||= "#{path.sub(/(\.json(\.gz)?|\.pb\.gz|\.pprof)\z/, '')}.firefox.json.gz"
        data = load_profile(path, :firefox)
        Storage.write(output, data, :firefox)
        timeline = data.raw?
        @out.puts "wrote #{output}"
      end
      @out.puts FIREFOX_HOWTO % { path: output.shellescape }
      unless timeline.nil? || timeline
        @out.puts "", "This profile was aggregated: a call tree and flame graph, no timeline (record with --no-aggregate for one)."
      end
      0
    end

    FIREFOX_HOWTO = <<~TEXT.chomp
      Open it in the Firefox Profiler:
        offline, on this machine:  gem install profile-viewer && profile-viewer %<path>s
        in a browser:              https://profiler.firefox.com/ -> "Load a profile from file"
    TEXT

    # The viewer's own page (tree, timeline, threads, filters) with the profile inline: one
    # file that opens from disk with no server and no network. Without -o it goes to stdout
    # when that is redirected (rperf 0.11), else (a terminal) to NAME.html here.
    def write_html(path, data, output)
      require_relative "viewer"
      html = Viewer.static_html(data, title: File.basename(path))
      terminal = @out.respond_to?(:tty?) && @out.tty?
      return @out.print(html) || 0 unless output || terminal

      output ||= File.basename(path).sub(/(\.pb)?(\.json)?(\.gz)?\z/, "") + ".html"
      Storage.write_file(output, html) # atomic: a failure leaves the previous page
      @err.puts "wrote #{output}#{" (open it in a browser: #{File.expand_path(output)})" if terminal}"
    end

    # The viewer (Rperf::Viewer) on Puma for one file, or every profile of a directory, until
    # Ctrl-C or SIGTERM.
    def serve(path, opts)
      begin
        require "puma"
      rescue LoadError
        fail_with("Error: the 'puma' gem is required to serve the viewer. Install it with:\n  gem install puma")
      end
      require_relative "viewer"
      host = opts[:host] || "127.0.0.1"
      local = %w[127.0.0.1 localhost ::1].include?(host)
      # At the root, as rperf 0.11 serves it; /rperf/... (the address earlier versions of this
      # gem printed) redirects there.
      viewer = Viewer.new(nil, path: "", allow: local ? :loopback : :any)
      if File.directory?(path)
        # As rperf 0.11: a directory without profiles is an error, not an empty viewer.
        count = viewer.add_snapshot_dir(path)
        fail_with("No .json(.gz) profiles found in #{path}") if count.zero?
        @err.puts "Loaded #{count} snapshot#{'s' unless count == 1} from #{path}"
      else
        viewer.add_snapshot(load_profile(path, :serve))
      end
      app = lambda do |env|
        old = env["PATH_INFO"].to_s[%r{\A/rperf(/.*)?\z}, 1]
        next viewer.call(env) unless old || env["PATH_INFO"] == "/rperf"

        query = env["QUERY_STRING"].to_s.empty? ? "" : "?#{env['QUERY_STRING']}"
        [301, { "location" => "#{old || '/'}#{query}", "content-type" => "text/plain" }, [""]]
      end
      server = Puma::Server.new(app, nil, min_threads: 1, max_threads: 4,
                                log_writer: Puma::LogWriter.new(StringIO.new, @err))
      server.add_tcp_listener(host, opts[:port] || 0)
      port = server.connected_ports.first
      @err.puts "Serving rperf viewer at http://#{host.include?(':') ? "[#{host}]" : host}:#{port}#{viewer.path}/ (bound to #{host})"
      @err.puts "WARNING: anyone who can reach #{host}:#{port} can read the profile." unless local
      @err.puts "Press Ctrl-C to stop."
      stop = ->(_) { Thread.new { server.stop(true) } }
      %w[INT TERM].each { |sig| Signal.trap(sig, &stop) }
      server.run.join
      0
    rescue SystemCallError => e
      fail_with("Error: cannot serve on #{host}:#{opts[:port]}: #{e.message}")
    end

    def diff(argv)
      opts = { mode: :top }
      parser = viewer_parser(DIFF_BANNER, 2, opts)
      parse(parser, argv)
      return print_help(parser) if opts[:help]

      fail_with("Two profile files required.\n#{parser}") if argv.size < 2
      unexpected_arguments(argv.drop(2), parser)
      base, target = argv.map { |f| load_profile(f, opts[:mode]) }
      note = nil
      unless opts[:alloc] # allocations are never idle
        base, target = { base: base, target: target }.map do |name, data|
          ShownProfile.new(data, idle: opts[:idle], threads: opts[:threads], app_first: opts[:app_first])
        rescue Error => e
          raise Error, "#{name}: #{e.message}"
        end
        note = ShownProfile.diff_note(base, target)
        base, target = base.profile, target.profile
      end
      case opts[:mode]
      when :table then @out.print Table.diff_tsv(base, target, limit: rows_limit(opts, Table::ROWS_LIMIT))
      when :table_json then @out.puts Table.diff_json(base, target, limit: rows_limit(opts, Table::ROWS_LIMIT))
      else @out.puts Diff.new(base, target, allocations: opts[:alloc]).render(limit: opts[:mode] == :top ? rows_limit(opts, 20) : opts[:limit]&.nonzero?)
      end
      print_note(note, opts[:mode])
      0
    end

    ALL_ROWS = 2**31 - 1 # --limit 0, as a count every view (the native text encoder too) takes

    # --limit N: the rows a printed view shows (0: all of them), else the view's default.
    def rows_limit(opts, default)
      return default unless opts.key?(:limit)

      opts[:limit].zero? ? ALL_ROWS : opts[:limit]
    end

    # order! stops at the first file: what follows the files (an option too) is an error.
    def unexpected_arguments(rest, parser)
      return if rest.empty?

      fail_with("Unexpected extra arguments: #{rest.join(' ')} (options must come before the file arguments)\n#{parser}")
    end

    # Tables read JSON profiles only (as rperf 0.11); the other views read pprof files too.
    # The native model, no Hash view: every printer and encoder reads it directly.
    def load_profile(path, mode)
      fail_with("File not found: #{path}") unless File.exist?(path)
      if %i[table table_json].include?(mode) && !path.end_with?(".json", ".json.gz")
        fail_with("--format #{mode.to_s.tr('_', '-')} requires a .json.gz / .json profile (got: #{path})")
      end
      Storage.load_profile(path)
    rescue SystemCallError => e
      fail_with("Error: #{path}: #{e.message}")
    end
  end
end
