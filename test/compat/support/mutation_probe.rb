# frozen_string_literal: true

# What a rperf 0.11.1 user does to a result in place (issue 25, point 7), as JSON facts on stdout:
#   ruby -I <lib of one gem> test/compat/support/mutation_probe.rb <dir>
# For aggregated and raw samples: which edits raise, whether an edit of one sample's frames
# reaches another sample, and whether Rperf.save writes the edited result.
require "json"

dir = ARGV.fetch(0)
require "rperf"

module CompatProbe
  module MutationProbe
    module_function

    def a(n) = n < 2 ? n : a(n - 1) + a(n - 2)
    def b(n) = n < 2 ? n : b(n - 1) + b(n - 2)

    # Two stacks at least (a and b under the same caller), each sampled more than once: about
    # 40 ms of CPU each, so a busy machine still samples both (24, 5 ms, was missed).
    def profile(aggregate)
      Rperf.start(mode: :cpu, frequency: 1000, aggregate: aggregate)
      a(27)
      b(27)
      Rperf.stop
    end

    def attempt
      yield
      "ok"
    rescue Exception => e # a probe reports any failure as a fact
      e.class.name
    end

    def edits(aggregate, dir)
      key = aggregate ? :aggregated_samples : :raw_samples
      data = profile(aggregate)
      samples = data[key]
      # Two samples that share a frame (the caller), and a frame of the first one.
      first, second = samples.combination(2).find { |x, y| x[0].any? { |f| y[0].include?(f) } }
      return { "sampled" => "too few samples: #{samples.size}" } unless first
      shared = first[0].find { |f| second[0].include?(f) }
      facts = {}
      facts["frames.map!"] = attempt { first[0].map! { |f| f } }
      facts["frames.reverse! reaches another sample"] = begin
        copy = second[0].dup
        first[0].reverse!
        first[0].reverse!
        first[0].push(["x.rb", "Pushed#frame"]).pop
        second[0] == copy
      end ? "no" : "yes"
      facts["frame[1] = label"] = attempt { shared[1] = shared[1].dup }
      facts["frame[0] = path"] = attempt { shared[0] = shared[0].dup }
      facts["label String in place"] = attempt { first[0].last[1].replace(first[0].last[1].dup) }
      facts["path String in place"] = attempt { first[0].last[0].replace(first[0].last[0].dup) }
      facts["sample[1] = weight"] = attempt { first[1] = first[1] }
      facts["samples.sort_by!"] = attempt { samples.sort_by! { |s| -s[1] } }
      facts["label_sets <<"] = attempt { data[:label_sets] << {} }

      # A frame shared by two samples: does an edit through one show in the other?
      marker = "Edited#frame"
      target = samples.find { |s| s[0].any? { |f| f[1].end_with?("#a") || f[1].end_with?(".a") } }
      return facts.merge("sampled" => "no sample of a") unless target

      target_frame = target[0].find { |f| f[1].end_with?("#a") || f[1].end_with?(".a") }
      others = samples.reject { |s| s.equal?(target) }.select { |s| s[0].any? { |f| f[1] == target_frame[1] } }
      attempt { target_frame[1] = marker }
      facts["a frame edited through one sample shows in the others"] = others.empty? ? "no other" : (others.all? { |s| s[0].any? { |f| f[1] == marker } } ? "yes" : "no")

      # Each sample's own frames: replace the leaf of every sample of b.
      attempt { samples.each { |s| s[0].map! { |f| f[1].end_with?("#b", ".b") ? [f[0], "Renamed#b"] : f } } }
      attempt { samples.each { |s| s[1] *= 2 } }
      path = File.join(dir, "edited-#{aggregate}.json.gz")
      facts["save of the edited result"] = attempt { Rperf.save(path, data) }
      if File.exist?(path)
        loaded = Rperf.load(path)
        facts["loaded keys"] = %i[aggregated_samples raw_samples].select { |k| loaded.key?(k) }.map(&:to_s)
        rows = loaded[key] || loaded[:aggregated_samples]
        names = rows.flat_map { |s| s[0].map { |f| f[1] } }.uniq
        facts["loaded: renamed leaf"] = names.include?("Renamed#b")
        facts["loaded: edited shared frame"] = names.include?(marker)
        facts["loaded: doubled weight"] = rows.sum { |s| s[1] } == samples.sum { |s| s[1] }
      end
      facts
    end

    def run(dir)
      { "aggregated" => edits(true, dir), "raw" => edits(false, dir) }
    end
  end
end

puts JSON.generate(CompatProbe::MutationProbe.run(dir))
