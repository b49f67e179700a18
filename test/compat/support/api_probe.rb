# frozen_string_literal: true

# Ruby API facts of whichever rperf is first on the load path, as JSON on stdout:
#   ruby -I <lib of one gem> test/compat/support/api_probe.rb [tmpdir]
# Run it once per gem (each in its own process: both define module Rperf) and compare.
require "stringio"
require "tmpdir"
require "zlib"
require_relative "shape"
require "rperf"

module CompatProbe
  module API
    extend Shape

    module_function

    def burn(seconds)
      t0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
      x = 0
      x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t0 < seconds
      x
    end

    def capture_stderr
      saved = $stderr
      $stderr = StringIO.new
      value = yield
      [value, $stderr.string]
    ensure
      $stderr = saved
    end

    def surface
      names = Rperf.singleton_methods.sort
      constants = Rperf.constants.sort.to_h do |c|
        value = Rperf.const_get(c)
        next [c, Shape.of(value, values: true)] unless value.is_a?(Module)

        methods = value.singleton_methods.sort.to_h { |m| [m, Shape.signature(value.method(m).parameters)] }
        [c, { "kind" => value.class.name, "singleton_methods" => methods }]
      end
      {
        "version" => Rperf::VERSION,
        "public_singleton_methods" => names.reject { |m| m.start_with?("_") },
        "underscore_singleton_methods" => names.select { |m| m.start_with?("_") },
        "parameters" => %i[start stop snapshot label labels profile running? save load read_meta gzip]
          .to_h { |m| [m, Rperf.respond_to?(m) ? Shape.signature(Rperf.method(m).parameters) : "absent"] },
        "constants" => constants,
      }
    end

    # Raised so that Shape.error_of reports a returned value too.
    def facts_value(value) = raise(StandardError, "returned #{value.inspect}")

    def sample_sizes(samples) = samples.map(&:size).uniq.sort

    def result_facts(data)
      {
        "keys" => data.keys.map(&:inspect),
        "shape" => Shape.of(data.except(:aggregated_samples, :raw_samples, :label_sets), values: true),
        "aggregated_sample" => Shape.of(data[:aggregated_samples]&.first),
        "aggregated_sample_sizes" => data[:aggregated_samples] && sample_sizes(data[:aggregated_samples]),
        "label_sets" => data.key?(:label_sets) ? Shape.each_of(data[:label_sets]) : "absent",
      }
    end

    def defaults
      data = Rperf.start { burn(0.05) }
      result_facts(data).merge("mode" => data[:mode].inspect, "frequency" => data[:frequency])
    end

    def wall_with_labels_gc_sleep
      data = Rperf.start(mode: :wall, inherit: false) do
        Rperf.label(request: "r1") { sleep 0.02 }
        GC.start
        Thread.new { burn(0.02) }.join
      end
      result_facts(data)
    end

    def unaggregated
      data = Rperf.start(mode: :wall, aggregate: false, inherit: false) do
        sleep 0.01
        burn(0.02)
      end
      result_facts(data).merge(
        "raw_sample" => Shape.of(data[:raw_samples]&.first),
        "raw_sample_sizes" => data[:raw_samples] && sample_sizes(data[:raw_samples]),
        "raw_fifth_values" => data[:raw_samples]&.map { |s| s[4] }&.uniq&.first(5)&.map(&:inspect),
      )
    end

    def snapshots
      Rperf.start(mode: :cpu, inherit: false)
      burn(0.03)
      first = Rperf.snapshot
      cleared = Rperf.snapshot(clear: true)
      after_clear = Rperf.snapshot
      Rperf.stop
      unaggregated_error = Shape.error_of do
        Rperf.start(aggregate: false, inherit: false)
        Rperf.snapshot
      ensure
        Rperf.stop
      end
      {
        "keys" => first.keys.map(&:inspect),
        "cleared_then_samples" => after_clear[:aggregated_samples].size,
        "cleared_had_samples" => !cleared[:aggregated_samples].empty?,
        "when_not_running" => Rperf.snapshot.inspect,
        "aggregate_false" => unaggregated_error,
      }
    end

    def labels
      facts = {}
      facts["label_block_not_running"] = Rperf.label(a: 1) { :block_value }.inspect
      facts["label_no_block_not_running"] = Rperf.label(a: 1).inspect
      facts["labels_not_running"] = Rperf.labels.inspect
      Rperf.start(mode: :wall, inherit: false)
      facts["label_no_block_running"] = Rperf.label(a: "x").inspect
      facts["nested"] = Rperf.label(b: 2) { Rperf.label(c: 3, a: nil) { Rperf.labels.inspect } }
      facts["after_block"] = Rperf.labels.inspect
      facts["label_block_running_returns"] = Rperf.label(d: 4) { :v }.inspect
      facts["profile_returns"] = Rperf.profile(e: 5) { :v }.inspect
      facts["profile_without_block"] = Shape.error_of { Rperf.profile(e: 5) }
      facts["label_sets_at_stop"] = Shape.each_of(Rperf.stop[:label_sets])
      facts["profile_not_started"] = Shape.error_of { Rperf.profile { 1 } }
      facts["stop_not_running"] = Rperf.stop.inspect
      facts
    end

    def deferred
      Rperf.start(mode: :wall, defer: true, inherit: false)
      burn(0.03)
      Rperf.profile(endpoint: "/x") { burn(0.03) }
      data = Rperf.stop
      { "samples_outside_profile" => data[:aggregated_samples].count { |s| data[:label_sets][s[3]].empty? },
        "label_sets" => Shape.each_of(data[:label_sets]) }
    end

    def validation
      checks = {
        "frequency: 0" => -> { Rperf.start(frequency: 0) },
        "frequency: 10_001" => -> { Rperf.start(frequency: 10_001) },
        "mode: :foo" => -> { Rperf.start(mode: :foo) },
        "mode: \"wall\"" => -> { Rperf.start(mode: "wall") },
        "inherit: :spawn" => -> { Rperf.start(inherit: :spawn) },
        "signal: 0" => -> { Rperf.start(signal: 0, inherit: false) },
        "signal: -1" => -> { Rperf.start(signal: -1, inherit: false) },
        "signal: 9" => -> { Rperf.start(signal: 9, inherit: false) },
        "signal: \"x\"" => -> { Rperf.start(signal: "x", inherit: false) },
        "signal: false" => -> { Rperf.start(signal: false, inherit: false) },
        "format: \"json\"" => -> { Rperf.start(format: "json", inherit: false) },
        "format: :foo" => -> { Rperf.start(format: :foo, inherit: false) },
        "unknown keyword" => -> { Rperf.start(lines: true, inherit: false) },
      }
      facts = checks.transform_values do |call|
        Shape.error_of do
          call.call
        ensure
          Rperf.stop if Rperf.running?
        end
      end
      Rperf.start(inherit: false)
      facts["start twice"] = Shape.error_of { Rperf.start(inherit: false) }
      Rperf.stop
      facts
    end

    def files(dir)
      data = Rperf.start(mode: :wall, inherit: false) do
        Rperf.label(request: "r1") { sleep 0.01 }
        burn(0.02)
      end
      json_gz = File.join(dir, "p.json.gz")
      saved = Rperf.save(json_gz, data)
      loaded, load_warnings = capture_stderr { Rperf.load(json_gz) }
      head = JSON.parse(Zlib.gunzip(File.binread(json_gz)))
      hand_built = { mode: :cpu, frequency: 1000, aggregated_samples: [[[["a.rb", "Foo#bar"]], 1_000_000, 1, 0]] }
      facts = {
        "save_returns" => saved.inspect,
        "file_top_level_keys" => head.keys,
        "file_meta" => Shape.of(head["meta"], values: false),
        "file_summary" => Shape.of(head["summary"]),
        "file_summary_top_method" => Shape.of(head["summary"]&.dig("top_methods", 0)),
        "file_label_sets" => head["label_sets"],
        "load_keys" => loaded.keys.map(&:inspect),
        "load_mode" => loaded[:mode].inspect,
        "load_label_sets" => loaded[:label_sets] && Shape.each_of(loaded[:label_sets]),
        "load_aggregated_sample" => Shape.of(loaded[:aggregated_samples].first),
        "load_stderr" => load_warnings,
        "read_meta" => Shape.of(Rperf.read_meta(json_gz)),
        "read_meta_missing_file" => Shape.error_of { facts_value(Rperf.read_meta(File.join(dir, "missing.json.gz"))) },
        "read_meta_file_without_meta" => Shape.error_of do
          File.write(File.join(dir, "old.json"), '{"mode":"cpu","aggregated_samples":[]}')
          facts_value(Rperf.read_meta(File.join(dir, "old.json")))
        end,
        "load_missing_file" => Shape.error_of { Rperf.load(File.join(dir, "missing.json.gz")) },
        "load_not_json" => Shape.error_of do
          File.write(File.join(dir, "bad.json"), "not json")
          Rperf.load(File.join(dir, "bad.json"))
        end,
      }
      %w[x.json x.pb.gz x.collapsed x.txt x.prof x].each do |name|
        path = File.join(dir, name)
        facts["save #{name}"] = Shape.error_of { Rperf.save(path, data) }
        facts["magic #{name}"] = File.exist?(path) ? File.binread(path, 2).unpack1("H*") : "no file"
      end
      facts["save format: \"json\" string"] = Shape.error_of { Rperf.save(File.join(dir, "s.out"), data, format: "json") }
      %w[h.json.gz h.pb.gz h.txt h.collapsed].each do |name|
        facts["save hand-built data #{name}"] = Shape.error_of { Rperf.save(File.join(dir, name), hand_built) }
      end
      facts
    end

    def encoders(dir)
      data = Rperf.start(mode: :cpu, inherit: false) { burn(0.03) }
      facts = {}
      facts["Text.encode"] = Shape.error_of { facts["text_head"] = Rperf::Text.encode(data).lines.first(5) }
      facts["Text.encode top_n/header"] = Shape.error_of do
        facts["text_no_header_head"] = Rperf::Text.encode(data, top_n: 1, header: false).lines
      end
      facts["Collapsed.encode"] = Shape.error_of { facts["collapsed_line"] = Rperf::Collapsed.encode(data).lines.first }
      facts["PProf.encode"] = Shape.error_of do
        pb = Rperf::PProf.encode(data)
        facts["pprof_encoding"] = pb.encoding.to_s
        facts["pprof_gzipped"] = pb.byteslice(0, 2) == "\x1f\x8b".b
      end
      facts["gzip"] = Shape.error_of do
        gz = Rperf.gzip("hello")
        facts["gzip_returns"] = [gz.encoding.to_s, Zlib.gunzip(gz)]
      end
      facts["Meta.build_meta"] = Shape.error_of { facts["meta"] = Shape.of(Rperf::Meta.build_meta(data)) }
      facts["Meta.build_summary"] = Shape.error_of { facts["summary"] = Shape.of(Rperf::Meta.build_summary(data)) }
      facts["Table.report_rows"] = Shape.error_of { facts["table_row"] = Shape.of(Rperf::Table.report_rows(data).first) }
      facts["Table.report_tsv"] = Shape.error_of { facts["table_tsv_header"] = Rperf::Table.report_tsv(data).lines.first }
      facts["Table.diff_rows"] = Shape.error_of { facts["diff_row"] = Shape.of(Rperf::Table.diff_rows(data, data).first) }
      facts
    end

    def fork_merge
      root_only = Rperf.start(mode: :wall, inherit: :fork) { burn(0.02) }
      data = Rperf.start(mode: :wall, frequency: 500) do
        pid = fork { burn(0.05) }
        burn(0.03)
        Process.wait(pid)
      end
      pid_key = data[:label_sets].flat_map(&:keys).find { |k| k.to_s == "%pid" }
      root_samples = data[:aggregated_samples].count { |s| !data[:label_sets][s[3]].key?(pid_key) }
      {
        "no_child: keys" => root_only.keys.map(&:inspect),
        "keys" => data.keys.map(&:inspect),
        "process_count" => data[:process_count],
        "total_duration_ns" => Shape.of(data[:total_duration_ns]),
        "pid_label_key" => pid_key.inspect,
        "label_sets" => Shape.each_of(data[:label_sets]),
        "root_samples_without_pid_label" => root_samples,
        "aggregated_sample_sizes" => sample_sizes(data[:aggregated_samples]),
        "mode_frequency" => [data[:mode].inspect, data[:frequency]],
      }
    end

    def run(dir)
      facts = { "surface" => surface }
      %w[defaults wall_with_labels_gc_sleep unaggregated snapshots labels deferred validation fork_merge].each do |name|
        facts[name] = begin
          public_send(name)
        rescue StandardError => e
          "probe failed: #{e.class}: #{e.message}"
        end
      end
      facts["files"] = files(dir)
      facts["encoders"] = encoders(dir)
      facts
    end
  end
end

dir = ARGV[0] || Dir.mktmpdir("rperf-compat")
CompatProbe::Shape.emit(CompatProbe::API.run(dir))
