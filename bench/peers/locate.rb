# frozen_string_literal: true

require "open3"

module PeerBench
  # Where script/peers installed the peer profilers (it installs them first when needed).
  module Locate
    ROOT = File.expand_path("../..", __dir__)

    # => { "gems" => dir of stackprof and vernier, "rperf_lib" => lib dir of rperf 0.11.1 }
    def self.peers
      out, status = Open3.capture2(File.join(ROOT, "script", "peers"))
      raise "script/peers failed (#{status})" unless status.success?

      out.lines.filter_map { |l| l.chomp.split("=", 2) if l.include?("=") }.to_h
    end
  end
end
