# frozen_string_literal: true

# Call-tree benchmark (not a test): the call tree and the method table of the synthetic
# 100,000-stack profile, built by the native core. A tree stores nothing per node and finds a
# node's children when asked (the "children of the root" row); a method table makes its callers
# and callees when first asked for (the "callers of every method" row). Each row runs 3 times,
# each in a forked child: median and slowest wall time, median CPU time (on a shared machine,
# the figure that other processes disturb least), peak memory added. The profile is converted
# to its native form first (Rperf.stop and Rperf.load return it so); that is not timed here.
require "rperf"
require "etc"
require "tmpdir"
require_relative "support/synthetic_profile"

profile = Rperf::Storage.native(SyntheticProfile.build)
profile.to_h # as from Rperf.stop/load: the Hash view exists
puts "Call-tree benchmark: #{SyntheticProfile::STACKS} stacks x depth #{SyntheticProfile::DEPTH}, " \
     "#{SyntheticProfile::FRAMES} distinct frames, #{Etc.nprocessors} CPUs"
puts format("%-40s %9s %9s %9s %28s %10s", "step", "median s", "max s", "cpu s", "size", "peak +RSS")
rows = [
  ["call tree", -> { "#{Rperf::CallTree.new(profile).size} nodes" }],
  ["call tree (threads: :separate)", -> { "#{Rperf::CallTree.new(profile, threads: :separate).size} nodes" }],
  ["call tree + children of the root", -> { "#{Rperf::CallTree.new(profile).root.children.size} children" }],
  ["method table", -> { "#{Rperf::MethodTable.new(profile).size} methods" }],
  ["call tree + method table", lambda {
    tree = Rperf::CallTree.new(profile)
    "#{tree.size} nodes, #{tree.method_table.size} methods"
  }],
  ["method table + callers of every method", -> { "#{Rperf::MethodTable.new(profile).sum { |e| e.callers.size }} arcs" }],
  ["callgrind file (Rperf.save)", lambda {
    Dir.mktmpdir do |dir|
      path = File.join(dir, "callgrind.out.bench")
      Rperf.save(path, profile.to_h)
      format("%.1fMB", File.size(path) / 1e6)
    end
  }],
]
rows.each do |name, work|
  runs = Array.new(3) { SyntheticProfile.measure(&work) }
  times = runs.map(&:first).sort
  cpu = runs.map { |run| run[1] }.sort[1]
  size = work.call
  puts format("%-40s %9.3f %9.3f %9.3f %28s %8.1fMB", name, times[1], times[2], cpu, size, runs.map(&:last).max)
end
