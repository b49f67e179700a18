# frozen_string_literal: true

# Issue 48.6(a): a Puma server running the middleware session did not exit on SIGTERM in 2 of
# 11 stops. This starts `puma` (Puma::Launcher, single mode, as `rails server`) on a config.ru
# with Rperf.start(defer: true) and Rperf::RackMiddleware, serves a few requests, sends SIGTERM
# and waits for the exit, STOPS times (default 100). A server still alive after DEADLINE seconds
# (default 30: a loaded 2-core machine) is a hang: its threads' Ruby backtraces (SIGWINCH, trapped
# by the config.ru) and native ones (gdb, when installed) are printed, then it is killed.
#   bundle exec ruby test/stress/puma_sigterm.rb [STOPS] [DEADLINE]
#   RPERF_OFF=1 ...   the same server without rperf (the baseline)
# Prints one line of figures; exits 1 when any stop hung.
# Found: a hang is Ruby's, with or without rperf (1 of 100 stops each way here): the server
# thread sleeps in IO#close of Puma's @notify pipe, waiting for the main thread, which wrote its
# stop command to the pipe from the SIGTERM trap and is registered on the fd for good (gdb: the
# close's pending fd user is the main thread, in signal_exec). test/stress/trap_write_close.rb
# shows it in a few lines of plain Ruby.
require "rbconfig"
require "socket"
require "tmpdir"
require "timeout"

STOPS = Integer(ARGV[0] || 100)
DEADLINE = Float(ARGV[1] || 30)
LIB = File.expand_path("../../lib", __dir__)
PUMA = Gem.bin_path("puma", "puma")
WITH_RPERF = ENV["RPERF_OFF"] != "1"

CONFIG_RU = <<~RUBY
  if ENV["RPERF_OFF"] != "1"
    require "rperf"
    require "rperf/rack"
    Rperf.start(mode: :wall, defer: true)
    use Rperf::RackMiddleware
  end
  # The hang's evidence: every thread's backtrace, on request (SIGWINCH: unused by Puma).
  Signal.trap("WINCH") do
    Thread.list.each { |t| $stderr.puts "--- \#{t.inspect}", *Array(t.backtrace).first(25).map { |l| "    \#{l}" } }
  end
  run lambda { |env|
    case env["PATH_INFO"]
    when "/slow" then sleep 0.005
    else 2000.times { |i| i.to_s * 3 }
    end
    [200, { "content-type" => "text/plain" }, ["ok\\n"]]
  }
RUBY

def free_port
  server = TCPServer.new("127.0.0.1", 0)
  server.addr[1]
ensure
  server&.close
end

def request(port, path)
  Socket.tcp("127.0.0.1", port, connect_timeout: 5) do |s|
    s.write("GET #{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    s.read
  end
end

def wait_listening(port, pid, log)
  Timeout.timeout(60) do
    loop do
      raise "puma exited before listening:\n#{File.read(log)}" if Process.waitpid(pid, Process::WNOHANG)

      begin
        return request(port, "/")
      rescue SystemCallError
        sleep 0.05
      end
    end
  end
end

# Which threads a closing IO waits for (Ruby's rb_notify_fd_close_wait: the pending users of
# the fd, each a thread still registered in a blocking operation on it), read by gdb from the
# hung process, with every thread's native backtrace.
GDB_PENDING_USERS = <<~PYTHON
  import gdb
  for th in gdb.selected_inferior().threads():
      th.switch()
      f = gdb.newest_frame()
      while f is not None:
          if f.name() == "rb_notify_fd_close_wait":
              try:
                  busy = f.read_var("busy")
                  print("closing thread", busy["closing_thread"], "waits for:")
                  head = busy["pending_fd_users"]["n"]
                  node = head["next"]
                  while node != head.address:
                      wfd = node.cast(gdb.lookup_type("struct waiting_fd").pointer())
                      print("  pending fd user: rb_thread_t", wfd["th"], "fd", wfd["fd"], "status", wfd["th"]["status"])
                      node = node["next"]
              except Exception as e:
                  print("cannot read busy:", e)
          f = f.older()
PYTHON

def native_backtraces(pid, dir)
  return "(gdb not installed)" unless system("command -v gdb >/dev/null 2>&1")

  script = File.join(dir, "pending_users.py")
  File.write(script, GDB_PENDING_USERS)
  IO.popen(["gdb", "-p", pid.to_s, "-batch", "-ex", "set pagination off", "-ex", "thread apply all bt 30",
            "-ex", "source #{script}"], err: %i[child out], &:read)
end

hangs = []
exit_times = []
Dir.mktmpdir("rperf-puma-sigterm") do |dir|
  File.write(File.join(dir, "config.ru"), CONFIG_RU)
  STOPS.times do |i|
    port = free_port
    log = File.join(dir, "puma-#{i}.log")
    env = { "RUBYLIB" => [LIB, ENV["RUBYLIB"]].compact.join(File::PATH_SEPARATOR), "RPERF_OFF" => WITH_RPERF ? "0" : "1" }
    pid = spawn(env, RbConfig.ruby, PUMA, "-t", "3:3", "-b", "tcp://127.0.0.1:#{port}", File.join(dir, "config.ru"),
                chdir: dir, %i[out err] => [log, "w"])
    wait_listening(port, pid, log)
    # Requests in flight on the pool threads when the signal comes, on some of the stops.
    clients = Array.new(i % 3) { |k| Thread.new { request(port, k.even? ? "/slow" : "/") rescue nil } }
    3.times { request(port, i.even? ? "/slow" : "/") }
    sleep(0.01 * (i % 5))
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    Process.kill("TERM", pid)
    status = nil
    deadline = t0 + DEADLINE
    while (status = Process.waitpid(pid, Process::WNOHANG)).nil? && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
      sleep 0.02
    end
    clients.each { |t| t.join(5) }
    if status
      exit_times << Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
      next
    end

    native = native_backtraces(pid, dir) # before the Ruby dump: its trap may end a deadlocked VM
    Process.kill("WINCH", pid)
    sleep 1
    begin
      Process.kill("KILL", pid)
    rescue Errno::ESRCH
      nil
    end
    Process.waitpid(pid)
    hangs << i
    warn "=== stop #{i}: no exit #{DEADLINE} s after SIGTERM\n#{File.read(log)}\n--- native:\n#{native}"
  end
end

puts format("puma SIGTERM (%s): %d stops, %d hung%s; exit after SIGTERM: median %.2f s, max %.2f s",
            WITH_RPERF ? "rperf deferred session + RackMiddleware" : "without rperf", STOPS, hangs.size,
            hangs.empty? ? "" : " (stops #{hangs.join(', ')})", exit_times.sort[exit_times.size / 2] || 0, exit_times.max || 0)
exit(hangs.empty? ? 0 : 1)
