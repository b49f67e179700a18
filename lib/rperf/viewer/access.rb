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
    #          the Host header a request may carry: a page of another site that resolves its
    #          name to 127.0.0.1 (DNS rebinding) sends its name, and is refused (403).
    # RPERF_VIEWER_ALLOW (addresses or CIDRs, or "any") and RPERF_VIEWER_HOSTS (names, or "any")
    # widen both without a code change. Behind a reverse proxy on the same host every request
    # comes from loopback: put an auth: check (or the proxy's) in front.
    class Access
      LOOPBACK = [IPAddr.new("127.0.0.0/8"), IPAddr.new("::1")].freeze
      # A name or IPv4 address, or an IPv6 address in brackets; then a port.
      HOST_HEADER = /\A(?:\[(?<v6>[0-9A-Fa-f:.]+)\]|(?<name>[^:\[\]\s]+))(?::\d{1,5})?\z/
      ALLOW_VARIABLE = "RPERF_VIEWER_ALLOW"
      HOSTS_VARIABLE = "RPERF_VIEWER_HOSTS"

      def initialize(allow: :loopback, auth: nil, hosts: nil)
        raise ArgumentError, "auth: must respond to call(env), got #{auth.inspect}" unless auth.nil? || auth.respond_to?(:call)

        extra_allow = variable_list(ALLOW_VARIABLE)
        extra_hosts = variable_list(HOSTS_VARIABLE)
        @open = allow == :any || extra_allow == :any
        @allow_description = @open ? "everyone" : compile(allow, extra_allow || [])
        @auth = auth
        hosts = allow == :loopback && !@open ? :loopback : :any if hosts.nil?
        @hosts = extra_hosts == :any ? nil : compile_hosts(hosts, extra_hosts || [])
      end

      # nil when the request may proceed, else the reason it may not and how to allow it.
      def refusal(env)
        return client_refusal(env["REMOTE_ADDR"]) unless allowed?(env)
        host = env["HTTP_HOST"]
        return host_refusal(host) if @hosts && host && !host_allowed?(host)
        return "the auth: check refused this request" if @auth && !check("auth:") { @auth.call(env) }

        nil
      end

      private

      # As Rails' blocked-host page: who was refused, and the one setting that lets it in.
      def client_refusal(remote_addr)
        addr = peer(remote_addr)
        name = addr ? addr.to_s : remote_addr.inspect
        lines = ["the rperf viewer answers #{@allow_description} only, and refused a request from #{name} (REMOTE_ADDR).",
                 "Profiles show code paths, file names and label values: allow only the clients that may read them."]
        lines += if addr
                   how_to_allow("this client (e.g. Docker's port mapping, which connects from the bridge's address)", name,
                                ALLOW_VARIABLE, "addresses or CIDRs", "allow")
                 else
                   ["The server gave no client address; #{ALLOW_VARIABLE}=any (or allow: :any) answers everyone."]
                 end
        lines.join("\n")
      end

      def host_refusal(header)
        accepted = [("a loopback name or address" if @hosts[:loopback]), *@hosts[:names]].compact.join(", ")
        lines = ["Host #{header.inspect} is not #{@hosts[:names].empty? ? accepted : "one of: #{accepted}"}: the rperf viewer " \
                 "refused it (a page of another site may be reading this server through DNS rebinding)."]
        lines += if (name = host_name(header))
                   [*how_to_allow("requests to #{name} (e.g. a reverse proxy on this machine passing the site's Host)", name,
                                  HOSTS_VARIABLE, "names", "hosts"),
                    "Behind a proxy every request comes from the proxy's address: put an auth: check (or the proxy's) in front."]
                 else
                   ["The Host header is not a name or address with an optional port; see hosts:."]
                 end
        lines.join("\n")
      end

      # The two settings that let `name` in: the environment's and the code's.
      def how_to_allow(what, name, variable, items, option)
        ["To allow #{what}, either:",
         "  set #{variable}=#{name} in the server's environment (#{items}, comma-separated, or \"any\"), or",
         "  pass #{option}: [#{name.inspect}] to Rperf::Viewer (use Rperf::Viewer, #{option}: [...])."]
      end

      # A variable's comma-separated list, :any, or nil when unset or empty.
      def variable_list(name)
        items = ENV[name].to_s.split(/[\s,]+/).reject(&:empty?)
        return nil if items.empty?
        return :any if items.any? { |i| i.casecmp?("any") }

        items
      rescue ArgumentError => e # not valid in its encoding
        raise ArgumentError, "#{name}: #{e.message}"
      end

      # {loopback: bool, names: [...]}, or nil for any Host.
      def compile_hosts(hosts, extra)
        case hosts
        when :any then nil
        when :loopback then { loopback: true, names: host_names(extra) }
        else
          list = Array(hosts) if hosts.is_a?(String) || hosts.is_a?(Array)
          raise ArgumentError, "hosts: must be :loopback, :any or host names, got #{hosts.inspect}" unless list&.all?(String)

          { loopback: false, names: host_names(list + extra) }
        end
      end

      def host_names(list) = list.map { |h| h.downcase.delete_prefix("[").delete_suffix("]").chomp(".") }.uniq

      # The name or address a Host header names (without its port), or nil.
      def host_name(header)
        m = HOST_HEADER.match(header.to_s)
        m && (m[:v6] || m[:name]).downcase.chomp(".")
      end

      def host_allowed?(header)
        name = host_name(header)
        return false unless name
        return true if @hosts[:names].include?(name)
        return false unless @hosts[:loopback]
        return true if name == "localhost" || name.end_with?(".localhost") # RFC 6761: browsers resolve these to loopback

        in_networks?(IPAddr.new(name), LOOPBACK)
      rescue IPAddr::Error
        false
      end

      # Sets the networks of allow: (and those RPERF_VIEWER_ALLOW adds) and its check if a
      # callable; returns whom it allows, for a refusal.
      def compile(allow, extra)
        added = extra.map { |a| parse_network(a, ALLOW_VARIABLE) }
        head = case allow
               when :loopback
                 @networks = LOOPBACK + added
                 ["loopback addresses"]
               when Proc, Method
                 @networks = added
                 @allow_check = allow
                 ["requests its allow: check accepts"]
               when String, IPAddr, Array
                 @networks = Array(allow).map { |a| a.is_a?(IPAddr) ? a : parse_network(a) } + added
                 Array(allow).map(&:to_s)
               else
                 raise ArgumentError, "allow: must be :loopback, :any, addresses/CIDRs or a callable, got #{allow.inspect}"
               end
        (head + extra).join(", ")
      end

      def parse_network(text, source = "allow:")
        IPAddr.new(text.to_s)
      rescue IPAddr::Error => e
        raise ArgumentError, "#{source} #{text.inspect} is not an address or CIDR (#{e.message})"
      end

      def in_networks?(addr, networks = @networks) = addr && networks.any? { |net| net.family == addr.family && net.include?(addr) }

      # An address (an IPv4-mapped IPv6 one as IPv4), or nil.
      def peer(text)
        addr = IPAddr.new(text.to_s)
        addr.ipv4_mapped? ? addr.native : addr
      rescue IPAddr::Error
        nil
      end

      def allowed?(env) = @open || check("allow:") { in_networks?(peer(env["REMOTE_ADDR"])) || @allow_check&.call(env) }

      # A check that raises refuses the request.
      def check(name)
        yield ? true : false
      rescue StandardError => e
        warn "rperf viewer: the #{name} check raised #{e.class}: #{e.message}; refusing"
        false
      end
    end
  end
end
