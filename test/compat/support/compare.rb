# frozen_string_literal: true

# Runs one probe under our gem and under rperf 0.11.1 (installed by script/peers), each in a
# child process, and prints every path where their JSON facts differ:
#   ruby test/compat/support/compare.rb api_probe.rb [--json]
require "json"
require "open3"
require "rbconfig"
require "tmpdir"
require_relative "../../../bench/peers/locate"

module CompatProbe
  module Compare
    ROOT = File.expand_path("../../..", __dir__)

    module_function

    def peer_lib = PeerBench::Locate.peers.fetch("rperf_lib")

    # Runs a probe with one gem's lib first on the load path, in the worktree (a git checkout,
    # so meta.git is filled in), with no RPERF_* or Bundler settings from this process.
    def run(probe, lib)
      env = ENV.keys.grep(/\A(RPERF_|BUNDLE|RUBYOPT\z|RUBYLIB\z)/).to_h { |k| [k, nil] }
      Dir.mktmpdir("rperf-compat") do |dir|
        out, err, status = Open3.capture3(env, RbConfig.ruby, "-I", lib, File.join(__dir__, probe), dir, chdir: ROOT)
        abort "#{probe} failed under #{lib}:\n#{err}" unless status.success?
        JSON.parse(out)
      end
    end

    def differences(theirs, ours, path = "", acc = [])
      if theirs.is_a?(Hash) && ours.is_a?(Hash)
        (theirs.keys | ours.keys).each do |k|
          differences(theirs.fetch(k, :absent), ours.fetch(k, :absent), "#{path}/#{k}", acc)
        end
      elsif theirs != ours
        acc << [path, theirs, ours]
      end
      acc
    end

    def main(probe, json: false)
      theirs = run(probe, peer_lib)
      ours = run(probe, File.join(ROOT, "lib"))
      diffs = differences(theirs, ours)
      return puts(JSON.pretty_generate(diffs.map { |p, t, o| { path: p, theirs: t, ours: o } })) if json

      diffs.each do |p, t, o|
        puts p
        puts "  0.11.1: #{JSON.generate(t)[0, 400]}"
        puts "  ours:   #{JSON.generate(o)[0, 400]}"
      end
    end
  end
end

CompatProbe::Compare.main(ARGV.fetch(0), json: ARGV.include?("--json")) if $PROGRAM_NAME == __FILE__
