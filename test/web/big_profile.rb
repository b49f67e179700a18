# frozen_string_literal: true

# The big profile of the Viewer's browser tests and of script/bench-viewer.
module BigProfile
  module_function

  # A wall profile of four threads with BIG_ROWS raw samples (aggregate: false), one per
  # millisecond per thread, over four stacks; the IO stack is GVL blocked. endpoints: each
  # thread's samples are in requests of 250 ms, GET /a and GET /b in turn (an endpoint label).
  def big_profile(rows, endpoints: false)
    frame = ->(name) { ["/app/big.rb", name] }
    main = frame.("Object#main")
    run = frame.("Worker#run")
    stacks = [[frame.("Worker#parse"), run, main], [frame.("Worker#render"), run, main], [["<C method>", "IO#read"], run, main], [run, main]]
    raw = Array.new(rows) do |i|
      thread = i % 4
      k = i / 4
      stack = (k * 7 + thread) % 4
      lsi = (stack == 2 ? 1 : 0) + (endpoints && (k / 250).odd? ? 2 : 0)
      [stacks[stack], 1_000_000, thread + 1, lsi, (k + 1) * 1_000_000]
    end
    aggregated = raw.group_by { |r| [r[0], r[2], r[3]] }.map { |(stack, seq, lsi), rs| [stack, rs.sum { |r| r[1] }, seq, lsi] }
    sets = if endpoints
             %w[a a b b].zip([{}, { "%GVL": "blocked" }] * 2).map { |e, set| { endpoint: "GET /#{e}", **set } }
           else
             [{}, { "%GVL": "blocked" }]
           end
    { mode: :wall, frequency: 1000, sampling_count: rows, duration_ns: (rows / 4) * 1_000_000,
      aggregated_samples: aggregated, raw_samples: raw, label_sets: sets }
  end
end
