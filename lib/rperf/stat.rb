# frozen_string_literal: true

module Rperf
  # The perf-stat-like summary (`rperf stat`, `stat: true`), printed to stderr.
  module Stat
    # Rows of the VM-state breakdown, in Native::VM_STATES order (state 0 runs Ruby code).
    BREAKDOWN = ["CPU execution", "GVL blocked", "GVL wait", "GC marking", "GC sweeping"].freeze

    @command = nil
    @report = false

    module_function

    # Set by the environment autostart (the CLI): the command line shown, and --report.
    def configure(command:, report:)
      @command = command
      @report = report
    end

    def ms(ns) = format("%.1f", ns / 1e6)
    def count(n) = n.to_s.reverse.scan(/\d{1,3}/).join(",").reverse

    def breakdown(data)
      BREAKDOWN.zip(Storage.native(data).vm_state_totals).to_h
    end

    def print(data, command: @command, report: @report, io: $stderr)
      real_ns = data[:duration_ns] || 0
      io.puts
      io.puts " Performance stats for '#{command || $PROGRAM_NAME}' (#{data[:mode]} mode):"
      io.puts
      io.puts format("  %14s ms   user", ms(data[:user_ns] || 0))
      io.puts format("  %14s ms   sys", ms(data[:sys_ns] || 0))
      io.puts format("  %14s ms   real", ms(real_ns))
      if data[:process_count].to_i > 1
        io.puts format("  %14s      Ruby processes profiled", count(data[:process_count]))
      end
      io.puts
      totals = breakdown(data)
      total = totals.values.sum
      totals.each do |name, weight|
        next if weight.zero? && name != "CPU execution"

        pct = total.positive? ? weight * 100.0 / total : 0.0
        io.puts format("  %14s ms %5.1f%%  %s", ms(weight), pct, name)
      end
      io.puts
      runtime_lines(data).each { |l| io.puts "  [Ruby ] #{l}" }
      os_lines.each { |l| io.puts "  [OS   ] #{l}" }
      if report
        io.puts
        io.puts Report.text(data).gsub(/^/, "  ")
      end
      io.puts
      profiler_ns = data[:sampling_time_ns].to_i + data[:hook_time_ns].to_i # sample jobs + GVL/GC hooks
      overhead = real_ns.positive? ? profiler_ns * 100.0 / real_ns : 0.0
      io.puts format("  %s samples / %s triggers, %.2f%% profiler overhead",
                     count(data[:sampling_count].to_i), count(data[:trigger_count].to_i), overhead)
      io.puts
    end

    def runtime_lines(data)
      lines = []
      if (gc = data[:gc_stats])
        lines << "GC count: #{count(gc[:count])} (#{count(gc[:minor_count])} minor, #{count(gc[:major_count])} major), " \
                 "GC time: #{gc[:time_ms]} ms"
        lines << "allocated objects: #{count(gc[:allocated_objects])}, freed objects: #{count(gc[:freed_objects])}"
      end
      lines << "detected threads: #{data[:detected_thread_count]}" if data[:detected_thread_count]
      if defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled?
        ratio = RubyVM::YJIT.runtime_stats[:ratio_in_yjit]
        lines << format("YJIT: enabled, %.1f%% of instructions in YJIT", ratio) if ratio
        lines << "YJIT: enabled" unless ratio
      end
      lines
    end

    # Process-wide counters from /proc (Linux); missing files are skipped.
    def os_lines
      lines = []
      status = proc_file("status")
      if status
        rss = status[/^VmHWM:\s+(\d+)/, 1]
        lines << "peak RSS: #{count(rss.to_i / 1024)} MB" if rss
        vol = status[/^voluntary_ctxt_switches:\s+(\d+)/, 1]
        invol = status[/^nonvoluntary_ctxt_switches:\s+(\d+)/, 1]
        lines << "context switches: #{count(vol.to_i)} voluntary, #{count(invol.to_i)} involuntary" if vol
      end
      if (stat = proc_file("stat"))
        fields = stat.sub(/\A.*\) /m, "").split
        lines << "page faults: #{count(fields[7].to_i)} minor, #{count(fields[9].to_i)} major"
      end
      if (io = proc_file("io"))
        read = io[/^read_bytes:\s+(\d+)/, 1].to_i
        written = io[/^write_bytes:\s+(\d+)/, 1].to_i
        lines << "disk I/O: #{count(read / 1024)} KB read, #{count(written / 1024)} KB written"
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
