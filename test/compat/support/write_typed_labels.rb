# frozen_string_literal: true

# Writes profiles whose labels hold every JSON type, with whichever rperf is first on the load
# path (fixtures/written_by_0.11.1/typed_labels*.json.gz were written by rperf 0.11.1 with it):
#   ruby -I <lib of one gem> test/compat/support/write_typed_labels.rb DIR
require "rperf"

LABELS = { cached: true, "k" => 1.5, sym: :s, arr: [1, "a", nil, ["x", "y"]], h: { x: 1, "y" => [true] }, f: false,
           big: 2**70, str: "v" }.freeze

def burn(seconds)
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  nil while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 < seconds
end

dir = ARGV.fetch(0)
{ "typed_labels.json.gz" => true, "typed_labels_raw.json.gz" => false }.each do |name, aggregate|
  data = Rperf.start(mode: :wall, frequency: 500, aggregate: aggregate, inherit: false) do
    Rperf.label(**LABELS) do
      burn(0.03)
      sleep 0.02
    end
  end
  Rperf.save(File.join(dir, name), data)
end
