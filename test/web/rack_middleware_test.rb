# frozen_string_literal: true

require_relative "web_helper"
require "rperf/rack"

# Rperf::RackMiddleware in a real Puma server on 127.0.0.1, driven by real HTTP requests, under
# real profiling sessions (deferred and continuous).
class RackMiddlewareTest < Minitest::Test
  include WebTestHelper

  UUID = "9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"

  # The endpoints: one burns CPU, one sleeps, the users pages do a little of both.
  class Endpoints
    include RperfTestHelper

    def call(env)
      case env["PATH_INFO"]
      when "/cpu" then burn_cpu(0.02)
      when "/sleep" then sleep(0.02)
      when %r{\A/users/} then burn_cpu(0.01)
      else return [404, { "content-type" => "text/plain" }, ["no such page\n"]]
      end
      [200, { "content-type" => "text/plain" }, ["ok\n"]]
    end
  end

  # Wall time each request spent in the middleware and the app, measured by the server.
  class Timing
    attr_reader :measured

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
    Timing.new(Rperf::RackMiddleware.new(Endpoints.new))
  end

  def outside_requests_work = burn_cpu(0.01)

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
      Rperf.start(mode: :wall, defer: true)
      drive(port)
      Rperf.stop
    end
    by_endpoint = weight_by_label(data, :endpoint)
    warn format("rack defer: cpu %.1f/%.1f ms, sleep %.1f/%.1f ms", by_endpoint["GET /cpu"] / 1e6, app.measured["GET /cpu"] / 1e6, by_endpoint["GET /sleep"] / 1e6, app.measured["GET /sleep"] / 1e6) if ENV["RPERF_TEST_VERBOSE"]
    assert_within app.measured["GET /cpu"], by_endpoint["GET /cpu"], 0.05, "GET /cpu weight vs server time"
    assert_within app.measured["GET /sleep"], by_endpoint["GET /sleep"], 0.05, "GET /sleep weight vs server time"
    assert_operator by_endpoint["GET /users/:id"], :>, 5e6
    assert_operator by_endpoint["GET /users/:uuid"], :>, 5e6
    assert_operator by_endpoint["GET /missing/:id"], :>, 0
    refute by_endpoint.keys.any? { |k| k.to_s.include?("123") || k.to_s.include?(UUID) }, by_endpoint.keys.inspect

    blocked = weight_labelled(data, endpoint: "GET /sleep", "%GVL": "blocked")
    assert_operator blocked, :>, 0.8 * by_endpoint["GET /sleep"], "the sleeping endpoint is off the GVL"
    cpu_blocked = weight_labelled(data, endpoint: "GET /cpu", "%GVL": "blocked")
    assert_operator cpu_blocked, :<, 0.1 * by_endpoint["GET /cpu"]
    refute frames_named?(data, "outside_requests_work"), "work between requests must not be sampled under defer: true"
  end

  def test_continuous_session_labels_requests_and_keeps_sampling_between_them
    data = with_puma(server_app) do |port|
      Rperf.start(mode: :cpu)
      drive(port, rounds: 3)
      outside_requests_work
      Rperf.stop
    end
    by_endpoint = weight_by_label(data, :endpoint)
    assert_operator by_endpoint["GET /cpu"], :>, 3 * 15e6
    assert_operator by_endpoint["GET /users/:id"], :>, 5e6
    assert_operator by_endpoint["GET /users/:uuid"], :>, 5e6
    # The session is not paused by the requests: the work after them is there, unlabelled.
    outside = data[:aggregated_samples].select { |frames, *| frames.any? { |f| f[1].include?("outside_requests_work") } }
    assert_operator outside.sum { |s| s[1] }, :>, 0.5 * 7 * 10e6
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
