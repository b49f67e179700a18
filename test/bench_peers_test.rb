# frozen_string_literal: true

require_relative "test_helper"

# The peer benchmark (rake bench:peers) in its quickest mode, ours only (the peers need
# script/peers, which is not part of the test setup): every child process runs, and the table
# has its columns, one row per profiler mode plus the unprofiled baseline, and numbers in them.
class BenchPeersTest < Minitest::Test
  RUN = File.join(RperfTestHelper::ROOT, "bench", "peers", "run.rb")
  NUMBER = /-?[\d,]+/

  def test_quick_run_prints_the_table
    env = { "RPERF_BENCH_QUICK" => "1", "RPERF_BENCH_PROFILERS" => "ours", "RPERF_BENCH_RSS_SECONDS" => "0.2" }
    out, err, status = Open3.capture3(env, RUBY, RUN)
    assert status.success?, "bench/peers/run.rb failed:\n#{err}"

    lines = out.lines.map(&:chomp)
    header = lines.index { |l| l.start_with?("| profiler |") }
    refute_nil header, out
    columns = lines[header].split("|").map(&:strip).reject(&:empty?)
    assert_equal 10, columns.size
    assert_match(/\A\|(---\|){10}\z/, lines[header + 1])

    rows = lines[(header + 2)..].take_while { |l| l.start_with?("|") }.map { |l| l.split("|").map(&:strip).drop(1) }
    assert_equal [%w[ours cpu], %w[ours wall], %w[unprofiled –]], rows.map { |r| r.first(2) }
    rows.each { |r| assert_equal 10, r.size, r.inspect }

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
  end
end
