# frozen_string_literal: true

require_relative "test_helper"
require "json"
require "zlib"

# Issue 48.2: threads' names (Thread#name, as Ruby and Rails give them: "puma srv tp 001", "AR
# Pool Reaper") recorded by the session (at start, and at each Thread#name=), kept in the
# profile's "thread_names" key and shown by every view and format: the Viewer's payload
# (thread_totals), the Firefox tracks, pprof's thread_name label, `--format table`, the
# loader's round trips (JSON, pprof).
class ThreadNamesTest < Minitest::Test
  include RperfTestHelper

  RPERF = File.join(ROOT, "exe/rperf")

  # A thread named before start, one named after start and renamed mid-run (each name burns
  # CPU, so both are in its samples), one that is named, works and ends before stop, and the
  # main thread, never named. Wall mode: each thread's time is sampled.
  PROGRAM = <<~RUBY
    require "rperf"
    burn = lambda do |seconds|
      t0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
      x = 0
      x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t0 < seconds
      x
    end
    go = Queue.new
    before = Thread.new { go.pop; burn.(0.05) }
    before.name = "named before start"
    sleep 0.01 until before.status == "sleep"
    Rperf.start(mode: :wall, frequency: 500, output: ARGV[0])
    worker = Thread.new do
      Thread.current.name = "worker"
      burn.(0.05)
      Thread.current.name = "worker renamed"
      burn.(0.05)
    end
    short = Thread.new { Thread.current.name = "short lived"; burn.(0.05) }
    short.join
    go << 1
    before.join
    worker.join
    data = Rperf.stop
    File.write(ARGV[1], JSON.generate(names: data[:thread_names],
                                      seqs: data[:aggregated_samples].map { |s| s[2] }.uniq))
  RUBY

  def setup
    @dir = Dir.mktmpdir("rperf-thread-names")
    @json = File.join(@dir, "names.json.gz")
    facts = File.join(@dir, "facts.json")
    _, err, status = run_ruby(PROGRAM.sub('require "rperf"', 'require "rperf"; require "json"'), @json, facts)
    assert status.success?, err
    @facts = JSON.parse(File.read(facts))
  end

  def teardown
    super
    FileUtils.rm_rf(@dir)
  end

  # {name => thread_seq} from the entries [[seq, name, time_ns], ...].
  def seq_of(entries) = entries.to_h { |seq, name, _| [name, seq] }

  def test_the_result_records_every_name_with_its_time
    entries = @facts["names"]
    names = entries.map { |e| e[1] }
    assert_equal ["named before start", "worker", "worker renamed", "short lived"].sort, names.sort
    seqs = seq_of(entries)
    assert_equal seqs["worker"], seqs["worker renamed"], "a rename is the same thread's"
    refute_equal seqs["worker"], seqs["short lived"]
    worker = entries.select { |e| e[0] == seqs["worker"] }
    assert_equal ["worker", "worker renamed"], worker.map { |e| e[1] }, "in the order given"
    assert_operator worker[1][2], :>, worker[0][2], "the rename's time is later"
    before = entries.find { |e| e[1] == "named before start" }
    assert_equal 0, before[2], "a name held at start is dated 0"
    seqs.each_value { |seq| assert_includes @facts["seqs"], seq, "thread #{seq} has samples" }
  end

  def test_views_show_each_threads_last_name_after_a_json_round_trip
    native = Rperf::Native::Profile.from_hash(Rperf.load(@json))
    names = native.thread_totals.to_h { |seq, _, _, name| [seq, name] }
    seqs = seq_of(@facts["names"])
    assert_equal "worker renamed", names[seqs["worker"]]
    assert_equal "short lived", names[seqs["short lived"]]
    assert_equal "named before start", names[seqs["named before start"]]
    main = names.keys.min
    assert_nil names[main], "the main thread has no name"
  end

  def test_table_lists_the_threads_with_their_names
    out, err, status = Open3.capture3(RUBY, RPERF, "report", "--format", "table", @json)
    assert status.success?, err
    threads = out.lines.grep(/^# thread\t/).map { |l| l.chomp.split("\t") }
    seqs = seq_of(@facts["names"])
    by_seq = threads.to_h { |_, seq, _, name| [Integer(seq), name] }
    assert_equal "worker renamed", by_seq[seqs["worker"]]
    assert_equal "short lived", by_seq[seqs["short lived"]]

    out, err, status = Open3.capture3(RUBY, RPERF, "report", "--format", "table-json", @json)
    assert status.success?, err
    summary = JSON.parse(out).last.fetch("summary")
    assert_includes summary.fetch("threads").map { |t| t["name"] }, "worker renamed"
  end

  def test_a_missing_thread_is_refused_with_the_threads_named
    _, err, status = Open3.capture3(RUBY, RPERF, "report", "--top", "--thread", "999", @json)
    refute status.success?
    seqs = seq_of(@facts["names"])
    assert_includes err, "#{seqs['worker']} (worker renamed)"
  end

  def test_firefox_tracks_are_named
    path = File.join(@dir, "names.firefox.json")
    Rperf.save(path, Rperf.load(@json))
    threads = JSON.parse(File.read(path)).fetch("threads")
    seqs = seq_of(@facts["names"])
    track = ->(name) { threads.find { |t| t["name"] == "Thread #{seqs[name]} (#{name == 'worker' ? 'worker renamed' : name})" } }
    assert track.("worker"), threads.map { |t| t["name"] }.inspect
    assert track.("short lived")
    assert(threads.any? { |t| t["name"] =~ /\AThread \d+\z/ }, "the unnamed main thread keeps its plain name")
  end

  def test_pprof_carries_a_thread_name_label_read_by_go_and_by_the_loader
    pb = File.join(@dir, "names.pb.gz")
    Rperf.save(pb, Rperf.load(@json))
    out, err, status = Open3.capture3("go", "tool", "pprof", "-raw", pb)
    skip "go tool pprof is not available: #{err}" unless status.success?
    assert_match(/thread_name:\[worker renamed\]/, out)
    assert_match(/thread_name:\[short lived\]/, out)
    assert_match(/thread_seq:\[\d+\]/, out, "beside the thread's number")

    back = Rperf.load(pb)
    seqs = seq_of(@facts["names"])
    names = back[:thread_names].to_h { |seq, name, _| [seq, name] }
    assert_equal "worker renamed", names[seqs["worker"]], "pprof keeps each thread's last name"
    assert_equal "short lived", names[seqs["short lived"]]
  end

  def test_a_profile_without_names_has_no_key
    _, err, status = run_ruby(<<~RUBY)
      require "rperf"
      Rperf.start(mode: :wall)
      Thread.new { sleep 0.01 }.join
      data = Rperf.stop
      abort "names: \#{data[:thread_names].inspect}" if data.key?(:thread_names)
    RUBY
    assert status.success?, err
  end
end
