# frozen_string_literal: true

module Rperf
  # The perf-stat-like summary (`rperf stat`, `stat: true`), printed to stderr.
  module Stat
    # The VM-state breakdown's row of each state (by the name Profile#vm_state_totals gives it),
    # with rperf 0.11's wording (scripts match these lines). The rows come in the model's order.
    BREAKDOWN = { running: "[Rperf] CPU execution", gvl_blocked: "[Rperf] GVL blocked (I/O, sleep)",
                  gvl_wait: "[Rperf] GVL wait (contention)", gc_mark: "[Rperf] GC marking", gc_sweep: "[Rperf] GC sweeping" }.freeze

    # rperf 0.11's name of the running state, "CPU execution", is kept (scripts match it); in
    # wall mode it is not CPU time, which the line after the breakdown says.
    WALL_NOTE = "(wall mode: CPU execution is time running Ruby with the GVL, summed over threads; not CPU time)"

    @command = nil
    @report = false
    @idle = false

    module_function

    # Set by the environment autostart from the CLI's variables: the command line shown,
    # --report and --idle.
    def configure(env)
      @command = env["RPERF_STAT_COMMAND"]
      @report = env["RPERF_STAT_REPORT"] == "1"
      @idle = env["RPERF_STAT_IDLE"] == "1"
    end

    # The same settings for a Ruby program this one execs: it goes on as the root and prints
    # the summary at its exit (Multiprocess.child_environment).
    def env
      { "RPERF_STAT_COMMAND" => @command, "RPERF_STAT_REPORT" => (@report ? "1" : nil), "RPERF_STAT_IDLE" => (@idle ? "1" : nil) }.compact
    end

    def ms(ns) = count_with_commas(format("%.1f", ns / 1e6))
    def count(n) = count_with_commas(n.to_i.to_s)

    def count_with_commas(text)
      int, frac = text.split(".")
      int = int.reverse.scan(/\d{1,3}-?/).join(",").reverse
      frac ? "#{int}.#{frac}" : int
    end

    # "  <value> <unit> <pct>%  <label>" and "  <value> <unit>         <label>".
    def pct_line(value, unit, pct, label) = format("  %14s %-2s %5.1f%%  %s", value, unit, pct, label)
    def line(value, unit, label) = format("  %14s %-2s         %s", value, unit, label)

    # The profiler's own time in a result: its sample jobs and its GVL/GC hooks.
    def profiler_time_ns(data) = Storage.value(data, :sampling_time_ns).to_i + Storage.value(data, :hook_time_ns).to_i

    def breakdown(data)
      Storage.native(data).vm_state_totals.to_h { |state, weight| [BREAKDOWN.fetch(state), weight] }
    end

    # `data`: a result Hash or a Native::Profile (a session's end builds no Hash for it). The
    # breakdown and the report leave idle waits out (ShownProfile) unless `idle`, and say how
    # much they left out.
    # The CLI's variables, when set at the call, win over the configured ones: rperf 0.11's public
    # print_stat reads them as it prints, and programs set them before calling it.
    def print(data, command: ENV["RPERF_STAT_COMMAND"] || @command, report: ENV["RPERF_STAT_REPORT"] == "1" || @report,
              idle: @idle, io: $stderr)
      value = ->(key) { Storage.value(data, key) }
      real_ns = value.(:duration_ns) || 0
      io.puts
      io.puts " Performance stats for '#{command || '(unknown)'}':"
      io.puts
      io.puts format("  %14s ms   user", ms(value.(:user_ns) || 0))
      io.puts format("  %14s ms   sys", ms(value.(:sys_ns) || 0))
      io.puts format("  %14s ms   real", ms(real_ns))
      if Storage.samples?(data)
        io.puts
        multi = value.(:process_count).to_i > 1
        io.puts line(count(value.(:process_count)), "", "[Rperf] Ruby processes profiled") if multi
        shown = ShownProfile.new(data, idle: idle)
        totals = breakdown(shown.profile)
        total = totals.values.sum
        totals.each do |name, weight|
          next if weight.zero?

          io.puts pct_line(ms(weight), "ms", total.positive? ? weight * 100.0 / total : 0.0, name)
        end
        io.puts line("", "", shown.note) if shown.note
        io.puts line("", "", WALL_NOTE) if value.(:mode).to_s == "wall" && totals.fetch(BREAKDOWN[:running], 0).positive?
        (runtime_lines(data) + os_lines).each { |l| io.puts l }
        io.puts line("", "", "(GC/OS stats are from root process only; user/sys/[Rperf] lines are aggregated)") if multi
        io.puts("", Text.encode(shown.profile, header: false)) if report
        io.puts("", Report.allocations(data, top: 10)) if data.is_a?(Native::Profile) ? data.allocations? : data.key?(:allocation_samples)
        io.puts
        denominator = value.(:total_duration_ns) || real_ns
        profiler_ns = profiler_time_ns(data)
        overhead = denominator.positive? ? profiler_ns * 100.0 / denominator : 0.0
        io.puts format("  %d samples / %d triggers, %.1f%% profiler overhead",
                       value.(:sampling_count).to_i, value.(:trigger_count).to_i, overhead)
      end
      io.puts
    end

    # GC counters of the whole process (as rperf 0.11: not only the profiled interval).
    def runtime_lines(data)
      value = ->(key) { Storage.value(data, key) }
      gc = GC.stat
      lines = [line(ms(gc[:time].to_i * 1_000_000), "ms", "[Ruby ] GC time (#{count(gc[:count])} count: " \
                    "#{count(gc[:minor_gc_count])} minor, #{count(gc[:major_gc_count])} major)"),
               line(count(gc[:total_allocated_objects]), "", "[Ruby ] allocated objects"),
               line(count(gc[:total_freed_objects]), "", "[Ruby ] freed objects")]
      threads = value.(:detected_thread_count).to_i
      lines << line(count(threads), "", "[Ruby ] detected threads") if threads.positive?
      if defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled? && (ratio = RubyVM::YJIT.runtime_stats[:ratio_in_yjit])
        lines << line(format("%.1f%%", ratio * 100), "", "[Ruby ] YJIT code execution ratio")
      end
      lines
    end

    # Process-wide counters from /proc (Linux); missing files are skipped.
    def os_lines
      lines = []
      if (rss = Result.maxrss_mb)
        lines << line(count(rss), "MB", "[OS   ] peak memory (maxrss)")
      end
      status = proc_file("status")
      if (stat = proc_file("stat"))
        fields = stat.sub(/\A.*\) /m, "").split
        minor = fields[7].to_i
        major = fields[9].to_i
        lines << line(count(minor + major), "", "[OS   ] page faults (#{count(minor)} minor, #{count(major)} major)")
      end
      if status && (vol = status[/^voluntary_ctxt_switches:\s+(\d+)/, 1])
        invol = status[/^nonvoluntary_ctxt_switches:\s+(\d+)/, 1].to_i
        lines << line(count(vol.to_i + invol), "", "[OS   ] context switches (#{count(vol)} voluntary, #{count(invol)} involuntary)")
      end
      if (io = proc_file("io"))
        mb = ->(bytes) { (bytes / 1024.0 / 1024.0).round }
        read = io[/^read_bytes:\s+(\d+)/, 1].to_i
        written = io[/^write_bytes:\s+(\d+)/, 1].to_i
        lines << line(count(mb.(read + written)), "MB", "[OS   ] disk I/O (#{count(mb.(read))} MB read, #{count(mb.(written))} MB write)")
      end
      lines
    end

    def proc_file(name)
      File.read("/proc/self/#{name}")
    rescue SystemCallError
      nil
    end
  end
end
