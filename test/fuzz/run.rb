# frozen_string_literal: true

# rake fuzz[SECONDS]: the file fuzzer for a while, one line per finding, a count at the end.
#   ruby -Ilib -Itest test/fuzz/run.rb SECONDS SEED [FIRST_CASE]
require "tmpdir"
require_relative "fuzzer"

seconds = Integer(ARGV.fetch(0, "600"))
seed = Integer(ARGV.fetch(1, "1"))
first = Integer(ARGV.fetch(2, "0"))
findings_dir = File.expand_path("../../tmp/fuzz-findings", __dir__)
puts "rperf fuzz: seed #{seed}, #{seconds} s, from case #{first}"
fuzzer = nil
Dir.mktmpdir("rperf-fuzz") do |dir|
  log = ->(n, _mutation, what) { puts "case #{n}: #{what}" if what }
  fuzzer = Rperf::Fuzzer.new(seed: seed, dir: dir, findings_dir: findings_dir, log: log)
  fuzzer.run(seconds: seconds, first: first)
end
puts "rperf fuzz: seed #{seed}: #{fuzzer.cases} cases, #{fuzzer.findings.size} findings#{" (#{findings_dir})" unless fuzzer.findings.empty?}"
exit(fuzzer.findings.empty? ? 0 : 1)
