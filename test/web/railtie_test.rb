# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# Issue 48.3: `gem "rperf"` in a real Rails app (test/web/fixtures/rails_app.rb: ActionController,
# ActiveRecord on sqlite3, Post/Comment with an N+1) sets itself up through the Railtie: the
# middleware labels requests with their controller and action, Rails' events are counted per
# request (the N+1 as its SQL count), the Viewer is mounted at /rperf for loopback clients only,
# sampling is deferred to requests. Rails is a test-only consumer, installed by
# script/bootstrap consumers into its own gem directory (never a dependency of rperf); the app
# runs in a child process with those gems only.
class RailtieTest < Minitest::Test
  include TempDirTest

  CACHE = ENV.fetch("RPERF_CACHE") { File.join(ENV.fetch("XDG_CACHE_HOME", File.join(Dir.home, ".cache")), "rperf") }
  RAILS_GEMS = File.join(CACHE, "test-gems-rails", RUBY_VERSION)
  APP = File.expand_path("fixtures/rails_app.rb", __dir__)
  POSTS = 5 # the app's

  def run_app(env = {})
    skip "Rails is not installed (script/bootstrap consumers)" unless Dir.exist?(File.join(RAILS_GEMS, "gems")) &&
                                                                  !Dir[File.join(RAILS_GEMS, "gems/railties-*")].empty?
    # The Rails gems only: not the project's bundle.
    child_env = ENV.keys.grep(/\A(BUNDLE|BUNDLER)_/).to_h { |k| [k, nil] }
    child_env.update("GEM_HOME" => RAILS_GEMS, "GEM_PATH" => RAILS_GEMS, "RUBYOPT" => nil, "RUBYLIB" => nil,
                     "RAILS_APP_DIR" => tmp("app"), **env)
    FileUtils.mkdir_p(tmp("app"))
    out, err, status = Open3.capture3(child_env, RUBY, "-I#{ROOT}/lib", APP)
    assert status.success?, "the Rails app failed:\n#{err}"
    JSON.parse(out.lines.last, symbolize_names: true)
  end

  def test_development_mode_labels_controller_actions_counts_sql_and_mounts_the_viewer
    result = run_app
    assert result[:running] && result[:deferred], "a deferred session in development"
    assert_equal %w[Rperf::Viewer Rperf::RackMiddleware], result[:middleware].first(2), "the Viewer outermost, then the labels"
    assert_equal [200, 200, 200], result[:index]
    assert_equal ["post 0: 3", "post 4: 3"], result[:index_body].lines.map(&:strip).values_at(0, -1)
    assert_equal [200, "post 1"], result[:show]

    # The Viewer, at /rperf, answers loopback clients only (Viewer::Access).
    assert_equal 200, result[:page]
    assert_equal 403, result[:refused]
    assert_equal 200, result[:viewer_status]
    snapshot = result[:snapshot]
    endpoints = snapshot[:label_sets].filter_map { |set| set[:endpoint] }.uniq.sort
    assert_equal %w[PostsController#index PostsController#show], endpoints

    # The N+1 is a number: 1 query for the posts and 1 count per post, in each of the 4 index
    # requests; show finds one post.
    rows = snapshot[:work_events].to_h { |row| [row[:labels][:endpoint], row] }
    assert_equal %w[PostsController#index PostsController#show], rows.keys.sort
    index = rows.fetch("PostsController#index")
    assert_equal 4, index[:units]
    sql = index[:events][:"sql.active_record"]
    assert_equal 4 * (1 + POSTS), sql[:count]
    assert_equal 1 + POSTS, sql[:max_per_unit]
    assert_operator sql[:duration_ns], :>, 0
    assert_equal 4, index[:events][:"process_action.action_controller"][:count]
    assert_equal 4, index[:events][:"render_template.action_view"][:count]
    show = rows.fetch("PostsController#show")
    assert_equal 1, show[:units]
    assert_equal 1, show[:events][:"sql.active_record"][:count]
    assert_equal 1, show[:events][:"render_template.action_view"][:count], "render plain: is a text template"

    # The idle rule: the thread that served the requests was never idle; the reaper beside it,
    # sleeping at the top of its loop while a request ran, was (the requests' sleeps would not be).
    serving, *others = result[:thread_totals].sort_by { |_, total, _| -total }
    assert_equal 0, serving[2], "the requests' thread: #{result[:thread_totals]}"
    assert others.any? { |_, total, idle| idle.positive? && idle <= total }, "the reaper's sleep is idle: #{result[:thread_totals]}"
  end

  def test_off_in_production_unless_asked
    result = run_app("RAILS_APP_ENV" => "production")
    refute result[:running], "no session in production"
    refute_includes result[:middleware], "Rperf::RackMiddleware"
    refute_includes result[:middleware], "Rperf::Viewer"
    assert_equal 404, result[:page]
  end
end
