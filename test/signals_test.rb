# frozen_string_literal: true

require_relative "test_helper"

# Ctrl-C in a terminal signals the whole process group: `rperf record`/`stat` of a program with
# worker processes, the signal reaching every one of them at once, sometimes twice (issue 30, 6).
# Real CLI, real process groups, real signals; every wait is on a condition (a line on a pipe,
# a process ending), never a fixed sleep.
class SignalsTest < Minitest::Test
  include RperfTestHelper

  RPERF = File.join(ROOT, "exe/rperf")
  F_SETPIPE_SZ = 1031 # Linux fcntl

  def setup
    @dir = Dir.mktmpdir("rperf-sig")
    @runtime = Dir.mktmpdir("rperf-runtime") # the session directories, to check they are gone
  end

  def teardown
    super
    FileUtils.rm_rf(@dir)
    FileUtils.rm_rf(@runtime)
  end

  def sessions_left = Dir.glob(File.join(@runtime, "rperf-*", "session-*"))

  # Workers that burn CPU (so that each has samples) and then say so on stdout; the root prints
  # "ready" once all have, then waits for them. `ignoring`: workers that trap INT and go on.
  def workers_script(count, ignoring: 0)
    <<~RUBY
      def burn(s) = (t = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID); nil while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t < s)
      r, w = IO.pipe
      #{count}.times { fork { r.close; burn(0.03); w.puts "worker \#{Process.pid}"; w.flush; loop { burn(0.001) } } }
      #{ignoring}.times { fork { r.close; trap("INT") {}; burn(0.03); w.puts "stubborn \#{Process.pid}"; w.flush; [$stdout, $stderr].each { |io| io.reopen(File::NULL, "w") }; loop { burn(0.001) } } }
      w.close
      $stdout.sync = true
      while (line = r.gets) do puts line end
    RUBY
  end

  # Starts `rperf <args> ruby -e <script>` as the leader of a new process group; yields its
  # stdout, stderr and pid; returns [status, stderr].
  def run_group(args, script)
    out_r, out_w = IO.pipe
    err_r, err_w = IO.pipe
    pid = spawn({ "XDG_RUNTIME_DIR" => @runtime }, RUBY, RPERF, *args, RUBY, "-e", script,
                out: out_w, err: err_w, pgroup: true, chdir: @dir)
    out_w.close
    err_w.close
    stderr = Thread.new { err_r.read }
    yield out_r, pid
    _, status = Process.wait2(pid)
    [status, stderr.value]
  ensure
    out_r&.close
    err_r&.close
  end

  def read_workers(out, count)
    Array.new(count) { out.gets or flunk("the program ended before its workers were ready") }.map { |l| l.split.then { |k, p| [k, p] } }
  end

  def pids_in(data) = data[:label_sets].filter_map { |l| l[:"%pid"] }.uniq.sort

  # Issue 30 (6): after Ctrl-C to the process group the children's profiles were missing in 6 of 12
  # runs (0 of 12 complete on a loaded 2-core machine): the root merged and removed the session
  # directory while its children were still writing theirs. Each iteration must have them all.
  def test_ctrl_c_to_the_process_group_merges_every_childs_profile
    6.times do |i|
      stat = i >= 4 # the last two with `rperf stat`, the others `rperf record`
      out = File.join(@dir, "p#{i}.json.gz")
      args = stat ? ["stat", "-o", out] : ["record", "-o", out]
      workers = nil
      status, err = run_group(args, workers_script(2)) do |stdout, pid|
        workers = read_workers(stdout, 2).map(&:last)
        Process.kill("INT", -pid) # as the terminal does
      end
      assert status.signaled? && status.termsig == Signal.list["INT"], "iteration #{i}: #{status.inspect}\n#{err}"
      refute_match(/lost|had not written|could not/, err, "iteration #{i}")
      data = Rperf.load(out)
      assert_equal 3, data[:process_count], "iteration #{i}: root and both workers\n#{err}"
      assert_equal workers.sort, pids_in(data), "iteration #{i}: each worker's samples, labelled with its pid"
      assert_match(/\b3\s+\[Rperf\] Ruby processes profiled/, err) if stat
      assert_empty sessions_left, "iteration #{i}"
    end
  end

  # A child that ignores the signal (it traps INT and goes on) is waited for a bounded time, then
  # named as missing; the root still writes the others' and ends by its signal.
  def test_a_child_that_ignores_ctrl_c_is_reported_missing
    out = File.join(@dir, "p.json.gz")
    stubborn = nil
    begin
      status, err = run_group(["record", "-o", out], workers_script(1, ignoring: 1)) do |stdout, pid|
        stubborn = read_workers(stdout, 2).to_h.fetch("stubborn")
        Process.kill("INT", -pid)
      end
      assert status.signaled?, status.inspect
      assert_match(/rperf: 1 child process \(pid #{stubborn}\) had not written its profile after \d+(\.\d)? s: the profile lacks it/, err)
      data = Rperf.load(out)
      assert_equal 2, data[:process_count], "the root and the worker that stopped"
      refute_includes pids_in(data), stubborn
    ensure
      Process.kill("KILL", Integer(stubborn)) if stubborn
    end
  end

  # Issue 30 (6): a second Ctrl-C within ~50 ms lost the profile in 5 of 14 runs (6 of 14 here):
  # it interrupted the at-exit stop before or while the profile was written. The second signal is
  # sent 0 to 50 ms after the first; every profile must be complete, the workers' too.
  def test_a_second_ctrl_c_during_the_final_write_loses_nothing
    [0, 5, 10, 20, 35, 50].each_with_index do |delay_ms, i|
      out = File.join(@dir, "p#{i}.json.gz")
      status, err = run_group(["record", "--no-aggregate", "-f", "5000", "-o", out], workers_script(2)) do |stdout, pid|
        read_workers(stdout, 2)
        Process.kill("INT", -pid)
        sleep delay_ms / 1000.0 # the double tap itself: the delay between the two signals
        Process.kill("INT", -pid)
      end
      assert status.signaled?, "#{delay_ms} ms: #{status.inspect}\n#{err}"
      refute_match(/could not|lost|had not written/, err, "#{delay_ms} ms")
      data = Rperf.load(out)
      assert_equal 3, data[:process_count], "#{delay_ms} ms: root and both workers\n#{err}"
      assert_empty sessions_left
    end
  end

  # The second signal lands during the write itself, for certain: the output is a FIFO whose
  # reader (this test) has read the write's first bytes. The write finishes, the signal is
  # held back until then and said so; the process still ends by it.
  def test_a_signal_during_the_write_is_held_back_and_reported
    fifo = File.join(@dir, "out.json")
    File.mkfifo(fifo)
    reader = File.open(fifo, File::RDONLY | File::NONBLOCK)
    reader.fcntl(F_SETPIPE_SZ, 4096) # one page: the writer waits for this reader after 4 KB
    script = "$stdout.sync = true; def burn = (i = 0; i += 1 while i < 200_000); 20.times { burn }; puts 'ready'; loop { burn }"
    body = +""
    status, err = run_group(["record", "--no-aggregate", "-o", fifo], script) do |stdout, pid|
      assert_equal "ready\n", stdout.gets
      Process.kill("INT", -pid)
      IO.select([reader]) until (chunk = read_some(reader)) && !chunk.empty?
      body << chunk # the write has begun, and it is waiting for this reader
      Process.kill("INT", -pid)
      Process.kill("TERM", -pid)
      loop do
        IO.select([reader])
        chunk = read_some(reader)
        break if chunk.nil?

        body << chunk
      end
    end
    reader.close
    assert_operator body.bytesize, :>, 3 * 4096, "the premise: the write waited for this reader"
    assert status.signaled? && status.termsig == Signal.list["INT"], status.inspect
    assert_match(/rperf: SIG(INT|TERM) during the final write of the profile was held back until it was written/, err)
    copy = File.join(@dir, "copy.json")
    File.write(copy, body)
    assert_operator Rperf.load(copy)[:raw_samples].size, :>, 0
  end

  # A normal exit whose at-exit write gets a signal: written, then the process ends as the
  # signal would have made it (128 + its number), not 0.
  def test_a_signal_during_a_normal_exits_write_still_counts
    fifo = File.join(@dir, "out.json")
    File.mkfifo(fifo)
    reader = File.open(fifo, File::RDONLY | File::NONBLOCK)
    reader.fcntl(F_SETPIPE_SZ, 4096) # one page: the writer waits for this reader after 4 KB
    body = +""
    script = "def burn = (i = 0; i += 1 while i < 200_000); 40.times { burn }"
    status, err = run_group(["record", "--no-aggregate", "-f", "5000", "-o", fifo], script) do |_stdout, pid|
      IO.select([reader]) until (chunk = read_some(reader)) && !chunk.empty?
      body << chunk
      Process.kill("TERM", -pid)
      loop do
        IO.select([reader])
        chunk = read_some(reader)
        break if chunk.nil?

        body << chunk
      end
    end
    reader.close
    assert_operator body.bytesize, :>, 3 * 4096, "the premise: the write waited for this reader"
    assert_equal 128 + Signal.list["TERM"], status.exitstatus, err
    assert_match(/SIGTERM during the final write of the profile was held back/, err)
    File.write(File.join(@dir, "copy.json"), body)
    assert_operator Rperf.load(File.join(@dir, "copy.json"))[:raw_samples].size, :>, 0
  end

  private

  # What the FIFO holds now: "" when nothing yet, nil at its end (the writer closed it).
  def read_some(io)
    io.read_nonblock(1 << 16)
  rescue IO::WaitReadable
    ""
  rescue EOFError
    nil
  end
end
