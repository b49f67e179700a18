# frozen_string_literal: true

# File-format facts of whichever rperf is first on the load path, as JSON on stdout:
#   ruby -I <lib of one gem> test/compat/support/file_probe.rb <dir>
# Writes one profile in every format into <dir> and describes what is in each file: the
# JSON layout (top-level keys in order, meta, summary), pprof fields, collapsed and text
# layout (including a method name with ";" and a line break), and cross-loading.
require "json"
require "zlib"
require_relative "shape"
require_relative "pprof_fields"
require "rperf"

module CompatProbe
  module Files
    module_function

    # Frame labels with a ";" and a line break: anonymous classes with such temporary names
    # (define_method names do not show in Ruby 3.3 frames, class names do).
    ODD = ["semi;colon", "line\nbreak"].map do |name|
      Class.new { def burn(seconds) = CompatProbe::Files.burn(seconds) }.tap { |c| c.set_temporary_name(name) }
    end

    def burn(seconds)
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      x = 0
      x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 < seconds
      x
    end

    def profile
      Rperf.start(mode: :wall, frequency: 1000, inherit: false) do
        Rperf.label(request: "r1", n: 7) { sleep 0.01 }
        ODD.each { |c| c.new.burn(0.02) }
        GC.start
      end
    end

    def json_facts(path)
      text = path.end_with?(".gz") ? Zlib.gunzip(File.binread(path)) : File.read(path)
      doc = JSON.parse(text)
      {
        "starts_with" => text[0, 9],
        "top_level_keys" => doc.keys,
        "meta" => doc["meta"],
        "summary" => doc["summary"]&.merge("top_methods" => doc["summary"]["top_methods"]&.first(2)),
        "label_sets" => doc["label_sets"],
        "aggregated_sample" => doc["aggregated_samples"]&.first&.then { |s| [s[0].first(2), *s[1..]] },
        "gc_stats" => doc["gc_stats"],
      }
    end

    def run(dir)
      data = profile
      facts = {}
      %w[p.json.gz p.json p.pb.gz p.collapsed p.txt].each do |name|
        facts["save #{name}"] = Shape.error_of { Rperf.save(File.join(dir, name), data) }
      end
      facts["json.gz"] = json_facts(File.join(dir, "p.json.gz"))
      facts["json plain starts"] = File.read(File.join(dir, "p.json"), 40)
      facts["pprof"] = PprofFields.describe(File.binread(File.join(dir, "p.pb.gz")))
      collapsed = File.read(File.join(dir, "p.collapsed"))
      facts["collapsed"] = {
        "lines" => collapsed.lines.size,
        "odd_names" => collapsed.lines.select { |l| l.include?("semi") || l.include?("break") }
                                .map { |l| l.sub(/\A.*?CompatProbe::Files\.profile;/, "…;") },
        "weights_are_integers" => collapsed.lines.all? { |l| l =~ / \d+\n\z/ },
      }
      facts["text"] = File.read(File.join(dir, "p.txt")).lines.first(8)
      facts["text_lines"] = File.read(File.join(dir, "p.txt")).lines.size
      facts["load p.json"] = Shape.error_of { Rperf.load(File.join(dir, "p.json")) }
      facts["load p.pb.gz"] = Shape.error_of { Rperf.load(File.join(dir, "p.pb.gz")) }
      facts
    end
  end
end

CompatProbe::Shape.emit(CompatProbe::Files.run(ARGV.fetch(0)))
