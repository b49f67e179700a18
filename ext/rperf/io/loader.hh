// Reading profiles back: an rperf JSON document (gzip-compressed or not) into a Profile, and
// the meta/summary head of a file without its body. Ruby-independent.
#pragma once
#include <memory>
#include <string>

#include "profile/profile.hh"

namespace rperf {

bool is_gzip(const char* data, size_t len);
// A file's bytes as the readers parse them: gzip data is inflated into `inflated` and
// `data`/`len` point there. False, with `error` ("corrupt gzip data (truncated)"), when it fails.
bool inflate_if_gzip(const char*& data, size_t& len, std::string& inflated, std::string& error);

enum class FileKind { kJson, kPprof, kUnknown };
// What a profile file holds, from its first bytes (decompressed when gzipped): JSON starts
// with '{' after any blanks (line breaks too), a pprof protobuf with field 1 (sample_type,
// length-delimited): '\n'.
FileKind sniff_file_kind(const char* data, size_t len);

// Parses `data` (JSON, or gzip of JSON) into `out`. On failure returns false and sets `error`
// to what is wrong and where ("invalid JSON (expected ',' at byte 17)", "malformed profile: ...").
bool load_json_profile(const char* data, size_t len, Profile& out, std::string& error);

// Parses `data` (a pprof protobuf, or gzip of one) into `out`: the samples, labels, frames
// (line and start line), allocation sample types and interval rperf's writer puts there. On
// failure returns false and sets `error` ("not a readable pprof profile (truncated)").
bool load_pprof_profile(const char* data, size_t len, Profile& out, std::string& error);

// What a reader may spend building a profile from `input_len` bytes (its estimate of its
// memory): 64 MiB plus 8 bytes per byte of input, at most 8 GiB.
size_t load_budget(size_t input_len);

// Any JSON document as a JsonValue (integers beyond int64 become reals).
bool parse_json(const char* data, size_t len, JsonValue& out, std::string& error);

// The "meta" and "summary" objects at the head of an rperf JSON document (only the first bytes
// of a file are needed). Returns false when the head is not an rperf document.
bool read_json_head(const char* data, size_t len, JsonValue& meta, JsonValue& summary);

}  // namespace rperf
