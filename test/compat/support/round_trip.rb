# frozen_string_literal: true

require_relative "compare"

module CompatProbe
  # The file round trip between the gems: what one gem's Rperf.load, read_meta and CLI make of
  # the files support/write_profiles.rb wrote (with either gem).
  module RoundTrip
    FIXTURE_DIR = File.join(Compare::FIXTURES, "written_by_0.11.1") # files the real 0.11.1 wrote
    FIXTURE_FACTS = File.join(Compare::FIXTURES, "round_trip.json") # and what 0.11.1 said of them
    FILES = %w[profile.json.gz profile.pb.gz raw.json.gz].freeze
    # What both gems' commands print for JSON profiles, compared as they are.
    COMMANDS = {
      "report_table_json" => %w[report --format table-json profile.json.gz],
      "diff_table_json" => %w[diff --format table-json profile.json.gz raw.json.gz],
    }.freeze

    module_function

    # Writes the profiles with the gem whose lib this is.
    def write(lib, dir) = Compare.script("write_profiles.rb", lib, dir)

    # {"load" => load_probe.rb's facts per file, "cli" => {name => status, stdout, stderr}}
    def facts(lib, dir)
      {
        "load" => JSON.parse(Compare.script("load_probe.rb", lib, *FILES.map { |f| File.join(dir, f) })),
        "cli" => COMMANDS.transform_values { |args| Compare.rperf_command(lib, *args, chdir: dir) },
      }
    end
  end
end
