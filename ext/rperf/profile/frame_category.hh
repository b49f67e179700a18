// What a frame is, by its label and file: the program's own code, a gem's, Ruby's standard
// library, a C function, a VM state's frame, or none of these. One rule for every consumer:
// the Firefox export's categories (io/firefox.cc) and the Viewer's colours (Native.frame_categories).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace rperf {

enum class FrameCategory : uint8_t { kApp, kGem, kStdlib, kNative, kGc, kGvl, kOther, kCount };

// "app", "gem", "stdlib", "native", "gc", "gvl", "other".
const char* frame_category_name(FrameCategory c);

// GC/GVL: a VM state's frame ("[GC marking]", "[GVL wait]"). Native: a C method
// ("<C method>", or "<cfunc>" in files of other tools). Other: no file (the frames rperf adds:
// "[truncated]", "(no Ruby frames)") or rperf's own "<rperf>". Stdlib: "<internal:...>" (core
// methods written in Ruby) or a file under .../lib/ruby/<version>/. Gem: a file in a gem
// directory (gem_name is not empty). Else App.
FrameCategory frame_category(std::string_view label, std::string_view path);

// The gem a file belongs to: the directory after a "/gems/" that starts with a letter
// ("rack-3.1.8" -> "rack", a bundler git checkout "rails-2b4c7a9e" -> "rails"); empty when the
// file is in no gem.
std::string gem_name(std::string_view path);

}  // namespace rperf
