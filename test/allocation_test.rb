# frozen_string_literal: true

require_relative "test_helper"
require "json"
require "zlib"

# Allocation profiling (allocations: N): sampled allocation sites, classes and retained objects,
# in the same run as the time samples. Workloads run in fresh processes, so the counts are not
# disturbed by the test runner's own objects.
class AllocationTest < Minitest::Test
  # Each iteration allocates exactly one object of the named class (the literals are frozen).
  WORKLOAD = <<~RUBY
    # frozen_string_literal: true
    def make_strings(n) = n.times { String.new("x") }
    def make_arrays(n) = n.times { Array.new(2) }
    def keep_strings(n) = ($kept = Array.new(n) { String.new("k") })
    def drop_strings(n) = n.times { String.new("d") }
    # objects per [method, class] and retained per [method, class], from the result Hash
    def allocation_totals(data)
      totals = Hash.new(0)
      retained = Hash.new(0)
      data[:allocation_samples].each do |frames, count, _thread, _labels, klass, kept|
        method = frames.map { |f| f[1] }.find { |l| l.start_with?("Object#") } || "other"
        totals["\#{method} \#{klass}"] += count
        retained["\#{method} \#{klass}"] += kept if kept # nil: not measured (retained: false)
      end
      { "totals" => totals, "retained" => retained }
    end
  RUBY

  def run_workload(body, env: {})
    out, err, status = run_ruby("#{WORKLOAD}\nrequire 'rperf'\nrequire 'json'\n#{body}", env: env)
    assert status.success?, err
    JSON.parse(out.lines.last)
  end

  # Sampling one allocation in N with geometric gaps makes each object an independent
  # Bernoulli(1/N) trial: the estimate N * k of `count` objects has a relative standard
  # deviation of sqrt((N - 1) / count). At N = 64: 2,000,000 strings -> 0.56%, 1,000,000 arrays
  # -> 0.79%, so 3% is more than 3.7 standard deviations for each (a false failure about once
  # in 5,000 runs).
  def test_counts_per_method_and_class_across_two_threads_within_3_percent
    result = run_workload(<<~RUBY)
      data = Rperf.start(allocations: 64, mode: :wall) do
        [Thread.new { make_strings(2_000_000) }, Thread.new { make_arrays(1_000_000) }].each(&:join)
      end
      # objects per class per thread: a thread may allocate a few objects of the other class
      # while it starts, so each class is judged by the thread that allocated most of it
      threads = Hash.new { |h, k| h[k] = Hash.new(0) }
      data[:allocation_samples].each { |s| threads[s[4]][s[2]] += s[1] }
      puts JSON.generate(allocation_totals(data).merge("threads" => threads, "time" => data[:aggregated_samples].size,
                                                       "interval" => data[:allocation_interval]))
    RUBY
    totals = result["totals"]
    assert_within 2_000_000, totals["Object#make_strings String"], 0.03, "strings"
    assert_within 1_000_000, totals["Object#make_arrays Array"], 0.03, "arrays"
    assert_operator totals["Object#make_strings Array"].to_i, :<, 2_000, "no arrays in make_strings"
    assert_operator totals["Object#make_arrays String"].to_i, :<, 2_000, "no strings in make_arrays"
    main_thread = ->(klass) { result["threads"][klass].max_by { |_seq, n| n } }
    strings_thread, strings_in_it = main_thread.("String")
    arrays_thread, arrays_in_it = main_thread.("Array")
    refute_equal strings_thread, arrays_thread, "strings and arrays come from two threads"
    assert_operator strings_in_it, :>, 0.99 * totals["Object#make_strings String"], "strings from one thread"
    assert_operator arrays_in_it, :>, 0.99 * totals["Object#make_arrays Array"], "arrays from one thread"
    assert_operator result["time"], :>, 0, "time samples in the same run"
    assert_equal 64, result["interval"]
  end

  # 500,000 kept strings: relative standard deviation sqrt(63 / 500,000) = 1.1%, so 5% is 4.4 of them.
  def test_retained_objects_are_the_live_ones
    result = run_workload(<<~RUBY)
      data = Rperf.start(allocations: 64, retained: true, mode: :wall) do
        keep_strings(500_000)
        drop_strings(500_000)
        GC.start
      end
      puts JSON.generate(allocation_totals(data))
    RUBY
    assert_within 500_000, result["retained"]["Object#keep_strings String"], 0.05, "kept strings retained"
    assert_within 500_000, result["totals"]["Object#drop_strings String"], 0.05, "dropped strings allocated"
    assert_operator result["retained"]["Object#drop_strings String"].to_i, :<=, 500_000 * 0.01, "dropped strings are not retained"
  end

  # 600,000 objects at N = 64: a relative standard deviation of 1%, so 5% is 4.9 of them.
  def test_snapshot_reports_retained_so_far_and_clear_starts_a_new_interval
    result = run_workload(<<~RUBY)
      Rperf.start(allocations: 64, retained: true, mode: :wall)
      keep_strings(600_000)
      first = allocation_totals(Rperf.snapshot(clear: true))
      $kept = nil
      GC.start
      drop_strings(600_000)
      second = allocation_totals(Rperf.stop)
      puts JSON.generate("first" => first, "second" => second)
    RUBY
    assert_within 600_000, result["first"]["retained"]["Object#keep_strings String"], 0.05
    assert_nil result["second"]["totals"]["Object#keep_strings String"]
    assert_within 600_000, result["second"]["totals"]["Object#drop_strings String"], 0.05
  end

  # Compaction moves the sampled objects: the live table follows them (their later death is
  # seen at the new address), and GC.stress with every allocation sampled does not crash.
  def test_compaction_and_gc_stress
    result = run_workload(<<~RUBY)
      data = Rperf.start(allocations: 8, retained: true, mode: :wall) do
        keep_strings(100_000)
        GC.verify_compaction_references(expand_heap: true, toward: :empty)
        $moved = allocation_totals(Rperf.snapshot)["retained"]["Object#keep_strings String"]
        $kept = nil
        GC.compact
        GC.start
      end
      stressed = Rperf.start(allocations: 1, retained: true) do
        GC.stress = true
        list = []
        60.times { |i| list << "s\#{i}"; list.shift if list.size > 50; GC.compact if (i % 20).zero? }
        GC.stress = false
      end
      puts JSON.generate("moved" => $moved, "after" => allocation_totals(data)["retained"]["Object#keep_strings String"],
                         "stressed" => stressed[:allocation_samples].sum { |s| s[1] })
    RUBY
    assert_within 100_000, result["moved"], 0.05, "retained across compaction"
    assert_operator result["after"].to_i, :<=, 1_000, "freed after moving"
    assert_operator result["stressed"], :>=, 60
  end

  # Threads coming and going while every allocation is sampled, start/stop in a loop in all
  # modes (T_IMEMO objects among them: their class field is VM data, never read as a class), a
  # forked child that profiles its own allocations, under YJIT too.
  def test_thread_churn_start_stop_loop_fork_and_yjit
    body = <<~RUBY
      def churn = 10.times.map { Thread.new { 1000.times { [1, 2].map(&:to_s) } } }.each(&:join)
      20.times do |i|
        snapshot = nil
        data = Rperf.start(allocations: 1 + (i % 5) * 16, mode: i.even? ? :wall : :cpu, lines: (i % 3).zero?,
                           aggregate: i % 4 != 1, retained: i.odd?) do
          churn
          GC.compact if (i % 7).zero?
          snapshot = Rperf.snapshot(clear: true) if (i % 6).zero? && i % 4 != 1
        end
        # After snapshot(clear: true) the churn's allocations are the snapshot's.
        raise "no allocation samples" if (snapshot || data)[:allocation_samples].empty?
      end
      data = Rperf.start(allocations: 32, mode: :wall) do
        Process.wait(fork { make_arrays(100_000) })
        make_arrays(50_000)
      end
      by_process = data[:allocation_samples].select { |s| s[4] == "Array" }.group_by { |s| data[:label_sets][s[3]].key?(:"%pid") ? "child" : "root" }
      puts JSON.generate(by_process.transform_values { |v| v.sum { |s| s[1] } })
    RUBY
    [{}, { "RUBYOPT" => "--yjit" }].each do |env|
      result = run_workload(body, env: env)
      assert_within 100_000, result["child"], 0.1, "child's arrays #{env}"
      assert_within 50_000, result["root"], 0.1, "root's arrays #{env}"
    end
  end

  def test_labels_and_save_load_round_trip
    Dir.mktmpdir do |dir|
      result = run_workload(<<~RUBY)
        data = Rperf.start(allocations: 16) do
          Rperf.label(request: "a") { make_arrays(50_000) }
        end
        Rperf.save("#{dir}/p.json.gz", data)
        loaded = Rperf.load("#{dir}/p.json.gz")
        labelled = data[:allocation_samples].select { |s| data[:label_sets][s[3]][:request] == "a" }.sum { |s| s[1] }
        collapsed = Rperf::Collapsed.encode(data, allocations: true)
        arrays = collapsed.lines.map { |l| l.rpartition(" ") }.select { |stack, _, _| stack.include?("Object#make_arrays") && stack.end_with?(";Array") }
        puts JSON.generate("same" => loaded[:allocation_samples] == data[:allocation_samples],
                           "collapsed_arrays" => arrays.sum { |_, _, count| count.to_i },
                           "keys" => data.keys.map(&:to_s), "loaded_keys" => loaded.keys.map(&:to_s),
                           "labelled" => labelled, "time_shape" => data[:aggregated_samples].map(&:size).uniq)
      RUBY
      assert result["same"], "load restores allocation_samples"
      assert_includes result["loaded_keys"], "allocation_samples"
      assert_within 50_000, result["labelled"], 0.1
      assert_equal [4], result["time_shape"], "time samples keep their shape"
      assert_within 50_000, result["collapsed_arrays"], 0.1, "collapsed allocation view"
    end
  end

  # Other Ractors allocate in parallel with the main one: only the main Ractor's allocations
  # are sampled (its estimate stays unbiased: the gaps are memoryless), and nothing breaks.
  def test_allocations_of_other_ractors_are_not_sampled
    result = run_workload(<<~RUBY)
      Warning[:experimental] = false
      data = Rperf.start(allocations: 8, mode: :wall) do
        ractors = 2.times.map { Ractor.new { 100_000.times { [1, 2] }; 1 } }
        make_arrays(100_000)
        ractors.each(&:take)
      end
      puts JSON.generate(allocation_totals(data)["totals"])
    RUBY
    assert_within 100_000, result["Object#make_arrays Array"], 0.05
    assert_operator result.select { |key, _| key.end_with?(" Array") }.sum { |_, n| n }, :<, 110_000
  end

  # aggregate: false: every sampled allocation with its time (ns since start), beside the
  # aggregated view; both survive a save and load.
  def test_raw_allocation_samples
    Dir.mktmpdir do |dir|
      result = run_workload(<<~RUBY)
        data = Rperf.start(allocations: 64, retained: true, aggregate: false, mode: :wall) do
          make_arrays(100_000)
          sleep 0.05
          keep_strings(100_000)
        end
        Rperf.save("#{dir}/p.json", data)
        loaded = Rperf.load("#{dir}/p.json")
        raw = data[:raw_allocation_samples]
        strings = raw.select { |s| s[4] == "String" && s[0].any? { |f| f[1] == "Object#keep_strings" } }
        arrays = raw.select { |s| s[4] == "Array" && s[0].any? { |f| f[1] == "Object#make_arrays" } }
        puts JSON.generate("sizes" => raw.map(&:size).uniq, "raw_total" => raw.sum { |s| s[1] },
                           "total" => data[:allocation_samples].sum { |s| s[1] }, "weights" => raw.map { |s| s[1] }.uniq,
                           "arrays_before_strings" => arrays.map(&:last).max < strings.map(&:last).min,
                           "strings_retained" => strings.sum { |s| s[5] }, "loaded_same" => loaded[:raw_allocation_samples] == raw)
      RUBY
      assert_equal [7], result["sizes"]
      assert_equal [64], result["weights"]
      assert_equal result["total"], result["raw_total"]
      assert result["arrays_before_strings"], "times order the samples"
      assert_within 100_000, result["strings_retained"], 0.15
      assert result["loaded_same"], "load restores raw_allocation_samples"
    end
  end

  # hook_time_ns counts the allocation hook's work too (each sampled allocation walks its stack:
  # well over 100 ns), next to the GVL and GC hooks. At N = 1 the allocations outrun the
  # worker's drain (every 10 ms): the allocating thread drains the full ring itself, so no
  # sample is dropped and the count is exact.
  def test_hook_time_includes_sampled_allocations
    result = run_workload(<<~RUBY)
      data = Rperf.start(allocations: 1, frequency: 10) { make_strings(100_000) }
      puts JSON.generate(allocation_totals(data).merge("hook" => data[:hook_time_ns], "sampled" => data[:allocation_sample_count],
                                                       "dropped" => data[:dropped_allocations]))
    RUBY
    assert_nil result["dropped"]
    assert_equal 100_000, result["totals"]["Object#make_strings String"]
    assert_operator result["sampled"], :>=, 100_000
    assert_operator result["hook"], :>, result["sampled"] * 100
  end

  def test_settings_validate_and_environment_round_trips
    assert_raises(ArgumentError) { Rperf.start(allocations: 0.5) }
    assert_raises(ArgumentError) { Rperf.start(allocations: -1) }
    assert_nil Rperf::Settings.new(allocations: false).allocations
    assert_equal Rperf::Settings::DEFAULT_ALLOCATION_INTERVAL, Rperf::Settings.new(allocations: true).allocations
    settings = Rperf::Settings.new(allocations: 128)
    assert_equal "128", settings.child_env["RPERF_ALLOCATIONS"]
    assert_equal 128, Rperf::Settings.from_env(settings.child_env).allocations
    assert_nil Rperf::Settings.from_env({}).allocations
    refute Rperf::Settings.new.child_env["RPERF_ALLOCATIONS"]
  end

  # retained: false (the default) hooks NEWOBJ only: Ruby calls no hook for the objects it
  # frees. The samples still name their sites and classes; the retained count reads nil (not
  # measured) in the Hash, null in JSON, and pprof has no inuse_objects; both load back so.
  # 400,000 strings at N = 64: a relative standard deviation of 1.3%, so 6% is 4.7 of them.
  def test_retained_off_by_default_hooks_newobj_only
    Dir.mktmpdir do |dir|
      result = run_workload(<<~RUBY)
        Rperf.start(allocations: 64, mode: :wall)
        hooks = Rperf::Native.allocation_hooks
        keep_strings(400_000)
        make_arrays(200_000)
        data = Rperf.stop
        after = Rperf::Native.allocation_hooks
        Rperf.start(allocations: 64, retained: true) { $retained_hooks = Rperf::Native.allocation_hooks }
        Rperf.save("#{dir}/p.json.gz", data)
        Rperf.save("#{dir}/p.pb.gz", data)
        loaded = [Rperf.load("#{dir}/p.json.gz"), Rperf.load("#{dir}/p.pb.gz")]
        puts JSON.generate(allocation_totals(data).merge(
          "hooks" => hooks, "after" => after, "retained_hooks" => $retained_hooks,
          "kept" => data[:allocation_samples].map { |s| s[5] }.uniq,
          "loaded_kept" => loaded.map { |l| l[:allocation_samples].map { |s| s[5] }.uniq },
          "summary_keys" => Rperf::Native::Profile.from_hash(data).summary.keys))
      RUBY
      assert_equal %w[newobj], result["hooks"], "no FREEOBJ hook without retained: true"
      assert_equal [], result["after"], "stop removes the hooks"
      assert_equal %w[newobj freeobj], result["retained_hooks"]
      assert_within 400_000, result["totals"]["Object#keep_strings String"], 0.06, "strings attributed to their site"
      assert_within 200_000, result["totals"]["Object#make_arrays Array"], 0.06, "arrays attributed to their site"
      assert_equal [nil], result["kept"], "retained not measured"
      assert_equal [[nil], [nil]], result["loaded_kept"], "JSON and pprof keep it not measured"
      assert_equal({}, result["retained"])
      assert_includes result["summary_keys"], "allocation_estimate"
      refute_includes result["summary_keys"], "retained_estimate"
      pb = Zlib.gunzip(File.binread(File.join(dir, "p.pb.gz")))
      assert_includes pb, "alloc_objects"
      refute_includes pb, "inuse_objects"
      report, err, status = Open3.capture3(RUBY, "#{ROOT}/exe/rperf", "report", "--alloc", File.join(dir, "p.json.gz"))
      assert status.success?, err
      assert_match(/Allocations: [\d,]+ objects \(estimated, one in 64 sampled\), retained not measured/, report)
      refute_includes report, "Retained by"
    end
  end

  def test_retained_settings_cli_and_environment
    assert_raises(ArgumentError) { Rperf::Settings.new(retained: true) } # needs allocations: N
    assert_raises(ArgumentError) { Rperf::Settings.new(allocations: 64, retained: 1) }
    refute Rperf::Settings.new(allocations: 64).retained
    settings = Rperf::Settings.new(allocations: 64, retained: true)
    assert_equal "1", settings.child_env["RPERF_RETAINED"]
    assert Rperf::Settings.from_env(settings.child_env).retained
    refute Rperf::Settings.from_env("RPERF_ALLOCATIONS" => "64").retained
    Dir.mktmpdir do |dir|
      script = File.join(dir, "w.rb")
      File.write(script, "#{WORKLOAD}\nkeep_strings(200_000)\n")
      reports = [[], ["--retained"]].map do |extra|
        path = File.join(dir, "p#{extra.size}.json.gz")
        _, err, status = Open3.capture3(RUBY, "#{ROOT}/exe/rperf", "record", "--alloc=32", *extra, "-o", path, RUBY, script)
        assert status.success?, err
        report, err, status = Open3.capture3(RUBY, "#{ROOT}/exe/rperf", "report", "--alloc", path)
        assert status.success?, err
        report
      end
      assert_match(/one in 32 sampled\), retained not measured/, reports[0])
      assert_match(/one in 32 sampled\), [\d,]+ retained/, reports[1])
      assert_match(/Retained by site \(self\):\n\s+[\d,]+\s+[\d.]+%\s+String\.new/, reports[1])
      _, err, status = Open3.capture3(RUBY, "#{ROOT}/exe/rperf", "record", "--retained", "-o", File.join(dir, "x.json"), RUBY, script)
      refute status.success?
      assert_includes err, "it needs allocations: N"
    end
  end

  def test_without_allocations_the_result_has_no_allocation_keys
    data = Rperf.start { 10_000.times { Object.new } }
    refute data.key?(:allocation_samples)
    refute data.key?(:allocation_interval)
  end

  # go tool pprof reads the three sample types, with the totals of the result Hash exactly;
  # the time type stays the default.
  def test_pprof_has_allocation_sample_types
    Dir.mktmpdir do |dir|
      path = File.join(dir, "p.pb.gz")
      totals = run_workload(<<~RUBY)
        data = Rperf.start(allocations: 64, retained: true) do
          make_arrays(100_000)
          keep_strings(100_000)
          GC.start
        end
        Rperf.save("#{path}", data)
        puts JSON.generate("alloc" => data[:allocation_samples].sum { |s| s[1] }, "inuse" => data[:allocation_samples].sum { |s| s[5] },
                           "time" => data[:aggregated_samples].sum { |s| s[1] })
      RUBY
      pb = Zlib.gunzip(File.binread(path))
      %w[alloc_objects inuse_objects count object_class Array].each { |s| assert_includes pb, s }
      report = Rperf::Storage.load_any(path)
      refute(report[:aggregated_samples].any? { |s| s[1].zero? }, "allocation samples are not time samples")
      assert_equal totals["time"], report[:aggregated_samples].sum { |s| s[1] }
      go = ENV.fetch("GO", "go")
      next skip("go is not installed") unless system(go, "version", out: File::NULL, err: File::NULL)

      { "alloc_objects" => totals["alloc"], "inuse_objects" => totals["inuse"] }.each do |type, expected|
        top, status = Open3.capture2e(go, "tool", "pprof", "-sample_index=#{type}", "-top", path)
        assert status.success?, top
        assert_match(/Type: #{type}/, top)
        assert_equal expected, top[/of (\d+) total/, 1].to_i, "#{type} total"
      end
      # 100,000 objects at N = 64: a relative standard deviation of 2.5%; 15% is 6 of them (and
      # covers the few other objects of the run). The accuracy itself is tested above.
      assert_within 200_000, totals["alloc"], 0.15, "objects allocated"
      assert_within 100_000, totals["inuse"], 0.15, "objects retained"
      top, = Open3.capture2e(go, "tool", "pprof", "-top", path)
      assert_match(/Type: cpu/, top)
      tags, = Open3.capture2e(go, "tool", "pprof", "-sample_index=inuse_objects", "-tags", path)
      assert_match(/object_class: Total \d+.*String/m, tags)
    end
  end

  # A .pb.gz file carries the allocation samples (the alloc_objects/inuse_objects types and the
  # object_class label) and the interval (a comment): Rperf.load restores them exactly, time
  # samples stay apart, and `rperf report --alloc` reads the file.
  def test_pprof_round_trips_allocation_samples
    Dir.mktmpdir do |dir|
      path = File.join(dir, "p.pb.gz")
      result = run_workload(<<~RUBY)
        # rows with label sets by content and frames without lines: ids differ between profiles
        def rows(data)
          data[:allocation_samples].map { |f, n, seq, ls, klass, kept| [f.map { |x| x.first(2) }, n, seq, data[:label_sets][ls].to_a.sort_by(&:first).inspect, klass, kept] }.sort_by(&:inspect)
        end
        def by_class(data)
          data[:allocation_samples].each_with_object(Hash.new { |h, k| h[k] = [0, 0] }) { |s, h| h[s[4]][0] += s[1]; h[s[4]][1] += s[5] }
        end
        data = Rperf.start(allocations: 64, retained: true) do
          make_arrays(100_000)
          Rperf.label(request: "a") { keep_strings(50_000) }
          GC.start
        end
        Rperf.save("#{path}", data)
        loaded = Rperf.load("#{path}")
        puts JSON.generate("same_rows" => rows(loaded) == rows(data), "classes" => by_class(data), "loaded_classes" => by_class(loaded),
                           "interval" => loaded[:allocation_interval], "count" => [data[:allocation_sample_count], loaded[:allocation_sample_count]],
                           "time" => [data[:aggregated_samples].sum { |s| s[1] }, loaded[:aggregated_samples].sum { |s| s[1] }],
                           "time_rows" => [data[:aggregated_samples].size, loaded[:aggregated_samples].size],
                           "total" => data[:allocation_samples].sum { |s| s[1] })
      RUBY
      assert result["same_rows"], "Rperf.load of a .pb.gz restores allocation_samples"
      assert_equal result["classes"], result["loaded_classes"]
      assert_operator result["classes"]["String"][1], :>, 0, "retained strings"
      assert_equal 64, result["interval"]
      assert_equal result["count"].first, result["count"].last
      assert_equal result["time"].first, result["time"].last, "time samples unchanged"
      assert_equal result["time_rows"].first, result["time_rows"].last, "allocation samples are not time samples"

      report, err, status = Open3.capture3(RUBY, "#{ROOT}/exe/rperf", "report", "--alloc", path)
      assert status.success?, err
      assert_match(/Allocations: [\d,]+ objects \(estimated, one in 64 sampled\)/, report)
      assert_includes report, result["total"].to_s.reverse.scan(/\d{1,3}/).join(",").reverse
      assert_match(/Object#make_arrays/, report)
      assert_match(/Array/, report.split("Allocated by class:").last)
    end
  end

  def test_cli_alloc_options
    Dir.mktmpdir do |dir|
      script = File.join(dir, "w.rb")
      File.write(script, "#{WORKLOAD}\nmake_arrays(200_000)\n")
      out_path = File.join(dir, "p.json.gz")
      _, err, status = Open3.capture3(RUBY, "#{ROOT}/exe/rperf", "record", "--alloc=32", "-o", out_path, RUBY, script)
      assert status.success?, err
      report, err, status = Open3.capture3(RUBY, "#{ROOT}/exe/rperf", "report", "--alloc", out_path)
      assert status.success?, err
      assert_match(/Allocations: [\d,]+ objects \(estimated, one in 32 sampled\)/, report)
      assert_match(/Object#make_arrays/, report)
      assert_match(/Array/, report.split("Allocated by class:").last)
      # Allocation sampling begins when Rperf.start is done: rperf's own start-up (its requires
      # under -rrperf, the session files) is not the program's.
      refute_match(%r{lib/rperf}, report, "rperf's own allocations are not in the profile")
      _, err, status = Open3.capture3(RUBY, "#{ROOT}/exe/rperf", "stat", "--alloc", RUBY, script)
      assert status.success?, err
      assert_match(/Allocated by class:\n\s+[\d,]+\s+[\d.]+%\s+Array/, err)

      File.write(script, "#{WORKLOAD}\nmake_arrays(600_000)\n")
      target = File.join(dir, "q.json.gz")
      _, err, status = Open3.capture3(RUBY, "#{ROOT}/exe/rperf", "record", "--alloc=32", "-o", target, RUBY, script)
      assert status.success?, err
      # --text: every function (the top 20 by own change can be Array.new and noise, leaving out
      # make_arrays, whose own change is 0)
      diff, err, status = Open3.capture3(RUBY, "#{ROOT}/exe/rperf", "diff", "--alloc", "--text", out_path, target)
      assert status.success?, err
      row = diff.lines.find { |l| l.include?("Object#make_arrays") }
      assert row, diff
      assert_within 400_000, row.split[1].to_i, 0.1, "change in arrays allocated (cumulative)"
      assert_match(/change: \+\d+ \(estimated objects\)/, diff)
    end
  end
end
