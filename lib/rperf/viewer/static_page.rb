# frozen_string_literal: true

require "base64"
require "cgi/escape"
require "digest"
require "json"
require "time"

module Rperf
  class Viewer
    # The viewer page with everything inline (Viewer.static_html). Its Content-Security-Policy
    # lets only these exact scripts run (by their SHA-256), so nothing in the profile data can;
    # 'wasm-unsafe-eval' lets them compile the page model it carries (and allows no eval).
    module StaticPage
      STYLE_TAG = %r{<link rel="stylesheet" href="assets/([^"]+)">}

      def self.html(data, title, limits)
        scripts = []
        page = File.read(File.join(ASSET_DIR, "index.html")).gsub(SCRIPT_TAG) do
          code = asset_text($1)
          raise Error, "#{$1} contains </script: cannot be inlined" if code.match?(%r{</script}i)

          scripts << code
          "<script>#{code}</script>"
        end
        hashes = scripts.map { |code| "'sha256-#{Digest::SHA256.base64digest(code)}'" }
        policy = "default-src 'none'; script-src #{hashes.join(' ')} 'wasm-unsafe-eval'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
        page = page.sub(STYLE_TAG) { "<style>#{asset_text($1)}</style>" }
                   .sub(%r{<title>[^<]*</title>}) { "<title>#{CGI.escapeHTML(title)}</title>" }
                   .sub('<meta charset="utf-8">') { %(<meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy" content="#{policy}">) }
        # The data, the page model and a big timeline (read when first needed: the HTML parser
        # reads a tenth of the bytes before the first view), before the scripts that read them.
        json, timeline = embedded_json(data, title, limits)
        elements = %(<script id="rperf-data" type="application/json">#{json}</script>\n)
        elements << %(<script id="rperf-page-model" type="application/wasm+base64">#{Base64.strict_encode64(Viewer.asset_bytes(PAGE_MODEL))}</script>\n)
        elements << %(<script id="rperf-timeline-1" type="application/gzip+base64">#{Base64.strict_encode64(timeline)}</script>\n) if timeline
        page.sub(/<script>/) { "#{elements}<script>" }
      end

      def self.asset_text(name) = Viewer.asset_bytes(name).force_encoding(Encoding::UTF_8)

      def self.embedded_json(data, title, limits)
        meta = Viewer.meta_of(data)
        entry = { id: 1, taken_at: meta[:created_at] || Time.now.utc.iso8601(3), file: title, mode: data[:mode], duration_ns: data[:duration_ns],
                  sampling_count: data[:sampling_count], meta: meta, summary: Viewer.summary_of(data), total_weight_ns: nil }
        body, timeline = Viewer.split_timeline(Viewer.snapshot_body(entry, data, **limits))
        entry[:total_weight_ns] = body[:total_weight_ns] # the model's
        # Inside <script>: no "<" at all (\u003c): "</script" would close the element and
        # "<!--<script" hide the real "</script>" (issue 30). JavaScript's line separators too.
        json = JSON.generate(list: [entry], snapshots: { "1" => body }).gsub("<", "\\u003c").gsub("\u2028", "\\u2028").gsub("\u2029", "\\u2029")
        [json, timeline]
      rescue *UNSERVABLE, Payload::Unavailable => e
        raise Error, "cannot put the profile in a page: #{Viewer.first_line(e)}"
      end
    end
  end
end
