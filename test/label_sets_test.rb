# frozen_string_literal: true

require_relative "test_helper"

# A result Hash built by hand (or edited) is converted to the native profile by Rperf.save: its
# samples' label_set_ids index the Hash's own label_sets (issue 24).
class LabelSetsTest < Minitest::Test
  include TempDirTest

  def round_trip(data, ext = "json.gz")
    path = tmp("p.#{ext}")
    Rperf.save(path, data)
    Rperf.load(path)
  end

  # [frames, thread_seq, labels] => weight, whatever ids the labels have.
  def labelled_weights(data, rows = data[:aggregated_samples])
    rows.each_with_object(Hash.new(0)) do |s, acc|
      acc[[s[0].map { |f| f.first(2) }, s[2], data[:label_sets][s[3]]]] += s[1]
    end
  end

  def test_label_set_ids_index_the_hashs_own_label_sets
    frames = [["f.rb", "m"]]
    %w[json.gz json].each do |ext|
      data = { mode: :cpu, frequency: 1000, aggregated_samples: [[frames, 10, 1, 0]], label_sets: [{ a: "1" }] }
      loaded = round_trip(data, ext)
      assert_equal [{ a: "1" }], loaded[:aggregated_samples].map { |s| loaded[:label_sets][s[3]] }, ext

      # Equal label sets are valid: each sample keeps its labels (ids may be shared).
      dup = { mode: :cpu, frequency: 1000, label_sets: [{}, { a: "1" }, { a: "1" }],
              aggregated_samples: [[frames, 10, 1, 2], [[["g.rb", "n"]], 20, 1, 1], [[["h.rb", "o"]], 30, 2, 0]] }
      loaded = round_trip(dup, ext)
      assert_equal({ [frames, 1, { a: "1" }] => 10, [[["g.rb", "n"]], 1, { a: "1" }] => 20, [[["h.rb", "o"]], 2, {}] => 30 },
                   labelled_weights(loaded), ext)
    end
  end

  def test_an_out_of_range_label_set_id_is_refused_naming_its_row
    data = { mode: :cpu, frequency: 1000, aggregated_samples: [[[["f.rb", "m"]], 10, 1, 0], [[["f.rb", "m"]], 10, 1, 1]],
             label_sets: [{ a: "1" }] }
    e = assert_raises(TypeError) { Rperf.save(tmp("x.json.gz"), data) }
    assert_equal "rperf: aggregated_samples[1]: label_set_id 1 has no label set (ids: 0 to 0)", e.message
    refute File.exist?(tmp("x.json.gz"))
    data[:aggregated_samples][1][3] = -1
    assert_match(/aggregated_samples\[1\]: label_set_id -1 has no label set/, assert_raises(TypeError) { Rperf.save(tmp("x.json"), data) }.message)
    alloc = { mode: :wall, frequency: 1000, allocation_interval: 1, aggregated_samples: [], label_sets: [{}, { a: "1" }, { a: "1" }],
              allocation_samples: [[[["f.rb", "m"]], 3, 1, 2, "String", 1], [[["f.rb", "m"]], 3, 1, 3, "String", 1]] }
    assert_match(/\Arperf: allocation_samples\[1\]: label_set_id 3 has no label set/,
                 assert_raises(TypeError) { Rperf.save(tmp("x.json"), alloc) }.message)
  end

  # Unlike Rperf.label, a Hash's label keys are not refused for their bytes: files replace them.
  def test_a_label_key_that_is_not_utf8_is_replaced_in_the_file
    data = { mode: :cpu, frequency: 1000, aggregated_samples: [[[["f.rb", "m"]], 10, 1, 1]], label_sets: [{}, { "user\xff".b => "42" }] }
    loaded = round_trip(data)
    assert_equal [{ "user\u{fffd}": "42" }], loaded[:aggregated_samples].map { |s| loaded[:label_sets][s[3]] }
  end

  # ---- random Hashes, valid and not, against a model of the conversion ----------------------

  LABEL_SETS = [
    {}, { a: "1" }, { "a" => "1" }, { a: "1", b: "x" }, { b: "x", a: "1" }, { b: 2 }, { c: :sym },
    { "k\u2713": "v\u00e9" }, { a: nil, d: "4" }, { n: -(2**40) }, { 1 => "x" }, { a: "1", nil => "x" },
    { f: 1.5, t: true, no: false, list: [1, "a", nil], h: { x: 1 } },
  ].freeze
  BAD_LABEL_SETS = ["x", 1].freeze
  BAD_IDS = [-1, 1.5, "0", 2**70].freeze

  # The labels a valid label set loads back as (rperf 0.11's JSON.parse(symbolize_names: true)):
  # keys as Symbols of their text, Symbol values as Strings, every other value as it was.
  def loaded_labels(set)
    set.to_h { |k, v| [k.is_a?(Symbol) ? k : k.to_s.to_sym, v.is_a?(Symbol) ? v.to_s : v] }
  end

  def random_id(rng, count, bad)
    return BAD_IDS.sample(random: rng) if bad == 0
    return count + rng.rand(3) if bad == 1

    rng.rand(count)
  end

  def random_hash(rng)
    sets = Array.new(rng.rand(0..5)) { LABEL_SETS.sample(random: rng) }
    sets[rng.rand(sets.size)] = BAD_LABEL_SETS.sample(random: rng) if !sets.empty? && rng.rand(12).zero?
    count = sets.empty? ? 1 : sets.size # without label sets, id 0 is the empty one
    frames = Array.new(4) { |i| [["f#{i}.rb", "m#{i}"]] * rng.rand(1..3) }
    samples = Array.new(rng.rand(0..12)) do
      id = rng.rand(10).zero? ? nil : random_id(rng, count, rng.rand(40))
      [frames.sample(random: rng), rng.rand(1..1000), rng.rand(1..3), id]
    end
    data = { mode: :cpu, frequency: 1000, aggregated_samples: samples }
    data[:label_sets] = sets unless sets.empty? && rng.rand(2).zero?
    if rng.rand(3).zero?
      data[:allocation_interval] = 1 # a profile has allocation samples when it has an interval
      data[:allocation_samples] = Array.new(rng.rand(1..6)) do
        [frames.sample(random: rng), rng.rand(1..100), rng.rand(1..3), random_id(rng, count, rng.rand(40)), "String", rng.rand(0..1)]
      end
    end
    data
  end

  # The error the conversion must raise for `data` (nil: valid): the first bad row wins, label
  # sets first, then samples, then allocation samples.
  def expected_error(data)
    sets = data[:label_sets] || []
    sets.each_with_index do |set, i|
      return "label_sets[#{i}]: a label set must be a Hash" unless set.is_a?(Hash)
    end
    count = sets.empty? ? 1 : sets.size
    { aggregated_samples: data[:aggregated_samples], allocation_samples: data[:allocation_samples] || [] }.each do |name, rows|
      rows.each_with_index do |row, i|
        id = row[3]
        next if id.nil? && name == :aggregated_samples
        next if id.is_a?(Integer) && id >= 0 && id < count
        return "#{name}[#{i}]: label_set_id #{id} has no label set (ids: 0 to #{count - 1})" if id.is_a?(Integer) && id.bit_length < 64
        return "#{name}[#{i}]: label_set_id is not an Integer" if name == :aggregated_samples

        return "an allocation sample must be [frames, count, thread_seq, label_set_id, class_name, retained_count or nil]"
      end
    end
    nil
  end

  def expected_weights(data)
    sets = (data[:label_sets] || []).map { |s| loaded_labels(s) }
    sets = [{}] if sets.empty?
    time = data[:aggregated_samples].each_with_object(Hash.new(0)) do |s, acc|
      acc[[s[0], s[2], s[3].nil? ? {} : sets[s[3]]]] += s[1]
    end
    alloc = (data[:allocation_samples] || []).each_with_object(Hash.new(0)) do |s, acc|
      acc[[s[0], s[2], sets[s[3]], s[4]]] += s[1]
    end
    [time, alloc]
  end

  def loaded_weights(loaded)
    alloc = (loaded[:allocation_samples] || []).each_with_object(Hash.new(0)) do |s, acc|
      acc[[s[0].map { |f| f.first(2) }, s[2], loaded[:label_sets][s[3]], s[4]]] += s[1]
    end
    [labelled_weights(loaded), alloc]
  end

  def test_random_hashes_round_trip_or_are_refused
    rng = Random.new(24)
    valid = invalid = 0
    300.times do |i|
      data = random_hash(rng)
      path = tmp("r#{i}.json.gz")
      if (error = expected_error(data))
        invalid += 1
        e = assert_raises(TypeError, "##{i} #{data.inspect}") { Rperf.save(path, data) }
        assert_equal "rperf: #{error}", e.message, "##{i} #{data.inspect}"
        refute File.exist?(path)
      else
        valid += 1
        Rperf.save(path, data)
        assert_equal expected_weights(data), loaded_weights(Rperf.load(path)), "##{i} #{data.inspect}"
      end
    end
    assert_operator valid, :>, 100
    assert_operator invalid, :>, 30
  end
end
