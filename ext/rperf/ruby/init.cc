// Init_rperf: defines Rperf::Native and its parts. Each binding file is the Ruby face of one
// layer: session_binding (sampler), profile_binding (model), encode_binding and load_binding (I/O),
// call_tree_binding (the call-tree and method views), label_set_match_binding (the Viewer's label
// and tag filters), capture_binding (running git for the meta).
#include <ruby/ruby.h>

#include "profile/vm_state.hh"
#include "ruby/values.hh"

namespace rperf {
void init_session_binding(VALUE native);
void init_profile_binding(VALUE native);
void init_encode_binding(VALUE native);
void init_load_binding(VALUE native);
void init_call_tree_binding(VALUE native);
void init_label_set_match_binding(VALUE native);
void init_capture_binding(VALUE native);
void init_process_binding(VALUE native);
}  // namespace rperf

using namespace rperf;

extern "C" __attribute__((visibility("default"))) void Init_rperf() {
  VALUE mRperf = rb_define_module("Rperf");
  VALUE native = rb_define_module_under(mRperf, "Native");
  // VM states as the model names them: state => [label key, label value, frame label].
  VALUE states = rb_hash_new();
  for (int i = 1; i < kVmStateCount; i++) {
    const VmStateNames& n = vm_state_names(static_cast<VmState>(i));
    rb_hash_aset(states, INT2FIX(i), rb_ary_freeze(rb_ary_new_from_args(3, sym(n.label_key), rb_str_freeze(rb_str_new_cstr(n.label_value)),
                                                                         rb_str_freeze(rb_str_new_cstr(n.frame_label)))));
  }
  rb_define_const(native, "VM_STATES", rb_hash_freeze(states));
  init_session_binding(native);
  init_profile_binding(native);
  init_encode_binding(native);
  init_load_binding(native);
  init_call_tree_binding(native);
  init_label_set_match_binding(native);
  init_capture_binding(native);
  init_process_binding(native);
}
