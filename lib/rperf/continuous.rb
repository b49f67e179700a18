# frozen_string_literal: true

require "rperf"
require "fileutils"
require "socket"
require "net/http"
require "uri"

module Rperf
  # Always-on profiling: the session cut into intervals of `interval` seconds, each written as a
  # gzipped pprof file into `dir` and/or sent to a Pyroscope server at `url` (its /ingest).
  #
  #   Rperf::Continuous.start(service: "shop", dir: "/var/lib/rperf", interval: 60)
  #   RPERF_CONTINUOUS=1 RPERF_SERVICE=shop RPERF_CONTINUOUS_DIR=/var/lib/rperf RUBYOPT=-rrperf/continuous ...
  #
  # Every interval of the session is exported once, whoever ended it (this exporter's clock, the
  # Viewer's auto snapshots, Rperf.snapshot(clear: true), the session's stop): each pprof's
  # time_nanos + duration_nanos is where the next one starts. Its comments name the service,
  # host, pid and rperf version. The interval is encoded (without the GVL) on the thread that
  # ended it, which is this exporter's own but for the others' cuts; files are written and sent
  # by the exporter's thread, so the application never waits on the disk or the network.
  # Files are named <service>-<UTC start>-<host>-<pid>-<seq>.pb.gz and written atomically; the
  # oldest of the directory's <service>-*.pb.gz go once they add up to more than max_bytes.
  #
  # A forked child (a Puma or Sidekiq worker) starts its own session and exporter; the parent
  # goes on with its own. Without a running session, start starts one (session: its options,
  # mode: :wall and 100 Hz by default); it is stopped at exit, its last interval exported.
  #
  # The session it starts holds an overhead budget (overhead_target: 0.01; nil: a fixed rate):
  # the profiler's own CPU (timer thread, capture, hooks, and the encoding here) is measured
  # against the process's and the rate adapts between 1 Hz and the frequency asked for. Each
  # file says the rate it ran at and what it cost (a comment; its period is the effective one).
  class Continuous
    DEFAULT_SESSION = { mode: :wall, frequency: 100 }.freeze
    DEFAULT_MAX_BYTES = 256 * 1024 * 1024
    DEFAULT_OVERHEAD_TARGET = 0.01
    # Intervals waiting to be written or sent, at most (the oldest are dropped: an endpoint
    # that is down never makes memory grow).
    MAX_PENDING = 16
    UPLOAD_TIMEOUT = 10

    Interval = Struct.new(:pprof, :start_ns, :duration_ns, :frequency, :seq, :attempts, :retry_at)

    class << self
      attr_reader :current

      def start(service:, interval: 60, overhead_target: DEFAULT_OVERHEAD_TARGET, dir: nil, url: nil,
                max_bytes: DEFAULT_MAX_BYTES, session: {})
        raise RuntimeError, "Rperf::Continuous is already running" if @current&.running?

        @current = new(service: service, interval: interval, dir: dir, url: url, max_bytes: max_bytes,
                       session: { overhead_target: overhead_target }.merge(session))
        @current.start
      end

      def stop
        @current&.stop
      end

      # RPERF_CONTINUOUS=1 with RPERF_SERVICE, RPERF_CONTINUOUS_DIR and/or RPERF_CONTINUOUS_URL,
      # RPERF_CONTINUOUS_INTERVAL (seconds); the session from RPERF_MODE, RPERF_FREQUENCY,
      # RPERF_OVERHEAD_TARGET and the other sampling variables. A bad value leaves the program running unprofiled, with a message.
      def start_from_env(env = ENV)
        session = Settings::SAMPLING_ENV.filter_map { |key, name| [key, Settings.parse_env(key, env[name])] if Settings.present?(env[name]) }.to_h
        interval = env["RPERF_CONTINUOUS_INTERVAL"]
        start(service: env["RPERF_SERVICE"] || File.basename($PROGRAM_NAME, ".rb"),
              interval: Settings.present?(interval) ? Float(interval) : 60, dir: env["RPERF_CONTINUOUS_DIR"],
              url: env["RPERF_CONTINUOUS_URL"], session: DEFAULT_SESSION.merge(session))
      rescue ArgumentError, RuntimeError => e
        warn "rperf: continuous profiling not started: #{e.message}"
      end
    end

    attr_reader :service, :interval, :dir, :url

    def initialize(service:, interval:, dir:, url:, max_bytes:, session:)
      raise ArgumentError, "service: must be a non-empty String, got #{service.inspect}" unless service.is_a?(String) && !service.empty?
      raise ArgumentError, "interval: must be a positive number of seconds, got #{interval.inspect}" unless interval.is_a?(Numeric) && interval.positive?
      raise ArgumentError, "give dir: (files) or url: (a Pyroscope server), or both" if dir.nil? && url.nil?
      raise ArgumentError, "max_bytes: must be a positive Integer, got #{max_bytes.inspect}" unless max_bytes.is_a?(Integer) && max_bytes.positive?

      @service = service
      @interval = interval
      @dir = dir
      @url = url && URI(url)
      raise ArgumentError, "url: must be an http(s) URL, got #{url.inspect}" if @url && !@url.is_a?(URI::HTTP)

      @max_bytes = max_bytes
      @session = DEFAULT_SESSION.merge(session)
      @host = Socket.gethostname
      @lock = Mutex.new
      @wake = ConditionVariable.new
    end

    def running? = !@thread.nil? && @pid == Process.pid

    def start
      FileUtils.mkdir_p(@dir) if @dir
      @listener ||= Intervals.listen { |profile| queue_interval(profile) }
      unless Rperf.running?
        Rperf.start(**@session, inherit: false)
        @owns_session = true
      end
      start_thread
      unless @hooked
        @hooked = true
        ForkHook.in_child { restart_in_child }
        at_exit { stop }
      end
      self
    end

    # Exports the last interval (a session started here is stopped) and ends the exporter.
    def stop
      return unless running?

      if @owns_session
        Rperf.stop_without_result # its last interval reaches queue_interval
        @owns_session = false
      elsif Rperf.running?
        cut
      end
      thread = @lock.synchronize do
        @stopping = true
        @wake.signal
        @thread.tap { @thread = nil }
      end
      thread.join unless thread.equal?(Thread.current)
      nil
    end

    # The files this process wrote so far, oldest first (for tests and tools).
    def files = @lock.synchronize { @written.dup }

    private

    def start_thread
      @pid = Process.pid
      @seq = 0
      @pending = []
      @written = []
      @stopping = false
      @next_cut = monotonic + @interval
      @thread = Thread.new { run }
      @thread.name = "rperf-continuous"
    end

    # After fork: the parent's exporter thread is not here, nor its session (inherit: false).
    def restart_in_child
      return unless @thread

      @thread = nil
      @lock = Mutex.new # the parent's threads are gone, and what they held
      @wake = ConditionVariable.new
      unless Rperf.running?
        Rperf.start(**@session, inherit: false)
        @owns_session = true
      end
      start_thread
    end

    def monotonic = Process.clock_gettime(Process::CLOCK_MONOTONIC)

    # Called under Intervals' lock on the thread that ended the interval: encoded there (the
    # profile is the cutter's once this returns), queued for the exporter's thread.
    def queue_interval(profile)
      return unless @pid == Process.pid && @thread

      cpu = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
      pprof = Storage.encode(profile, :pprof, gzip: true, comments: comments)
      Native.count_export_time(Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond) - cpu)
      item = Interval.new(pprof, profile.attribute(:start_time_ns).to_i, profile.attribute(:duration_ns).to_i,
                          [profile.sampling_hz.round, 1].max, nil, 0, 0)
      @lock.synchronize do
        item.seq = (@seq += 1)
        @pending << item
        @pending.shift while @pending.size > MAX_PENDING
        @wake.signal
      end
    end

    def comments = ["service: #{@service}", "host: #{@host}", "pid: #{Process.pid}", "interval: #{@interval}s"]

    def cut
      Native.session&.snapshot(clear: true, result: false) if Rperf.running? && Rperf.aggregating?
    end

    # Cuts at each interval's end (first: a cut is never late for an export), exports what is
    # pending, and ends when stopped with nothing left to export.
    def run
      loop do
        action, item = @lock.synchronize do
          loop do
            now = monotonic
            break :cut if @next_cut <= now && !@stopping
            # Stopping: one last attempt for an upload waiting to be tried again.
            ready = @pending.find { |i| @stopping || i.retry_at <= now }
            break [:export, ready] if ready
            break :stop if @stopping

            @wake.wait(@lock, [@next_cut, *@pending.map(&:retry_at)].min - now)
          end
        end
        case action
        when :cut
          @next_cut += @interval while @next_cut <= monotonic
          cut
        when :export then export(item)
        else break
        end
      end
    rescue StandardError => e
      warn "rperf: continuous export stopped: #{e.class}: #{e.message}"
    end

    # Written, then sent. An upload that failed is tried again a second later, 3 times in all
    # (once more when stopping).
    def export(item)
      write(item) if item.attempts.zero? && @dir
      sent = @url.nil? || upload(item)
      @lock.synchronize do
        item.attempts += 1
        item.retry_at = monotonic + 1
        @pending.delete(item) if sent || item.attempts >= 3 || @stopping
      end
    end

    def write(item)
      stamp = Time.at(0, item.start_ns, :nanosecond).utc.strftime("%Y%m%dT%H%M%S.%NZ")
      path = File.join(@dir, "#{file_part(@service)}-#{stamp}-#{file_part(@host)}-#{Process.pid}-#{item.seq}.pb.gz")
      Storage.write_file(path, item.pprof)
      @lock.synchronize { @written << path }
      prune
    rescue Error, SystemCallError, IOError => e
      warn "rperf: continuous: could not write #{path}: #{e.message}"
    end

    def file_part(text) = text.gsub(/[^A-Za-z0-9._]/, "_")

    # The directory's files of this service, oldest first, beyond max_bytes in all: removed,
    # but for the newest.
    def prune
      files = Dir.glob(File.join(@dir, "#{file_part(@service)}-*.pb.gz")).filter_map do |f|
        stat = File.stat(f)
        [f, stat.mtime, stat.size]
      rescue SystemCallError
        nil # another process's prune removed it
      end
      total = files.sum(&:last)
      files.sort_by { |f, mtime, _| [mtime, f] }[0...-1].each do |f, _, size|
        break if total <= @max_bytes

        File.delete(f) rescue nil # rubocop:disable Style/RescueModifier
        total -= size
      end
    end

    # Pyroscope's ingest: POST <url>/ingest?name=<service>{labels}&from=&until=&format=pprof&sampleRate=
    def upload(item)
      labels = { "host" => @host, "pid" => Process.pid.to_s }.map { |k, v| "#{k}=#{v}" }.join(",")
      from = item.start_ns / 1_000_000_000
      to = (item.start_ns + item.duration_ns + 999_999_999) / 1_000_000_000
      uri = @url.dup
      uri.path = "#{uri.path.chomp('/')}/ingest"
      uri.query = URI.encode_www_form(name: "#{@service}{#{labels}}", from: from, until: to, format: "pprof",
                                      sampleRate: item.frequency, spyName: "rperf")
      request = Net::HTTP::Post.new(uri)
      request["content-type"] = "application/octet-stream"
      request.body = item.pprof
      response = Net::HTTP.start(uri.host, uri.port, use_ssl: uri.scheme == "https", open_timeout: UPLOAD_TIMEOUT,
                                                     read_timeout: UPLOAD_TIMEOUT) { |http| http.request(request) }
      return true if response.is_a?(Net::HTTPSuccess)

      warn "rperf: continuous: #{uri.host} answered #{response.code} to an upload"
      false
    rescue StandardError => e # the network's errors, TLS's among them
      warn "rperf: continuous: upload to #{@url.host} failed: #{e.class}: #{e.message}"
      false
    end
  end
end

Rperf::Continuous.start_from_env if ENV["RPERF_CONTINUOUS"] == "1"
