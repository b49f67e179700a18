#include "ruby/values.hh"

#include <ruby/encoding.h>

#include <algorithm>

#include "io/encoders.hh"

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

namespace {
int push_label_pair(VALUE key, VALUE value, VALUE pairs) {
  rb_ary_push(pairs, key);
  rb_ary_push(pairs, value);
  return ST_CONTINUE;
}

bool plain_label_value(VALUE v) {
  int64_t i;
  return NIL_P(v) || RB_TYPE_P(v, T_STRING) || SYMBOL_P(v) || (RB_INTEGER_TYPE_P(v) && int64_of(v, i));
}
}  // namespace

VALUE label_pairs(VALUE hash) {
  VALUE pairs = rb_ary_new_capa(2 * static_cast<long>(RHASH_SIZE(hash)));
  rb_hash_foreach(hash, push_label_pair, pairs);  // runs no Ruby code: the Hash cannot change
  for (long i = 1; i < RARRAY_LEN(pairs); i += 2) {
    VALUE v = RARRAY_AREF(pairs, i);
    if (plain_label_value(v)) continue;
    // What to_s raises goes on: it may be another thread's Thread#raise or Thread#kill, which
    // lands in whatever the thread runs (rb_protect swallowed them: a killed thread went on
    // running, and a process waiting for it at exit hung). No C++ object is alive here.
    rb_ary_store(pairs, i, rb_obj_as_string(v));
  }
  return pairs;
}

LabelCheck read_label_pairs(VALUE pairs, bool check_keys_utf8, std::vector<LabelEdit>& out, long& bad) {
  const long n = RARRAY_LEN(pairs) / 2;
  out.reserve(out.size() + static_cast<size_t>(n));
  for (long i = 0; i < n; i++) {
    VALUE key = RARRAY_AREF(pairs, 2 * i), value = RARRAY_AREF(pairs, 2 * i + 1);
    bad = i;
    if (!SYMBOL_P(key) && !RB_TYPE_P(key, T_STRING)) return LabelCheck::kBadKey;
    LabelEdit e;
    e.label.key = text_of(key);
    if (check_keys_utf8 && !utf8_valid(e.label.key.data(), e.label.key.size())) return LabelCheck::kInvalidUtf8;
    int64_t integer;
    if (NIL_P(value)) e.remove = true;
    else if (RB_INTEGER_TYPE_P(value) && int64_of(value, integer)) {
      e.label.value = std::to_string(integer);
      e.label.integer = true;
    } else if (RB_TYPE_P(value, T_STRING) || SYMBOL_P(value)) {
      e.label.value = text_of(value);
    } else {
      e.label.value = "?";  // not made by label_pairs
    }
    out.push_back(std::move(e));
  }
  bad = -1;
  return LabelCheck::kOk;
}

void apply_label_edits(const std::vector<LabelEdit>& edits, LabelSet& set) {
  for (const LabelEdit& e : edits) {
    auto same_key = std::find_if(set.begin(), set.end(), [&](const Label& l) { return l.key == e.label.key; });
    if (same_key == set.end()) {
      if (!e.remove) set.push_back(e.label);
    } else if (e.remove) {
      set.erase(same_key);
    } else {
      *same_key = e.label;
    }
  }
}

bool merge_ruby_labels(VALUE hash, LabelSet& set) {
  VALUE pairs = label_pairs(hash);
  std::vector<LabelEdit> edits;
  long bad;
  bool ok = read_label_pairs(pairs, false, edits, bad) == LabelCheck::kOk;
  if (ok) apply_label_edits(edits, set);
  RB_GC_GUARD(pairs);
  return ok;
}

VALUE label_set_to_ruby(const LabelSet& set) {
  VALUE h = rb_hash_new();
  for (const Label& l : set) {
    rb_hash_aset(h, key_symbol(l.key), l.integer ? rb_cstr2inum(l.value.c_str(), 10) : utf8_string(l.value));
  }
  return rb_hash_freeze(h);
}

}  // namespace rperf
