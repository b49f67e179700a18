# frozen_string_literal: true

require_relative "web_helper"
require "rperf/rack"
require "digest"

# Issue 23: request time keeps its labels under Puma. A deferred wall session, the middleware
# on a 4-thread Puma on 127.0.0.1, a CPU-only endpoint (SHA-256, never releases the GVL) and a
# sleeping one, several hundred requests 4 at a time from another process; a /stats endpoint
# outside the middleware takes Rperf.snapshot(clear: true) on a pool thread, as users do.
# Every interval is charged to the labels that held during it, so the app's time carries its
# endpoint, and CPU-only code is never charged as blocked off the GVL.
class PumaAccountingTest < Minitest::Test
  include WebTestHelper
  include RperfTestHelper

  APP_FRAME = PumaTestApp::FRAME

  # The load: `count` requests alternating /hash and /slow from 4 client threads of a child
  # process (keep-alive connections), so the clients are not in the profiled process.
  CLIENT = <<~RUBY
    require "net/http"
    port, count = ARGV.map(&:to_i)
    Array.new(4) do |t|
      Thread.new do
        Net::HTTP.start("127.0.0.1", port, read_timeout: 60) do |http|
          (t...count).step(4) { |i| http.get(i.even? ? "/hash" : "/slow").value }
        end
      end
    end.each(&:join)
  RUBY

  def setup
    Digest::SHA256.hexdigest("warm up the autoload") # its require releases the GVL: not the app's
  end

  def drive(port, count)
    _, err, status = run_ruby(CLIENT, port.to_s, count.to_s)
    assert status.success?, err
  end

  def test_in_app_time_keeps_its_endpoint_label_and_cpu_code_is_never_blocked
    snapshots = []
    inner = Rperf::RackMiddleware.new(PumaTestApp.new)
    app = lambda do |env|
      next inner.call(env) unless env["PATH_INFO"] == "/stats"

      snapshots << Rperf.snapshot(clear: true)
      [200, {}, ["ok\n"]]
    end
    Rperf.start(mode: :wall, defer: true)
    begin
      with_puma(app, threads: 4) do |port|
        3.times do
          drive(port, 120)
          assert_equal "ok\n", http_get(port, "/stats").body
        end
      end
    ensure
      Rperf.stop
    end
    assert_equal 3, snapshots.size

    labelled = unlabelled = hash_app = hash_blocked = 0
    unlabelled_examples = []
    snapshots.each do |data|
      data[:aggregated_samples].each do |frames, weight, _thread, set_id|
        next unless frames.any? { |_, label| label == APP_FRAME }

        labels = data[:label_sets][set_id]
        if labels.key?(:endpoint)
          labelled += weight
        else
          unlabelled += weight
          unlabelled_examples << [frames.first(3).map(&:last), labels, weight]
        end
        next unless frames.any? { |_, label| label.include?("Digest") }

        hash_app += weight
        hash_blocked += weight if labels[:"%GVL"] == "blocked"
        assert_equal "GET /hash", labels[:endpoint], "Digest's time carries its endpoint"
      end
    end
    # 180 requests of 20 ms sleep each (and the hashing) is at least 3.6 s of in-app time.
    assert_operator labelled, :>, 3.0e9, "in-app weight with its endpoint label"
    assert_operator unlabelled, :<, labelled * 0.01,
                    "in-app weight without its endpoint label (#{unlabelled / 1e6} ms, labelled #{labelled / 1e6} ms): " \
                    "#{unlabelled_examples.max_by(5, &:last).inspect}"
    assert_operator hash_app, :>, 0
    # A time slice's SUSPENDED and READY come microseconds apart: blocked stays within what
    # those gaps can add up to (not the hundreds of ms of another thread's idle time).
    assert_operator hash_blocked, :<, hash_app * 0.002,
                    "CPU-only code charged as blocked: #{hash_blocked / 1e6} ms of #{hash_app / 1e6} ms"
  end
end
