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

    FIXTURES = File.expand_path("../fixtures", __dir__)

    # rperf 0.11.1's lib directory, installed first by script/peers when it is missing (from the
    # gem registry, when reachable), or nil when it cannot be had or RPERF_COMPAT_OFFLINE=1.
    # Says once per process, on stderr, which of the two the compatibility suite compares with.
    def live_peer_lib
      return @live_peer_lib if defined?(@live_peer_lib)

      reason = nil
      lib = nil
      if ENV["RPERF_COMPAT_OFFLINE"] == "1"
        reason = "RPERF_COMPAT_OFFLINE=1"
      else
        begin
          lib = peer_lib
          reason = "script/peers named #{lib}, which does not exist" unless File.directory?(lib)
        rescue StandardError => e
          reason = e.message.strip
        end
      end
      if reason
        lib = nil
        warn "\n[compat] rperf 0.11.1 is NOT available (#{reason}).\n" \
             "[compat] Falling back to what it recorded in #{FIXTURES}: its facts and the files it wrote. " \
             "Reading our files with 0.11.1 is skipped."
      else
        warn "\n[compat] comparing live with rperf 0.11.1 (#{lib})"
      end
      @live_peer_lib = lib
    end

    # Runs exe/rperf of the gem whose lib this is, in its own process, without our settings.
    # -I lib: rperf 0.11.1's exe finds its rperf.so on the load path (an installed gem's is).
    def rperf_command(lib, *args, chdir:)
      env = ENV.keys.grep(/\A(RPERF_|BUNDLE|RUBYOPT\z|RUBYLIB\z)/).to_h { |k| [k, nil] }
      out, err, status = Open3.capture3(env, RbConfig.ruby, "-I", lib, File.expand_path("../exe/rperf", lib), *args,
                                        chdir: chdir)
      { "status" => status.exitstatus, "stdout" => out, "stderr" => err }
    end

    # Runs a support script with one gem's lib first on the load path, in dir, without our
    # settings (RPERF_META_GIT=null: no commit of this checkout in the files), in the checkout;
    # its stdout.
    def script(name, lib, *args)
      env = ENV.keys.grep(/\A(RPERF_|BUNDLE|RUBYOPT\z|RUBYLIB\z)/).to_h { |k| [k, nil] }.merge("RPERF_META_GIT" => "null")
      # A path relative to the checkout: frames in the files name no directory of this machine.
      path = File.join(__dir__, name).delete_prefix("#{ROOT}/")
      out, err, status = Open3.capture3(env, RbConfig.ruby, "-I", lib, path, *args, chdir: ROOT)
      abort "#{name} failed under #{lib}:\n#{err}" unless status.success?
      out
    end

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
