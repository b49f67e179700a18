// The top control frame of a thread, read through Ruby 3.3/3.4's execution-context layout
// (vm_core.h, method.h, internal/imemo.h: identical in 3.3.8 and 3.4.5), for one case
// rb_profile_frames gets wrong in a signal handler: YJIT pushes a Ruby frame without writing
// its pc (the callee's code writes it only before a call that needs it), and
// rb_profile_frames skips a Ruby frame whose pc reads 0 (a stale value left in that slot by
// a C frame). A leaf method running only JIT code would vanish from the sample.
// Everything here is loads from the thread's own frames: async-signal-safe.
// Session::start checks the layout against rb_profile_frames (layout_matches) and uses the
// signal path only when they agree.
#pragma once
#include <ruby/ruby.h>

namespace rperf {
namespace vm {

struct ControlFrame {  // rb_control_frame_t
  const VALUE* pc;
  VALUE* sp;
  const void* iseq;
  VALUE self;
  const VALUE* ep;
  const void* block_code;
  void* jit_return;  // set when YJIT code pushed the frame
};
struct ExecutionContext {  // rb_execution_context_t, its first fields
  VALUE* vm_stack;
  size_t vm_stack_size;
  ControlFrame* cfp;
};
struct Thread {  // rb_thread_t, its first fields
  void* lt_node[2];
  VALUE self;
  void* ractor;
  void* vm;
  void* nt;
  ExecutionContext* ec;
};

constexpr VALUE kFrameFlagCFrame = 0x0080;  // VM_FRAME_FLAG_CFRAME, in ep[0]
constexpr VALUE kEnvFlagLocal = 0x0002;     // VM_ENV_FLAG_LOCAL
constexpr unsigned kImemoSvar = 2, kImemoMent = 6;
constexpr unsigned kMethodIseq = 0, kMethodCfunc = 1;

inline unsigned imemo_type(VALUE v) { return static_cast<unsigned>((RBASIC(v)->flags >> RUBY_FL_USHIFT) & 0x0f); }

// check_method_entry: the method entry an env's ME_CREF slot (ep[-2]) holds, or 0.
inline VALUE check_method_entry(VALUE v, bool can_be_svar) {
  if (RB_SPECIAL_CONST_P(v) || RB_BUILTIN_TYPE(v) != RUBY_T_IMEMO) return 0;
  switch (imemo_type(v)) {
    case kImemoMent:
      return v;
    case kImemoSvar:  // struct vm_svar { flags; cref_or_me; ... }
      return can_be_svar ? check_method_entry(reinterpret_cast<const VALUE*>(v)[1], false) : 0;
    default:
      return 0;
  }
}

// rb_vm_frame_method_entry: a block's frame finds its method through the outer envs.
inline VALUE frame_method_entry(const ControlFrame* cfp) {
  const VALUE* ep = cfp->ep;
  while (!(ep[0] & kEnvFlagLocal)) {
    if (VALUE me = check_method_entry(ep[-2], false)) return me;
    ep = reinterpret_cast<const VALUE*>(ep[-1] & ~static_cast<VALUE>(3));  // VM_ENV_PREV_EP
  }
  return check_method_entry(ep[-2], true);
}

// cme->def->type: rb_callable_method_entry_t { flags, defined_class, def, ... } and the
// definition's first word starts with a 4-bit type.
inline unsigned method_type(VALUE me) {
  const unsigned* def = reinterpret_cast<const unsigned* const*>(me)[2];
  return *def & 0x0f;
}

inline bool is_ruby_frame(const ControlFrame* cfp) { return !(cfp->ep[0] & kFrameFlagCFrame); }

// What rb_profile_frames records for this frame (0: none), as its thread_profile_frames does;
// `any_pc` also takes a Ruby frame whose pc reads 0.
inline VALUE frame_value(const ControlFrame* cfp, bool any_pc) {
  if (is_ruby_frame(cfp)) {
    if (cfp->pc == nullptr && !any_pc) return 0;
    VALUE me = frame_method_entry(cfp);
    return me && method_type(me) == kMethodIseq ? me : reinterpret_cast<VALUE>(cfp->iseq);
  }
  VALUE me = frame_method_entry(cfp);
  return me && method_type(me) == kMethodCfunc ? me : 0;
}

// The frame rb_profile_frames will skip at the top of `th`'s stack (a YJIT-pushed Ruby frame
// whose pc reads 0), or 0 when it reports the top frame itself.
inline VALUE skipped_top_frame(const void* thread) {
  const ExecutionContext* ec = static_cast<const Thread*>(thread)->ec;
  if (ec == nullptr || ec->cfp == nullptr || ec->vm_stack == nullptr) return 0;
  const ControlFrame* cfp = ec->cfp;
  // The last slot holds the thread's dummy frame; the top must be a real one below it.
  const ControlFrame* end = reinterpret_cast<const ControlFrame*>(ec->vm_stack + ec->vm_stack_size) - 1;
  if (cfp >= end || cfp->pc != nullptr || cfp->jit_return == nullptr || !is_ruby_frame(cfp)) return 0;
  return frame_value(cfp, true);
}

// Whether this layout reads the calling thread's stack as rb_profile_frames does (GVL held).
inline bool layout_matches(const void* thread) {
  const ExecutionContext* ec = static_cast<const Thread*>(thread)->ec;
  if (ec == nullptr || ec->cfp == nullptr) return false;
  constexpr int kFrames = 16;
  VALUE expected[kFrames];
  int n = rb_profile_frames(0, kFrames, expected, nullptr);
  const ControlFrame* end = reinterpret_cast<const ControlFrame*>(ec->vm_stack + ec->vm_stack_size) - 1;
  int i = 0;
  for (const ControlFrame* cfp = ec->cfp; i < n && cfp < end; cfp++) {
    VALUE v = frame_value(cfp, false);
    if (v == 0) continue;
    if (v != expected[i]) return false;
    i++;
  }
  return n >= 2 && i == n;
}

}  // namespace vm
}  // namespace rperf
