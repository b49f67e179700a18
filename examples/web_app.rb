# frozen_string_literal: true

# A small Rack shop on Puma (127.0.0.1) with Rperf::RackMiddleware and Rperf::Viewer: it serves a
# bounded burst of its own requests under a deferred wall-mode session, keeps one snapshot per
# round (the last one with a timeline), and prints the viewer's URL.
#
#   script/run web                                        # then open the URL; Ctrl-C to stop
#   script/run web --check                                # print the URL and snapshot list, exit
#   bundle exec ruby -Ilib examples/web_app.rb [--check]  # the same, with Ruby and gems set up
require "rperf"
require "rperf/rack"
require "rperf/viewer"
require "json"
require "net/http"
require "puma"
require "puma/server"
require "puma/log_writer"

# Three endpoints of known shape: CPU, sleeping I/O, and a mix with an id in the path.
class Shop
  def call(env)
    case env["PATH_INFO"]
    when "/search" then search(80_000 * (1 + rand(3)))
    when "/checkout" then sleep(0.004)
    when %r{\A/orders/\d+\z} then render_order
    else return [404, { "content-type" => "text/plain" }, ["no such page\n"]]
    end
    [200, { "content-type" => "text/plain" }, ["ok\n"]]
  end

  def search(iterations)
    i = 0
    i += 1 while i < iterations
    i
  end

  def render_order
    search(20_000)
    Array.new(2_000) { |n| { id: n, name: "item #{n}" } }.map { |item| item[:name] }.join(",")
  end
end

def drive(port, requests)
  Net::HTTP.start("127.0.0.1", port) do |http|
    requests.times { |n| http.get(["/search", "/checkout", "/orders/#{n}"][n % 3]) }
  end
end

$stdout.sync = true
viewer = Rperf::Viewer.new(Rperf::RackMiddleware.new(Shop.new))
server = Puma::Server.new(viewer, nil, min_threads: 1, max_threads: 4,
                                       log_writer: Puma::LogWriter.new(StringIO.new, StringIO.new))
server.add_tcp_listener("127.0.0.1", 0)
port = server.connected_ports.first
server.run
begin
  3.times do |round|
    last = round == 2
    Rperf.start(mode: :wall, defer: true, aggregate: !last)
    drive(port, 60)
    viewer.add_snapshot(Rperf.stop)
  end
  url = "http://127.0.0.1:#{port}#{viewer.path}/"
  if ARGV.include?("--check")
    # What a reader of the URL would get: the page, then the snapshot list (last line, JSON).
    page = Net::HTTP.get_response(URI(url))
    puts "rperf viewer: #{url}  (page: #{page.code} #{page['content-type']})"
    list = JSON.parse(Net::HTTP.get(URI("#{url}snapshots")))
    puts JSON.generate(list.map { |s| s.slice("id", "mode", "sampling_count", "total_weight_ns") })
  else
    puts "rperf viewer: #{url}  (Ctrl-C to stop)"
    sleep
  end
rescue Interrupt
  nil
ensure
  server.stop(true)
end
