# frozen_string_literal: true

require "test_helper"
require "json"
require "zlib"

# Issue 43: a number in a profile file that is out of what it indexes (a thread_seq of -1 read
# as 4294967295 sized a table of 2^32 slots in the Viewer's thread totals) is refused by the
# loader with Rperf::FormatError naming the row and field, or served; never a signal, never
# more than 1 GB. Each file is read in a child process limited to 1 GB of address space
# beyond its start.
class HostileFilesTest < Minitest::Test
  include RperfTestHelper

  # Loads the file; when it loads, the Viewer's snapshot route and `rperf report --html` serve
  # it. Prints "refused: <message>" or "served <status> <html bytes>".
  CHILD = <<~'RUBY'
    require "rperf"
    require "rperf/viewer"
    require "rperf/cli"
    require "stringio"
    path, dir = ARGV
    vm = File.read("/proc/self/status")[/^VmSize:\s+(\d+)/, 1].to_i * 1024
    Process.setrlimit(Process::RLIMIT_AS, vm + (1 << 30))
    begin
      Rperf.load(path)
    rescue Rperf::FormatError => e
      puts "refused: #{e.message}"
      exit
    end
    viewer = Rperf::Viewer.new(nil)
    viewer.add_snapshot_dir(dir)
    status, = viewer.call("REQUEST_METHOD" => "GET", "PATH_INFO" => "/rperf/snapshots/1", "REMOTE_ADDR" => "127.0.0.1")
    html = File.join(dir, "out.html")
    out = StringIO.new
    code = Rperf::CLI.run(["report", "--html", "-o", html, path], out: out, err: out)
    puts "served #{status} #{code} #{File.size?(html).to_i}"
  RUBY

  def profile(thread_seq: 2, label_set_id: 1)
    frames = [["/app/a.rb", "A#run", 3], ["/app/b.rb", "B#work", 7]]
    { mode: "wall", frequency: 1000, duration_ns: 3_000_000, label_sets: [{}, { endpoint: "/a" }],
      aggregated_samples: [[frames, 1_000_000, 1, 0], [frames.take(1), 2_000_000, thread_seq, label_set_id]] }
  end

  def read_in_child(data, ext)
    Dir.mktmpdir("rperf-hostile") do |dir|
      path = File.join(dir, "p#{ext}")
      json = JSON.generate(data)
      File.binwrite(path, ext.end_with?(".gz") ? Zlib.gzip(json) : json)
      out, err, status = run_ruby(CHILD, path, dir)
      refute status.signaled?, "#{ext}: signal #{status.termsig}\n#{err}"
      assert status.success?, "#{ext}: exit #{status.exitstatus}\n#{out}#{err}"
      out
    end
  end

  def test_thread_seq_out_of_range_is_refused_with_its_row
    [-1, -2, 2**31, 10**12, 2**63].each do |seq|
      %w[.json .json.gz].each do |ext|
        out = read_in_child(profile(thread_seq: seq), ext)
        message = seq >= 2**63 ? "aggregated_samples[1]: thread_seq #{seq} is not an integer of 64 bits" : "aggregated_samples[1]: thread_seq #{seq} is out of range (0 to 2147483647)"
        assert_includes out, "refused: ", "thread_seq #{seq} (#{ext})"
        assert_includes out, message, "thread_seq #{seq} (#{ext})"
      end
    end
  end

  # The largest thread_seq a file may hold: served, without a table of 2^31 slots.
  def test_largest_thread_seq_is_served
    %w[.json .json.gz].each do |ext|
      out = read_in_child(profile(thread_seq: 2**31 - 1), ext)
      assert_match(/\Aserved 200 0 [1-9]\d*$/, out, ext)
    end
  end

  def test_label_set_id_out_of_range_is_refused_with_its_row
    [-1, 2, 2**31, 10**12].each do |id|
      %w[.json .json.gz].each do |ext|
        out = read_in_child(profile(label_set_id: id), ext)
        assert_includes out, "refused: ", "label_set_id #{id} (#{ext})"
        assert_includes out, "aggregated_samples[1]: label_set_id #{id} has no label set (ids: 0 to 1)", ext
      end
    end
  end

  def test_negative_weights_and_counts_past_the_bound_are_refused
    data = profile
    data[:aggregated_samples][1][1] = -5
    assert_includes read_in_child(data, ".json"), "aggregated_samples[1]: weight -5 is out of range"
    data[:aggregated_samples][1][1] = 2**62
    assert_includes read_in_child(data, ".json"), "aggregated_samples[1]: weight #{2**62} takes the rows' total past"
  end

  # Found by the fuzzer: a label key that is not UTF-8 (EncodingError making its Symbol from a pprof file), a raw
  # profile's duration_ns past 2^63 (RangeError in the stack chart of `report --html`).
  def test_damaged_label_key_and_duration_are_served
    data = profile
    data[:label_sets][1] = { "QQVL" => "x" }
    Dir.mktmpdir("rperf-hostile") do |dir|
      path = File.join(dir, "p.json")
      File.binwrite(path, JSON.generate(data).b.sub("QQVL", "\xDCVL".b))
      out, err, status = run_ruby(CHILD, path, dir)
      assert status.success?, "#{out}#{err}"
      assert_includes out, "invalid UTF-8 in a string" # JSON's strings are UTF-8; a pprof file's key is served (fuzz seed 4242 case 1629)
    end
    raw = profile.merge(duration_ns: 2**64, raw_samples: [[[["/app/a.rb", "A#run", 3]], 1_000_000, 1, 0, 0, 1_000_000]])
    assert_match(/\Aserved 200 0 [1-9]/, read_in_child(raw, ".json.gz"))
  end

  # The same rows in a Hash given to Rperf.save: the one row check names them too.
  def test_a_hash_with_an_out_of_range_thread_seq_is_refused
    Dir.mktmpdir("rperf-hostile") do |dir|
      error = assert_raises(TypeError) { Rperf.save(File.join(dir, "p.json"), profile(thread_seq: -1)) }
      assert_includes error.message, "aggregated_samples[1]: thread_seq -1 is out of range"
    end
  end
end
