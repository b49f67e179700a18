# frozen_string_literal: true

require_relative "web_helper"
require "rperf/viewer"

# Which label sets the Viewer's label and tag filters keep: the model's rule
# (profile/label_set_match.hh, its cases in test/cpp/label_set_match_test.cc), asked through
# Native.matching_label_sets on the label sets as the page spells them
# (Payload.string_labels).
class ViewerLabelMatchTest < Minitest::Test
  include WebTestHelper
  MS = 1_000_000
  APP = "/srv/app/app.rb"
  BAD = "\xE3\x81".b # not UTF-8: the page has it as two U+FFFD

  # One sample per label set, of 2**id ms, so the kept weight names the sets kept. Keys are
  # Symbols and Strings, values of other types too: all are matched by their text.
  SETS = [
    {},
    { endpoint: "/a" },
    { "endpoint" => "/b", n: 1 },
    { endpoint: "/a", job: "x" },
    { job: BAD },
    { endpoint: "" },
    { n: 1.5 },
    { endpoint: "/a", "endpoint" => "/c" }, # one key as the page spells it: its last value, "/c"
  ].freeze

  def profile
    samples = SETS.each_index.map { |id| [[[APP, "Object#main"]], (1 << id) * MS, 1, id] }
    { mode: :wall, frequency: 1000, label_sets: SETS, aggregated_samples: samples }
  end

  def kept(**filters)
    total = kept_ns(profile, **filters) / MS
    SETS.each_index.select { |id| total[id] == 1 }
  end

  def test_label_filter
    assert_equal [1, 3], kept(label: ["endpoint", ["/a"]])
    assert_equal [1, 3], kept(label: ["endpoint", "/a"])
    assert_equal [7], kept(label: ["endpoint", ["/c"]])
    assert_equal [0, 4, 6], kept(label: ["endpoint", [nil]])
    assert_equal [0, 2, 4, 6], kept(label: ["endpoint", ["/b", nil]])
    assert_equal [5], kept(label: ["endpoint", [""]])
    assert_equal [2], kept(label: ["n", ["1"]])
    assert_equal [6], kept(label: ["n", ["1.5"]])
    assert_equal [4], kept(label: ["job", ["\uFFFD\uFFFD"]])
  end

  def test_tag_filters
    assert_equal [1, 2, 3], kept(tags: { focus: %r{\A/[ab]\z}, ignore: [] })
    assert_equal [3, 4], kept(tags: { focus: /x|\uFFFD/, ignore: [] })
    assert_equal [1, 2, 3, 5, 7], kept(tags: { focus: nil, ignore: [["endpoint", nil]] })
    assert_equal [0, 2, 4, 5, 6, 7], kept(tags: { focus: nil, ignore: [["endpoint", "/a"], ["job", "x"]] })
    assert_equal [4], kept(label: ["endpoint", ["/a", nil]], tags: { focus: /x|\uFFFD/, ignore: [["endpoint", "/a"]] })
  end

  def test_binding
    sets = [{}, { "endpoint" => "/a" }, { "endpoint" => "/b", "job" => "x" }]
    assert_equal [0, 1, 2], Rperf::Native.matching_label_sets(sets)
    assert_equal [0, 1], Rperf::Native.matching_label_sets(sets, label: ["endpoint", ["/a", nil]])
    assert_equal [2], Rperf::Native.matching_label_sets(sets, focus_values: ["x"], ignore: [["job", nil]])
    assert_equal [], Rperf::Native.matching_label_sets(sets, focus_values: [])
    assert_equal ["/a", "/b", "x"], Rperf::Native.label_values(sets)
    assert_equal [Encoding::UTF_8], Rperf::Native.label_values(sets).map(&:encoding).uniq
  end

  # Wrong arguments raise TypeError or ArgumentError, never crash.
  def test_binding_rejects_wrong_types
    match = Rperf::Native.method(:matching_label_sets)
    {
      TypeError => [
        -> { match.(nil) }, -> { match.([nil]) }, -> { match.([{ a: "b" }]) }, -> { match.([{ "a" => 1 }]) },
        -> { match.([], label: "k") }, -> { match.([], label: [:k, ["v"]]) }, -> { match.([], label: ["k", "v"]) },
        -> { match.([], label: ["k", [1]]) }, -> { match.([], focus_values: "x") }, -> { match.([], focus_values: [nil]) },
        -> { match.([], ignore: "k") }, -> { match.([], ignore: ["k"]) }, -> { match.([], ignore: [[1, nil]]) },
        -> { match.([], ignore: [["k", :v]]) }, -> { Rperf::Native.label_values({}) }, -> { Rperf::Native.label_values([[["k", "v"]]]) }
      ],
      ArgumentError => [
        -> { match.([], bogus: 1) }, -> { match.([], label: ["k"]) }, -> { match.([], ignore: [["k"]]) },
        -> { match.([], { label: nil }) }, -> { match.() }
      ],
    }.each do |error, calls|
      calls.each_with_index { |call, i| assert_raises(error, "#{error} call #{i}") { call.() } }
    end
  end
end
