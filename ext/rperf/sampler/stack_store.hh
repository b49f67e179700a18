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

// The producer's memory of a thread's previous stack (root-first), so that a new sample
// carries only the frames that changed: typically the few leaf-most ones. Lines are compared
// only when the session captures them. Buffers are sized once for the maximum depth.
class StackDiff {
 public:
  explicit StackDiff(int max_depth = 0) { resize(max_depth); }
  void resize(int max_depth) {
    methods_.assign(max_depth + 1, 0);
    lines_.assign(max_depth + 1, 0);
    depth_ = 0;
  }
  void forget() { depth_ = 0; }

  // `methods`/`lines` (lines may be null) hold `n` frames leaf-first. Returns how many
  // root-side frames equal the previous stack's, and remembers the new stack.
  int update(const uint64_t* methods, const int32_t* lines, int n) {
    int i = 0;
    int common = n < depth_ ? n : depth_;
    if (lines) {
      while (i < common && methods_[i] == methods[n - 1 - i] && lines_[i] == lines[n - 1 - i]) i++;
    } else {
      while (i < common && methods_[i] == methods[n - 1 - i]) i++;
    }
    const int prefix = i;
    for (; i < n; i++) {
      methods_[i] = methods[n - 1 - i];
      if (lines) lines_[i] = lines[n - 1 - i];
    }
    depth_ = n;
    return prefix;
  }

 private:
  std::vector<uint64_t> methods_;
  std::vector<int32_t> lines_;
  int depth_ = 0;
};

// The worker's side of the same thread: the stack-store node at each depth of its current
// stack, so a frame run (prefix kept, new frames after it) becomes a stack id by interning
// only the new frames.
class StackPath {
 public:
  // The current stack (kRoot for an empty one).
  uint32_t current() const { return depth_ == 0 ? StackStore::kRoot : nodes_[depth_ - 1]; }

  // frame(k) -> (method, line) of the k-th new frame, root-first.
  template <typename FrameAt>
  uint32_t apply(StackStore& store, uint32_t prefix, uint32_t run, FrameAt&& frame) {
    if (prefix > depth_) prefix = depth_;  // cannot happen when producer and worker agree
    if (nodes_.size() < prefix + run) nodes_.resize(prefix + run);
    uint32_t node = prefix == 0 ? StackStore::kRoot : nodes_[prefix - 1];
    for (uint32_t k = 0; k < run; k++) {
      auto f = frame(k);
      node = store.push(node, store.intern_frame(f.first, f.second));
      nodes_[prefix + k] = node;
    }
    depth_ = prefix + run;
    return node;
  }

 private:
  std::vector<uint32_t> nodes_;
  uint32_t depth_ = 0;
};

}  // namespace rperf
