# frozen_string_literal: true

require "test_helper"
require_relative "fuzzer"

# The file fuzzer (test/fuzz/fuzzer.rb) for a bounded number of cases in the suite; `rake
# fuzz[SECONDS]` runs it longer. The seed is minitest's (--seed N reproduces a run; FUZZ_SEED
# overrides it), and a failing case is kept under tmp/fuzz-findings with what happened.
class FuzzTest < Minitest::Test
  include RperfTestHelper

  CASES = Integer(ENV.fetch("FUZZ_CASES", "500"))
  # A cap for a slow machine: the cases run are the first ones of the seed either way.
  SECONDS = Integer(ENV.fetch("FUZZ_TEST_SECONDS", "90"))

  def test_every_reader_survives_mutated_files
    seed = Integer(ENV.fetch("FUZZ_SEED", Minitest.seed.to_s))
    Dir.mktmpdir("rperf-fuzz") do |dir|
      fuzzer = Rperf::Fuzzer.new(seed: seed, dir: dir, findings_dir: File.join(ROOT, "tmp", "fuzz-findings"))
      fuzzer.run(count: CASES, seconds: SECONDS)
      assert_operator fuzzer.cases, :>, 0
      assert_empty fuzzer.findings, "fuzz seed #{seed}, #{fuzzer.cases} cases:\n#{fuzzer.findings.join("\n")}"
    end
  end
end
