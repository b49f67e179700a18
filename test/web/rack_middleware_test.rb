# frozen_string_literal: true

require_relative "web_helper"
require "rperf/rack"

# Rperf::RackMiddleware in a real Puma server on 127.0.0.1, driven by real HTTP requests, under
# real profiling sessions (deferred and continuous).
class RackMiddlewareTest < Minitest::Test
  include WebTestHelper

  UUID = "9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"

  # The endpoints: one burns CPU, one sleeps, the users pages burn a little. Each measures its
  # own wall and CPU time, inside the middleware's label.
  class Endpoints
    include RperfTestHelper

    attr_reader :wall, :cpu

    def initialize
      @wall = Hash.new(0)
      @cpu = Hash.new(0)
      @mutex = Mutex.new
    end

    def call(env)
      t0 = monotonic_ns
      c0 = thread_cpu_ns
      case env["PATH_INFO"]
      when "/cpu" then burn_cpu(0.02)
      when "/sleep" then sleep(0.02)
      when %r{\A/users/} then burn_cpu(0.01)
      else return [404, { "content-type" => "text/plain" }, ["no such page\n"]]
      end
      [200, { "content-type" => "text/plain" }, ["ok\n"]]
    ensure
      key = Rperf::RackMiddleware.normalize(env["REQUEST_METHOD"], env["PATH_INFO"])
      wall = monotonic_ns - t0
      cpu = thread_cpu_ns - c0
      @mutex.synchronize do
        @wall[key] += wall
        @cpu[key] += cpu
      end
    end
  end

  # Wall time each request spent in the middleware and the app, measured by the server.
  class Timing
    attr_reader :measured, :app

    def initialize(app)
      @app = app
      @measured = Hash.new(0)
      @mutex = Mutex.new
    end

    def call(env)
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
      @app.call(env)
    ensure
      elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
      key = Rperf::RackMiddleware.normalize(env["REQUEST_METHOD"], env["PATH_INFO"])
      @mutex.synchronize { @measured[key] += elapsed }
    end
  end

  def server_app
    @endpoints = Endpoints.new
    Timing.new(Rperf::RackMiddleware.new(@endpoints))
  end

  def outside_requests_work
    c0 = thread_cpu_ns
    burn_cpu(0.01)
    @outside_cpu = (@outside_cpu || 0) + thread_cpu_ns - c0
  end

  def drive(port, rounds: 8)
    rounds.times do
      assert_equal "200", http_get(port, "/cpu").code
      outside_requests_work
      assert_equal "200", http_get(port, "/sleep").code
      outside_requests_work
    end
    assert_equal "200", http_get(port, "/users/123").code
    assert_equal "200", http_get(port, "/users/#{UUID}").code
    assert_equal "404", http_get(port, "/missing/42").code
  end

  def frames_named?(data, fragment)
    data[:aggregated_samples].any? { |frames, *| frames.any? { |f| f[1].include?(fragment) } }
  end

  def test_deferred_session_samples_only_inside_requests_and_labels_each_endpoint
    app = server_app
    data = with_puma(app) do |port|
      http_get(port, "/cpu") # warm up Puma's threads outside the session
      app.measured.clear
      @endpoints.wall.clear
      Rperf.start(mode: :wall, defer: true)
      drive(port)
      Rperf.stop
    end
    by_endpoint = weight_by_label(data, :endpoint)
    warn format("rack defer: cpu %.1f/%.1f ms, sleep %.1f/%.1f ms", by_endpoint["GET /cpu"] / 1e6, app.measured["GET /cpu"] / 1e6, by_endpoint["GET /sleep"] / 1e6, app.measured["GET /sleep"] / 1e6) if ENV["RPERF_TEST_VERBOSE"]
    # A label holds from one label change to the next (no sampling error): an endpoint's weight
    # lies between the time the app measured inside the label and the server's around it.
    ["GET /cpu", "GET /sleep", "GET /users/:id", "GET /users/:uuid", "GET /missing/:id"].each do |endpoint|
      assert_operator by_endpoint[endpoint], :>=, @endpoints.wall[endpoint], "#{endpoint} weight vs app time"
      assert_operator by_endpoint[endpoint], :<=, app.measured[endpoint], "#{endpoint} weight vs server time"
    end
    assert_operator @endpoints.wall["GET /users/:id"], :>=, 10e6
    refute by_endpoint.keys.any? { |k| k.to_s.include?("123") || k.to_s.include?(UUID) }, by_endpoint.keys.inspect

    # Each 20 ms sleep is blocked from its start to its wake-up.
    blocked = weight_labelled(data, endpoint: "GET /sleep", "%GVL": "blocked")
    assert_operator blocked, :>=, 8 * 20e6, "the sleeping endpoint is off the GVL"
    cpu_blocked = weight_labelled(data, endpoint: "GET /cpu", "%GVL": "blocked")
    assert_operator cpu_blocked, :<, 0.1 * by_endpoint["GET /cpu"]
    refute frames_named?(data, "outside_requests_work"), "work between requests must not be sampled under defer: true"
  end

  # cpu mode: an endpoint's weight is at least the CPU the app measured inside the label (no
  # sampling error at label changes); the work between requests (this thread's, unlabelled) is
  # its measured CPU within its boundary samples (test_helper).
  def test_continuous_session_labels_requests_and_keeps_sampling_between_them
    @outside_cpu = 0
    data = with_puma(server_app) do |port|
      Rperf.start(mode: :cpu, aggregate: false)
      drive(port, rounds: 3)
      outside_requests_work
      Rperf.stop
    end
    by_endpoint = weight_by_label(data, :endpoint)
    ["GET /cpu", "GET /users/:id", "GET /users/:uuid"].each do |endpoint|
      assert_operator by_endpoint[endpoint], :>=, @endpoints.cpu[endpoint], "#{endpoint} weight vs the app's CPU"
    end
    assert_operator @endpoints.cpu["GET /cpu"], :>=, 3 * 20e6
    # The session is not paused by the requests: the work after them is there, unlabelled.
    in_outside = ->(s) { s[0].any? { |f| f[1].include?("outside_requests_work") } }
    outside = data[:raw_samples].select(&in_outside)
    assert_in_delta @outside_cpu, outside.select { |s| s[2] == 1 }.sum { |s| s[1] }, boundary_weight(data, 1, &in_outside)
    assert_operator @outside_cpu, :>=, 7 * 10e6
    assert(outside.none? { |s| label_value(labels_of(data, s), :endpoint) })
  end

  def test_without_a_session_requests_pass_through
    refute Rperf.running?
    with_puma(server_app) do |port|
      response = http_get(port, "/users/7")
      assert_equal "200", response.code
      assert_equal "ok\n", response.body
    end
    refute Rperf.running?
  end

  def test_label_options
    seen = []
    app = ->(_env) { seen << Rperf.labels; [200, {}, ["ok"]] }
    env = { "REQUEST_METHOD" => "POST", "PATH_INFO" => "/orders/17/items/#{UUID.upcase}" }
    Rperf.start(mode: :wall, defer: true)
    Rperf::RackMiddleware.new(app).call(env)
    Rperf::RackMiddleware.new(app, label: :raw).call(env)
    Rperf::RackMiddleware.new(app, label_key: "route", label: ->(e) { e["PATH_INFO"][%r{\A/[^/]+}] }).call(env)
    _, err = capture_io do
      Rperf::RackMiddleware.new(app, label: ->(_e) { raise "broken label" }).call(env)
    end
    assert_equal({ endpoint: "POST /orders/:id/items/:uuid" }, seen[0])
    assert_equal({ endpoint: "POST /orders/17/items/#{UUID.upcase}" }, seen[1])
    assert_equal({ "route" => "/orders" }, seen[2].transform_keys(&:to_s), "a String label_key")
    assert_equal({ endpoint: "POST /orders/:id/items/:uuid" }, seen[3], "a failing label proc falls back to the default")
    assert_match(/broken label/, err)
    assert_equal({}, Rperf.labels, "labels are restored after the request")
    assert_raises(ArgumentError) { Rperf::RackMiddleware.new(app, label: "endpoint") }
  end

  def test_normalization
    n = ->(path) { Rperf::RackMiddleware.normalize("GET", path) }
    assert_equal "GET /users/:id/posts/:id", n.("/users/12/posts/3")
    assert_equal "GET /users/:uuid/edit", n.("/users/#{UUID}/edit")
    assert_equal "GET /v2/abc123/1x", n.("/v2/abc123/1x")
    assert_equal "GET /", n.("")
    assert_equal "GET /files/12.json", n.("/files/12.json") # only whole segments are ids
  end

  def test_the_app_errors_propagate_and_the_session_survives
    app = ->(_env) { raise ArgumentError, "app bug" }
    Rperf.start(mode: :wall, defer: true)
    assert_raises(ArgumentError) { Rperf::RackMiddleware.new(app).call("REQUEST_METHOD" => "GET", "PATH_INFO" => "/x") }
    assert Rperf.running?
    assert_equal({}, Rperf.labels)
  end
end
