#include "profile/frame_category.hh"

#include <gtest/gtest.h>

namespace rperf {
namespace {

std::string category(const char* label, const char* path) { return frame_category_name(frame_category(label, path)); }

TEST(FrameCategory, ClassifiesByLabelAndFile) {
  EXPECT_EQ(category("Object#main", "/srv/app/main.rb"), "app");
  EXPECT_EQ(category("Object#main", "(eval)"), "app");
  EXPECT_EQ(category("Rack::Builder#call", "/usr/lib/ruby/gems/3.3.0/gems/rack-3.1.8/lib/rack/builder.rb"), "gem");
  EXPECT_EQ(category("X#y", "/home/u/.bundle/ruby/3.3.0/bundler/gems/rails-2b4c7a9e/lib/x.rb"), "gem");
  EXPECT_EQ(category("Set#add", "/opt/ruby/lib/ruby/3.3.0/set.rb"), "stdlib");
  EXPECT_EQ(category("Kernel#tap", "<internal:kernel>"), "stdlib");
  EXPECT_EQ(category("Integer#times", "<C method>"), "native");
  EXPECT_EQ(category("sleep", "<cfunc>"), "native");
  EXPECT_EQ(category("[GC marking]", "<VM>"), "gc");
  EXPECT_EQ(category("[GVL wait]", "<VM>"), "gvl");
  EXPECT_EQ(category("[truncated]", ""), "other");
  EXPECT_EQ(category("[pruned]", "<rperf>"), "other");
}

TEST(FrameCategory, GemNameIsTheDirectoryWithoutItsVersion) {
  EXPECT_EQ(gem_name("/g/gems/3.3.0/gems/rack-3.1.8/lib/rack.rb"), "rack");
  EXPECT_EQ(gem_name("/g/gems/3.3.0/gems/net-http-persistent-4.0.2/lib/x.rb"), "net-http-persistent");
  EXPECT_EQ(gem_name("/b/bundler/gems/rails-2b4c7a9e/lib/x.rb"), "rails");
  EXPECT_EQ(gem_name("/g/gems/3.3.0/x.rb"), "");   // the gem home's version directory is no gem
  EXPECT_EQ(gem_name("/srv/app/gems.rb"), "");
  EXPECT_EQ(gem_name("/srv/gems/"), "");
}

}  // namespace
}  // namespace rperf
