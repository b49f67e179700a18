# frozen_string_literal: true

require "open3"
require "timeout"

module PeerBench
  # Where script/peers installed the peer profilers (it installs them first when needed).
  module Locate
    ROOT = File.expand_path("../..", __dir__)
    # Installing builds three native extensions (~1 minute here); a registry that cannot be
    # reached should fail fast, but one that drops packets would otherwise hang the caller.
    INSTALL_TIMEOUT = Integer(ENV.fetch("RPERF_PEERS_TIMEOUT", "600"))

    # => { "gems" => dir of stackprof and vernier, "rperf_lib" => lib dir of rperf 0.11.1 }
    # Raises with script/peers' own last lines when it fails (no network, no build tools).
    def self.peers
      # Without the caller's Bundler settings (tests run under `bundle exec`): script/peers
      # sets up its own gem directories.
      env = ENV.keys.grep(/\A(BUNDLE|BUNDLER_|RUBYOPT\z|RUBYLIB\z)/).to_h { |k| [k, nil] }
      out, err, status = run(env, File.join(ROOT, "script", "peers"))
      raise "script/peers failed (#{status}):\n#{err.lines.last(8).join}" unless status&.success?

      out.lines.filter_map { |l| l.chomp.split("=", 2) if l.include?("=") }.to_h
    end

    # Open3.capture3 with a time limit; the child and its children are killed on timeout.
    def self.run(env, *cmd)
      Open3.popen3(env, *cmd, pgroup: true) do |stdin, stdout, stderr, wait|
        stdin.close
        out = Thread.new { stdout.read }
        err = Thread.new { stderr.read }
        unless wait.join(INSTALL_TIMEOUT)
          Process.kill("KILL", -wait.pid)
          wait.join
          return ["", "#{err.value}\nscript/peers took longer than #{INSTALL_TIMEOUT} s (RPERF_PEERS_TIMEOUT)", nil]
        end
        [out.value, err.value, wait.value]
      end
    end
  end
end
