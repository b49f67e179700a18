# frozen_string_literal: true

# The generated profile of the viewer's issue-27 tests (viewer_ui_test.rb, viewer_ui_payload_test.rb),
# with known totals per thread, frame category and VM state.
module UiProfile
  MS = 1_000_000
  APP = "/srv/shop/app/shop.rb"
  FRAMES = {
    main: [APP, "Object#main"], checkout: [APP, "Shop#checkout"], price: [APP, "Shop#price"],
    json: ["/srv/shop/vendor/bundle/ruby/3.3.0/gems/json-2.7.1/lib/json/common.rb", "JSON.generate"],
    set: ["/opt/ruby/lib/ruby/3.3.0/set.rb", "Set#add"], times: ["<C method>", "Integer#times"],
    accept: ["/srv/shop/vendor/bundle/ruby/3.3.0/gems/puma-6.4.0/lib/puma/server.rb", "Puma::Server#accept"],
    select: ["<C method>", "IO.select"], sleep: ["<C method>", "Kernel#sleep"], deep: [APP, "Deep#recurse"],
  }.freeze
  DEPTH = 80 # Deep#recurse frames: a graph taller than the window

  # Thread 1 (100 ms): price 40, JSON 20, Set#add 10, Integer#times 10 blocked, price 20.
  # Thread 2 (100 ms): blocked in IO.select under Puma's accept: idle.
  # Thread 3 (60 ms): 50 ms 80 calls deep under checkout, 10 ms blocked in sleep.
  def profile
    f = FRAMES
    checkout = [f[:checkout], f[:main]]
    phases = {
      1 => [[[f[:price], *checkout], 40, 0], [[f[:json], *checkout], 20, 0], [[f[:set], f[:main]], 10, 0],
            [[f[:times], f[:main]], 10, 1], [[f[:price], *checkout], 20, 0]],
      2 => [[[f[:select], f[:accept]], 100, 1]],
      3 => [[[*Array.new(DEPTH, f[:deep]), *checkout], 50, 0], [[f[:sleep], f[:main]], 10, 1]],
    }
    raw = phases.flat_map do |seq, list|
      t = 0
      list.flat_map do |stack, ms, lsi|
        Array.new(ms) { [stack, MS, seq, lsi, (t += 1) * MS] }
      end
    end
    aggregated = raw.group_by { |r| [r[0], r[2], r[3]] }.map { |(stack, seq, lsi), rs| [stack, rs.sum { |r| r[1] }, seq, lsi] }
    { mode: :wall, frequency: 1000, sampling_count: raw.size, duration_ns: 100 * MS,
      aggregated_samples: aggregated, raw_samples: raw, label_sets: [{}, { "%GVL": "blocked" }] }
  end
end
