// Frames and stacks, interned. A frame is (method handle, line): the handle is an opaque
// 64-bit value (a Ruby VALUE in the extension; any number in tests). A stack is a node of a
// prefix tree (parent node, frame), so a stack id is its leaf node and shared prefixes are
// stored once. Memory grows with the number of distinct stacks, never with run time.
#pragma once
#include <cstdint>
#include <vector>

#include "util/interner.hh"

namespace rperf {

struct FrameKey {
  uint64_t method;
  int32_t line;
  bool operator==(const FrameKey& o) const { return method == o.method && line == o.line; }
};
struct FrameKeyHash {
  size_t operator()(const FrameKey& k) const {
    return mix64(k.method ^ (static_cast<uint64_t>(static_cast<uint32_t>(k.line)) << 48));
  }
};

struct StackNode {
  uint32_t parent;  // kRoot for outermost frames
  uint32_t frame;
  bool operator==(const StackNode& o) const { return parent == o.parent && frame == o.frame; }
};
struct StackNodeHash {
  size_t operator()(const StackNode& n) const {
    return mix64((static_cast<uint64_t>(n.parent) << 32) | n.frame);
  }
};

class StackStore {
 public:
  static constexpr uint32_t kRoot = 0xffffffffu;

  uint32_t intern_frame(uint64_t method, int32_t line) { return frames_.intern({method, line}); }
  uint32_t push(uint32_t parent, uint32_t frame) { return nodes_.intern({parent, frame}); }

  const FrameKey& frame(uint32_t id) const { return frames_[id]; }
  const StackNode& node(uint32_t id) const { return nodes_[id]; }
  size_t frame_count() const { return frames_.size(); }
  size_t node_count() const { return nodes_.size(); }
  const std::vector<FrameKey>& frames() const { return frames_.keys(); }

  // Appends the frame ids of `stack` leaf-first to `out`.
  void frames_of(uint32_t stack, std::vector<uint32_t>& out) const {
    for (uint32_t n = stack; n != kRoot; n = nodes_[n].parent) out.push_back(nodes_[n].frame);
  }

  void clear() {
    frames_.clear();
    nodes_.clear();
  }

 private:
  Interner<FrameKey, FrameKeyHash> frames_;
  Interner<StackNode, StackNodeHash> nodes_;
};

// Per-thread memory of the previous stack, so that a new sample interns only the frames that
// changed (typically the few leaf-most ones). Buffers are sized once for the maximum depth.
class StackCache {
 public:
  explicit StackCache(int max_depth = 0) { resize(max_depth); }
  void resize(int max_depth) {
    methods_.assign(max_depth + 1, 0);
    lines_.assign(max_depth + 1, 0);
    nodes_.assign(max_depth + 1, 0);
    depth_ = 0;
  }
  // The stack interned last (kRoot before the first one).
  uint32_t last() const { return depth_ == 0 ? StackStore::kRoot : nodes_[depth_ - 1]; }

  // `methods`/`lines` hold `n` frames leaf-first (as rb_profile_frames returns them).
  // Returns the stack id (leaf node); an empty stack returns StackStore::kRoot.
  uint32_t intern(StackStore& store, const uint64_t* methods, const int* lines, int n) {
    int i = 0;
    // Walk root-first while the stack matches the cached one.
    while (i < n && i < depth_ && methods_[i] == methods[n - 1 - i] && lines_[i] == lines[n - 1 - i]) i++;
    uint32_t node = i == 0 ? StackStore::kRoot : nodes_[i - 1];
    for (; i < n; i++) {
      uint64_t m = methods[n - 1 - i];
      int line = lines[n - 1 - i];
      node = store.push(node, store.intern_frame(m, line));
      methods_[i] = m;
      lines_[i] = line;
      nodes_[i] = node;
    }
    depth_ = n;
    return node;
  }

 private:
  std::vector<uint64_t> methods_;
  std::vector<int> lines_;
  std::vector<uint32_t> nodes_;
  int depth_ = 0;
};

}  // namespace rperf
