# Per-endpoint accounting under Puma (issue 23): Rperf.start(mode: :wall, defer: true), the
# middleware on a 4-thread Puma, /hash (CPU only) and /slow (sleep), N requests 4 at a time from
# curl, then /stats (outside the middleware) takes Rperf.snapshot(clear: true) on a pool thread
# and prints the in-app weight (ms) with and without the endpoint label, by VM state.
#   source script/env.sh; WARM=1 N=200 ruby -Ilib examples/puma_label_accounting.rb
# WARM=1 loads Digest's SHA-256 before profiling (its first require reads files: blocked time).
require "rperf"
require "rperf/rack"
require "digest"
require "json"
require "puma"
require "puma/server"
require "puma/log_writer"

class HashApp
  def call(env)
    case env["PATH_INFO"]
    when "/hash" then 2000.times { Digest::SHA256.hexdigest("abc") }
    when "/slow" then sleep 0.05
    end
    [200, {}, ["ok"]]
  end
end

def tally(data)
  res = Hash.new(0)
  data[:aggregated_samples].each do |frames, w, _th, ls|
    next unless frames.any? { |_, label| label == "HashApp#call" }
    labels = data[:label_sets][ls]
    key = labels.key?(:endpoint) ? :labelled : :unlabelled
    res[key] += w
    res[:"#{key}_#{labels[:'%GVL'] || 'run'}"] += w
    res[:digest_blocked] += w if labels[:"%GVL"] == "blocked" && frames.any? { |_, l| l.to_s.include?("Digest") }
  end
  res.transform_values { |v| (v / 1e6).round(1) }
end

Digest::SHA256.hexdigest("warm") if ENV["WARM"]
Rperf.start(mode: :wall, defer: true)
inner = Rperf::RackMiddleware.new(HashApp.new)
$result = nil
app = lambda do |env|
  if env["PATH_INFO"] == "/stats"
    $result = tally(Rperf.snapshot(clear: true))
    [200, {}, [$result.to_json]]
  else
    inner.call(env)
  end
end
log = Puma::LogWriter.new(StringIO.new, StringIO.new)
server = Puma::Server.new(app, nil, min_threads: 1, max_threads: 4, log_writer: log)
server.add_tcp_listener("127.0.0.1", 0)
port = server.connected_ports.first
server.run
n = Integer(ENV.fetch("N", "80"))
urls = Array.new(n) { |i| "http://127.0.0.1:#{port}/#{i.even? ? 'hash' : 'slow'}" }
IO.popen(["xargs", "-P4", "-n1", "curl", "-s", "-o", "/dev/null"], "w") { |io| io.puts urls }
out = `curl -s http://127.0.0.1:#{port}/stats`
puts out
server.stop(true)
Rperf.stop
