# frozen_string_literal: true

# The generated profile of the viewer's issue-27 tests (viewer_ui_test.rb, viewer_ui_payload_test.rb),
# with known totals per thread, frame category and VM state. Its idle waits have the labels a real
# Puma gives (test/web/puma_idle_test.rb; the rule: ext/rperf/profile/idle_wait.hh).
module UiProfile
  MS = 1_000_000
  APP = "/srv/shop/app/shop.rb"
  PUMA = "/srv/shop/vendor/bundle/ruby/3.3.0/gems/puma-6.4.0/lib/puma"
  FRAMES = {
    main: [APP, "Object#main"], checkout: [APP, "Shop#checkout"], price: [APP, "Shop#price"],
    json: ["/srv/shop/vendor/bundle/ruby/3.3.0/gems/json-2.7.1/lib/json/common.rb", "JSON.generate"],
    set: ["/opt/ruby/lib/ruby/3.3.0/set.rb", "Set#add"], times: ["<C method>", "Integer#times"],
    accept: ["#{PUMA}/server.rb", "Puma::Server#handle_servers"],
    select: ["<C method>", "IO.select"], sleep: ["<C method>", "Kernel#sleep"], deep: [APP, "Deep#recurse"],
    read: ["<C method>", "IO#read"], download: [APP, "Shop#download"],
    mutex_sleep: ["<C method>", "Thread::Mutex#sleep"], wait: ["<C method>", "Thread::ConditionVariable#wait"],
    pool: ["#{PUMA}/thread_pool.rb", "Puma::ThreadPool#spawn_thread"], process: ["#{PUMA}/server.rb", "Puma::Server#process_client"],
  }.freeze
  DEPTH = 80 # Deep#recurse frames: a graph taller than the window

  # Thread 1 (100 ms): price 40, JSON 20, Set#add 10, Integer#times 10 blocked, price 20.
  # Thread 2 (100 ms): blocked in IO.select under Puma's handle_servers: idle.
  # Thread 3 (60 ms): 50 ms 80 calls deep under checkout, 10 ms blocked in sleep.
  def profile
    f = FRAMES
    checkout = [f[:checkout], f[:main]]
    generated({
                1 => [[[f[:price], *checkout], 40, 0], [[f[:json], *checkout], 20, 0], [[f[:set], f[:main]], 10, 0],
                      [[f[:times], f[:main]], 10, 1], [[f[:price], *checkout], 20, 0]],
                2 => [[[f[:select], f[:accept]], 100, 1]],
                3 => [[[*Array.new(DEPTH, f[:deep]), *checkout], 50, 0], [[f[:sleep], f[:main]], 10, 1]],
              }, [{}, { "%GVL": "blocked" }])
  end

  # The profile's threads with endpoints, and two more (410 ms in all, 170 ms idle):
  # Thread 1 (100 ms): GET /a (its 10 ms blocked in Integer#times too).
  # Thread 2 (100 ms): Puma's acceptor, idle.
  # Thread 3 (60 ms): GET /b running 50 ms, then 10 ms blocked in sleep without an endpoint.
  # Thread 4 (50 ms): a busy I/O thread: 45 ms off the GVL in IO#read, 5 ms running: not idle
  #   (it spent 90% of its time off the GVL, which the old rule took for idle).
  # Thread 5 (100 ms): a Puma pool thread: 30 ms serving GET /c (Shop#price), then 70 ms waiting
  #   for the next request in ConditionVariable#wait: idle.
  IDLE_LABEL_SETS = [{}, { "%GVL": "blocked" }, { endpoint: "GET /a" }, { endpoint: "GET /a", "%GVL": "blocked" },
                     { endpoint: "GET /b" }, { endpoint: "GET /c" }].freeze
  def idle_profile
    f = FRAMES
    checkout = [f[:checkout], f[:main]]
    request = [f[:price], f[:checkout], f[:process], f[:pool]]
    generated({
                1 => [[[f[:price], *checkout], 40, 2], [[f[:json], *checkout], 20, 2], [[f[:set], f[:main]], 10, 2],
                      [[f[:times], f[:main]], 10, 3], [[f[:price], *checkout], 20, 2]],
                2 => [[[f[:select], f[:accept]], 100, 1]],
                3 => [[[*Array.new(DEPTH, f[:deep]), *checkout], 50, 4], [[f[:sleep], f[:main]], 10, 1]],
                4 => [[[f[:read], f[:download], f[:main]], 45, 1], [[f[:download], f[:main]], 5, 0]],
                5 => [[request, 30, 5], [[f[:mutex_sleep], f[:wait], f[:pool]], 70, 1]],
              }, IDLE_LABEL_SETS)
  end

  # Raw samples of 1 ms each, thread by thread from time 0, and their aggregation.
  def generated(phases, label_sets)
    raw = phases.flat_map do |seq, list|
      t = 0
      list.flat_map do |stack, ms, lsi|
        Array.new(ms) { [stack, MS, seq, lsi, (t += 1) * MS] }
      end
    end
    aggregated = raw.group_by { |r| [r[0], r[2], r[3]] }.map { |(stack, seq, lsi), rs| [stack, rs.sum { |r| r[1] }, seq, lsi] }
    { mode: :wall, frequency: 1000, sampling_count: raw.size, duration_ns: 100 * MS,
      aggregated_samples: aggregated, raw_samples: raw, label_sets: label_sets }
  end
end
