# frozen_string_literal: true

# What the rperf first on the load path makes of profile files (e.g. written by the other gem):
#   ruby -I <lib of one gem> test/compat/support/load_probe.rb FILE...
# For each file: Rperf.load's keys, label-set key types, sample sizes, every sample (frames,
# weight, thread, labels; order-free), meta and summary, warnings on stderr, and
# Rperf.read_meta's result, as JSON on stdout. A .pb.gz file is read the way `rperf report`
# reads it (ours only: 0.11.1 hands pprof files to Go).
require "stringio"
require_relative "shape"
require "rperf"

module CompatProbe
  module Loads
    module_function

    def with_stderr
      saved = $stderr
      $stderr = StringIO.new
      value = begin
        yield
      rescue StandardError => e
        "#{e.class}: #{e.message.lines.first&.strip}"
      end
      [value, $stderr.string]
    ensure
      $stderr = saved
    end

    def read(path)
      return Rperf.load(path) unless path.end_with?(".pb.gz")
      raise "no native pprof reader" unless defined?(Rperf::Storage) && Rperf::Storage.respond_to?(:load_any)

      Rperf::Storage.load_any(path)
    end

    # Labels with String keys in a stable order (Symbol and String keys read alike here: the
    # key types are a fact of their own, "label_sets").
    def labels(data, id) = (data[:label_sets] || [{}]).fetch(id, {}).to_h { |k, v| [k.to_s, v] }.sort

    def frames(frames) = frames.map { |path, label| [path, label] }

    # {[frames, thread, labels] => weight}, as a sorted list: the same samples in any order or
    # split into entries differently compare equal.
    def aggregated(data)
      weights = Hash.new(0)
      data[:aggregated_samples].each do |fs, weight, thread, label_set|
        weights[[frames(fs), thread, labels(data, label_set || 0)]] += weight
      end
      weights.map { |key, w| key + [w] }.sort_by { |e| JSON.generate(e) }
    end

    # rperf 0.11's raw sample is [frames, weight, thread, label_set, vm_state]; what follows
    # (our timestamp) is not compared.
    def raw(data)
      data[:raw_samples]&.map do |fs, weight, thread, label_set, vm_state|
        [frames(fs), weight, thread, labels(data, label_set || 0), vm_state]
      end&.sort_by { |e| JSON.generate(e) }
    end

    def facts(path)
      data, warnings = with_stderr { read(path) }
      meta, = with_stderr { Rperf.read_meta(path) }
      return { "load" => data, "stderr" => warnings } if data.is_a?(String)

      {
        "keys" => data.keys.map(&:inspect),
        "mode" => data[:mode].inspect,
        "frequency" => data[:frequency],
        "sampling_count" => data[:sampling_count],
        "label_sets" => data[:label_sets] && Shape.each_of(data[:label_sets]),
        "sample_sizes" => data[:aggregated_samples].map(&:size).uniq,
        "frame" => Shape.of(data[:aggregated_samples].first&.first&.first),
        "samples" => aggregated(data),
        "total_weight" => data[:aggregated_samples].sum { |s| s[1] },
        "raw_samples" => raw(data),
        "meta" => data[:meta],
        "summary" => data[:summary],
        "stderr" => warnings,
        "read_meta" => meta.is_a?(Hash) ? Shape.of(meta) : meta.inspect,
      }
    end
  end
end

CompatProbe::Shape.emit(ARGV.to_h { |path| [File.basename(path), CompatProbe::Loads.facts(path)] })
