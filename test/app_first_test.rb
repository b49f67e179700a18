# frozen_string_literal: true

require_relative "test_helper"
require "json"
require "rperf/viewer"

# Issue 48.4, "app code first": the model's "app" transform makes each run of gem and stdlib
# frames one [framework] frame (profile/transform.hh), so an app's frames under a deep
# framework stack (a Rails request's middleware) lead: `rperf report --app-first` and the
# Viewer's "app code first" (the page model's transform, #transforms=[["app"]] in its address).
class AppFirstTest < Minitest::Test
  include RperfTestHelper

  RPERF = File.join(ROOT, "exe/rperf")
  MIDDLEWARE = 40

  # A "gem" (its path has /gems/<name>-<version>/) whose 40 middleware call each other and then
  # the app, whose work calls back into the gem (a query) and burns CPU itself.
  GEM = <<~RUBY
    module FakeRack
      #{MIDDLEWARE}.times { |i| eval("def self.middleware_\#{i}(&app) = middleware_\#{i + 1}(&app)", binding, __FILE__, __LINE__) }
      def self.middleware_#{MIDDLEWARE}(&app) = app.call
      def self.query
        x = 0
        x += 1 while x < 2_000_000
        x
      end
    end
  RUBY
  APP = <<~RUBY
    require_relative "gems/fakerack-1.0/lib/fakerack"
    def work
      x = 0
      x += 1 while x < 3_000_000
      FakeRack.query
    end
    FakeRack.middleware_0 { work }
  RUBY

  def setup
    @dir = Dir.mktmpdir("rperf-app-first")
    FileUtils.mkdir_p(File.join(@dir, "gems/fakerack-1.0/lib"))
    File.write(File.join(@dir, "gems/fakerack-1.0/lib/fakerack.rb"), GEM)
    File.write(File.join(@dir, "app.rb"), APP)
    _, err, status = Open3.capture3(RUBY, RPERF, "record", "-o", "p.json.gz", RUBY, "app.rb", chdir: @dir)
    assert status.success?, err
  end

  def teardown
    super
    FileUtils.rm_rf(@dir)
  end

  def tree(*args)
    out, err, status = Open3.capture3(RUBY, RPERF, "report", "--tree", *args, "p.json.gz", chdir: @dir)
    assert status.success?, err
    out.lines.map(&:chomp)
  end

  def depth_of(lines, name)
    line = lines.find { |l| l.include?(" #{name} ") } or flunk "#{name} is not in the tree:\n#{lines.join("\n")}"
    (line[/%  +\[(\d+)\] /, 1] || (line[/%  ( *)/, 1].size / 2)).to_i # --tree says the depth past 24
  end

  def test_report_app_first_puts_the_apps_frames_under_one_framework_frame
    plain = tree
    assert_operator depth_of(plain, "Object#work"), :>, MIDDLEWARE, "under the gem's middleware"
    assert(plain.any? { |l| l.include?("FakeRack.middleware_7 ") })

    app = tree("--app-first")
    refute(app.any? { |l| l.include?("FakeRack.") }, "no gem frame left:\n#{app.join("\n")}")
    assert_operator depth_of(app, "Object#work"), :<=, 4, "<main>, [framework], work"
    assert_includes app.join("\n"), "[framework] (<gems and stdlib>)"
    # The gem's query under work is a [framework] frame of its own, below work.
    assert_operator app.count { |l| l.include?("[framework]") }, :>=, 2

    total = ->(lines) { lines.first[/([\d.]+) ms in total/, 1].to_f }
    assert_equal total.(plain), total.(app), "the same time, regrouped"
  end

  def test_viewer_transform_app
    native = Rperf::Storage.native(Rperf.load(File.join(@dir, "p.json.gz")))
    transformed = native.transformed([["app"]]).to_h
    labels = transformed[:aggregated_samples].flat_map { |s| s[0].map { |f| f[1] } }.uniq
    assert_includes labels, "[framework]"
    refute(labels.any? { |l| l.start_with?("FakeRack.") }, labels.inspect)
  end
end
