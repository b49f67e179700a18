# frozen_string_literal: true

require_relative "web_helper"
require "rperf/viewer"
require "digest"

# Issue 27: "hide idle threads" on a real Puma. A wall session over a 4-thread Puma on 127.0.0.1
# serving requests from another process, one at a time, so most of the pool waits for work:
# hiding the idle samples (profile/idle_wait.hh) leaves every request's time as the app measured
# it, and removes what Puma's threads spent waiting (the pool's ConditionVariable#wait, the
# acceptor's IO.select, the reactor's NIO select, the reaper's and trimmer's sleep).
class PumaIdleTest < Minitest::Test
  include WebTestHelper
  include RperfTestHelper

  APP_FRAME = PumaTestApp::FRAME
  POOL_WAIT = ["Thread::Mutex#sleep", "Thread::ConditionVariable#wait", "Puma::ThreadPool#spawn_thread"].freeze

  CLIENT = <<~RUBY
    require "net/http"
    port, count = ARGV.map(&:to_i)
    Net::HTTP.start("127.0.0.1", port, read_timeout: 60) do |http|
      count.times { |i| http.get(i.even? ? "/slow" : "/hash").value; sleep 0.01 }
    end
  RUBY

  def setup
    Digest::SHA256.hexdigest("warm up the autoload") # its require releases the GVL: not the app's
  end

  def test_hiding_idle_keeps_the_requests_and_removes_the_pools_waiting
    app = PumaTestApp.new(hashes: 1000) # each request's time measured by the app itself
    Rperf.start(mode: :wall, aggregate: false)
    begin
      with_puma(app, threads: 4) do |port|
        sleep 0.2 # the pool and the acceptor wait before the first request
        _, err, status = run_ruby(CLIENT, port.to_s, "60")
        assert status.success?, err
        sleep 0.2
      end
    ensure
      data = Rperf.stop
    end
    request_ns = app.request_ns
    assert_operator request_ns, :>, 30 * 20_000_000, "30 requests of 20 ms sleep"

    # Puma's threads: those whose outermost frame is Puma's (the pool, the acceptor, the reactor,
    # the reaper and trimmer); the test's own (its main thread, Open3's) are not the server.
    puma = data[:aggregated_samples].filter_map { |frames, _, seq| seq if frames.last && frames.last[1].start_with?("Puma::") }.uniq
    blocked = ->(lsi) { data[:label_sets][lsi][:"%GVL"] == "blocked" }
    of_puma = ->(rows) { rows.select { |_, _, seq| puma.include?(seq) } }
    sum = ->(rows) { rows.sum { |s| s[1] } }
    in_app = ->(rows) { sum.(rows.select { |frames, *| frames.any? { |f| f[1] == APP_FRAME } }) }
    pool_wait = ->(rows, off_gvl) { sum.(rows.select { |frames, _, _, lsi| frames.first(3).map { |f| f[1] } == POOL_WAIT && blocked.(lsi) == off_gvl }) }
    all = of_puma.(data[:aggregated_samples])
    visible = of_puma.(model_selected(data, idle: true).to_h[:aggregated_samples])
    if ENV["RPERF_TEST_VERBOSE"]
      warn "puma idle: requests #{request_ns / 1e6} ms, in app #{in_app.(all) / 1e6} ms, pool wait #{pool_wait.(all, true) / 1e6} ms, " \
           "Puma's threads #{puma.inspect}: #{sum.(all) / 1e6} ms, #{sum.(visible) / 1e6} ms not idle"
      rest = visible.reject { |frames, *| frames.any? { |f| f[1] == APP_FRAME } }
      by = rest.group_by { |frames, _, _, lsi| [frames.first(2).map { |f| f[1] }, data[:label_sets][lsi][:"%GVL"]] }
      by.map { |k, rows| [sum.(rows), k] }.sort.reverse.first(12).each { |ns, k| warn format("  %8.1f ms %s", ns / 1e6, k.inspect) }
    end

    # The requests' time stays, all of it: the app's samples are never idle, and they are the
    # time the app measured (a request's first and last sample straddle its clock reads).
    assert_equal in_app.(all), in_app.(visible)
    assert_in_delta request_ns, in_app.(visible), 0.1 * request_ns + 20_000_000
    # The pool waits off the GVL at least through the test's two 0.2 s sleeps with no request
    # (less its thread's start: 0.3 s), and all of it goes; its GVL wait (a woken thread about to
    # serve) is not idle, and stays. (Not "more than the requests' time": with one pool thread
    # that holds only while the client's pauses outlast the requests, which two CPU hogs and two
    # other suites beside this one turned around: 2.47 s of waiting for 3.73 s of requests.)
    assert_operator pool_wait.(all, true), :>, 300_000_000, "the pool waits between the requests"
    assert_equal 0, pool_wait.(visible, true)
    assert_equal pool_wait.(all, false), pool_wait.(visible, false)
    # What stays of Puma's threads is the requests and Puma's own work around them: parsing,
    # writing and waking up, which run on the GVL or wait for it, and short syscalls off it.
    # How long the running and the GVL waits take is the machine's (two CPU hogs stretched them
    # to 1.1 s for 0.9 s of requests); what may not stay is waiting off the GVL, the shape of an
    # idle wait: a few ms per request at most (7 ms in all on a quiet machine, for 60 requests).
    assert_operator sum.(visible), :>=, in_app.(visible)
    assert_operator sum.(visible), :<, 0.25 * sum.(all), "most of Puma's threads' time is waiting, and goes"
    off_gvl_rest = visible.select { |frames, _, _, lsi| blocked.(lsi) && frames.none? { |f| f[1] == APP_FRAME } }
    assert_operator sum.(off_gvl_rest), :<, 60 * 5_000_000,
                    "#{sum.(off_gvl_rest) / 1e6} ms of Puma's #{sum.(all) / 1e6} ms off the GVL outside the app and not idle: " \
                    "#{off_gvl_rest.map { |frames, w| [frames.first(2).map { |f| f[1] }, w / 1e6] }.first(10)}"

    # The model's per-thread idle time (the Threads tab): the acceptor and the reactor only waited.
    totals = Rperf::Native::Profile.from_hash(data).thread_totals.to_h { |seq, total, idle| [seq, [total, idle]] }
    waiting = lambda do |leaf, caller|
      data[:aggregated_samples].filter_map { |frames, _, seq| seq if frames.first(2).map { |f| f[1] } == [leaf, caller] }.uniq
    end
    [waiting.("IO.select", "Puma::Server#handle_servers"), waiting.("NIO::Selector#select", "Puma::Reactor#select_loop")].each do |threads|
      assert_equal 1, threads.size
      total, idle = totals.fetch(threads.first)
      assert_operator idle, :>, 0.9 * total, "thread #{threads.first}: #{idle / 1e6} of #{total / 1e6} ms idle"
    end
  end
end
