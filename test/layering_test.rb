# frozen_string_literal: true

require_relative "test_helper"

# The C++ layers of ext/rperf (docs/architecture.md) and the layers each may include: the
# dependencies point one way, so the model (profile/) knows nothing of the views computed from it
# (views/), and only the sampler and the bindings see Ruby's headers.
class LayeringTest < Minitest::Test
  include RubyIndependentTest
  CORE = File.join(ROOT, "ext/rperf")
  MAY_INCLUDE = {
    "util" => %w[util],
    "profile" => %w[profile util],
    "views" => %w[views profile util],
    "sampler" => %w[sampler profile util],
    "io" => %w[io views profile util],
    "page" => %w[page io views profile util],
    "ruby" => %w[ruby sampler io views profile util]
  }.freeze
  RUBY_HEADERS = %w[sampler ruby].freeze

  def test_every_layer_includes_only_the_layers_below_it
    layers = Dir.children(CORE).select { |d| File.directory?(File.join(CORE, d)) }
    assert_equal MAY_INCLUDE.keys.sort, layers.sort, "a layer of ext/rperf this table does not place"
    assert_empty wrong_includes(CORE), "includes against ext/rperf's layering (docs/architecture.md)"
  end

  # The check reads what it claims to: a model file including a view is caught.
  def test_a_model_file_including_a_view_is_reported
    Dir.mktmpdir("rperf-layers") do |dir|
      FileUtils.cp_r(Dir[File.join(CORE, "*")], dir)
      File.write(File.join(dir, "profile/profile.hh"), "#include \"views/call_tree.hh\"\n", mode: "a")
      File.write(File.join(dir, "views/summary.cc"), "#include <ruby/ruby.h>\n", mode: "a")
      assert_equal ["profile/profile.hh includes views/call_tree.hh", "views/summary.cc includes Ruby's <ruby/ruby.h>"],
                   wrong_includes(dir)
    end
  end

  private

  def wrong_includes(core)
    MAY_INCLUDE.flat_map do |layer, allowed|
      Dir[File.join(core, layer, "*.{cc,hh}")].sort.flat_map do |file|
        name = "#{layer}/#{File.basename(file)}"
        File.read(file).scan(/^#include ([<"])([^">]+)[">]/).filter_map do |bracket, header|
          if bracket == '"'
            "#{name} includes #{header}" unless allowed.include?(header[%r{\A(\w+)/}, 1])
          elsif header.start_with?("ruby/", "ruby.h") && !RUBY_HEADERS.include?(layer)
            "#{name} includes Ruby's <#{header}>"
          end
        end
      end
    end
  end
end
