# frozen_string_literal: true

# Records what rperf 0.11.1 says to each probe into test/compat/fixtures/<probe>.json, for the
# compatibility suite to compare against when 0.11.1 itself is not installed (script/peers):
#   ruby test/compat/support/record_fixtures.rb
require_relative "compare"

%w[api_probe.rb file_probe.rb cli_probe.rb].each do |probe|
  facts = CompatProbe::Compare.run(probe, CompatProbe::Compare.peer_lib)
  path = File.expand_path("../fixtures/#{File.basename(probe, '.rb')}.json", __dir__)
  File.write(path, JSON.pretty_generate(facts) + "\n")
  puts "wrote #{path}"
end
