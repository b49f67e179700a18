// Rperf::Native::Profile: a Ruby object owning one C++ Profile, and the Hash view of it that
// Rperf.stop, snapshot and load return (built once). The Hash remembers the native profile it
// came from, so saving it again uses the native data directly; any other Hash is converted.
#pragma once
#include <memory>
#include <ruby/ruby.h>

#include <new>
#include <string>
#include <vector>

#include "profile/idle_wait.hh"
#include "profile/profile.hh"

namespace rperf {

struct ProfileHolder {
  Profile profile;
  // The profile's idle samples (idle_samples_of), made when first asked; dropped when its
  // samples change (fold_lines!, merge_child!).
  std::shared_ptr<const IdleSamples> idle;
  // The view (built by to_h) and the pieces it shares, kept to recognise it unchanged.
  VALUE view = Qnil;
  VALUE view_samples = Qnil;
  VALUE view_raw = Qnil;
  VALUE view_label_sets = Qnil;
  VALUE view_allocations = Qnil;
  VALUE view_raw_allocations = Qnil;
  std::vector<VALUE> frame_values;      // [path, label(, line)] per frame, shared by the samples
  std::vector<VALUE> stack_values;      // frozen Array of frame values per stack; samples get slices
  std::vector<VALUE> label_set_values;  // frozen Hash per label set
  std::vector<VALUE> class_name_values;  // frozen String per class name
  std::vector<Sample> shown_samples;    // aggregated_samples as shown
  std::vector<AllocationSample> shown_allocations;  // allocation_samples as shown
  // Scratch of a Hash conversion (owned here so an exception cannot leak it).
  std::vector<uint32_t> ids;
  JsonValue header;  // the header's keys as JSON, while they become Ruby values
  std::string error;
};

VALUE profile_class();
VALUE wrap_profile(ProfileHolder* holder);  // takes ownership
// A new, empty holder; NoMemoryError (never std::bad_alloc) when memory is exhausted.
inline ProfileHolder* new_profile_holder() {
  ProfileHolder* h = nullptr;
  try {
    h = new ProfileHolder();  // its tables allocate in their constructors too
  } catch (const std::bad_alloc&) {
  }
  if (!h) rb_memerror();
  return h;
}
ProfileHolder* holder_of(VALUE obj);        // raises TypeError for another object
// The holder's IdleSamples, made on first use (may throw std::bad_alloc: call it inside
// without_cxx_exceptions).
std::shared_ptr<const IdleSamples> idle_samples_of(ProfileHolder* h);
void init_profile_binding(VALUE native);

// Runs C++ work that may throw std::bad_alloc; a failure becomes NoMemoryError once the work's
// frames are gone (an exception must not unwind through Ruby's C frames, nor a longjmp skip ours).
template <typename Work>
void without_cxx_exceptions(Work&& work) {
  bool failed = false;
  try {
    work();
  } catch (const std::bad_alloc&) {
    failed = true;
  }
  if (failed) rb_memerror();
}

}  // namespace rperf
