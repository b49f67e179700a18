# frozen_string_literal: true

require_relative "test_helper"

# Issue 48: idle threads out of the way by default. A program like a Rails process: a background
# thread sleeping in its loop, a queue worker waiting for jobs, and a main thread that computes
# and, inside a labelled block, sleeps (its own wait, as a request's HTTP call). `rperf report`,
# `stat` and `diff` lead with the computation, say how much idle time they left out (the model's
# rule, profile/idle_wait.hh), and `--idle` shows it all.
class IdleCliTest < Minitest::Test
  RPERF = File.join(ROOT, "exe/rperf")
  HIDDEN = /^\s*\(([\d,]+\.\d) ms of idle waits hidden: --idle to show\)$/

  # The background threads measure their own waits: the clock around each sleep and pop, the
  # one in progress counted up to the program's exit.
  PROGRAM = <<~RUBY
    clock = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) }
    waited = Hash.new(0)
    since = {}
    lock = Mutex.new
    measure = lambda do |name, &wait|
      lock.synchronize { since[name] = clock.() }
      wait.call.tap { lock.synchronize { waited[name] += clock.() - since.delete(name) } }
    end
    jobs = Queue.new
    Thread.new { loop { measure.(:sleeper) { sleep 0.05 } } }
    Thread.new { loop { measure.(:worker) { jobs.pop }.call } }

    # Pure Ruby, so that it leads the flat top; it passes the GVL often, so that a woken thread
    # does not wait for it (that wait would be the program's contention, not idle).
    def cpu_work(iterations)
      x = 0
      i = 0
      while i < iterations
        x += i
        i += 1
        Thread.pass if (i % 20_000).zero?
      end
      x
    end

    cpu_work(Integer(ARGV[0]))
    jobs << -> { 1 + 1 }
    Rperf.label(endpoint: "x") { sleep 0.1 }
    at_exit do
      now = clock.()
      lock.synchronize { since.each_value { |t| waited[:open] += now - t } }
      File.write(ARGV[1], waited.values.sum.to_s)
    end
  RUBY

  def setup
    @dir = Dir.mktmpdir("rperf-idle")
    File.write(File.join(@dir, "app.rb"), PROGRAM)
  end

  def teardown
    super
    FileUtils.rm_rf(@dir)
  end

  def rperf(*args)
    Open3.capture3(RUBY, RPERF, *args, chdir: @dir)
  end

  # Runs the program under `rperf *args`; its output, and the background threads' waits (ns).
  def run_app(*args, iterations: 4_000_000)
    waits = File.join(@dir, "waits")
    out, err, status = rperf(*args, RUBY, "app.rb", iterations.to_s, waits)
    assert status.success?, err
    [out, err, Integer(File.read(waits))]
  end

  def record(name, iterations: 4_000_000)
    _, _, waited = run_app("record", "-m", "wall", "-o", name, iterations: iterations)
    waited
  end

  # "--top"'s flat rows: {function => ms}, and the first function.
  def flat(top)
    rows = top.split(" Cumulative:").first.lines.grep(/%\s/).map { |l| l.strip.split(/\s+/, 4) }
    [rows.to_h { |ms, _, _, function| [function.sub(/ \(.*\)\z/, ""), ms.delete(",").to_f] }, rows.first[3].sub(/ \(.*\)\z/, "")]
  end

  def hidden_ms(text) = text[HIDDEN, 1]&.delete(",")&.to_f

  # The hidden time is the background threads' waiting as they measured it: off the GVL all of
  # it but the moments after a wake-up, when a woken thread waits for the GVL (contention, not
  # idle: the profile's GVL wait, gvl_wait_ms, which a loaded machine makes long: 0.8 s of 4 s
  # once beside the suite's other Ruby), and the profile goes on a few ms past the program's own
  # measurement at exit.
  def assert_background_waits(waited_ns, hidden, gvl_wait_ms)
    refute_nil hidden, "a line says how much was hidden"
    waited = waited_ns / 1e6
    slack = 0.1 * waited + 30
    assert_operator hidden, :<=, waited + slack, "hidden more than the threads waited"
    assert_operator hidden, :>=, waited - gvl_wait_ms - slack, "hid less than the threads waited off the GVL (GVL wait #{gvl_wait_ms} ms)"
  end

  # The GVL wait of every thread in a wall profile file (samples labelled %GVL: wait), ms.
  def gvl_wait_ms(file)
    data = Rperf.load(File.join(@dir, file))
    data[:aggregated_samples].sum { |_, weight, _, set| data[:label_sets][set]&.dig(:"%GVL") == "wait" ? weight : 0 } / 1e6
  end

  # stat's "[Rperf] GVL wait (contention)" line, ms (0 without one).
  def stat_gvl_wait_ms(err) = err[/([\d,.]+) ms .*\[Rperf\] GVL wait/, 1]&.delete(",").to_f

  def test_report_leads_with_the_work_and_says_how_much_idle_time_it_hid
    waited = record("app.json.gz")
    top, err, status = rperf("report", "--top", "app.json.gz")
    assert status.success?, err
    rows, first = flat(top)
    assert_equal "Object#cpu_work", first, top
    hidden = hidden_ms(top)
    assert_background_waits(waited, hidden, gvl_wait_ms("app.json.gz"))
    assert_equal 1, top.scan(HIDDEN).size
    # The labelled sleep is the program's: it stays (0.1 s off the GVL, and waking up).
    assert_operator rows.fetch("Kernel#sleep"), :>=, 99, top

    # --idle: everything, no line; what was hidden is the sleeper's sleep and the worker's pop.
    all, = rperf("report", "--top", "--idle", "app.json.gz")
    assert_nil hidden_ms(all), all
    every, = flat(all)
    shown = rows.fetch("Kernel#sleep") + rows.fetch("Thread::Queue#pop", 0)
    assert_in_delta shown + hidden, every.fetch("Kernel#sleep") + every.fetch("Thread::Queue#pop"), 0.3
    assert_operator every.fetch("Thread::Queue#pop"), :>, 0.25 * hidden, "the worker waited about as long as the sleeper"

    # The other printed views leave the same time out.
    [%w[--text], %w[--tree], %w[--graph]].each do |view|
      text, = rperf("report", *view, "app.json.gz")
      assert_equal hidden, hidden_ms(text), view.inspect
    end
    table, table_err, = rperf("report", "--format", "table", "app.json.gz")
    assert_equal "Object#cpu_work", table.lines[1].split("\t").first
    assert_nil hidden_ms(table), "a table's readers parse stdout"
    assert_equal hidden, hidden_ms(table_err)
  end

  def test_thread_filter
    record("app.json.gz")
    threads = Rperf::Native::Profile.from_hash(Rperf.load(File.join(@dir, "app.json.gz"))).thread_totals.map(&:first)
    assert_equal 3, threads.size
    main, *background = threads
    top, = rperf("report", "--top", "--thread", main.to_s, "app.json.gz")
    rows, first = flat(top)
    assert_equal "Object#cpu_work", first
    refute rows.key?("Thread::Queue#pop"), top
    assert_nil hidden_ms(top), "the main thread has no idle waits"
    # Both background threads: all but their wake-ups is idle; --idle shows it.
    idle, = rperf("report", "--top", *background.flat_map { |t| ["--thread", t.to_s] }, "app.json.gz")
    refute_includes flat(idle)[0].keys, "Object#cpu_work"
    refute_nil hidden_ms(idle)
    _, err, status = rperf("report", "--top", "--thread", "99", "app.json.gz")
    assert_equal 1, status.exitstatus
    assert_match(/no thread 99 in the profile \(its threads: #{threads.join(', ')}\)/, err)
    _, err, status = rperf("report", "--top", "--thread", "main", "app.json.gz")
    assert_equal 1, status.exitstatus
    assert_match(/--thread must be a thread's number/, err)
  end

  def test_stat_says_how_much_it_hid
    _, err, waited = run_app("stat")
    assert_match(/\[Rperf\] CPU execution$/, err)
    assert_background_waits(waited, hidden_ms(err), stat_gvl_wait_ms(err))
    blocked = err[/([\d,.]+) ms .*\[Rperf\] GVL blocked \(I\/O, sleep\)$/, 1].delete(",").to_f
    assert_operator blocked, :>=, 99, "the labelled sleep stays:\n#{err}"
    assert_operator blocked, :<, waited / 1e6 / 2, err

    _, err, waited = run_app("stat", "--idle")
    assert_nil hidden_ms(err), err
    blocked = err[/([\d,.]+) ms .*\[Rperf\] GVL blocked \(I\/O, sleep\)$/, 1].delete(",").to_f
    assert_operator blocked, :>=, 0.9 * waited / 1e6 + 99, err
  end

  # record's default mode, cpu, has no idle waits: -p leads with the main thread's work.
  def test_record_print_leads_with_the_work
    out, = run_app("record", "-p")
    assert_equal "Object#cpu_work", flat(out.split(" Flat:", 2).last)[1], out
  end

  def test_diff_ranks_the_change_of_the_programs_own_time
    record("base.json.gz", iterations: 2_000_000)
    record("target.json.gz", iterations: 6_000_000)
    out, err, status = rperf("diff", "base.json.gz", "target.json.gz")
    assert status.success?, err
    rows = out.lines.drop(2).map { |l| l.strip.split(/\s+/, 5) }
    assert_equal "Object#cpu_work", rows.first[4].sub(/ \(.*\)\z/, ""), out
    assert_operator rows.first[0].to_f, :>, 0
    assert_match(/^\(idle waits hidden: [\d,.]+ ms in base, [\d,.]+ ms in target: --idle to show\)$/, out)
    # With the idle waits, the background threads' waiting changed as much as the run's length.
    all, = rperf("diff", "--idle", "base.json.gz", "target.json.gz")
    refute_match(/idle waits hidden/, all)
    assert_match(/Thread::Queue#pop/, all.lines.first(8).join)
  end
end
