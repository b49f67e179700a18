// Rperf::Native.capture(argv): runs a program and returns its standard output, for the meta
// object's git commands (util/child_output: posix_spawn, read to the end). The output is read
// without the GVL; Ruby's interrupts are looked at in between.
#include <ruby/ruby.h>
#include <ruby/thread.h>

#include "util/child_output.hh"

namespace rperf {

namespace {

void* read_without_gvl(void* arg) {
  read_child(static_cast<ChildOutput*>(arg));
  return nullptr;
}

// Unblocking function: asks the reader to return so that Ruby can look at its interrupts.
void wake_reader(void* arg) { wake_child(static_cast<ChildOutput*>(arg)); }

// Without an eventfd the unblocking function stops the program itself.
void kill_on_interrupt(void* arg) { kill_child(static_cast<ChildOutput*>(arg)); }

VALUE check_interrupts(VALUE) {
  rb_thread_check_ints();
  return Qnil;
}

VALUE capture_result(VALUE arg) {
  auto* c = reinterpret_cast<ChildOutput*>(arg);
  VALUE out = rb_external_str_new(c->buf ? c->buf : "", static_cast<long>(c->len));
  return rb_ary_new_from_args(2, out, child_succeeded(*c) ? Qtrue : Qfalse);
}

// Native.capture(argv) -> [stdout String, success?], or nil when the program cannot be started.
// Standard error goes to /dev/null. Only an interrupt that raises (Ctrl-C, Thread#raise,
// Timeout) stops the program; any other (a SIGCHLD of another child, a trap that returns) lets
// it run on.
VALUE native_capture(VALUE, VALUE argv) {
  Check_Type(argv, T_ARRAY);
  long n = RARRAY_LEN(argv);
  if (n < 1) rb_raise(rb_eArgError, "rperf: capture needs a program");
  VALUE strings = rb_ary_new_capa(n);
  for (long i = 0; i < n; i++) {
    VALUE s = rb_ary_entry(argv, i);
    StringValue(s);  // a TypeError for anything but a String, before its bytes are read
    s = rb_str_new_frozen(s);
    StringValueCStr(s);
    rb_ary_push(strings, s);
  }
  VALUE args_holder;
  char** args = ALLOCV_N(char*, args_holder, n + 1);
  for (long i = 0; i < n; i++) args[i] = RSTRING_PTR(RARRAY_AREF(strings, i));
  args[n] = nullptr;
  ChildOutput c;
  ChildStart started = start_child(args, c);
  ALLOCV_END(args_holder);
  RB_GC_GUARD(strings);
  if (started == ChildStart::kNoPipe) rb_sys_fail("pipe2");
  if (started == ChildStart::kNotStarted) return Qnil;
  int interrupt = 0;
  while (!c.done) {
    // The _2 variant raises no pending interrupt on return: Ruby's interrupts are looked at
    // below, where the program can be stopped and reaped first.
    rb_thread_call_without_gvl2(read_without_gvl, &c, c.wake < 0 ? kill_on_interrupt : wake_reader, &c);
    if (c.done) break;
    rb_protect(check_interrupts, Qnil, &interrupt);
    if (interrupt) {  // the program's output is not wanted: stop it, then read to the end and reap
      kill_child(&c);
      c.ignore_wake = true;
      read_child(&c);
    }
  }
  if (interrupt) {
    release_child(c);
    rb_jump_tag(interrupt);  // what stopped the program goes on
  }
  if (c.out_of_memory) {
    release_child(c);
    rb_memerror();
  }
  int state = 0;
  VALUE result = rb_protect(capture_result, reinterpret_cast<VALUE>(&c), &state);
  release_child(c);
  if (state) rb_jump_tag(state);
  return result;
}

}  // namespace

void init_capture_binding(VALUE native) { rb_define_singleton_method(native, "capture", RUBY_METHOD_FUNC(native_capture), 1); }

}  // namespace rperf
