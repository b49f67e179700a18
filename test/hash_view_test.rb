# frozen_string_literal: true

require_relative "test_helper"

# The result Hash is built only for a caller that receives it (issue 24): a session's end at
# exit (output: only, `rperf record`/`stat`, forked children) and `rperf report`/`diff` work on
# the native profile. Native::Profile.views_built counts the Hash views a process built.
class HashViewTest < Minitest::Test
  include RperfTestHelper

  # Runs after every other at_exit handler (rperf's session end among them): one registered
  # while the handlers run goes last.
  REPORT_VIEWS = <<~RUBY
    at_exit { at_exit { File.write(ENV.fetch("VIEWS_FILE") + ".\#{Process.pid}", Rperf::Native::Profile.views_built.to_s) } }
  RUBY

  def views_by_pid(dir)
    Dir.glob(File.join(dir, "views.*")).to_h { |f| [Integer(f[/\.(\d+)\z/, 1]), Integer(File.read(f))] }
  end

  def test_output_only_session_and_its_forked_children_build_no_hash
    Dir.mktmpdir do |dir|
      out = File.join(dir, "out.json.gz")
      code = <<~RUBY
        require "rperf"
        #{REPORT_VIEWS}
        Rperf.start(output: #{out.inspect}, frequency: 500)
        2.times { Process.wait(fork { t = Process.clock_gettime(Process::CLOCK_MONOTONIC); 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t < 0.05 }) }
        t = Process.clock_gettime(Process::CLOCK_MONOTONIC); 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t < 0.05
      RUBY
      _, err, status = run_ruby(code, env: { "VIEWS_FILE" => File.join(dir, "views") })
      assert status.success?, err
      views = views_by_pid(dir)
      assert_equal 3, views.size, "the root and both children report (#{views.inspect}); stderr: #{err}"
      assert_equal [0], views.values.uniq, "no process built a Hash view: #{views.inspect}"
      data = Rperf.load(out)
      assert_equal 3, data[:process_count], "the children's files were written and merged"
      refute_empty data[:aggregated_samples]
    end
  end

  def test_rperf_record_and_stat_build_no_hash
    Dir.mktmpdir do |dir|
      script = File.join(dir, "work.rb")
      File.write(script, "#{REPORT_VIEWS}\nt = Process.clock_gettime(Process::CLOCK_MONOTONIC); 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t < 0.1\n")
      out = File.join(dir, "rec.json.gz")
      env = { "VIEWS_FILE" => File.join(dir, "views") }
      _, err, status = Open3.capture3(env, RUBY, "#{ROOT}/exe/rperf", "record", "-v", "-o", out, RUBY, script)
      assert status.success?, err
      assert_match(/\[Rperf\] top \d+ by flat:/, err, "verbose printed from the native profile")
      _, err, status = Open3.capture3(env, RUBY, "#{ROOT}/exe/rperf", "stat", "--report", RUBY, script)
      assert status.success?, err
      assert_match(/CPU execution/, err)
      assert_match(/Flat:/, err, "--report's tables printed from the native profile")
      views = views_by_pid(dir)
      assert_equal 2, views.size, err
      assert_equal [0], views.values.uniq, "record and stat built no Hash view: #{views.inspect}"
      refute_empty Rperf.load(out)[:aggregated_samples]
    end
  end

  def test_report_and_diff_build_no_hash
    Dir.mktmpdir do |dir|
      data = Rperf.start(frequency: 1000, aggregate: false) { burn_cpu(0.05) }
      json = File.join(dir, "a.json.gz")
      pprof = File.join(dir, "a.pb.gz")
      Rperf.save(json, data)
      Rperf.save(pprof, data)
      runs = [%w[report --top], %w[report --text], %w[report --tree], %w[report --graph], %w[report --format callgrind]]
             .flat_map { |a| [a + [json], a + [pprof]] }
      runs << %W[report --format table #{json}] << %W[report --format table-json #{json}]
      runs << ["diff", json, pprof] << ["diff", "--format", "table", json, json] << ["report", "--firefox", "-o", File.join(dir, "a.firefox.json.gz"), json]
      runs.each do |args|
        code = 'require "rperf"; require "rperf/cli"; s = Rperf::CLI.run(ARGV); warn "views=#{Rperf::Native::Profile.views_built}"; exit s'
        out, err, status = run_ruby(code, *args)
        assert status.success?, "#{args.join(' ')}: #{err}"
        refute_empty out, args.join(" ")
        assert_equal "views=0", err.lines.last.chomp, "#{args.join(' ')} built no Hash view"
      end
    end
  end

  def test_the_public_results_are_still_hashes
    before = Rperf::Native::Profile.views_built
    Dir.mktmpdir do |dir|
      data = Rperf.start(output: File.join(dir, "x.json.gz")) { burn_cpu(0.02) }
      assert_instance_of Hash, data, "Rperf.start(output:) { } returns the Hash, as rperf 0.11.1"
      Rperf.start
      snap = Rperf.snapshot
      stopped = Rperf.stop
      assert_instance_of Hash, snap
      assert_instance_of Hash, stopped
      assert_instance_of Hash, Rperf.load(File.join(dir, "x.json.gz"))
    end
    assert_equal 4, Rperf::Native::Profile.views_built - before
  end
end
