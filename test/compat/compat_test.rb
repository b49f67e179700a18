# frozen_string_literal: true

require_relative "../test_helper"
require_relative "support/compare"

# Drop-in compatibility with rperf 0.11.1: the probes in support/ run the same scripts, calls and
# commands under our gem and under 0.11.1, and every fact where the two differ must be one of
# the differences listed below (run-dependent values, our additions, or a documented deliberate
# change; README "Compatibility with rperf"). 0.11.1 runs live when script/peers installed it (the
# suite runs script/peers, which installs it from the gem registry when reachable); otherwise its
# recorded facts (fixtures/, from support/record_fixtures.rb) stand in for it, and the suite says
# so on stderr. RPERF_COMPAT_OFFLINE=1 forces the fixtures.
class CompatTest < Minitest::Test
  FIXTURES = File.join(__dir__, "fixtures")

  # [probe, path pattern, kind]; kinds: :volatile (differs from run to run: same JSON type),
  # :superset (a list of keys or methods: ours holds all of theirs), :ours (deliberate), :added
  # (ours only: 0.11.1 has no such name), :removed (0.11.1's only), :first_line (an output whose
  # first line, the message, is the same).
  KNOWN = [
    # Versions and our own API beside 0.11's.
    [:api, %r{\A/surface/(version|constants/VERSION)\z}, :ours],
    [:api, %r{\A/surface/public_singleton_methods\z}, :superset],
    [:api, %r{\A/surface/parameters/start\z}, :more_keywords],
    [:api, %r{\A/surface/constants/Collapsed/singleton_methods/encode\z}, :more_keywords], # allocations: (its allocation view)
    [:api, %r{\A/surface/constants/Table/singleton_methods/(report|diff)_(tsv|json)\z}, :more_keywords], # limit: (report/diff --limit)
    [:api, %r{\A/surface/underscore_singleton_methods\z}, :ours],          # 0.11's private C entry points
    # Constants and helper methods: ours may add (our modules and error classes, helpers beside
    # 0.11.1's); every constant and signature 0.11.1 has must be the same, except these helpers
    # of its Ruby encoders and meta scanner, which ours does natively:
    [:api, %r{\A/surface/constants/[A-Z]\w+\z}, :added],
    [:api, %r{\A/surface/constants/(Meta|PProf|Table|Text)/singleton_methods/\w+\z}, :added],
    [:api, %r{\A/surface/constants/Meta/singleton_methods/(finalize_scan|scan_prefix|scan_string|scan_value|skip_ws)\z}, :removed],
    [:api, %r{\A/surface/constants/PProf/singleton_methods/(build_tables|encode_(bytes|int64|message|packed_u?int64|uint64|value_type|varint))\z}, :removed],
    [:api, %r{\A/surface/constants/Table/singleton_methods/tsv_cell\z}, :removed],
    [:api, %r{\A/surface/constants/Text/singleton_methods/format_table\z}, :removed],
    # Result shapes: extra keys (max_depth, function_start_lines, unique_* with raw samples,
    # user/sys in snapshots), timestamps as raw_samples' 6th element, label_sets always present.
    [:api, %r{keys\z}, :superset],
    [:api, %r{/shape/:(max_depth|function_start_lines|unique_frames|unique_stacks|hook_time_ns)\z}, :ours],
    [:api, %r{\A/unaggregated/raw_sample(/Array\(\d\)|_sizes)\z}, :ours],
    [:api, %r{\A/defaults/label_sets\z}, :ours],
    [:api, %r{/(load_)?aggregated_sample/}, :ours],                         # stack depth of the first sample varies
    [:api, %r{/(label_sets|file_label_sets|load_label_sets)\z}, :volatile],  # order samples met them
    [:api, %r{\A/(snapshots/cleared_then_samples|fork_merge/root_samples_without_pid_label)\z}, :volatile],
    [:api, %r{top_methods"?/Array}, :ours],                                  # how many methods ran varies
    [:api, %r{\A/validation/format: :foo\z}, :ours],      # unknown format: an error, not silent pprof
    [:api, %r{\A/validation/unknown keyword\z}, :ours],   # lines: is one of our keywords
    [:api, %r{\A/labels/\w+\z}, :inspect],                  # Hash#inspect's spelling changed in 3.4
    [:api, %r{\A/files/load_not_json\z}, :ours],          # Rperf::FormatError naming the file
    [:api, %r{\A/files/load_missing_file\z}, :same_error], # the temporary path differs
    [:api, %r{\A/encoders/(text_head|text_no_header_head|collapsed_line)\z}, :volatile],
    # Whether the checkout had uncommitted changes when the probe ran (fixtures vs a fresh clone).
    [:api, %r{/:?"?git"?/:?"?dirty"?\z}, :volatile],
    # Files: one more key set, richer pprof (lines, mapping, start lines), our version.
    [:file, %r{top_level_keys\z}, :superset],
    [:file, %r{\A/json\.gz/(meta/created_at|summary/\w+|gc_stats/\w+|label_sets|aggregated_sample)\z}, :volatile],
    [:file, %r{\A/json\.gz/meta/rperf_version\z}, :ours],
    [:file, %r{\A/json\.gz/meta/(ruby_version|git/\w+)\z}, :volatile],   # the Ruby and commit tested
    [:file, %r{\A/pprof/(samples|mappings|function_system_name_set|function_start_line_set|label_keys/n|comments|doc_url)\z}, :ours],
    [:file, %r{\A/collapsed/(lines|odd_names|weights_are_integers)\z}, :ours], # a line break in a name cannot split a line
    [:file, %r{\A/text\z}, :volatile],
    [:file, %r{\A/(pprof/(locations|functions)|text_lines)\z}, :volatile], # how many frames a run sampled
    [:file, %r{\A/load p\.pb\.gz\z}, :ours],               # ours reads it (0.11.1: a JSON::ParserError)
    # The command line: help texts name our options too; outputs carry timings.
    [:cli, %r{\A/(-v|--version)/stdout\z}, :ours],
    [:cli, %r{\A/(help/stdout|help/line_count|[a-z]+ --help/stdout)\z}, :ours],
    # The message is 0.11.1's; the usage text after it names our options.
    [:cli, %r{\A/(report --format foo|diff one file)/stderr\z}, :first_line],
    [:cli, %r{\A/(stat|stat --report|exec|stat fork)/stderr\z}, :stat_lines],
    [:cli, %r{\A/record -v/stderr\z}, :volatile],
    [:cli, %r{/(top_level_keys)\z}, :superset],
    [:cli, %r{/meta/rperf_version\z}, :ours],
    [:cli, %r{/meta/(ruby_version|git/\w+)\z}, :volatile],
    [:cli, %r{/(samples|samples_without_pid_label)\z}, :volatile],
    [:cli, %r{\A/(record -p/stdout|report \(default file, --top\)/stdout|report --text/stdout)\z}, :volatile],
    [:cli, %r{\A/(report|diff) --format table(-json)?/stdout\z}, :volatile],
    [:cli, %r{\A/record --snapshot-dir/made\z}, :volatile],
    [:cli, %r{\A/(record|stat) --print-env/stdout\z}, :print_env],
    [:cli, %r{\A/(report --top pprof|diff --top)/(stdout|stderr)\z}, :ours], # native reading, no Go
    [:cli, %r{\A/RPERF_MODE=bogus/(status|stdout|stderr)\z}, :ours],         # runs unprofiled, with a message
    # What a 0.11.1 user does beyond the basics (support/usage_probe.rb, issue 25): the user's
    # RUBYOPT/RUBYLIB under RPERF_ENABLED, ActiveJobMiddleware as a concern, write errors,
    # re-saving a loaded profile, label sets in any order and in forked children, programs that
    # exec Ruby, report/diff flag combinations. Each accepted difference by name:
    # a job performed with no session running runs unprofiled (0.11.1: RuntimeError "Rperf is not started").
    [:usage, %r{\A/active_job/perform without a session\z}, :ours],
    # --port 0 is any free port (the viewer of `report`; diff accepts the same range), so the
    # range in the message is 0..65535.
    [:usage, %r{\A/flags/diff --port 0/(status|stdout head|stderr)\z}, :ours],
    [:usage, %r{\A/flags/diff --port 70000/stderr\z}, :ours],
    # The message is 0.11.1's; the usage text after it names our options (as `--help` does).
    [:usage, %r{\A/flags/(report FILE --top|report --port abc)/stderr\z}, :first_line],
    # Rperf::Viewer (support/viewer_probe.rb, issue 25 point 6). The list entry of an in-memory
    # snapshot adds its total weight (the page skips empty ones; a file's entry is 0.11.1's),
    # its meta the pid of the process that took it (a server's worker); add_snapshot's entry
    # keeps both, and the meta and summary.
    [:viewer, %r{\A/(list entry|report app: /snapshots entry)/total_weight_ns\z}, :added],
    [:viewer, %r{\A/in-memory meta keys\z}, :superset],
    [:viewer, %r{\A/add_snapshot returns\z}, :superset],
    # /snapshots/<id>: 0.11.1's keys, then ours (frames, a prefix tree of stacks, the call tree,
    # the timeline, ...). Its samples are [node, weight, thread, label set] rows of that tree,
    # not 0.11.1's {stack: [names...]} objects: the body grows with the unique frames, not with
    # depth x samples. The page reads both shapes; Viewer.samples_to_json makes 0.11.1's.
    [:viewer, %r{\A/(body|file body) keys\z}, :superset],
    [:viewer, %r{\A/body samples element\z}, :ours],
    # Results in place (support/mutation_probe.rb, point 7). label_sets is always present (as in
    # the api probe); raw samples share one Array per frame, as aggregated samples do in both
    # gems (a row per tick would otherwise hold a copy of each frame).
    [:mutation, %r{\A/raw/label_sets <<\z}, :ours],
    [:mutation, %r{\A/raw/a frame edited through one sample shows in the others\z}, :ours],
    # Label values of every type (support/labels_probe.rb, issue 25.1/2/8). pprof: an Integer value
    # is a numeric label (0.11.1: its text); a Hash value's text is Ruby 3.4's inspect spelling.
    [:labels, %r{\A/aggregated/pprof string labels/i\z}, :ours],
    [:labels, %r{\A/aggregated/pprof string labels/h\z}, :inspect],
  ].freeze

  # Public in 0.11.1 by accident (undocumented helpers of its own printing).
  ACCIDENTAL_API = %w[print_top_table].freeze

  def facts_of_0111(probe)
    lib = CompatProbe::Compare.live_peer_lib
    return CompatProbe::Compare.run(probe, lib) if lib

    JSON.parse(File.read(File.join(FIXTURES, probe.sub(/\.rb\z/, ".json"))))
  end

  def check(name)
    theirs = facts_of_0111("#{name}_probe.rb")
    ours = CompatProbe::Compare.run("#{name}_probe.rb", File.join(ROOT, "lib"))
    diffs = CompatProbe::Compare.differences(theirs, ours)
    @notes = []
    unexplained = diffs.reject { |path, t, o| explained?(name, path, t, o) }
    assert_empty unexplained.map { |p, t, o| "#{p}\n  0.11.1: #{JSON.generate(t)[0, 300]}\n  ours:   #{JSON.generate(o)[0, 300]}" },
                 "differences from rperf 0.11.1 that are not known and documented #{@notes.join('; ')}"
    ours
  end

  def explained?(probe, path, theirs, ours)
    KNOWN.any? do |p, pattern, kind|
      next false unless p.to_s == probe && pattern.match?(path)

      case kind
      when :ours then true
      when :volatile then theirs.class == ours.class || [theirs, ours].all?(Numeric) || [theirs, ours].all? { |v| [true, false].include?(v) }
      when :superset then theirs.is_a?(Array) && ours.is_a?(Array) && (theirs - ours - ACCIDENTAL_API).empty?
      when :inspect then normalize_inspect(theirs) == normalize_inspect(ours)
      when :same_error then theirs.to_s[/\A[\w:]+/] == ours.to_s[/\A[\w:]+/]
      when :more_keywords then ours.start_with?(theirs.delete_suffix(")"))
      when :added then theirs == :absent
      when :removed then ours == :absent
      when :first_line then theirs.is_a?(Array) && ours.is_a?(Array) && theirs.first == ours.first
      when :stat_lines then same_stat_lines?(theirs, ours)
      when :print_env then same_env_names?(theirs, ours)
      end
    end
  end

  # Every labelled line of 0.11.1's stat output is in ours with the same label; lines that
  # depend on the run (a VM state that did not happen) may be missing on either side.
  PROBE_LINE_LIMIT = 40 # support/cli_probe.rb keeps this many lines of each output
  OPTIONAL_STAT_LINES = ["[Rperf] GVL wait (contention)", "[Rperf] GC marking", "[Rperf] GC sweeping"].freeze

  def same_stat_lines?(theirs, ours)
    label = ->(line) { line.sub(/\A\s*[\d,.]*%?\s*(ms|MB)?\s*(\d+\.\d%)?\s*/, "").sub(/ \(.*\z/, "") }
    their_labels = theirs.map(&label).grep(/\A\[/) - OPTIONAL_STAT_LINES.map(&label)
    missing = their_labels - ours.map(&label)
    # The probe keeps the first lines only: a long --report table can push the footer out.
    footer_line = /\A  \d+ samples \/ \d+ triggers, \d+\.\d% profiler overhead\z/
    footer = ours.any? { |l| l.match?(footer_line) } || ours.size >= PROBE_LINE_LIMIT
    @notes << "stat lines missing: #{missing.inspect}, footer: #{footer}" unless missing.empty? && footer
    missing.empty? && footer
  end

  # {:a=>"x"} (Ruby 3.3) and {a: "x"} (3.4) are the same Hash.
  def normalize_inspect(text)
    text.to_s.gsub(/:(\w+)=>/, '\1: ').gsub(/\s*=>\s*/, " => ")
  end

  def same_env_names?(theirs, ours)
    names = ->(lines) { lines.map { |l| l[/\Aexport (\w+)=/, 1] } }
    ours.all? { |l| l.start_with?("export ") } && names.(ours).first(3) == %w[RUBYLIB RUBYOPT RPERF_ENABLED] &&
      # 0.11.1 makes the session directory at once; ours is made by the profiled root itself.
      (names.(theirs) - names.(ours) - %w[RPERF_SESSION_DIR]).empty?
  end

  def test_ruby_api_shapes_labels_validation_and_encoders
    check("api")
  end

  def test_files_meta_summary_and_formats
    check("file")
  end

  def test_command_line_options_messages_and_exit_statuses
    check("cli")
  end

  # Issue 25, point 6: Rperf::Viewer as 0.11.1's manual uses it (mounted with path "", the app
  # `rperf report FILE` builds), add_snapshot_dir of a missing directory, the /snapshots shapes
  # and 404s, an in-memory snapshot's meta and summary, render_static_html, samples_to_json,
  # the RPERF_DATA_SOURCE names the page reads (the browser test drives them).
  def test_viewer_api_routes_and_snapshot_shapes
    facts = check("viewer")
    assert_equal "no error", facts["mount"]
    assert_equal 0, facts["add_snapshot_dir of a missing directory returns"]
    assert_equal({ "status" => 404, "type" => "text/plain", "text" => "Snapshot not found" }, facts["missing snapshot"])
    assert_equal %w[RPERF_DATA_SOURCE listUrl snapshotUrl onAuthError], facts["RPERF_DATA_SOURCE names in the page"]
  end

  # Issue 25, point 7: results are mutable Arrays, and a result edited in place is saved as edited.
  def test_results_can_be_edited_in_place
    facts = check("mutation")
    %w[aggregated raw].each do |kind|
      assert_equal "ok", facts.dig(kind, "frames.map!"), kind
      assert_equal "ok", facts.dig(kind, "frame[1] = label"), kind
      assert_equal true, facts.dig(kind, "loaded: renamed leaf"), kind
    end
  end

  # Issue 25.1, 25.2, 25.8: label keys and values of any type kept as given (labels, label_sets,
  # the JSON file, load, pprof's string labels); raw_samples[i][3] the user's set.
  def test_label_values_of_every_type_kept_as_given
    facts = check("labels")
    assert_equal true, facts.dig("aggregated", "labels equal the given Hash")
    assert_equal "Float", facts.dig("aggregated", "labels[\"k\"]", "class")
    assert_equal({ "0" => true, "1" => true }, facts.dig("raw", "raw samples under the labels, by VM state, name the user's set"))
  end

  # Issue 25: RPERF_ENABLED with the user's RUBYOPT/RUBYLIB, ActiveJobMiddleware as a concern,
  # write errors caught by `rescue SystemCallError`, a loaded profile saved again (each key
  # once), label sets in any order and in a forked child, `exec`/`stat --report` of a program
  # that execs Ruby, report/diff flag combinations.
  def test_users_environment_integrations_errors_resave_labels_exec_and_flags
    facts = check("usage")
    assert_equal "-rset -W0", facts.dig("environment", "RPERF_ENABLED with the user's RUBYOPT and RUBYLIB", "RUBYOPT")
    assert_equal 1, facts.dig("label_sets", "sets holding a=1 and b=2 only")
    assert_equal [], facts.dig("resave", "again.json", "repeated keys")
  end
end
