# frozen_string_literal: true

require_relative "test_helper"
require "json"

# Issue 48.4/5: `rperf report --tree` stays readable on deep stacks (indentation capped, the
# depth said instead), `--limit` lifts the 50-row cap of the tables (and sets --top's and
# --text's rows), and `stat` in wall mode says what "CPU execution" is there.
class ReportRowsTest < Minitest::Test
  include RperfTestHelper

  RPERF = File.join(ROOT, "exe/rperf")
  METHODS = 60
  DEPTH = 70

  # 60 methods that each burn CPU in their own frame (more than the tables' 50 rows), called at
  # the bottom of a chain of 70 distinct methods (a Rails request's middleware depth).
  PROGRAM = <<~RUBY
    #{METHODS}.times do |i|
      eval(<<~METHOD)
        def work_\#{i}
          x = 0
          x += 1 while x < 300_000 # pure Ruby: the time is this frame's own
          x
        end
      METHOD
    end
    #{DEPTH}.times { |i| eval("def middleware_\#{i} = middleware_\#{i + 1}") }
    def middleware_#{DEPTH} = #{METHODS}.times { |i| send(:"work_\#{i}") }
    middleware_0
  RUBY

  def setup
    @dir = Dir.mktmpdir("rperf-report-rows")
    File.write(File.join(@dir, "app.rb"), PROGRAM)
    _, err, status = Open3.capture3(RUBY, RPERF, "record", "-o", "p.json.gz", RUBY, "app.rb", chdir: @dir)
    assert status.success?, err
  end

  def teardown
    super
    FileUtils.rm_rf(@dir)
  end

  def report(*args)
    out, err, status = Open3.capture3(RUBY, RPERF, "report", *args, "p.json.gz", chdir: @dir)
    assert status.success?, err
    out
  end

  def test_tree_indentation_is_capped_and_says_the_depth
    lines = report("--tree").lines.map(&:chomp)
    deep = lines.grep(/middleware_#{DEPTH}\b/)
    refute_empty deep
    assert_match(/\[\d+\] Object#middleware_#{DEPTH} /, deep.first, "a deep node says its depth")
    # Where each node's name starts: after 33 columns of numbers, at most 48 of indentation and
    # the depth ("[70] "); the name and its file follow.
    starts = lines.drop(2).map { |l| l.index(/\S/, 33) }
    assert_operator starts.max, :<=, 33 + 48 + 5, "the deepest name starts by column 86"
    shallow = lines.find { |l| l.include?("Object#middleware_0 ") }
    refute_match(/\[\d+\]/, shallow, "a shallow node is indented as before")
  end

  def test_limit_lifts_the_table_cap
    rows = ->(out) { out.lines.drop(1).take_while { |l| !l.start_with?("#") } }
    capped = rows.(report("--format", "table"))
    assert_equal 51, capped.size, "rperf 0.11's 50 rows and (other)"
    assert_equal "(other)", capped.last.split("\t").first

    all = rows.(report("--format", "table", "--limit", "0"))
    assert_operator all.size, :>=, METHODS
    refute(all.any? { |l| l.start_with?("(other)\t") })
    assert_equal 11, JSON.parse(report("--format", "table-json", "--limit", "9")).size, "9 rows, (other) and the summary"

    top = report("--top", "--limit", "5")
    assert_equal 5, top[/ Flat:\n(.*?)\n Cumulative/m, 1].lines.size
  end

  def test_limit_must_not_be_negative
    _, err, status = Open3.capture3(RUBY, RPERF, "report", "--limit", "-1", "--top", "p.json.gz", chdir: @dir)
    refute status.success?
    assert_match(/--limit must be >= 0/, err)
  end

  def test_stat_in_wall_mode_says_what_cpu_execution_is
    _, err, status = Open3.capture3(RUBY, RPERF, "stat", RUBY, "-e", "x = 0; 2_000_000.times { x += 1 }", chdir: @dir)
    assert status.success?, err
    assert_match(/\[Rperf\] CPU execution$/, err, "rperf 0.11's line as it was")
    assert_includes err, Rperf::Stat::WALL_NOTE
    _, err, status = Open3.capture3(RUBY, RPERF, "stat", "-m", "cpu", RUBY, "-e", "x = 0; 2_000_000.times { x += 1 }", chdir: @dir)
    assert status.success?, err
    refute_includes err, Rperf::Stat::WALL_NOTE, "cpu mode's CPU execution is CPU time"
  end
end
