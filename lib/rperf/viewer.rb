# frozen_string_literal: true

require_relative "../rperf"
require "json"
require "cgi/escape"
require "time"
require "zlib"
require_relative "viewer/payload"
require_relative "viewer/access"
require_relative "viewer/static_page"

module Rperf
  # A Rack app (or middleware) that shows profiles in the browser: snapshots taken from the
  # running session, or profile files from a directory (time travel). Everything it needs is
  # served from the gem: it works without any network access.
  #
  #   use Rperf::Viewer                                  # at /rperf, loopback clients only
  #   use Rperf::Viewer, auto_snapshot: 60               # a snapshot every minute (config.ru)
  #   use Rperf::Viewer, path: "/profiler", max_snapshots: 12,
  #                      allow: ["10.0.0.0/8"], auth: ->(env) { admin?(env) }
  # Once the app is built (`use` builds the middleware after config.ru has run):
  #   Rperf::Viewer.instance.take_snapshot!              # Rperf.snapshot(clear: true), kept
  #   Rperf::Viewer.instance.auto_snapshot(every: 60)    # the same, every minute
  #   Rperf::Viewer.instance.add_snapshot_dir("profiles") # *.json(.gz), loaded when opened
  # Every view, under every filter and transform, is computed by the page (ext/rperf/page).
  class Viewer
    ASSET_DIR = File.expand_path("viewer/assets", __dir__)
    PAGE_MODEL = "page_model.wasm"
    # The page's scripts: those index.html loads, in its order.
    SCRIPT_TAG = %r{<script src="assets/([^"]+)"></script>}
    SCRIPTS = File.read(File.join(ASSET_DIR, "index.html")).scan(SCRIPT_TAG).flatten.freeze
    ASSET_TYPES = {
      "index.html" => "text/html; charset=utf-8",
      **SCRIPTS.to_h { |name| [name, "text/javascript; charset=utf-8"] },
      "viewer.css" => "text/css; charset=utf-8",
      PAGE_MODEL => "application/wasm", # ext/rperf/page in WebAssembly: every view of the page
    }.freeze
    # Nothing outside this server, no inline script; style attributes (bar widths) need
    # 'unsafe-inline' for styles, the page model 'wasm-unsafe-eval' (no eval).
    CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; " \
                              "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; " \
                              "frame-ancestors 'none'"
    SECURITY_HEADERS = { "content-security-policy" => CONTENT_SECURITY_POLICY, "x-content-type-options" => "nosniff",
                         "x-frame-options" => "DENY", "referrer-policy" => "no-referrer", "cache-control" => "no-store" }.freeze
    PAYLOAD_CACHE_SIZE = 4
    FIRST_AUTO_SNAPSHOT = 10 # seconds: auto_snapshot's first, at most
    SNAPSHOT_NOW_HEADER = "HTTP_X_RPERF_SNAPSHOT" # the page's "snapshot now" sends x-rperf-snapshot: 1
    # A timeline of more rows is sent apart, when the page first needs it: the first view of a
    # big profile does not wait for it (issue 27).
    TIMELINE_INLINE_ROWS = 50_000

    class << self
      # The Viewer created last (the one `use Rperf::Viewer` built).
      attr_reader :instance
    end

    attr_reader :path, :max_snapshots

    def initialize(app = nil, path: "/rperf", max_snapshots: 24, allow: :loopback, auth: nil, hosts: nil,
                   max_samples: 20_000, max_timeline: 200_000, auto_snapshot: nil)
      { max_snapshots: max_snapshots, max_samples: max_samples, max_timeline: max_timeline }.each do |name, v|
        raise ArgumentError, "#{name} must be a positive Integer, got #{v.inspect}" unless v.is_a?(Integer) && v.positive?
      end
      # "" (or "/") serves at the root of wherever it is mounted: rperf 0.11's Rails example,
      # `mount Rperf::Viewer.new(nil, path: ""), at: "/rperf"`.
      raise ArgumentError, "path must be \"\" or a String starting with /, got #{path.inspect}" unless path.is_a?(String) && (path.empty? || path.start_with?("/"))

      @app = app
      @path = path.chomp("/")
      @max_snapshots = max_snapshots
      @payload_limits = { max_samples: max_samples, max_timeline: max_timeline }
      @access = Access.new(allow: allow, auth: auth, hosts: hosts)
      @snapshots = [] # {id:, taken_at:, data: | path:, meta:, summary:, error:}
      @payloads = {}  # id => [JSON body, a big timeline's rows (Viewer.timeline_bytes) or nil], the few opened last
      @loaded = {}    # id => a file's profile, the one opened last (its Source needs it), under @load_mutex
      @mutex = Mutex.new
      @load_mutex = Mutex.new # one file loaded at a time: concurrent requests share it
      @next_id = 0
      @auto_mutex = Mutex.new
      @auto_every = nil # seconds, while auto_snapshot is on
      self.class.instance_variable_set(:@instance, self)
      auto_snapshot(every: auto_snapshot) unless auto_snapshot.nil?
    end

    # The JSON body of GET <path>/snapshots/<id>: the list entry with rperf 0.11's counts and the
    # events per unit of work, then the profile (Payload).
    def self.snapshot_body(list_entry, data, max_samples:, max_timeline:)
      list_entry.merge(mode: data[:mode], frequency: data[:frequency], duration_ns: data[:duration_ns],
                       sampling_count: data[:sampling_count], meta: data[:meta] || list_entry[:meta],
                       summary: data[:summary] || list_entry[:summary], work_events: data[:work_events],
                       **Payload.build(data, max_samples: max_samples, max_timeline: max_timeline))
    end

    # [body, nil], or for a big timeline [body, its rows as timeline_bytes], the body's timeline
    # saying so ({deferred: true, rows:, quantum_ns:, source_count:, ...}).
    def self.split_timeline(body)
      timeline = body[:timeline]
      return [body, nil] unless timeline && timeline[:samples].size > TIMELINE_INLINE_ROWS

      [body.merge(timeline: timeline.except(:samples, :idle).merge(deferred: true, rows: timeline[:samples].size)),
       timeline_bytes(timeline)]
    end

    # A timeline sent apart, the same bytes from the server and in a file: gzip'd little-endian
    # columns the page hands to its model as typed arrays (JSON of 500,000 rows took Chromium
    # ~0.3 s to parse and convert): four uint32 (rows n, 1 when rows have a line-level leaf, idle
    # count, 0), float64 weights[n] and times[n] (steps from the row before: 14 times fewer gzip'd
    # bytes), uint32 nodes[n], threads[n], label sets[n], (int32 line leaves[n]), the idle rows'
    # indexes. MTIME 0 in the gzip header (RFC 1952): the same profile makes the same bytes.
    def self.timeline_bytes(timeline)
      rows = timeline[:samples]
      lines = !rows.empty? && rows[0].size > 5
      columns = rows.empty? ? [[], [], [], [], []] : rows.transpose
      idle = timeline[:idle] || []
      before = 0
      steps = columns[4].map { |time| (time - before).tap { before = time } }
      binary = [rows.size, lines ? 1 : 0, idle.size, 0].pack("V4") << columns[1].pack("E*") << steps.pack("E*") <<
               columns[0].pack("V*") << columns[2].pack("V*") << columns[3].pack("V*")
      binary << columns[5].pack("l<*") if lines
      binary << idle.pack("V*")
      Zlib.gzip(binary, level: 6).tap { |gz| gz[4, 4] = "\0\0\0\0".b }
    end

    # A snapshot's meta and summary are those a saved file carries, so snapshots and files list
    # alike; the pid says which worker of a server took it.
    def self.meta_of(data) = data[:meta] || Meta.build_meta(data).merge(pid: Process.pid)

    # A hand-built Hash the model cannot read gets the counts the list shows.
    def self.summary_of(data)
      data[:summary] || Meta.build_summary(data)
    rescue Rperf::Error, ArgumentError, TypeError
      { total_ms: data[:duration_ns].is_a?(Integer) ? (data[:duration_ns] / 100_000).fdiv(10) : nil,
        samples: data[:sampling_count], top_methods: [] }
    end

    # rperf 0.11's name of Viewer.static_html.
    def self.render_static_html(data) = static_html(data)

    # rperf 0.11's JSON form: [samples, label_sets], each sample {stack: [label, ...] root first,
    # weight:, label_set_id:}, label sets with String keys. The page reads it too (RPERF_DATA_SOURCE).
    def self.samples_to_json(samples, label_sets)
      rows = samples.map do |frames, weight, _thread_seq, label_set_id|
        { stack: frames.reverse_each.map { |frame| frame[1] }, weight: weight, label_set_id: label_set_id || 0 }
      end
      [rows, label_sets.map { |set| set.is_a?(Hash) ? set.transform_keys(&:to_s) : set }]
    end

    # The viewer page as one self-contained HTML document holding one profile (`rperf report --html`).
    def self.static_html(data, title: "rperf profile", max_samples: 20_000, max_timeline: 200_000)
      StaticPage.html(profile_hash(data, "static_html"), title.to_s, { max_samples: max_samples, max_timeline: max_timeline })
    end

    # A profile Hash (a Native::Profile's), else ArgumentError.
    def self.profile_hash(data, method)
      data = data.to_h if data.is_a?(Native::Profile)
      return data if data.is_a?(Hash) && data[:aggregated_samples].is_a?(Array)

      raise ArgumentError, "#{method} needs a profile Hash with :aggregated_samples, got #{data.class}"
    end

    # --- snapshots -----------------------------------------------------------------------

    # Takes Rperf.snapshot(clear: true) and keeps it; nil when no session runs, or when
    # nothing was sampled (an idle server's intervals would push the useful snapshots out).
    def take_snapshot!
      return nil unless Rperf.running?

      data = Rperf.snapshot(clear: true)
      data && !self.class.empty_profile?(data) ? add_snapshot(data) : nil
    end

    # No time sample and no allocation sample.
    def self.empty_profile?(data) = Array(data[:aggregated_samples]).empty? && Array(data[:allocation_samples]).empty?

    # Keeps a profile Hash (Rperf.stop, snapshot or load); the oldest beyond max_snapshots go
    # (files from add_snapshot_dir are not counted).
    def add_snapshot(data)
      data = Viewer.profile_hash(data, "add_snapshot")
      # As rperf 0.11, the profile carries its meta and summary, as a saved file does.
      data = data.dup if data.frozen?
      data[:meta] = self.class.meta_of(data)
      data[:summary] = self.class.summary_of(data)
      entry = { taken_at: Time.now, data: data, meta: data[:meta], summary: data[:summary] }
      begin
        entry[:total_weight_ns] = Payload.model(data).total_weight
      rescue Payload::Unavailable => e # listed with the model's reason, as an unreadable file
        entry.merge!(total_weight_ns: 0, error: e.message)
      end
      @mutex.synchronize do
        entry[:id] = (@next_id += 1)
        @snapshots << entry
        evict_in_memory
      end
      entry
    end

    # Lists every *.json / *.json.gz profile in dir (meta and summary only: a profile is loaded
    # when opened). Returns the number added: 0 for a directory that does not exist (as rperf
    # 0.11, so a deploy may point at one made later).
    def add_snapshot_dir(dir)
      entries = Dir.glob(File.join(dir, "*.{json,json.gz}")).filter_map do |file|
        head = Rperf.read_meta(file) || {}
        mtime = File.mtime(file)
        if (problem = Viewer.unservable(meta: head[:meta], summary: head[:summary]))
          next { path: file, meta: nil, summary: nil, taken_at: mtime, order: mtime,
                 error: "#{File.basename(file)}: its meta cannot be shown (#{problem})" }
        end
        created = meta_time(head[:meta], :created_at) || mtime
        { path: file, meta: head[:meta], summary: head[:summary], taken_at: created, order: meta_time(head[:meta], :git, :committed_at) || created }
      rescue SystemCallError
        nil # removed while we listed it
      end
      # As rperf 0.11.1: by git commit time, else creation time, else mtime; then creation time, name.
      entries.sort_by! { |e| [e[:order], e[:taken_at], e[:path]] }
      @mutex.synchronize { entries.each { |e| @snapshots << e.except(:order).merge(id: (@next_id += 1)) } }
      entries.size
    end

    AUTO_SNAPSHOT_NEEDS_AGGREGATE =
      "auto_snapshot needs a session that aggregates its samples: Rperf.snapshot cannot read one started " \
      "with aggregate: false (it keeps every sample until Rperf.stop). Start it with aggregate: true (the default); " \
      "for the Timeline tab, profile a window with aggregate: false and keep its Rperf.stop result with " \
      "Rperf::Viewer.instance.add_snapshot(data)"

    # Takes a snapshot every `every` seconds in a background thread; in a forked child (a Puma
    # worker) the thread starts again on its first request. A session with aggregate: false
    # raises ArgumentError, or, started later, is reported once and ends the thread.
    def auto_snapshot(every: 60)
      raise ArgumentError, "auto_snapshot: every must be a positive number of seconds, got #{every.inspect}" unless every.is_a?(Numeric) && every.positive?
      raise ArgumentError, AUTO_SNAPSHOT_NEEDS_AGGREGATE if Rperf.running? && !Rperf.aggregating?

      stop_auto_snapshot
      @auto_mutex.synchronize { start_auto_snapshot_thread(every) }
    end

    def stop_auto_snapshot
      thread = @auto_mutex.synchronize do
        @auto_every = nil
        @auto_snapshot.tap { @auto_snapshot = nil }
      end
      thread&.kill&.join unless thread&.equal?(Thread.current)
      nil
    end

    # id, taken_at and meta of each kept snapshot, oldest first.
    def snapshot_list = @mutex.synchronize { @snapshots.map { |s| list_entry(s) } }

    # What JSON.generate raises for a value it cannot send: a non-finite Float, nesting deeper
    # than JSON's limit of 100, bytes that are not text.
    UNSERVABLE = [JSON::GeneratorError, JSON::NestingError, EncodingError].freeze

    # Why a value cannot be sent as JSON, or nil.
    def self.unservable(value)
      JSON.generate(value)
      nil
    rescue *UNSERVABLE => e
      first_line(e)
    end

    def self.first_line(error) = error.message.lines.first.to_s.strip[0, 200]

    # --- Rack ----------------------------------------------------------------------------

    def call(env)
      restart_auto_snapshot if @auto_every && @auto_pid != Process.pid
      req_path = env["PATH_INFO"].to_s
      return @app ? @app.call(env) : not_found unless req_path == @path || req_path.start_with?("#{@path}/")
      reason = @access.refusal(env)
      return text(403, "Forbidden: #{reason}\n") if reason

      no_mini_profiler_badge
      sub_path = req_path[@path.size..]
      return snapshot_now if env["REQUEST_METHOD"] == "POST" && sub_path == "/snapshots" && env[SNAPSHOT_NOW_HEADER] == "1"
      return text(405, "Method Not Allowed\n", "allow" => "GET, HEAD") unless %w[GET HEAD].include?(env["REQUEST_METHOD"])

      case sub_path
      when "" then text(301, "", "location" => "#{env['SCRIPT_NAME']}#{@path}/")
      when "/" then page(env)
      # Only the files of ASSET_TYPES: a request names no path on disk.
      when %r{\A/assets/(.+)\z} then $1 != "index.html" && ASSET_TYPES.key?($1) ? asset($1) : not_found
      when "/snapshots" then json(200, list_body)
      when %r{\A/snapshots/(\d{1,18})(?:/(timeline|source))?\z} then snapshot($1.to_i, $2, env["QUERY_STRING"])
      else not_found
      end
    end

    private

    # The page's "snapshot now": POST <path>/snapshots with x-rperf-snapshot: 1, a header a form
    # or a cross-origin page cannot send without a preflight this app never answers.
    def snapshot_now
      entry = take_snapshot!
      return json(201, { id: entry[:id] }) if entry

      error(409, Rperf.running? ? "nothing was sampled since the last snapshot" : "no profiling session is running in this process")
    rescue StandardError => e # Rperf.snapshot's refusals (aggregate: false) as the page's message
      error(409, "cannot take a snapshot: #{e.message}")
    end

    # rack-mini-profiler's badge stays off the Viewer's pages, as off its own (inject_js).
    def no_mini_profiler_badge
      return unless defined?(::Rack::MiniProfiler) && ::Rack::MiniProfiler.respond_to?(:current)

      current = ::Rack::MiniProfiler.current
      current.inject_js = false if current.respond_to?(:inject_js=)
    end

    # Under @auto_mutex. The first snapshot within FIRST_AUTO_SNAPSHOT seconds, so a page opened
    # soon after start has one to show.
    def start_auto_snapshot_thread(every)
      @auto_every = every
      @auto_pid = Process.pid
      @auto_snapshot = Thread.new do
        Thread.current.name = "rperf-viewer-snapshots"
        wait = [every, FIRST_AUTO_SNAPSHOT].min
        loop do
          sleep wait
          wait = every
          break warn("rperf viewer: auto_snapshot stopped: #{AUTO_SNAPSHOT_NEEDS_AGGREGATE}") if Rperf.running? && !Rperf.aggregating?

          take_snapshot!
        rescue StandardError => e
          warn "rperf viewer: snapshot failed: #{e.class}: #{e.message}"
        end
      end
    end

    # A forked child inherits @auto_every but not the thread.
    def restart_auto_snapshot = @auto_mutex.synchronize { start_auto_snapshot_thread(@auto_every) if @auto_every && @auto_pid != Process.pid }

    # GET <path>/snapshots/<id>, its timeline sent apart, or a file of it (SourcePayload).
    def snapshot(id, part, query)
      entry = @mutex.synchronize { @snapshots.find { |s| s[:id] == id } }
      return part ? error(404, "no snapshot #{id}") : text(404, "Snapshot not found") unless entry # rperf 0.11's answer

      return source(entry, query) if part == "source"

      body, timeline = @mutex.synchronize { @payloads[id] } || build_payload(entry)
      return error(422, entry[:error]) unless body
      return json(200, body) unless part
      return error(404, "snapshot #{id} has no timeline sent apart") unless timeline

      respond(200, "application/gzip", timeline)
    end

    # The page keeps the files it read (sourceText): each is read once a page.
    def source(entry, query)
      data = entry[:data] || loaded(entry)
      data ? json(200, SourcePayload.build(data, query)) : error(422, entry[:error])
    rescue SourcePayload::Refused => e
      error(404, e.message)
    rescue TypeError, Rperf::Error => e # a Hash the model refuses
      error(422, "cannot show the profile: #{e.message}")
    rescue *UNSERVABLE => e
      error(422, "cannot be shown (#{Viewer.first_line(e)})")
    end

    # A file's profile, kept while it is the one asked for last; requests that ask for it while
    # it loads wait for that load. A file that cannot be read stays in the list, marked with
    # its error; the others work.
    def loaded(entry)
      @load_mutex.synchronize do
        @loaded = { entry[:id] => Rperf.load(entry[:path]) } unless @loaded.key?(entry[:id])
        @loaded[entry[:id]]
      rescue Rperf::Error, SystemCallError, JSON::ParserError, ArgumentError, TypeError => e
        @mutex.synchronize { entry[:error] = "#{File.basename(entry[:path])}: #{e.message}" }
        nil
      end
    end

    # An entry that cannot be sent as JSON (a meta with NaN) is listed as unreadable, with why.
    def list_body
      entries = snapshot_list.map do |e|
        JSON.generate(e)
      rescue *UNSERVABLE => err
        JSON.generate(e.merge(meta: nil, summary: nil, error: "#{e[:file] || "snapshot #{e[:id]}"}: cannot be shown (#{Viewer.unservable(e) || err.message})"))
      end
      "[#{entries.join(',')}]"
    end

    # [JSON body, timeline bytes or nil], the few opened last kept; nil when it cannot be shown.
    def build_payload(entry)
      return nil if entry[:error]

      data = entry[:data] || loaded(entry)
      return nil unless data

      body, timeline = Viewer.split_timeline(Viewer.snapshot_body(list_entry(entry), data, **@payload_limits))
      built = [JSON.generate(body), timeline]
      @mutex.synchronize do
        @payloads.delete(@payloads.keys.first) while @payloads.size >= PAYLOAD_CACHE_SIZE
        @payloads[entry[:id]] = built
      end
    rescue *UNSERVABLE => e
      name = entry[:path] ? File.basename(entry[:path]) : "snapshot #{entry[:id]}"
      @mutex.synchronize { entry[:error] ||= "#{name}: cannot be shown (#{Viewer.first_line(e)})" }
      nil
    end

    # rperf 0.11's list entry, then ours: an in-memory snapshot's total weight (the page skips
    # empty ones), and why a file cannot be shown.
    def list_entry(s)
      data = s[:data]
      entry = { id: s[:id], taken_at: s[:taken_at].utc.iso8601(3), file: s[:path] && Payload.utf8(File.basename(s[:path])),
                mode: data ? data[:mode] : (s[:meta].is_a?(Hash) ? s[:meta][:mode] : nil), duration_ns: data && data[:duration_ns],
                sampling_count: data && data[:sampling_count], meta: s[:meta], summary: s[:summary] }
      entry[:total_weight_ns] = s[:total_weight_ns] if data
      entry[:error] = s[:error] if s[:error]
      entry
    end

    # The oldest empty snapshot goes first (add_snapshot keeps one), then the oldest.
    def evict_in_memory
      while @snapshots.count { |s| s[:data] } > @max_snapshots
        index = @snapshots.index { |s| s[:data] && self.class.empty_profile?(s[:data]) } || @snapshots.index { |s| s[:data] }
        @payloads.delete(@snapshots.delete_at(index)[:id])
      end
    end

    # nil for a time that is missing or not ISO 8601.
    def meta_time(meta, *keys)
      Time.iso8601(meta.dig(*keys).to_s) if meta.is_a?(Hash)
    rescue ArgumentError, TypeError
      nil
    end

    def asset(name)
      respond(200, ASSET_TYPES.fetch(name), Viewer.asset_bytes(name))
    rescue Error => e # the page model not built: the page says it cannot load it, and why
      text(500, e.message)
    end

    # A checkout without the page model says how to build it.
    def self.asset_bytes(name)
      File.binread(File.join(ASSET_DIR, name))
    rescue Errno::ENOENT
      raise Error, "the viewer's #{name} is missing from #{ASSET_DIR}: build it with script/bootstrap wasm" if name == PAGE_MODEL

      raise
    end

    def respond(status, type, body, extra = {}) = [status, SECURITY_HEADERS.merge("content-type" => type, **extra), [body]]

    # A body already JSON (a String), or a value to generate.
    def json(status, body) = respond(status, "application/json; charset=utf-8", body.is_a?(String) ? body : JSON.generate(body))

    def error(status, message) = json(status, { error: message })

    def text(status, body, extra = {}) = respond(status, "text/plain; charset=utf-8", body, extra)

    def not_found = text(404, "Not Found")

    # The page, its assets named from the mount point (SCRIPT_NAME and path): a mount without a
    # trailing slash (Rails' `mount ..., at: "/rperf"`) still finds them and the snapshots.
    def page(env)
      base = CGI.escapeHTML("#{env['SCRIPT_NAME']}#{@path}/assets/")
      html = File.read(File.join(ASSET_DIR, "index.html")).gsub(/(src|href)="assets\//) { %(#{$1}="#{base}) }
      respond(200, ASSET_TYPES.fetch("index.html"), html)
    end
  end
end
