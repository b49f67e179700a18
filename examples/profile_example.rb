# frozen_string_literal: true

# Profiles examples/app.rb in wall mode and prints the text report.
require "rperf"
require_relative "app"

mode = (ARGV.first || "wall").to_sym
output = File.join(__dir__, "app.#{mode}.json.gz")
data = Rperf.start(mode: mode, frequency: 1000, output: output) { main }
puts Rperf::Report.text(data, top: 12)
states = Hash.new(0)
data[:aggregated_samples].each do |_frames, weight, _thread, label_set_id|
  labels = data[:label_sets][label_set_id]
  # VM-state labels have Symbol keys, as in rperf 0.11.
  gc, gvl = labels.values_at(:"%GC", :"%GVL")
  states[gc ? "GC #{gc}" : gvl ? "GVL #{gvl}" : "running"] += weight
end
puts "\nBy VM state:"
states.sort_by { |_, w| -w }.each { |state, w| puts format("  %10.1fms  %s", w / 1e6, state) }
puts "\nThreads: #{data[:detected_thread_count]}, samples: #{data[:sampling_count]}, " \
     "profile written to #{output}"
