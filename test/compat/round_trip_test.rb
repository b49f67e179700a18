# frozen_string_literal: true

require_relative "../test_helper"
require_relative "support/round_trip"

# Profile files between rperf 0.11.1 and ours, both ways: the same samples (frames, weights,
# threads, labels; raw samples too), meta and summary, whoever reads them, and the same
# table-json output from either gem's `rperf report` / `rperf diff`. 0.11.1 writes its files
# now when it is installed (script/peers); otherwise the files it wrote once
# (fixtures/written_by_0.11.1, by support/record_fixtures.rb) and what it said of them stand in.
class CompatRoundTripTest < Minitest::Test
  RoundTrip = CompatProbe::RoundTrip
  Compare = CompatProbe::Compare
  OUR_LIB = File.join(ROOT, "lib")
  JSON_FILES = %w[profile.json.gz raw.json.gz].freeze
  # Everything Rperf.load gives that is the profile itself (not the run of the probe).
  SAME_FACTS = %w[mode frequency sampling_count label_sets sample_sizes frame samples total_weight raw_samples
                  meta summary read_meta].freeze
  # rperf 0.11.1 warns about a file of any other version, older or newer.
  THEIR_VERSION_WARNING = "rperf: warning: file was saved by rperf #{Rperf::VERSION} (current: 0.11.1)\n".freeze

  def setup
    @dir = Dir.mktmpdir("rperf-round-trip")
  end

  def teardown
    FileUtils.rm_rf(@dir)
    super
  end

  # [directory of the files 0.11.1 wrote, what 0.11.1 says of them]
  def files_written_by_0111
    lib = Compare.live_peer_lib
    return [RoundTrip::FIXTURE_DIR, JSON.parse(File.read(RoundTrip::FIXTURE_FACTS))] unless lib

    RoundTrip.write(lib, @dir)
    [@dir, RoundTrip.facts(lib, @dir)]
  end

  # writer/reader: the facts of the gem that wrote the file, read by itself and by the other.
  def assert_same_profile(writer, reader, file)
    SAME_FACTS.each do |fact|
      next assert_nil(reader[fact], "#{file}: #{fact}") if writer[fact].nil?

      assert_equal writer[fact], reader[fact], "#{file}: #{fact}"
    end
    assert_operator reader["samples"].size, :>=, 2, "#{file}: a profile with stacks of both threads"
    # Label keys are Symbols, the VM state's too (wall mode).
    keys = reader["label_sets"].flat_map(&:keys).uniq
    assert_includes keys, ":role", file
    assert_includes keys, ':"%GVL"', file if file == "profile.json.gz"
    assert(keys.all? { |k| k.start_with?(":") }, "#{file}: Symbol label keys: #{keys}")
  end

  def test_files_written_by_0111_read_by_our_load_report_and_diff
    dir, theirs = files_written_by_0111
    ours = RoundTrip.facts(OUR_LIB, dir)

    JSON_FILES.each do |file|
      mine = ours["load"][file]
      assert_equal "", mine["stderr"], "#{file}: read without a warning (no version warning)"
      assert_same_profile theirs["load"][file], mine, file
      assert_empty theirs["load"][file]["keys"] - mine["keys"], "#{file}: keys of 0.11.1's result missing"
    end
    refute_nil ours["load"]["raw.json.gz"]["raw_samples"], "raw samples came through"
    # The labels we read are the ones 0.11.1 wrote (whether its sampler caught the short worker
    # thread varies from run to run: its first time slice is not always sampled).
    roles = ->(facts) { facts["load"]["profile.json.gz"]["samples"].map { |_f, _t, labels, _w| labels.to_h["role"] }.compact.uniq.sort }
    assert_equal roles.(theirs), roles.(ours)
    assert_includes roles.(ours), "main"

    # Their pprof file: the same samples as their JSON file of the same profile.
    pprof = ours["load"]["profile.pb.gz"]
    assert_equal "", pprof["stderr"]
    assert_equal theirs["load"]["profile.json.gz"]["samples"], pprof["samples"]
    assert_equal theirs["load"]["profile.json.gz"]["total_weight"], pprof["total_weight"]

    # Our commands print what 0.11.1's print for the same files.
    RoundTrip::COMMANDS.each_key do |name|
      assert_equal 0, ours["cli"][name]["status"], "#{name}: #{ours['cli'][name]['stderr']}"
      assert_equal "", ours["cli"][name]["stderr"], name
      assert_equal theirs["cli"][name]["stdout"], ours["cli"][name]["stdout"], name
      refute_empty ours["cli"][name]["stdout"]
    end
    # pprof (ours only: 0.11.1 hands pprof files to Go): report prints what it prints for the
    # JSON file, and diff finds no change between the two.
    top_json = Compare.rperf_command(OUR_LIB, "report", "--top", "profile.json.gz", chdir: dir)
    top_pprof = Compare.rperf_command(OUR_LIB, "report", "--top", "profile.pb.gz", chdir: dir)
    assert_equal [0, ""], top_pprof.values_at("status", "stderr")
    assert_equal top_json["stdout"], top_pprof["stdout"]
    # Which of the probe's methods 0.11.1 caught varies (it has missed the short spins entirely).
    assert_includes top_pprof["stdout"], "CompatProbe::Writes."
    diff = Compare.rperf_command(OUR_LIB, "diff", "profile.json.gz", "profile.pb.gz", chdir: dir)
    assert_equal [0, ""], diff.values_at("status", "stderr")
    assert_match(/change: \+0\.0ms/, diff["stdout"])
    changes = diff["stdout"].lines.drop(2).map { |l| l.split.first(2) }
    refute_empty changes
    assert(changes.all? { |flat, cum| flat == "+0.0" && cum == "+0.0" }, diff["stdout"])
  end

  def test_our_files_read_by_0111_load_and_report
    lib = Compare.live_peer_lib
    skip "rperf 0.11.1 is not installed (see the [compat] line): reading our files needs it live" unless lib

    RoundTrip.write(OUR_LIB, @dir)
    ours = RoundTrip.facts(OUR_LIB, @dir)
    theirs = RoundTrip.facts(lib, @dir)
    JSON_FILES.each do |file|
      assert_equal "", ours["load"][file]["stderr"]
      # 0.11.1 reads our files with its warning about any version but its own (README).
      assert_equal THEIR_VERSION_WARNING, theirs["load"][file]["stderr"], file
      assert_same_profile ours["load"][file], theirs["load"][file], file
    end
    RoundTrip::COMMANDS.each_key do |name|
      assert_equal 0, theirs["cli"][name]["status"], "#{name}: #{theirs['cli'][name]['stderr']}"
      assert_equal ours["cli"][name]["stdout"], theirs["cli"][name]["stdout"], name
      assert_equal THEIR_VERSION_WARNING * (name.start_with?("diff") ? 2 : 1), theirs["cli"][name]["stderr"], name
    end
    top = Compare.rperf_command(lib, "report", "--top", "profile.json.gz", chdir: @dir)
    assert_equal 0, top["status"], top["stderr"]
    assert_includes top["stdout"], "CompatProbe::Writes.spin"
  end
end
