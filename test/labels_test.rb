# frozen_string_literal: true

require_relative "test_helper"

class LabelsTest < Minitest::Test
  def test_label_is_ignored_when_not_running
    assert_equal 42, Rperf.label(request: "x") { 42 }
    assert_nil Rperf.label(request: "x")
    assert_equal({}, Rperf.labels)
  end

  def test_label_merge_nil_delete_nesting_and_exceptions
    Rperf.start(mode: :wall)
    Rperf.label(a: 1)
    assert_equal({ a: 1 }, Rperf.labels)
    Rperf.label(b: 2) do
      assert_equal({ a: 1, b: 2 }, Rperf.labels)
      Rperf.label(a: nil) { assert_equal({ b: 2 }, Rperf.labels) }
      assert_raises(RuntimeError) { Rperf.label(c: 3) { raise "boom" } }
      assert_equal({ a: 1, b: 2 }, Rperf.labels)
    end
    assert_equal({ a: 1 }, Rperf.labels)
    other = Thread.new { Rperf.labels }.value
    assert_equal({}, other, "labels are per thread")
  end

  # A label holds from one label change to the next, each an event that closes the interval:
  # its weight is the CPU between them, no sampling error, so it lies between the CPU measured
  # inside the label block and around it.
  def test_labelled_samples_carry_their_label_set
    inner = {}
    outer = {}
    labelled = lambda do |endpoint, seconds|
      c0 = thread_cpu_ns
      Rperf.label(endpoint: endpoint) do
        c1 = thread_cpu_ns
        burn_cpu(seconds)
        inner[endpoint] = thread_cpu_ns - c1
      end
      outer[endpoint] = thread_cpu_ns - c0
    end
    data = Rperf.start(mode: :cpu) do
      labelled.("/fast", 0.05)
      labelled.("/slow", 0.15)
    end
    %w[/fast /slow].each do |endpoint|
      weight = weight_where(data) { |_s, l| l[:endpoint] == endpoint }
      assert_operator weight, :>=, inner[endpoint], "#{endpoint}: weight vs the CPU inside the label"
      assert_operator weight, :<=, outer[endpoint], "#{endpoint}: weight vs the CPU around the label"
    end
  end

  def test_defer_and_profile_sample_only_inside_profile_blocks
    Rperf.start(mode: :wall, defer: true)
    burn_cpu(0.1)
    sleep 0.1
    before = Rperf.snapshot
    assert_equal 0, before[:trigger_count]
    assert_equal 0, before[:sampling_count]
    assert_empty before[:aggregated_samples]
    t0 = monotonic_ns
    inner = nil
    Rperf.profile(endpoint: "/a") do
      t1 = monotonic_ns
      burn_cpu(0.05)
      Rperf.profile { burn_cpu(0.05) } # nesting keeps the timer running
      assert_equal({ endpoint: "/a" }, Rperf.labels)
      inner = monotonic_ns - t1
    end
    outer = monotonic_ns - t0
    sleep 0.1 # paused again: not reported anywhere
    burn_cpu(0.05)
    data = Rperf.stop
    # Sampling resumes and pauses inside the profile call: no sampling error at either end.
    total = data[:aggregated_samples].sum { |s| s[1] }
    assert_operator total, :>=, inner, "the profile block's time"
    assert_operator total, :<=, outer, "only the profile block's time"
    assert_equal 0, weight_where(data) { |_s, l| l[:"%GVL"] == "blocked" }, "idle time before profile is not GVL blocked"
    assert(data[:aggregated_samples].all? { |s| data[:label_sets][s[3]][:endpoint] == "/a" })
    # The timer fires about once a period (1 ms) while it is armed. An armed timer during the
    # >= 150 ms after the block would add >= 150 ticks; 50 of slack absorbs late expirations
    # that the kernel delivers as separate signals when the timer thread was descheduled.
    assert_operator data[:trigger_count], :<=, outer / 1_000_000 + 1 + 50, "the timer ran only inside profile"
  end

  def test_profile_requires_a_block_and_a_running_profiler
    assert_raises(RuntimeError) { Rperf.profile { 1 } }
    Rperf.start(defer: true)
    assert_raises(ArgumentError) { Rperf.profile }
  end

  # As rperf 0.11: in a session that is not deferred, a profile block labels and sampling goes
  # on after it ends.
  def test_profile_block_does_not_pause_a_continuous_session
    Rperf.start(mode: :cpu)
    Rperf.profile(endpoint: "/a") { burn_cpu(0.05) }
    burn_cpu(0.1)
    data = Rperf.stop
    after = weight_where(data) { |_s, l| l.empty? }
    assert_operator after, :>, 0.08e9, "the CPU burned after the block is sampled"
    assert_operator weight_where(data) { |_s, l| l[:endpoint] == "/a" }, :>, 0.03e9
  end

  # Issue 30.2: a key that is not valid UTF-8 (it could not become a Symbol) is refused at once,
  # and the session keeps what it collected. A value's invalid bytes are kept (files replace
  # them: test_huge_and_odd_labels_survive_every_format).
  def test_label_refuses_keys_that_are_not_utf8_and_the_session_survives
    Rperf.start(mode: :wall)
    Rperf.label(ok: "1")
    [{ "user\xff".b => "42" }, { "\xff".b.to_sym => "1" }, { ok: "2", "\xe9t\xe9".b => "x" }].each do |kw|
      e = assert_raises(ArgumentError, kw.inspect) { Rperf.label(**kw) }
      assert_match(/label keys must be valid UTF-8 \(got "?.*\\xFF/, e.message) if kw.size == 1
      assert_raises(ArgumentError, kw.inspect) { Rperf.label(**kw) { flunk "the block runs only with valid labels" } }
      assert_raises(ArgumentError, kw.inspect) { Rperf.profile(**kw) { flunk "the block runs only with valid labels" } }
      assert_equal({ ok: "1" }, Rperf.labels, "nothing merged from #{kw.inspect}")
    end
    # Any other key is kept as given (rperf 0.11 takes any key through **).
    Rperf.label(**{ 1 => "x", nil => 2 }) { assert_equal({ ok: "1", 1 => "x", nil => 2 }, Rperf.labels) }
    value = Object.new
    def value.to_s = "v\xff".b
    Rperf.label(bin: "abc".b, "caf\u00e9": "\u2713", odd: value)
    expected = { ok: "1", bin: "abc", "caf\u00e9": "\u2713", odd: "v\xff" } # the bytes as given, in a UTF-8 String
    assert_equal expected, Rperf.labels
    burn_cpu(0.02)
    assert_includes Rperf.snapshot[:label_sets], expected
    data = Rperf.stop
    assert_includes data[:label_sets], expected
    assert_operator data[:aggregated_samples].size, :>, 0
  end

  def take_keywords(**) = yield

  # A label block of plain keys and values makes about what Ruby makes for any such call (the
  # keyword Hash): no Proc for the block, no Array of the pairs (it made 5 objects, now 2).
  def test_a_label_block_of_plain_values_allocates_no_objects_of_its_own
    Rperf.start(mode: :wall, frequency: 10)
    label = -> { Rperf.label(endpoint: "GET /users/:id", "id" => 42, cached: true) { nil } }
    empty = -> { take_keywords(endpoint: "GET /users/:id", "id" => 42, cached: true) { nil } }
    per_call = lambda do |blk|
      100.times { blk.call }
      before = GC.stat(:total_allocated_objects)
      1000.times { blk.call }
      (GC.stat(:total_allocated_objects) - before) / 1000.0
    end
    assert_operator per_call.(label), :<=, per_call.(empty) + 1, "objects per label block, vs a method taking the keywords"
    Rperf.stop
  end

  def run_child(code)
    out, err, status = run_ruby("require 'rperf'\n#{code}")
    assert status.success?, "child exited with #{status.inspect}\nstdout: #{out}\nstderr: #{err.lines.first(30).join}"
    out
  end

  # Issue 30.1: a value's to_s that stops the profiler runs before the native merge looks up the
  # session and the thread's state (they were used after being freed). In a child process: a
  # crash fails the test.
  def test_label_value_whose_to_s_stops_or_restarts_the_profiler
    out = run_child(<<~RUBY)
      stops = Object.new
      def stops.to_s = (Rperf.stop; "x")
      Rperf.start(mode: :wall)
      p Rperf.label(v: stops), Rperf.running?, Rperf.labels
      restarts = Object.new
      def restarts.to_s = (Rperf.stop; Rperf.start(mode: :wall); Rperf.label(w: 1); "y")
      Rperf.start(mode: :wall)
      Rperf.label(before: "1")
      Rperf.label(v: restarts)
      p Rperf.labels
      p Rperf.stop[:label_sets].include?({ w: 1, v: "y" })
      to_int = Object.new
      def to_int.to_int = (Rperf.stop; 0)
      Rperf.start(mode: :wall)
      Rperf::Native.label_set_id = to_int
      p Rperf.running?, Rperf::Native.label_set_id
    RUBY
    assert_equal [nil, false, {}, { w: 1, v: "y" }, true, false, 0].map(&:inspect), out.lines.map(&:chomp)
  end

  # The same with another thread stopping and starting the profiler while to_s runs.
  def test_labels_while_another_thread_stops_and_starts_the_profiler
    out = run_child(<<~RUBY)
      value = Object.new
      def value.to_s = (Thread.pass; "v")
      Rperf.start(mode: :wall)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 2
      cycles = 0
      restarter = Thread.new do
        while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
          Rperf.stop
          sleep 0.0005 # to_s may return while no session exists
          Rperf.start(mode: :wall)
          cycles += 1
          sleep 0.0005 # or after another one started
        end
      end
      labels = 0
      while restarter.alive?
        Rperf.label(a: value, b: labels)
        Rperf.label(a: nil, c: value)
        Rperf.labels
        Rperf.label_sets
        labels += 1
        Thread.pass # lets the restarter wake up (else once per time slice)
      end
      restarter.join
      Rperf.stop
      puts cycles, labels
    RUBY
    cycles, labels = out.lines.map(&:to_i)
    assert_operator cycles, :>, 10
    assert_operator labels, :>, 10
  end
end

# Issue 30 (9): a scanner's endless distinct paths through the middleware cannot grow the
# session's label-set table without bound: past max_label_sets a new set's values read "(other)".
class LabelCardinalityTest < Minitest::Test
  include TempDirTest

  def test_label_sets_past_the_cap_fold_into_other
    data = Rperf.start(mode: :wall, max_label_sets: 5) do
      200.times { |i| Rperf.label(endpoint: "GET /scan/#{i}") { burn_cpu(0.001) } }
    end
    endpoints = data[:label_sets].filter_map { |set| set[:endpoint] }.uniq
    assert_operator endpoints.size, :<=, 5, "4 endpoints before the cap, then (other): #{endpoints.inspect}"
    others = data[:label_sets].each_index.select { |i| data[:label_sets][i][:endpoint] == "(other)" }
    refute_empty others
    assert_operator data[:label_sets_overflowed], :>=, 190
    other_weight = data[:aggregated_samples].sum { |s| others.include?(s[3]) ? s[1] : 0 }
    assert_operator other_weight, :>, 100_000_000, "the folded requests' time is kept, under (other)"
    assert_raises(ArgumentError) { Rperf.start(max_label_sets: 0) }
  end

  # Issue 43 (5): label_sets_overflowed was the session's running total inside each
  # snapshot(clear: true) interval; like the other counters it is the interval's own now.
  def test_label_sets_overflowed_counts_each_interval_apart
    Rperf.start(mode: :wall, max_label_sets: 5)
    100.times { |i| Rperf.label(endpoint: "GET /scan/#{i}") { nil } }
    first = Rperf.snapshot(clear: true)
    assert_operator first[:label_sets_overflowed], :>=, 90
    2.times { |i| Rperf.label(endpoint: "GET /known/#{i}") { nil } } # room again: the clear freed the others
    assert_nil Rperf.snapshot(clear: true)[:label_sets_overflowed]
    30.times { |i| Rperf.label(endpoint: "GET /again/#{i}") { nil } }
    third = Rperf.snapshot(clear: false)
    assert_includes 20..30, third[:label_sets_overflowed]
    assert_equal third[:label_sets_overflowed], Rperf.stop[:label_sets_overflowed], "stop ends the same interval"
  ensure
    Rperf.stop
  end

  # ---- values kept as given (issue 25.1, 25.2) ----------------------------------------------

  TYPED = { cached: true, "k" => 1.5, sym: :s, arr: [1, "a", nil, 2.0], h: { x: 1, "y" => [true] }, f: false, i: 3,
            big: 2**70, neg: -0.5, 1 => "one" }.freeze
  # As the JSON file loads back (rperf 0.11's JSON.parse(symbolize_names: true)).
  TYPED_LOADED = { cached: true, k: 1.5, sym: "s", arr: [1, "a", nil, 2.0], h: { x: 1, y: [true] }, f: false, i: 3,
                   big: 2**70, neg: -0.5, "1": "one" }.freeze

  def test_label_values_and_keys_are_kept_as_given
    data = Rperf.start(mode: :wall) do
      Rperf.label(**TYPED) do
        assert_equal TYPED, Rperf.labels
        assert_equal true, Rperf.labels[:cached]
        assert_instance_of Float, Rperf.labels["k"]
        assert_nil Rperf.labels[:k], "a String key stays a String"
        Rperf.profile(depth: 2) { assert_equal TYPED.merge(depth: 2), Rperf.labels }
        burn_cpu(0.05)
      end
    end
    assert_includes data[:label_sets], TYPED
    assert_operator weight_where(data) { |_s, l| l == TYPED }, :>, 0
    %w[json json.gz].each do |ext|
      Rperf.save(tmp("p.#{ext}"), data)
      loaded = Rperf.load(tmp("p.#{ext}"))
      assert_includes loaded[:label_sets], TYPED_LOADED, ext
      assert_equal weight_where(data) { |_s, l| l == TYPED }, weight_where(loaded) { |_s, l| l == TYPED_LOADED }, ext
    end
    # pprof: string labels, each value's to_s (Integers are numeric labels).
    Rperf.save(tmp("p.pb.gz"), data)
    from_pprof = Rperf.load(tmp("p.pb.gz"))[:label_sets].find { |set| set.key?(:cached) && !set.key?(:"%GVL") }
    assert_equal({ cached: "true", k: "1.5", sym: "s", arr: '[1, "a", nil, 2.0]', h: '{x: 1, "y" => [true]}', f: "false", i: 3,
                   big: "1180591620717411303424", neg: "-0.5", "1": "one" }, from_pprof)
  end

  # The viewer's and CallTree's label filters compare keys and values by their text, as 0.11.1's
  # page did (String(value)): {cached: "true"} finds true, {k: "1.5"} finds 1.5, a String key
  # filter finds a Symbol key.
  def test_label_filters_compare_by_text
    data = Rperf.start(mode: :cpu) do
      Rperf.label(cached: true, "k" => 1.5) { burn_cpu(0.05) }
      Rperf.label(cached: false) { burn_cpu(0.05) }
    end
    total = ->(filter) { Rperf::CallTree.new(data, filter: filter).total_ns }
    cached = weight_where(data) { |_s, l| l[:cached] == true }
    assert_operator cached, :>, 0
    assert_equal cached, total.({ cached: "true" })
    assert_equal cached, total.({ "cached" => true })
    assert_equal cached, total.({ k: "1.5" })
    assert_equal weight_where(data) { |_s, l| l[:cached] == false }, total.({ cached: "false" })
  end

  # Files rperf 0.11.1 wrote with labels of every JSON type (support/write_typed_labels.rb) load
  # with their values as 0.11.1 loads them.
  def test_files_of_0111_with_labels_of_any_type_load
    given = { cached: true, k: 1.5, sym: "s", arr: [1, "a", nil, %w[x y]], h: { x: 1, y: [true] }, f: false, big: 2**70, str: "v" }
    dir = File.join(__dir__, "compat/fixtures/written_by_0.11.1")
    %w[typed_labels.json.gz typed_labels_raw.json.gz].each do |name|
      data = Rperf.load(File.join(dir, name))
      assert_includes data[:label_sets], given, name
      assert_includes data[:label_sets], given.merge("%GVL": "blocked"), name
      assert_operator weight_where(data) { |_s, l| l == given }, :>, 0, name
      next unless data[:raw_samples]

      # raw_samples[i][3] is the user's set; the VM state is the 5th element (as 0.11.1 wrote it).
      sets = data[:raw_samples].select { |s| s[4] == 1 }.map { |s| data[:label_sets][s[3]] }.uniq
      assert_equal [given], sets
      Rperf.save(tmp("again.json"), data)
      again = Rperf.load(tmp("again.json"))
      labelled = ->(d) { d[:raw_samples].map { |s| [s[1], d[:label_sets][s[3]], s[4]] } }
      assert_equal labelled.(data), labelled.(again), "saved again by ours: the same raw samples"
    end
  end

  # ---- raw samples (issue 25.8) --------------------------------------------------------------

  def test_raw_samples_name_the_users_label_set_and_the_vm_state_apart
    data = Rperf.start(mode: :wall, aggregate: false) { Rperf.label(req: "r") { sleep 0.05 } }
    sets = data[:label_sets]
    blocked = data[:raw_samples].select { |s| s[4] == 1 }
    refute_empty blocked
    assert_equal [{ req: "r" }], blocked.map { |s| sets[s[3]] }.uniq
    assert_operator weight_where(data) { |_s, l| l == { req: "r", "%GVL": "blocked" } }, :>, 0.03e9
  end

  # ---- the label-set table across snapshot(clear: true) (issue 30.9) ------------------------

  def test_label_sets_are_freed_at_snapshot_clear_and_labels_stay_right
    Rperf.start(mode: :wall, frequency: 100)
    Rperf.label(app: "x") # the thread's labels persist across every clear
    worker_ready = Queue.new
    release = Queue.new
    worker = Thread.new do
      Rperf.label(worker: 1)
      worker_ready << true
      release.pop
      Rperf.labels
    end
    worker_ready.pop
    sizes = []
    Rperf.label(outer: "spans every clear") do
      200.times do |round|
        1000.times { |i| Rperf.label(path: "/scan/#{round}/#{i}") { nil } }
        Rperf.snapshot(clear: true)
        sizes << Rperf::Native.label_set_count
      end
      assert_equal({ app: "x", outer: "spans every clear" }, Rperf.labels)
    end
    assert_equal({ app: "x" }, Rperf.labels, "the block restored a set from before 200 clears")
    release << true
    assert_equal({ worker: 1 }, worker.value)
    assert_operator sizes.max, :<=, 10, "200k distinct label sets, cleared every 1000: #{sizes.max} held"
    Rperf.label(path: "/last") { burn_cpu(0.05) }
    data = Rperf.snapshot(clear: true)
    assert_nil data[:label_sets_overflowed]
    assert_operator weight_where(data) { |_s, l| l == { app: "x", path: "/last" } }, :>, 0
    assert_equal 0, weight_where(data) { |_s, l| l[:path]&.start_with?("/scan/") }
  ensure
    Rperf.stop
  end

  # ---- a label block that outlives its session (loose end of issue 30.1) ----------------------

  def test_a_block_restores_its_labels_by_value_in_a_session_started_inside_it
    Rperf.start(mode: :wall)
    Rperf.label(outer: 1)
    Rperf.label(filler: 1) { nil } # the new session's ids differ from the old one's
    Rperf.label(inner: 2) do
      Rperf.stop
      Rperf.start(mode: :wall)
      Rperf.label(a: 1) { nil }
      Rperf.label(b: 2) { nil }
      Rperf.label(c: 3)
    end
    assert_equal({ outer: 1 }, Rperf.labels)
    # A session two restarts old: its labels are not known any more, nothing changes.
    Rperf.label(inner: 3) do
      2.times do
        Rperf.stop
        Rperf.start(mode: :wall)
      end
      Rperf.label(d: 4)
    end
    assert_equal({ d: 4 }, Rperf.labels)
    # A value whose to_s stops the session: no labels were taken, so the block restores nothing.
    stops = Object.new
    def stops.to_s = (Rperf.stop; "x")
    Rperf.label(v: stops) do
      Rperf.start(mode: :wall)
      Rperf.label(e: 5)
    end
    assert_equal({ e: 5 }, Rperf.labels)
  ensure
    Rperf.stop
  end
end
