# frozen_string_literal: true

require_relative "test_helper"
require "timeout"
require "pathname"
require "json"
require "zlib"

# Every format, checked by a real consumer: go tool pprof, pprof-format (npm), speedscope's
# own JSON schema (npm), and our loader.
class FormatsTest < Minitest::Test
  HOT_LINE = __LINE__ + 1
  def hot_line = burn_cpu(0.06)

  def profile(lines: true)
    @profile ||= {}
    @profile[lines] ||= Rperf.start(mode: :wall, lines: lines) do
      Rperf.label(endpoint: "/slow") { hot_line }
      Rperf.label(endpoint: "/fast") { burn_cpu(0.02) }
      Thread.new { sleep 0.02 }.join
    end
  end

  def total(data) = data[:aggregated_samples].sum { |s| s[1] }

  def tmp(name) = File.join(@dir, name)

  def setup
    @dir = Dir.mktmpdir("rperf-formats")
  end

  def teardown
    super
    FileUtils.rm_rf(@dir)
  end

  def go_pprof(*args)
    out, err, status = Open3.capture3("go", "tool", "pprof", *args)
    assert status.success?, "go tool pprof #{args.join(' ')} failed: #{err}"
    out
  end

  # Sum of sample values in `go tool pprof -raw` output (the Samples section only).
  def raw_total(out) = out[/^Samples:\n(.*?)^Locations/m, 1].scan(/^\s+(\d+): /).flatten.sum(&:to_i)

  def test_go_tool_pprof_reads_totals_labels_and_lines
    data = profile
    path = tmp("p.pb.gz")
    Rperf.save(path, data)
    assert_equal total(data), raw_total(go_pprof("-raw", path)), "pprof sample total = profile total weight"
    slow = weight_where(data) { |_s, l| l[:endpoint] == "/slow" }
    assert_equal slow, raw_total(go_pprof("-raw", "-tagfocus=endpoint=/slow", path))
    blocked = weight_where(data) { |_s, l| l[:"%GVL"] == "blocked" }
    assert_operator blocked, :>, 0
    assert_equal blocked, raw_total(go_pprof("-raw", "-tagfocus=%GVL=blocked", path))
    assert_match(/FormatsTest#hot_line .*formats_test\.rb:#{HOT_LINE}\b/, go_pprof("-top", "-lines", "-nodecount=50", path))
    raw = go_pprof("-raw", path)
    assert_match(/PeriodType: wall nanoseconds/, raw)
    assert_match(/Comment: rperf #{Regexp.escape(Rperf::VERSION)}/, raw)
    assert_match(/thread_seq:\[1\]/, raw)
  end

  def test_output_option_writes_pprof_with_lines_and_returns_method_level
    path = tmp("out.pb.gz")
    data = Rperf.start(mode: :cpu, output: path) { hot_line }
    assert(data[:aggregated_samples].all? { |s| s[0].all? { |f| f.size == 2 } })
    assert_match(/formats_test\.rb:\d+/, go_pprof("-top", "-lines", path))
  end

  def test_pprof_format_npm_decoder
    data = profile
    path = tmp("p.pb.gz")
    Rperf.save(path, data)
    out, err, status = Open3.capture3("node", File.join(ROOT, "test/consumers/pprof_decode.js"), path)
    assert status.success?, err
    info = JSON.parse(out)
    assert_equal total(data).to_s, info["total"]
    assert_equal "", info["firstString"]
    assert_equal ["wall/nanoseconds"], info["sampleType"]
    assert_equal 1_000_000, info["period"]
    assert_includes info["functions"], "FormatsTest#hot_line"
    assert_equal HOT_LINE, info["startLines"]["FormatsTest#hot_line"], "Function.start_line"
    assert_operator info["maxLine"], :>, 0
    assert_equal ["%GVL", "endpoint", "thread_seq"], info["labelKeys"] - ["%GC"]
  end

  def test_speedscope_schema_and_weights
    data = profile
    path = tmp("p.speedscope.json")
    Rperf.save(path, data)
    out, err, status = Open3.capture3("node", File.join(ROOT, "test/consumers/speedscope_validate.js"), path)
    assert status.success?, "#{out}#{err}"
    doc = JSON.parse(File.read(path))
    assert_equal total(data), doc["profiles"].sum { |p| p["weights"].sum }
    assert_operator doc["profiles"].size, :>=, 2, "one profile per thread"
    assert(doc["shared"]["frames"].any? { |f| f["name"] == "FormatsTest#hot_line" && f["line"].to_i > 0 })
  end

  def test_collapsed_escapes_names_and_sums
    data = {
      mode: :cpu, frequency: 100, label_sets: [{}],
      aggregated_samples: [
        [[["a.rb", "evil;name\nx"], ["a.rb", "<main>"]], 30, 1, 0],
        [[["a.rb", "leaf"], ["a.rb", "<main>"]], 12, 1, 0],
        [[["a.rb", "leaf"], ["a.rb", "<main>"]], 5, 2, 0],
      ],
    }
    path = tmp("p.collapsed")
    Rperf.save(path, data)
    lines = File.read(path).lines.sort
    assert_equal ["<main>;evil,name x 30\n", "<main>;leaf 17\n"], lines
    real = File.read(tap { Rperf.save(tmp("r.collapsed"), profile(lines: false)) }.tmp("r.collapsed"))
    assert_equal total(profile(lines: false)), real.lines.sum { |l| l.split.last.to_i }
  end

  # Issue 44 (3, 4): scripts written against rperf 0.11 use StringIO and Zlib after `require
  # "rperf"` alone, and encode a result without :aggregated_samples (a run without samples).
  def test_require_loads_stringio_and_zlib_and_encoders_take_a_result_without_samples
    code = <<~RUBY
      require "rperf"
      io = StringIO.new(Zlib.gzip("x"))
      data = { mode: :cpu, frequency: 100 }
      pprof = Rperf::PProf.encode(data)
      path = File.join(ARGV[0], "empty.pb.gz")
      File.binwrite(path, Rperf.gzip(pprof))
      p [Zlib::GzipReader.new(io).read, Rperf::Text.encode(data), Rperf::Collapsed.encode(data),
         pprof.encoding, Rperf.load(path)[:aggregated_samples]]
    RUBY
    Dir.mktmpdir do |dir|
      out, err, status = run_ruby(code, dir)
      assert status.success?, err
      assert_equal ["x", "No samples recorded.\n", "", Encoding::BINARY, []].inspect, out.chomp
    end
  end

  # rperf 0.11's public print_stat reads the CLI's variables as it prints (its own test suite
  # sets them around the call).
  def test_print_stat_reads_the_command_and_report_variables_at_the_call
    code = <<~RUBY
      require "rperf"
      ENV["RPERF_STAT_COMMAND"] = "ruby test.rb"
      ENV["RPERF_STAT_REPORT"] = "1"
      Rperf.print_stat(mode: :wall, frequency: 100, sampling_count: 2, label_sets: [{}],
                       aggregated_samples: [[[["/a.rb", "A#foo"]], 100_000_000, 1, 0]])
    RUBY
    _, err, status = run_ruby(code)
    assert status.success?, err
    assert_includes err, " Performance stats for 'ruby test.rb':"
    assert_match(/^ Flat:\n +100\.0 ms 100\.0%  A#foo \(\/a\.rb\)$/, err)
    assert_includes err, " Cumulative:"
  end

  def test_text_report_counts_recursion_once
    data = {
      mode: :cpu, frequency: 100, sampling_count: 2, label_sets: [{}],
      aggregated_samples: [[[["a.rb", "fib"], ["a.rb", "fib"], ["a.rb", "fib"], ["a.rb", "<main>"]], 100, 1, 0],
                           [[["b.rb", "other"], ["a.rb", "<main>"]], 100, 1, 0]],
    }
    text = Rperf::Report.text(data)
    assert_match(/Total: 0\.0ms \(cpu\)/, text)
    assert_match(/Samples: 2/, text)
    cum = text.split("Cumulative:").last
    assert_match(/0\.0 ms\s+50\.0%\s+fib \(a\.rb\)/, cum)
    assert_match(/100\.0%\s+<main> \(a\.rb\)/, cum)
    Rperf.save(tmp("p.txt"), profile(lines: false))
    assert_match(/ Flat:\n\s+[\d.,]+ ms\s+[\d.]+%\s+Process\.clock_gettime \(<C method>\)/, File.read(tmp("p.txt")))
  end

  def test_json_meta_summary_and_read_meta
    data = profile(lines: false)
    path = tmp("p.json.gz")
    Rperf.save(path, data)
    head = Zlib.gunzip(File.binread(path))
    assert head.start_with?('{"meta":{')
    doc = JSON.parse(head)
    assert_equal Rperf::VERSION, doc["rperf_version"], "top-level version, as rperf 0.10/0.11 read it"
    assert_equal [Process.pid, Process.ppid], doc.values_at("pid", "ppid"), "the writer's pid and ppid, as rperf 0.11"
    meta = Rperf.read_meta(path)
    assert_equal Rperf::VERSION, meta[:meta][:rperf_version]
    assert_equal RUBY_VERSION, meta[:meta][:ruby_version]
    assert_equal "wall", meta[:meta][:mode]
    assert_equal data[:sampling_count], meta[:summary][:samples]
    assert_in_delta data[:duration_ns] / 1e6, meta[:summary][:total_ms], 0.1
    top = meta[:summary][:top_methods].first
    assert_equal "Process.clock_gettime", top[:name]
    assert_in_delta 100.0 * data[:aggregated_samples].select { |s| s[0].first&.at(1) == "Process.clock_gettime" }.sum { |s| s[1] } / total(data),
                    top[:self_pct], 0.1
    assert_equal meta, Rperf.load(path).slice(:meta, :summary), "load keeps meta and summary"
    assert_nil Rperf.read_meta(__FILE__)
  end

  # The meta's git commands run through Native.capture (posix_spawn), with IO.popen's results.
  def test_meta_git_capture
    assert_nil Rperf::Native.capture(["rperf-no-such-program-#{Process.pid}"])
    assert_equal ["", false], Rperf::Native.capture(["sh", "-c", "echo oops >&2; exit 3"]), "stderr dropped, exit status kept"
    assert_equal ["a b\n", true], Rperf::Native.capture(["sh", "-c", "echo \"$0 $1\"", "a", "b"])
    assert_nil Rperf::Meta.git_capture(Dir.tmpdir, "rev-parse", "--no-such-option")
    # A non-String argument is a TypeError (its bytes were once read as a String's).
    assert_raises(TypeError) { Rperf::Native.capture(["echo", Object.new]) }
    assert_raises(TypeError) { Rperf::Native.capture(["echo", Pathname("x")]) }
    # A signal Ruby handles without raising (here the SIGCHLD of another child that exits
    # meanwhile) lets the program run on: it was once killed, and the meta lost its git facts.
    other = spawn("sleep", "0.05")
    assert_equal ["done\n", true], Rperf::Native.capture(["sh", "-c", "sleep 0.5; echo done"])
    Process.wait(other)
    assert_equal ["", true], Rperf::Native.capture(["sh", "-c", "exec >&-; sleep 0.1"]), "output closed before the exit"
    # An interrupt (Timeout here) stops a program that hangs: it is killed and reaped.
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    assert_raises(Timeout::Error) { Timeout.timeout(0.2) { Rperf::Native.capture(["sleep", "30"]) } }
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0, :<, 5
    assert_empty `ps -o pid=,args= --ppid #{Process.pid}`.lines.grep(/sleep 30/), "the program was killed"
    expected = IO.popen(["git", "-C", __dir__, "rev-parse", "HEAD"], err: File::NULL, &:read)
    skip "not a git checkout" unless $?.success?
    assert_equal expected.strip, Rperf::Meta.git_capture(__dir__, "rev-parse", "HEAD")
  end

  def random_profile(rng)
    names = Array.new(rng.rand(1..30)) { |i| ["file#{rng.rand(5)}.rb", "M#{i}#m\u00e9th\"#{rng.rand(1000)}"] }
    label_sets = [{}] + Array.new(rng.rand(0..4)) { |i| { "k#{i}": "v\u2713#{rng.rand(9)}", "%GVL" => "blocked" } }
    samples = Array.new(rng.rand(0..40)) do
      [Array.new(rng.rand(0..8)) { names.sample(random: rng) }, rng.rand(1..10**12), rng.rand(1..4), rng.rand(label_sets.size)]
    end
    { mode: %i[cpu wall].sample(random: rng), frequency: rng.rand(1..10_000), trigger_count: rng.rand(10**6),
      sampling_count: rng.rand(10**6), sampling_time_ns: rng.rand(10**9), detected_thread_count: 4,
      start_time_ns: rng.rand(10**18), duration_ns: rng.rand(10**12), aggregated_samples: samples,
      label_sets: label_sets, unique_frames: names.size, unique_stacks: samples.size }
  end

  def test_json_round_trip_property
    rng = Random.new(20_261_121)
    100.times do |i|
      data = random_profile(rng)
      %w[json json.gz].each do |ext|
        path = tmp("r#{i}.#{ext}")
        Rperf.save(path, data)
        loaded = Rperf.load(path)
        assert_equal body(data), body(loaded), "round trip #{ext} ##{i}"
        scalars = data.except(:aggregated_samples, :label_sets, :unique_frames, :unique_stacks)
        assert_equal scalars, loaded.slice(*scalars.keys), "round trip #{ext} ##{i}"
      end
    end
  end

  def random_json_value(rng, depth = 0)
    case depth > 3 ? rng.rand(5) : rng.rand(7)
    # Integers within int64 (the reader's limit: larger ones become Floats).
    when 0 then [rng.rand(-10**6..10**6), rng.rand(2**63) * (rng.rand(2).zero? ? -1 : 1)].sample(random: rng)
    when 1 then [rng.rand * 10**rng.rand(-5..25), -rng.rand, 0.0, 1e-300].sample(random: rng)
    when 2 then [true, false, nil].sample(random: rng)
    when 3, 4
      Array.new(rng.rand(0..12)) { [*"a".."z", "\"", "\\", "/", "\n", "\t", "\u0001", "\u00e9", "\u4e2d", "\u{1F600}", "]", "[", ",", ":"].sample(random: rng) }.join
    when 5 then Array.new(rng.rand(0..5)) { random_json_value(rng, depth + 1) }
    else Array.new(rng.rand(0..5)) { [random_json_value(rng, 4).to_s, random_json_value(rng, depth + 1)] }.to_h
    end
  end

  # The C++ reader behind Rperf.load against Ruby's JSON, on random documents.
  def test_native_json_reader_agrees_with_json_parse
    rng = Random.new(11)
    2000.times do |i|
      doc = { "v" => random_json_value(rng), "frames" => [["a.rb", "m", 1], ["a.rb", "m", 1]] }
      text = i.even? ? JSON.generate(doc) : JSON.pretty_generate(doc)
      text = text.gsub("\u00e9", "\\u00e9") if i % 3 == 0 # escaped and raw forms
      assert_equal JSON.parse(text, symbolize_names: true), Rperf::Native.parse_json(text), text
    end
    assert_raises(Rperf::FormatError) { Rperf::Native.parse_json("[" * 10_000) }
  end

  # Issue 30 (3): a 521 KB .json.gz of 512 MiB of "[]," grew to 11 GB before a FormatError. Now
  # it fails at its first bad value (in the samples) or once meta's tree is over its budget,
  # in a child whose peak RSS (VmHWM) is the inflated text and not much more.
  def test_a_json_bomb_fails_fast_in_bounded_memory
    chunk = "[]," * (1 << 20) # 3 MiB
    { "samples" => ['{"aggregated_samples":[', "[]]}", "sample is not"],
      "meta" => ['{"meta":{"x":[', '[]]},"aggregated_samples":[]}', "its meta, summary and attributes hold over 128 MiB"] }
      .each do |name, (head, tail, expected)|
        bomb = tmp("#{name}-bomb.json.gz")
        Zlib::GzipWriter.open(bomb, Zlib::BEST_COMPRESSION) do |gz|
          gz.write(head)
          171.times { gz.write(chunk) } # 513 MiB
          gz.write(tail)
        end
        assert_operator File.size(bomb), :<, 1 << 20
        code = <<~'RUBY'
          require "rperf"
          begin
            Rperf.load(ARGV[0])
            puts "loaded"
          rescue Rperf::FormatError => e
            puts e.message
          end
          puts File.read("/proc/self/status")[/^VmHWM:\s*(\d+)/, 1]
        RUBY
        out, err, status = Open3.capture3(RUBY, "-I#{ROOT}/lib", "-e", code, bomb)
        assert status.success?, err
        message, peak_kb = out.lines.map(&:chomp)
        assert message.start_with?("#{bomb}: "), message
        assert_includes message, expected, name
        assert_operator Integer(peak_kb), :<, 1_000_000, "#{name}: peak RSS #{peak_kb} kB (#{message})"
      end
  end

  # Every allocation collects and compacts: shared frames must survive being moved.
  def test_loader_is_gc_and_compaction_safe
    text = JSON.generate({ a: Array.new(60) { |i| ["f#{i % 5}.rb", "m#{i % 5}", i % 5] }, b: { "c" => "d" * 100, "e" => [1.5, 2**62] } })
    expected = JSON.parse(text, symbolize_names: true)
    profile_text = Rperf::Storage.encode(profile(lines: true), :json)
    expected_profile = Rperf::Native::Profile.load_json(profile_text).to_h
    begin
      GC.auto_compact = true
      GC.stress = true
      got = Rperf::Native.parse_json(text)
      got_profile = Rperf::Native::Profile.load_json(profile_text).to_h
    ensure
      GC.stress = false
      GC.auto_compact = false
    end
    assert_equal expected, got
    assert_equal expected_profile, got_profile
  end

  # Allocation samples in a .pb.gz (built by hand: no allocation hook needed): restored by
  # Rperf.load with their classes, labels and thread; the interval from the file's comment, or
  # without it the largest number every count is a multiple of; an allocation sample without
  # its class is a FormatError.
  def test_pprof_allocation_samples_load_back
    base = profile(lines: false)
    frames = base[:aggregated_samples].first[0]
    labelled = base[:label_sets].index { |l| l[:endpoint] == "/slow" }
    rows = [[frames, 96, 1, 0, "String", 32], [frames.drop(1), 32, 2, labelled, "Array", 0]]
    data = base.merge(allocation_interval: 32, allocation_sample_count: 4, allocation_samples: rows)
    Rperf.save(tmp("a.pb.gz"), data)
    loaded = Rperf.load(tmp("a.pb.gz"))
    shape = ->(d) { d[:allocation_samples].map { |f, n, seq, ls, klass, kept| [f.map { |x| x.first(2) }, n, seq, d[:label_sets][ls], klass, kept] } }
    assert_equal shape.(data), shape.(loaded)
    assert_equal [32, 4], loaded.values_at(:allocation_interval, :allocation_sample_count)
    assert_equal total(base), total(loaded)
    assert_equal base[:aggregated_samples].size, loaded[:aggregated_samples].size

    refute loaded.key?(:allocation_interval_guessed), "the file names its interval"
    bytes = Rperf::Storage.native(data).encode(:pprof, { comments: [] })
    assert_includes bytes.b, "allocations: one in 32", "the writer names the interval itself"
    # A file without that comment (rperf before it was written): the counts' gcd, guessed.
    guessed = load_pprof_bytes(bytes.b.sub("allocations: one in 32", "allocations: one of 32"))
    assert_equal [32, true], guessed.values_at(:allocation_interval, :allocation_interval_guessed)
    assert_match(/one in 32 sampled; the interval estimated from the counts: the file does not name it\)/, Rperf::Report.allocations(guessed))
    assert_match(/one in 32 sampled\), /, Rperf::Report.allocations(loaded))
    e = assert_raises(Rperf::FormatError) { load_pprof_bytes(bytes.b.sub("object_class", "object_clasz")) }
    assert_match(/x\.pb.*allocation sample without an object_class label/, e.message)
    # Retained objects without allocated ones: the error says what is missing.
    e = assert_raises(Rperf::FormatError) { load_pprof_bytes(bytes.b.sub("alloc_objects", "alloc_objectz")) }
    assert_match(/x\.pb.*inuse_objects without alloc_objects/, e.message)
  end

  # `bytes` (a pprof protobuf, gzipped or not) saved as x.pb and loaded.
  def load_pprof_bytes(bytes)
    File.binwrite(tmp("x.pb"), Zlib.gzip(bytes))
    Rperf.load(tmp("x.pb"))
  end

  # The native pprof reader gives back what the writer was given: samples, weights, threads,
  # labels (numeric ones as Integers, empty strings as such), frames with lines, start lines,
  # samples without Ruby frames; and the same as go tool pprof's re-encoding of the file.
  def test_pprof_round_trips_the_profile
    frames = [["a.rb", "A#m", 3], ["b.rb", "B#n", 7]]
    data = { mode: :wall, frequency: 250, start_time_ns: 5, duration_ns: 9,
             aggregated_samples: [[frames, 100, 1, 1], [frames.drop(1), 50, 2, 0], [[], 7, 1, 2], [frames, 3, 3, 3]],
             label_sets: [{}, { endpoint: "/x", n: 5, big: -(2**40) }, { "%GVL": "blocked" }, { e: "", z: 0 }],
             function_start_lines: [["a.rb", "A#m", 1]] }
    Rperf.save(tmp("r.pb.gz"), data)
    loaded = Rperf.load(tmp("r.pb.gz"))
    assert_equal data.except(:label_sets, :aggregated_samples), loaded.slice(*data.keys).except(:label_sets, :aggregated_samples)
    rows = ->(d) { d[:aggregated_samples].map { |f, w, t, l| [f, w, t, d[:label_sets][l]] } }
    assert_equal rows.(data), rows.(loaded)
    assert_equal 7, Rperf::Storage.native(loaded).vm_state_totals[:gvl_blocked], "%GVL labels are VM states again"
    # go tool pprof's re-encoding of the file (its own ids, string order, label order) reads
    # the same; labels of 0 and "" are the same to it, and left out here.
    out, err, status = Open3.capture3("go", "tool", "pprof", "-proto", "-output", tmp("go.pb.gz"), tmp("r.pb.gz"))
    assert status.success?, "#{out}#{err}"
    again = Rperf.load(tmp("go.pb.gz"))
    plain = ->(d) { rows.(d).map { |f, w, t, l| [f.map { |x| x.first(2) }, w, t, l.except(:e, :z)] }.sort_by(&:inspect) }
    assert_equal plain.(data), plain.(again)
    assert_equal [:wall, 250], again.values_at(:mode, :frequency)
  end

  def test_load_any_tells_pprof_from_json_by_content
    data = profile(lines: false)
    Rperf.save(tmp("p.pb.gz"), data)
    File.rename(tmp("p.pb.gz"), tmp("renamed.gz"))
    Rperf.save(tmp("j.json.gz"), data)
    File.rename(tmp("j.json.gz"), tmp("renamed-json.gz"))
    assert_equal total(data), total(Rperf::Storage.load_any(tmp("renamed.gz")))
    assert_equal body(data), body(Rperf::Storage.load_any(tmp("renamed-json.gz")))
    assert_equal total(data), total(Rperf.load(tmp("renamed.gz"))), "Rperf.load reads pprof too"
    # A line break first is pprof's first byte too: JSON after blanks is still JSON, for the
    # sniffer itself (every caller), gzipped or not.
    json = "\n\n#{Rperf::Storage.encode(data, :json)}"
    File.write(tmp("blank.json"), json)
    assert_equal body(data), body(Rperf.load(tmp("blank.json")))
    assert_equal :json, Rperf::Native.sniff(json)
    assert_equal :json, Rperf::Native.sniff(Zlib.gzip(json))
    assert_equal :pprof, Rperf::Native.sniff(File.binread(tmp("renamed.gz")))
  end

  # A result Hash is a view of its native profile: saving it unchanged reuses that profile;
  # any change (or a Hash from elsewhere) is converted, and the file says what the Hash says.
  def test_saving_a_view_reuses_its_native_profile_until_it_changes
    data = profile(lines: false)
    assert_empty data.instance_variables, "the link to the native profile is hidden"
    native = Rperf::Storage.native(data)
    assert_same native, Rperf::Storage.native(data)
    loaded = Rperf.load(tmp_save(data))
    assert_same Rperf::Storage.native(loaded), Rperf::Storage.native(loaded), "a loaded Hash is a view too"
    copy = data.dup
    copy[:aggregated_samples] = data[:aggregated_samples].map(&:dup)
    copy[:aggregated_samples][0][1] += 1_000_000
    refute_same native, Rperf::Storage.native(copy), "an edited sample is converted, not ignored"
    assert_equal total(data) + 1_000_000, total(Rperf.load(tmp_save(copy)))
    data[:aggregated_samples].pop
    assert_equal total(data), total(Rperf.load(tmp_save(data))), "an edit in place is seen too"
    unshared = data.merge(aggregated_samples: data[:aggregated_samples].map { |st| [st[0].map { |f| f.map(&:dup) }, *st[1..]] })
    assert_equal body(data), body(Rperf.load(tmp_save(unshared))), "frames deduplicated by content"
  end

  def tmp_save(data)
    path = tmp("view-#{data.object_id}-#{rand(1 << 30)}.json.gz")
    Rperf.save(path, data)
    path
  end

  # As rperf 0.11's results (issue 25): every sample has an Array of frames of its own; a frame
  # is one Array shared by the samples that hold it; all of them mutable.
  def test_loaded_frames_are_shared_and_mutable_like_stop
    data = large_profile
    Rperf.save(tmp("shared.json.gz"), data)
    loaded = Rperf.load(tmp("shared.json.gz"))
    assert_equal body(data), body(loaded)
    stacks = loaded[:aggregated_samples].map(&:first)
    frames = stacks.flatten(1)
    assert_operator frames.uniq(&:object_id).size, :<=, 3000
    assert_equal stacks.size, stacks.uniq(&:object_id).size, "one Array per sample"
    assert (stacks + frames + loaded[:aggregated_samples]).none?(&:frozen?)
  end

  # Results are mutable (issue 25), so saving one that was changed in place must write the
  # change, however it was made; an unchanged one is still written from its native profile.
  def test_results_changed_in_place_are_saved_as_changed
    fresh = ->(raw) { Rperf.start(mode: :wall, aggregate: !raw) { burn_cpu(0.03) } }
    labels = ->(d) { d[:aggregated_samples].flat_map { |st| st[0].map { |f| f[1] } }.uniq }
    edits = {
      "map! on a sample's frames" => ->(d) { d[:aggregated_samples][0][0].map! { |f| [f[0], "mapped"] } },
      "a frame's label replaced" => ->(d) { d[:aggregated_samples][0][0][0][1] = "replaced" },
      "a label String of the same bytes" => ->(d) { d[:aggregated_samples][0][0][0][1] = +"#{d[:aggregated_samples][0][0][0][1]}" },
      "a raw sample's frames reversed" => ->(d) { d[:raw_samples].each { |st| st[0].reverse! } },
    }
    edits.each do |name, edit|
      data = fresh.call(name.include?("raw"))
      native = Rperf::Storage.native(data)
      assert_same native, Rperf::Storage.native(data), "#{name}: unchanged, the view's own profile"
      edit.call(data)
      # An equal String is the same frame: the view stays its profile's.
      next assert_same native, Rperf::Storage.native(data), name if name.include?("same bytes")

      refute_same native, Rperf::Storage.native(data), name
      loaded = Rperf.load(tmp_save(data))
      case name
      when /map!/ then assert_includes labels.(loaded), "mapped"
      when /replaced/ then assert_includes labels.(loaded), "replaced"
      else assert_equal data[:raw_samples].map(&:first), loaded[:raw_samples].map(&:first), name
      end
    end
  end

  def test_raw_samples_round_trip_for_timelines
    data = Rperf.start(mode: :wall, aggregate: false) { burn_cpu(0.03) }
    Rperf.save(tmp("raw.json.gz"), data)
    loaded = Rperf.load(tmp("raw.json.gz"))
    assert_equal data[:raw_samples], loaded[:raw_samples]
    assert_equal data[:aggregated_samples].sum { |s| s[1] }, loaded[:aggregated_samples].sum { |s| s[1] }
  end

  def test_load_rejects_bad_files_with_rperf_errors
    good = tmp("good.json.gz")
    Rperf.save(good, profile(lines: false))
    cases = {
      "missing" => nil,
      "empty" => "",
      "not gzip, not json" => "hello world",
      "truncated gzip" => File.binread(good)[0, 40],
      "wrong json" => '{"a": 1}',
      "json array" => "[1,2,3]",
      "bad sample" => '{"aggregated_samples": [[1,2]], "label_sets": [{}]}',
    }
    cases.each do |name, bytes|
      path = tmp("bad-#{name.tr(' ,', '__')}")
      File.binwrite(path, bytes) if bytes
      # A missing file is the Errno rperf 0.11 raises; bad content a FormatError naming the file.
      next assert_raises(Errno::ENOENT) { Rperf.load(path) } unless bytes

      e = assert_raises(Rperf::Error, name) { Rperf.load(path) }
      assert_includes e.message, path, "the error names the file (#{name})"
    end
  end

  def test_fuzzed_files_only_raise_rperf_errors
    rng = Random.new(7)
    valid_gz = Rperf::Storage.encode(profile(lines: false), :json, gzip: true)
    valid = Rperf::Storage.encode(profile(lines: false), :json)
    path = tmp("fuzz")
    outcomes = Hash.new(0)
    3000.times do |i|
      bytes = (i.even? ? valid_gz : valid).dup
      if rng.rand < 0.5
        bytes = bytes.byteslice(0, rng.rand(bytes.bytesize))
      else
        rng.rand(1..4).times { pos = rng.rand(bytes.bytesize); bytes.setbyte(pos, bytes.getbyte(pos) ^ (1 << rng.rand(8))) }
      end
      File.binwrite(path, bytes)
      begin
        $stderr = StringIO.new # version warnings of mutated files
        result = Rperf.load(path)
        outcomes[:loaded] += 1
        assert_kind_of Array, result[:aggregated_samples]
      rescue Rperf::Error
        outcomes[:rejected] += 1
      ensure
        $stderr = STDERR
      end
    end
    assert_operator outcomes[:rejected], :>, 1000
  end

  def test_huge_and_odd_labels_survive_every_format
    huge = "x" * 1_000_000
    data = Rperf.start(mode: :cpu) do
      Rperf.label(huge: huge, "odd;key\n": "v\u00e9\xff".dup.force_encoding("BINARY")) { burn_cpu(0.03) }
    end
    %w[json.gz pb.gz collapsed txt speedscope.json].each { |ext| Rperf.save(tmp("h.#{ext}"), data) }
    loaded = Rperf.load(tmp("h.json.gz"))
    assert(loaded[:label_sets].any? { |h| h[:huge] == huge })
    out, err, status = Open3.capture3("go", "tool", "pprof", "-raw", tmp("h.pb.gz"))
    assert status.success?, err
    assert_includes out, "huge:[#{huge[0, 100]}"
    assert_equal total(data), total(Rperf::Storage.load_any(tmp("h.pb.gz")))
  end

  # ~25 MB of JSON: many chunks, compressed in parallel into one gzip member.
  def large_profile
    rng = Random.new(5)
    frames = Array.new(3000) { |i| ["app/f#{i % 90}.rb", "K#{i % 40}#m#{i}", i] }
    samples = Array.new(20_000) { |i| [Array.new(25) { frames.sample(random: rng) }, 1000 + i, 1 + (i % 3), 0] }
    { mode: :wall, frequency: 1000, sampling_count: 20_000, duration_ns: 20 * 10**9, start_time_ns: 0,
      aggregated_samples: samples, label_sets: [{}] }
  end

  def test_large_json_gz_is_one_gzip_member_for_every_reader
    data = large_profile
    profile = Rperf::Storage.native(data)
    [nil, "zlib"].each do |deflate|
      path = tmp("large-#{deflate}.json.gz")
      profile.encode(:json, { gzip: true, level: 1, path: path, deflate: deflate })
      # rperf 0.10 and most integrations read one member with GzipReader.
      json = Zlib::GzipReader.open(path, &:read)
      assert_operator json.bytesize, :>, 10 << 20
      assert_equal data[:aggregated_samples].size, JSON.parse(json)["aggregated_samples"].size
      out, err, status = Open3.capture3("gzip", "-t", path)
      assert status.success?, "gzip -t (#{deflate || Rperf::Native::DEFLATE_BACKEND}): #{out}#{err}"
      assert_equal body(data), body(Rperf::Storage.load(path)), deflate.to_s
    end
  end

  def test_encoding_releases_the_gvl
    profile = Rperf::Storage.native(large_profile)  # the conversion from a Hash needs the GVL
    count = 0
    counter = Thread.new { loop { count += 1 } }
    sleep 0.05
    before = count
    profile.encode(:json, { gzip: true, level: 1, path: tmp("gvl.json.gz") })
    during = count - before
    counter.kill.join
    # Holding the GVL, the counting thread could not run at all while the C++ encoder works.
    assert_operator during, :>, 10_000
  end

  # Issue 30 (6): an interrupt (Ctrl-C, Thread#raise) that arrived while a profile was being
  # written was raised as the encoder returned, before the temporary file was renamed: the
  # profile was lost (a second Ctrl-C during the final write) and C++ objects were skipped.
  # Now the file is committed first and the interrupt is raised after.
  def test_an_interrupt_during_a_save_arrives_after_the_file_is_written
    data = large_profile
    profile = Rperf::Storage.native(data)
    path = tmp("interrupted.json.gz")
    saver = Thread.new do
      Thread.current.report_on_exception = false
      profile.encode(:json, { gzip: true, level: 9, deflate: "zlib", path: path }) # slow: time to interrupt it
      :finished
    end
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 30
    sleep 0.001 while Dir.glob("#{path}.tmp-*").empty? && saver.alive? && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    refute_empty Dir.glob("#{path}.tmp-*"), "the save is under way"
    saver.raise(Interrupt)
    assert_raises(Interrupt) { saver.value }
    assert_equal total(data), total(Rperf.load(path)), "the file was written whole"
    assert_empty Dir.glob("#{path}.tmp-*")
  end

  # Issue 43: a save killed mid-write (SIGKILL) left its temporary file for good. Its name
  # carries the writer's pid; the next save to the directory removes it once that process is
  # gone and the file is older than the writer could still be writing it (a reused pid, another
  # pid namespace sharing the directory).
  def test_a_save_removes_temporary_files_that_a_killed_save_left
    data = { mode: :cpu, frequency: 1000, aggregated_samples: [[[["a.rb", "A#a"]], 1000, 1, 0]] }
    dead = Process.spawn(RUBY, "-e", "exit")
    Process.wait(dead)
    old = Time.now - 3600
    stale = tmp("killed.json.gz.tmp-#{dead}-Ab3xYz")
    recent = tmp("recent.json.gz.tmp-#{dead}-Ab3xYz")
    live = tmp("live.json.gz.tmp-#{Process.pid}-Ab3xYz")
    foreign = tmp("notes.tmp-#{dead}")
    [stale, recent, live, foreign].each { |f| File.write(f, "partial") }
    [stale, live, foreign].each { |f| File.utime(old, old, f) }
    Rperf.save(tmp("next.json.gz"), data)
    refute File.exist?(stale), "its writer is gone"
    assert File.exist?(recent), "written a moment ago: perhaps by a writer of another pid namespace"
    assert File.exist?(live), "its writer lives"
    assert File.exist?(foreign), "not a name of ours"
    assert_equal 1000, total(Rperf.load(tmp("next.json.gz")))
  end

  def test_full_disk_raises_write_error
    e = assert_raises(Rperf::WriteError) { Rperf.save("/dev/full", large_profile, format: :json) }
    assert_match(/No space left/, e.message)
  end

  # Issue 30 (6): a profile saved to a symlink replaces the link's target (a temporary file
  # beside it, renamed), so the link keeps pointing to a whole file; (7) a FIFO without a reader
  # is refused at once (it froze the VM in open(2)); a failed write leaves the previous file.
  def test_saving_through_a_symlink_a_fifo_and_a_failure
    data = profile(lines: false)
    Dir.mkdir(tmp("real"))
    File.write(tmp("real/p.json"), "previous")
    File.symlink("real/p.json", tmp("link.json"))
    Rperf.save(tmp("link.json"), data)
    assert File.symlink?(tmp("link.json"))
    assert_equal total(data), total(Rperf.load(tmp("real/p.json")))
    assert_equal ["p.json"], Dir.children(tmp("real"))
    File.symlink("link.json", tmp("chain.json"))
    File.chmod(0o640, tmp("real/p.json"))
    Rperf.save(tmp("chain.json"), data, format: :collapsed)
    assert File.symlink?(tmp("chain.json")) && File.symlink?(tmp("link.json"))
    assert_equal 0o640, File.stat(tmp("real/p.json")).mode & 0o777, "the replaced file keeps its mode"
    assert_match(/ \d+\n/, File.read(tmp("real/p.json")))
    File.symlink("loop.json", tmp("loop.json"))
    assert_raises(Rperf::WriteError) { Rperf.save(tmp("loop.json"), data) }

    assert system("mkfifo", tmp("fifo.json"))
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    e = Timeout.timeout(10) { assert_raises(Rperf::WriteError) { Rperf.save(tmp("fifo.json"), data) } }
    assert_match(/No such device or address/, e.message)
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 5
    reader = Thread.new { File.binread(tmp("fifo.json")) } # a FIFO with a reader is written
    sleep 0.05 until reader.status == "sleep" || !reader.alive?
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
    begin
      Rperf.save(tmp("fifo.json"), data, format: :collapsed)
    rescue Rperf::WriteError
      retry if Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline # the reader not open yet
      raise
    end
    assert_match(/ \d+\n/, reader.value)

    File.write(tmp("kept.json"), "previous")
    e = assert_raises(Rperf::WriteError) { Rperf::Storage.write_file(tmp("kept.json/x"), "new") }
    assert_match(/Not a directory/, e.message)
    Rperf.save(tmp("source.json"), data)
    # A file size limit (SIGXFSZ ignored): the write fails with EFBIG after its first bytes.
    code = 'Signal.trap("XFSZ", "IGNORE"); begin; Rperf.save(ARGV[0], Rperf.load(ARGV[1])); rescue Rperf::WriteError => e; puts e.message; end'
    out, err, status = Open3.capture3(RUBY, "-I#{ROOT}/lib", "-rrperf", "-e", code, tmp("kept.json"), tmp("source.json"), rlimit_fsize: 4096)
    assert status.success?, err
    assert_match(/\AFile too large - .*kept\.json/, out) # the Errno, marked WriteError (as rperf 0.11 raises it)
    assert_equal "previous", File.read(tmp("kept.json")), "a write that failed leaves the previous file"
    assert_equal %w[kept.json], Dir.children(@dir).grep(/kept/), "and no temporary file"
  end

  def test_unwritable_output_keeps_the_profile
    _out, err = capture_io do
      data = Rperf.start(output: "/nonexistent-dir/x.json.gz") { burn_cpu(0.02) }
      assert_operator data[:sampling_count], :>, 0
    end
    assert_match(%r{could not write /nonexistent-dir/x\.json\.gz}, err)
    e = assert_raises(Rperf::WriteError) { Rperf.save("/nonexistent-dir/y.pb.gz", profile(lines: false)) }
    assert_match(/nonexistent-dir/, e.message)
    assert_raises(Rperf::UnknownFormatError) { Rperf.save(tmp("x"), profile(lines: false), format: :flamegraph) }
  end
end
