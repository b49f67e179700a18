# frozen_string_literal: true

# Records what rperf 0.11.1 says to each probe into test/compat/fixtures/<probe>.json, and the
# profile files it writes (fixtures/written_by_0.11.1/) with what it says of them
# (fixtures/round_trip.json), for the compatibility suite to compare against when 0.11.1 itself
# is not installed (script/peers):
#   ruby test/compat/support/record_fixtures.rb [probes] [files]    (default: both)
require "fileutils"
require_relative "round_trip"

lib = CompatProbe::Compare.peer_lib
parts = ARGV.empty? ? %w[probes files] : ARGV
%w[api_probe.rb file_probe.rb cli_probe.rb usage_probe.rb viewer_probe.rb mutation_probe.rb labels_probe.rb].each do |probe|
  next unless parts.include?("probes")

  facts = CompatProbe::Compare.run(probe, lib)
  path = File.expand_path("../fixtures/#{File.basename(probe, '.rb')}.json", __dir__)
  File.write(path, JSON.pretty_generate(facts) + "\n")
  puts "wrote #{path}"
end

exit unless parts.include?("files")

dir = CompatProbe::RoundTrip::FIXTURE_DIR
FileUtils.rm_rf(dir)
FileUtils.mkdir_p(dir)
CompatProbe::RoundTrip.write(lib, dir)
facts = CompatProbe::RoundTrip.facts(lib, dir)
File.write(CompatProbe::RoundTrip::FIXTURE_FACTS, JSON.pretty_generate(facts) + "\n")
puts "wrote #{dir}/{#{CompatProbe::RoundTrip::FILES.join(',')}} and #{CompatProbe::RoundTrip::FIXTURE_FACTS}"
