# frozen_string_literal: true

require "ipaddr"

module Rperf
  class Viewer
    # Who may open the viewer. Profiles show code paths, file names and label values, so by
    # default only the machine itself may look (REMOTE_ADDR in 127.0.0.0/8 or ::1):
    #
    #   allow: :loopback (default) | :any | ["10.0.0.0/8", "192.0.2.7", IPAddr, ...] | ->(env) { bool }
    #   auth:  ->(env) { bool }   checked after allow:, e.g. a session or a token
    #   hosts: :loopback (default with allow: :loopback) | :any (default otherwise) | ["name", ...]
    #          the Host header a request may carry (any port); :loopback is 127.0.0.0/8, [::1],
    #          localhost and *.localhost (which browsers resolve to loopback themselves). A page on another site can make
    #          the browser resolve its own name to 127.0.0.1 (DNS rebinding) and read the viewer
    #          as same-origin: its requests then carry that name, and are refused (403). A
    #          request without a Host header (HTTP/1.0, not a browser) is not refused for it.
    #
    # REMOTE_ADDR is the peer of the server's socket: behind a reverse proxy on the same host
    # every request comes from loopback, so put an auth: check (or the proxy's) in front.
    class Access
      LOOPBACK = [IPAddr.new("127.0.0.0/8"), IPAddr.new("::1")].freeze
      # A Host header: a name or IPv4 address, or an IPv6 address in brackets; then a port.
      HOST_HEADER = /\A(?:\[(?<v6>[0-9A-Fa-f:.]+)\]|(?<name>[^:\[\]\s]+))(?::\d{1,5})?\z/

      def initialize(allow: :loopback, auth: nil, hosts: nil)
        raise ArgumentError, "auth: must respond to call(env), got #{auth.inspect}" unless auth.nil? || auth.respond_to?(:call)

        @allow = compile(allow)
        @auth = auth
        @hosts = compile_hosts(hosts.nil? ? (allow == :loopback ? :loopback : :any) : hosts)
      end

      # nil when the request may proceed, else the reason it may not.
      def refusal(env)
        return "the viewer answers #{@allow_description} only (REMOTE_ADDR #{env['REMOTE_ADDR'].inspect}); see allow:" unless allowed?(env)
        if @hosts && (host = env["HTTP_HOST"]) && !host_allowed?(host)
          return "Host #{host.inspect} is not #{@hosts == :loopback ? 'a loopback name or address' : 'one of hosts:'} " \
                 "(a page of another site may be reading this server through DNS rebinding); see hosts:"
        end
        return "the auth: check refused this request" if @auth && !authorized?(env)

        nil
      end

      private

      def compile_hosts(hosts)
        case hosts
        when :any then nil
        when :loopback then :loopback
        when String, Array
          list = Array(hosts)
          raise ArgumentError, "hosts: must be :loopback, :any or host names, got #{hosts.inspect}" unless list.all?(String)

          list.map { |h| h.downcase.delete_prefix("[").delete_suffix("]") }
        else
          raise ArgumentError, "hosts: must be :loopback, :any or host names, got #{hosts.inspect}"
        end
      end

      def host_allowed?(header)
        m = HOST_HEADER.match(header.to_s)
        return false unless m

        name = (m[:v6] || m[:name]).downcase.chomp(".")
        return @hosts.include?(name) unless @hosts == :loopback
        return true if name == "localhost" || name.end_with?(".localhost") # RFC 6761: browsers resolve these to loopback

        addr = IPAddr.new(name)
        LOOPBACK.any? { |net| net.family == addr.family && net.include?(addr) }
      rescue IPAddr::Error
        false
      end

      def compile(allow)
        case allow
        when :any
          @allow_description = "everyone"
          ->(_env) { true }
        when :loopback
          @allow_description = "loopback addresses"
          networks(LOOPBACK)
        when Proc, Method
          @allow_description = "requests its allow: check accepts"
          allow
        when String, IPAddr, Array
          list = Array(allow)
          @allow_description = list.map(&:to_s).join(", ")
          networks(list.map { |a| a.is_a?(IPAddr) ? a : parse_network(a) })
        else
          raise ArgumentError, "allow: must be :loopback, :any, addresses/CIDRs or a callable, got #{allow.inspect}"
        end
      end

      def parse_network(text)
        IPAddr.new(text.to_s)
      rescue IPAddr::Error => e
        raise ArgumentError, "allow: #{text.inspect} is not an address or CIDR (#{e.message})"
      end

      def networks(list)
        lambda do |env|
          addr = peer(env)
          addr && list.any? { |net| net.family == addr.family && net.include?(addr) }
        end
      end

      def peer(env)
        addr = IPAddr.new(env["REMOTE_ADDR"].to_s)
        addr.ipv4_mapped? ? addr.native : addr
      rescue IPAddr::Error
        nil
      end

      def allowed?(env)
        @allow.call(env) ? true : false
      rescue StandardError => e
        warn "rperf viewer: the allow: check raised #{e.class}: #{e.message}; refusing"
        false
      end

      def authorized?(env)
        @auth.call(env) ? true : false
      rescue StandardError => e
        warn "rperf viewer: the auth: check raised #{e.class}: #{e.message}; refusing"
        false
      end
    end
  end
end
