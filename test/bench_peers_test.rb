# frozen_string_literal: true

require_relative "test_helper"
require_relative "../bench/peers/harness"
require_relative "../bench/peers/locate"

# The peer benchmark (rake bench:peers) in its quickest mode. Ours only for the time table
# (every child process runs, the table has its columns, one row per profiler mode plus the
# unprofiled baseline, and numbers in them) and the allocation table after it; the allocation
# table alone with stackprof and vernier when script/peers can provide them (it installs them
# into the cache when the gem registry is reachable; else the test says so and skips).
class BenchPeersTest < Minitest::Test
  include RubyIndependentTest # the harness's smoke run: the same script on every Ruby
  RUN = File.join(RperfTestHelper::ROOT, "bench", "peers", "run.rb")
  NUMBER = /-?[\d,]+/
  ALLOC_COLUMNS = 7
  INTERVALS = [1, 64, 1024, 4096].freeze
  SITE_COLUMNS = 5

  def run_bench(env)
    out, err, status = Open3.capture3({ "RPERF_BENCH_QUICK" => "1", "RPERF_BENCH_YJIT" => "0" }.merge(env), RUBY, RUN)
    assert status.success?, "bench/peers/run.rb failed:\n#{err}"
    out
  end

  # The rows of the Markdown table whose header starts with `first_columns`, checked for `columns`.
  def table(out, first_columns, columns)
    lines = out.lines.map(&:chomp)
    header = lines.index { |l| l.start_with?("| #{first_columns} |") }
    refute_nil header, out
    assert_equal columns, lines[header].split("|").map(&:strip).reject(&:empty?).size
    assert_match(/\A\|(---\|){#{columns}}\z/, lines[header + 1])
    rows = lines[(header + 2)..].take_while { |l| l.start_with?("|") }.map { |l| l.split("|").map(&:strip).drop(1) }
    rows.each { |r| assert_equal columns, r.size, r.inspect }
    [rows, lines.index(lines[header])]
  end

  def test_quick_run_prints_the_table
    out = run_bench("RPERF_BENCH_PROFILERS" => "ours", "RPERF_BENCH_RSS_SECONDS" => "0.2")
    rows, time_at = table(out, "profiler | mode", 10)
    assert_equal [%w[ours cpu], %w[ours wall], %w[unprofiled –]], rows.map { |r| r.first(2) }

    rows.first(2).each do |row|
      # Cost cells: "reported (derived)"; ours reports its own sampling time, so both are numbers.
      row[2, 4].each { |cell| assert_match(/\A#{NUMBER} \(#{NUMBER}\)\z/o, cell) }
      row[6, 2].each { |cell| assert_match(/\A[+-]\d+\.\d%\z/, cell) }
      assert_match(/\A\d+\.\d \([+-]\d+\.\d\)\z/, row[8])
      cold, hot = row[9].split(" / ").map { |n| Integer(n.delete(",")) }
      assert_operator cold, :>, 0
      assert_operator hot, :>, 0
    end
    baseline = rows.last
    assert_match(/\A[\d,]+ ms\z/, baseline[6])
    assert_match(/\A\d+\.\d\z/, baseline[8])
    assert_includes out, "Profilers: ours #{Rperf::VERSION}"

    alloc_rows, alloc_at = table(out, "profiler | setting", ALLOC_COLUMNS)
    assert_operator alloc_at, :>, time_at, "the allocation table follows the time table"
    assert_equal [*%w[ours] * 13, "unprofiled"], alloc_rows.map(&:first)
    # Per N: ours at 1 kHz, ours allocation-only (time at 1 Hz, stackprof's :object terms), ours retained.
    assert_equal INTERVALS, alloc_rows.map { |r| r[1][/\A`allocations: (\d+)`, `frequency: 1`/, 1]&.to_i }.compact
    check_allocation_rows(alloc_rows)
    check_site_rows(out, %w[ours])
  end

  def test_quick_allocation_table_with_the_peers
    begin
      peers = PeerBench::Locate.peers
    rescue RuntimeError => e
      skip "stackprof and vernier are not available (script/peers: #{e.message.lines.last&.strip})"
    end
    refute_nil peers["gems"]
    out = run_bench("RPERF_BENCH_PROFILERS" => "ours,stackprof,vernier", "RPERF_BENCH_TIME" => "0")
    refute_includes out, "| profiler | mode |", "RPERF_BENCH_TIME=0: no time table"
    rows, = table(out, "profiler | setting", ALLOC_COLUMNS)
    assert_equal ["ours", "vernier", *%w[ours ours ours stackprof vernier] * 4, "unprofiled"], rows.map(&:first)
    check_allocation_rows(rows)
    check_site_rows(out, %w[ours stackprof vernier])
    assert_match(/Profilers: ours #{Regexp.escape(Rperf::VERSION)}, (vernier [\d.]+, stackprof [\d.]+|stackprof [\d.]+, vernier [\d.]+) /, out)
  end

  def test_allocation_knobs
    assert_raises(ArgumentError) { PeerBench::Config.from_env("RPERF_BENCH_ALLOC" => "yes") }
    assert_raises(ArgumentError) do
      PeerBench::Config.from_env("RPERF_BENCH_ALLOC" => "0", "RPERF_BENCH_TIME" => "0", "RPERF_BENCH_YJIT" => "0")
    end
    assert PeerBench::Config.from_env("RPERF_BENCH_ALLOC" => "0", "RPERF_BENCH_TIME" => "0").yjit, "the YJIT table alone"
    assert_raises(ArgumentError) { PeerBench::Config.from_env("RPERF_BENCH_YJIT" => "yes") }
    refute PeerBench::Config.from_env("RPERF_BENCH_ALLOC" => "0").alloc?
    refute PeerBench::Config.from_env("RPERF_BENCH_PROFILERS" => "rperf").alloc?, "rperf 0.11.1 has no allocation rows"
    refute PeerBench::Config.from_env("RPERF_BENCH_PROFILERS" => "ours", "RPERF_BENCH_TIME" => "0").peers_needed?
    assert PeerBench::Config.from_env("RPERF_BENCH_PROFILERS" => "ours,vernier", "RPERF_BENCH_TIME" => "0").peers_needed?
  end

  # The top sites per N: the three heaviest of the workload's sites with their shares (about
  # 4:2:1 of the sampled objects), in the same order for every profiler at N = 1 and 64, where
  # even a quick run samples thousands of allocations.
  def check_site_rows(out, profilers)
    rows, = table(out, "N | ours", SITE_COLUMNS)
    assert_equal INTERVALS.map(&:to_s), rows.map(&:first)
    rows.each do |n, *cells, same|
      cells.zip(%w[ours stackprof vernier]).each do |cell, profiler|
        next assert_equal("–", cell) unless profilers.include?(profiler)

        # At N = 1024 and 4096 a quick run samples a few dozen objects (fewer on a loaded
        # machine): the lightest site (1 in 7) may have none, so one to three sites.
        sites = %w[1 64].include?(n) ? "{2}" : "{0,2}"
        assert_match(/\A(make_\w+ \d+%, )#{sites}make_\w+ \d+%\z/, cell, "#{profiler} at #{n}")
      end
      assert_equal "yes", same, "the profilers rank the sites alike at N = #{n}" if %w[1 64].include?(n)
    end
    shares = rows[1][1].scan(/(make_\w+) (\d+)%/).map { |site, share| [site, Integer(share)] }
    assert_equal %w[make_pair make_name make_record], shares.map(&:first), "ours at N = 64"
    # 4:2:1 of about 3,000 samples (a quick run): each share within 6 points
    shares.map(&:last).zip([57, 29, 14]).each { |share, expected| assert_in_delta expected, share, 6, rows[1][1] }
  end

  # Every profiler's rows: a setting, an overhead, and (but for the time-only references)
  # allocations it actually sampled, about allocations / N of them; ours' estimate next to the
  # true count.
  def check_allocation_rows(rows)
    *profiled, baseline = rows
    assert_equal ["unprofiled", "–"], baseline.first(2)
    assert_match(/\A[\d,]+ ms\z/, baseline[2])
    truth = Integer(baseline[6][%r{\A– / ([\d,]+)\z}, 1].to_s.delete(","))
    # The quick run's workload lasts 0.1 s by the clock, so the count follows the machine's load
    # (about 40,000 at a load average of 10); the checks below scale their tolerance with it.
    assert_operator truth, :>, 5_000, "an allocation-heavy workload"
    stackprof = rows.any? { |profiler, *| profiler == "stackprof" }
    profiled.each do |profiler, setting, overhead, paired, sampled, added, estimate|
      assert_match(/\A[+-]\d+\.\d%\z/, overhead, setting)
      # Ours against stackprof's :object mode at its N, run by run, when stackprof ran.
      ours_vs_peer = profiler == "ours" && stackprof && setting.match?(/\Aallocations: \d+|`allocations: \d+/)
      assert_match(ours_vs_peer ? /\A[+-]\d+\.\d%\z/ : /\A–\z/, paired, setting)
      assert_match(/\A-?\d+\.\d\z/, added, setting)
      interval = setting[/\b(?:allocations|interval|allocation_interval): (\d+)/, 1]&.to_i
      if interval.nil?
        assert_match(/\Atime only/, setting)
        assert_equal "–", sampled
        next
      end
      assert_includes INTERVALS, interval
      samples = Integer(sampled.delete(","))
      # Counters (stackprof, vernier) take exactly one in N; ours' random gaps, within 6 sigma.
      expected = truth.fdiv(interval)
      assert_in_delta expected, samples, 6 * Math.sqrt(expected) + 2, "#{profiler} #{setting}: sampled allocations"
      if profiler == "ours"
        est, tru, err = estimate.match(/\A([\d,]+) \/ ([\d,]+) \(([+-]\d+\.\d)%\)\z/)&.captures
        refute_nil est, estimate
        assert_equal samples * interval, Integer(est.delete(",")), "estimate = samples x N"
        assert_in_delta truth, Integer(tru.delete(",")), truth * 0.01
        assert_operator err.to_f.abs, :<, 600 * Math.sqrt(interval.fdiv(truth)) + 1
      else
        assert_equal "–", estimate
      end
    end
  end
end
