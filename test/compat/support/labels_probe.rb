# frozen_string_literal: true

# Label facts of whichever rperf is first on the load path, as JSON on stdout (issue 25 points 1,
# 2 and 8): label keys and values of every type kept as given through Rperf.label, labels,
# profile, the result's label_sets, the JSON file, load and pprof's string labels;
# raw_samples[i][3] the user's set with the VM state apart.
#   ruby -I <lib of one gem> test/compat/support/labels_probe.rb [tmpdir]
require "json"
require "tmpdir"
require "zlib"
require_relative "pprof_fields"
require "rperf"

module CompatProbe
  module Labels
    module_function

    GIVEN = { cached: true, "k" => 1.5, sym: :s, arr: [1, "a", nil, 2.0], h: { x: 1, "y" => [true] }, f: false,
              i: 3, big: 1e20, neg: -0.5, str: "v", 1 => "one" }.freeze

    def burn(seconds)
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      nil while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 < seconds
    end

    def typed(value) = { "class" => value.class.name, "inspect" => value.inspect }

    def record(aggregate:)
      facts = {}
      data = Rperf.start(mode: :wall, aggregate: aggregate, inherit: false) do
        Rperf.label(**GIVEN) do
          labels = Rperf.labels
          facts["labels"] = labels.inspect
          facts["labels equal the given Hash"] = labels == GIVEN
          facts["labels[:cached] == true"] = labels[:cached] == true
          facts["labels[\"k\"]"] = typed(labels["k"])
          facts["labels[:k]"] = typed(labels[:k])
          facts["labels[1]"] = typed(labels[1])
          burn(0.03)
          sleep 0.03 # GVL blocked: a VM state under the labels
        end
        facts["labels after the block"] = Rperf.labels.inspect
        Rperf.profile(via: :profile) { facts["labels in profile"] = Rperf.labels.inspect }
      end
      [data, facts]
    end

    def user_set(data) = data[:label_sets].index { |s| s.key?(:cached) && !s.key?(:"%GVL") && !s.key?(:"%GC") }

    def aggregated_facts(dir)
      data, facts = record(aggregate: true)
      sets = data[:label_sets]
      facts["label_sets hold the given set"] = sets.include?(GIVEN)
      facts["blocked set"] = sets.find { |s| s[:"%GVL"] == "blocked" && s.key?(:cached) }.inspect
      json = File.join(dir, "p.json")
      Rperf.save(json, data)
      facts["JSON label set"] = JSON.parse(File.read(json))["label_sets"].find { |s| s.key?("cached") && !s.key?("%GVL") }
      loaded = Rperf.load(json)
      set = loaded[:label_sets].find { |s| s.key?(:cached) && !s.key?(:"%GVL") }
      facts["loaded label set"] = set.inspect
      facts["loaded value classes"] = set.transform_keys(&:to_s).transform_values { |v| v.class.name }
      pb = File.join(dir, "p.pb.gz")
      Rperf.save(pb, data)
      facts["pprof string labels"] = pprof_string_labels(pb)
      facts
    end

    # The string labels of pprof's samples, key => values (numeric labels are ours: left out).
    def pprof_string_labels(path)
      f = PprofFields.fields(Zlib.gunzip(File.binread(path)))
      strings = f[6].map { |s| s.dup.force_encoding(Encoding::UTF_8) }
      out = Hash.new { |h, k| h[k] = [] }
      f[2].each do |sample|
        PprofFields.fields(sample)[3].each do |label|
          l = PprofFields.fields(label)
          next unless l[2]&.first

          key = strings[l[1].first]
          next unless GIVEN.keys.map(&:to_s).include?(key)

          out[key] << strings[l[2].first] unless out[key].include?(strings[l[2].first])
        end
      end
      out.sort.to_h
    end

    def raw_facts(dir)
      data, = record(aggregate: false)
      sets = data[:label_sets]
      user = user_set(data)
      by_state = Hash.new { |h, k| h[k] = [] }
      data[:raw_samples].each { |s| by_state[s[4]] << s[3] }
      facts = {
        "raw samples under the labels, by VM state, name the user's set" =>
          [0, 1].to_h { |state| [state.to_s, by_state[state].select { |id| sets[id].key?(:cached) }.uniq == [user]] },
        "aggregated samples in GVL blocked carry its label" =>
          data[:aggregated_samples].any? { |s| sets[s[3]][:"%GVL"] == "blocked" && sets[s[3]].key?(:cached) },
      }
      path = File.join(dir, "raw.json")
      Rperf.save(path, data)
      loaded = Rperf.load(path)
      lsets = loaded[:label_sets]
      facts["loaded raw samples in GVL blocked name the user's set"] =
        loaded[:raw_samples].select { |s| s[4] == 1 && lsets[s[3]].key?(:cached) }.all? { |s| !lsets[s[3]].key?(:"%GVL") }
      facts
    end
  end
end

dir = ARGV[0] || Dir.mktmpdir
l = CompatProbe::Labels
puts JSON.pretty_generate({ "aggregated" => l.aggregated_facts(dir), "raw" => l.raw_facts(dir) })
