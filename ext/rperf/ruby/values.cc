#include "ruby/values.hh"

#include <ruby/encoding.h>

namespace rperf {

VALUE sym(const char* name) { return ID2SYM(rb_intern(name)); }

VALUE utf8_string(const std::string& s) { return rb_enc_interned_str(s.data(), static_cast<long>(s.size()), rb_utf8_encoding()); }

namespace {
VALUE key_symbol(const std::string& key) { return ID2SYM(rb_intern3(key.data(), static_cast<long>(key.size()), rb_utf8_encoding())); }

std::string text_of(VALUE v) {  // String or Symbol
  if (SYMBOL_P(v)) v = rb_sym2str(v);
  return std::string(RSTRING_PTR(v), static_cast<size_t>(RSTRING_LEN(v)));
}

struct HashToJson {
  JsonValue* out;
  int depth;
  bool ok;
};

int hash_member(VALUE key, VALUE value, VALUE arg) {
  auto* ctx = reinterpret_cast<HashToJson*>(arg);
  if (!SYMBOL_P(key) && !RB_TYPE_P(key, T_STRING)) {
    ctx->ok = false;
    return ST_STOP;
  }
  JsonValue v;
  if (!ruby_to_json(value, v, ctx->depth + 1)) {
    ctx->ok = false;
    return ST_STOP;
  }
  ctx->out->set(text_of(key), std::move(v));
  return ST_CONTINUE;
}

VALUE protected_to_s(VALUE v) { return rb_obj_as_string(v); }
}  // namespace

bool int64_of(VALUE v, int64_t& out) {
  if (FIXNUM_P(v)) {
    out = FIX2LONG(v);
    return true;
  }
  if (!RB_TYPE_P(v, T_BIGNUM)) return false;
  int overflow = rb_integer_pack(v, &out, 1, sizeof(out), 0, INTEGER_PACK_LSWORD_FIRST | INTEGER_PACK_NATIVE_BYTE_ORDER | INTEGER_PACK_2COMP);
  return overflow != 2 && overflow != -2;  // +-2: does not fit
}

VALUE json_to_ruby(const JsonValue& v) {
  switch (v.kind()) {
    case JsonValue::Kind::kNull: return Qnil;
    case JsonValue::Kind::kBool: return v.as_bool() ? Qtrue : Qfalse;
    case JsonValue::Kind::kInt: return LL2NUM(v.as_int());
    case JsonValue::Kind::kDouble: return DBL2NUM(v.as_double());
    case JsonValue::Kind::kString: return utf8_string(v.as_string());
    case JsonValue::Kind::kSymbol: return key_symbol(v.as_string());
    case JsonValue::Kind::kArray: {
      VALUE a = rb_ary_new_capa(static_cast<long>(v.items().size()));
      for (const JsonValue& item : v.items()) rb_ary_push(a, json_to_ruby(item));
      return a;
    }
    case JsonValue::Kind::kObject: {
      VALUE h = rb_hash_new();
      for (const JsonValue::Member& m : v.members()) rb_hash_aset(h, key_symbol(m.first), json_to_ruby(m.second));
      return h;
    }
  }
  return Qnil;
}

bool ruby_to_json(VALUE v, JsonValue& out, int depth) {
  if (depth > 64) return false;
  if (NIL_P(v)) out = JsonValue();
  else if (v == Qtrue || v == Qfalse) out = JsonValue::boolean(v == Qtrue);
  else if (RB_INTEGER_TYPE_P(v)) {
    int64_t i;
    if (!int64_of(v, i)) return false;
    out = JsonValue::integer(i);
  } else if (RB_FLOAT_TYPE_P(v)) out = JsonValue::real(RFLOAT_VALUE(v));
  else if (RB_TYPE_P(v, T_STRING)) out = JsonValue::string(text_of(v));
  else if (SYMBOL_P(v)) out = JsonValue::symbol(text_of(v));
  else if (RB_TYPE_P(v, T_ARRAY)) {
    out = JsonValue::array();
    for (long i = 0; i < RARRAY_LEN(v); i++) {
      JsonValue item;
      if (!ruby_to_json(RARRAY_AREF(v, i), item, depth + 1)) return false;
      out.push(std::move(item));
    }
  } else if (RB_TYPE_P(v, T_HASH)) {
    out = JsonValue::object();
    HashToJson ctx{&out, depth, true};
    rb_hash_foreach(v, hash_member, reinterpret_cast<VALUE>(&ctx));
    return ctx.ok;
  } else {
    return false;
  }
  return true;
}

bool ruby_to_label(VALUE key, VALUE value, Label& out) {
  if (!SYMBOL_P(key) && !RB_TYPE_P(key, T_STRING)) return false;
  out.key = text_of(key);
  out.integer = false;
  int64_t i;
  if (RB_TYPE_P(value, T_STRING) || SYMBOL_P(value)) {
    out.value = text_of(value);
  } else if (RB_INTEGER_TYPE_P(value) && int64_of(value, i)) {
    out.value = std::to_string(i);
    out.integer = true;
  } else {
    int state = 0;
    VALUE s = rb_protect(protected_to_s, value, &state);
    if (state) {
      rb_set_errinfo(Qnil);
      out.value = "?";
    } else {
      out.value = text_of(s);
    }
  }
  return true;
}

namespace {
struct LabelMerge {
  LabelSet* set;
  bool ok;
  bool out_of_memory;
};

int merge_label_or_throw(VALUE key, VALUE value, LabelMerge* m) {
  Label l;
  if (!ruby_to_label(key, NIL_P(value) ? key : value, l)) {
    m->ok = false;
    return ST_STOP;
  }
  LabelSet& set = *m->set;
  for (size_t i = 0; i < set.size(); i++) {
    if (set[i].key != l.key) continue;
    if (NIL_P(value)) set.erase(set.begin() + static_cast<long>(i));
    else set[i] = l;
    return ST_CONTINUE;
  }
  if (!NIL_P(value)) set.push_back(l);
  return ST_CONTINUE;
}

// A callback of rb_hash_foreach: a C++ exception must not unwind through Ruby's C frames.
int merge_label(VALUE key, VALUE value, VALUE arg) {
  auto* m = reinterpret_cast<LabelMerge*>(arg);
  try {
    return merge_label_or_throw(key, value, m);
  } catch (const std::bad_alloc&) {
    m->out_of_memory = true;
    return ST_STOP;
  }
}
}  // namespace

bool merge_ruby_labels(VALUE hash, LabelSet& set) {
  LabelMerge m{&set, true, false};
  rb_hash_foreach(hash, merge_label, reinterpret_cast<VALUE>(&m));
  if (m.out_of_memory) throw std::bad_alloc();  // callers run this under without_cxx_exceptions
  return m.ok;
}

VALUE label_set_to_ruby(const LabelSet& set) {
  VALUE h = rb_hash_new();
  for (const Label& l : set) {
    rb_hash_aset(h, key_symbol(l.key), l.integer ? rb_cstr2inum(l.value.c_str(), 10) : utf8_string(l.value));
  }
  return rb_hash_freeze(h);
}

}  // namespace rperf
