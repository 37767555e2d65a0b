// Tensor: a logical dtype plus an authoritative representation
// (spec/core-tensor-representation).
//
// A Tensor is normally one subtensor (carrier, offset, layout); a tensor of
// compound dtype may instead be a validated set of planes, one single-subtensor
// Tensor per field. Tensors are shared by reference (std::shared_ptr) because
// exports, autograd and the Python binding rely on their identity.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "strideweave/carrier/carrier.h"
#include "strideweave/dtype/dtype.h"
#include "strideweave/layout/layout.h"

namespace strideweave {

namespace autograd {
class Node;
}  // namespace autograd

// A window of one carrier: the layout's indices, shifted by offset, are slots.
struct Subtensor {
  std::shared_ptr<Carrier> carrier;
  int64_t offset;
  Layout layout;
};

// One position of Tensor::index: an integer, or a slice of an integral mode.
// Bounds are Python's: negative ones count from the end, and any int64 is
// clamped to the mode (a binding clamps larger integers to int64 first).
struct Slice {
  std::optional<int64_t> start;
  std::optional<int64_t> stop;
  int64_t step = 1;
};
using IndexItem = std::variant<int64_t, Slice>;

class Tensor : public std::enable_shared_from_this<Tensor> {
 public:
  // A single-subtensor tensor over `carrier`. Throws ValueError for a negative
  // offset or a window (offset + cosize) beyond the carrier's slots, and
  // RuntimeError naming the carrier when it is released.
  static std::shared_ptr<Tensor> make(std::shared_ptr<Carrier> carrier, Layout layout,
                                      int64_t offset = 0);

  // A multi-subtensor tensor of compound `dtype`, one plane per field. Throws
  // TypeError when dtype is not compound, ValueError naming the plane for a
  // wrong plane count, a plane dtype differing from its field's, a plane
  // shape differing from plane 0's, or a plane that is itself multi-subtensor.
  static std::shared_ptr<Tensor> from_planes(DType dtype,
                                             std::vector<std::shared_ptr<Tensor>> planes);

  const DType& dtype() const noexcept { return dtype_; }
  bool is_multi_subtensor() const noexcept { return !planes_.empty(); }

  // The shape of the layout (of every plane).
  const IntTuple& shape() const noexcept;

  // The planes of a multi-subtensor tensor; empty otherwise.
  const std::vector<std::shared_ptr<Tensor>>& planes() const noexcept { return planes_; }

  // The one subtensor. Throws NotImplementedError naming `operation` for a
  // multi-subtensor tensor, before touching any carrier.
  const Subtensor& subtensor(const char* operation) const;

  // The logical values in flat (colexicographic) leaf order; records of the
  // plane values for a multi-subtensor tensor. One consistent snapshot per
  // carrier: each plane is read under its carrier's mutex, through the span
  // walker (each stored slot of a broadcast read once). Never changes a
  // version. Throws RuntimeError naming a released carrier.
  std::vector<Value> values() const;

  // Copies the elements, in native encoding, into `out`: the element of flat
  // index i to item out_layout(i). One consistent snapshot under the
  // carrier's mutex: a host-addressable carrier is copied by the strided
  // kernel, any other carrier is read run by run (each stored slot of a
  // broadcast once) and then arranged by the kernel. Never changes a version.
  // Throws NotImplementedError for a multi-subtensor tensor, TypeError when
  // the dtype has no item size, ValueError when out_layout's leaf extents
  // differ from the layout's or `out` is smaller than out_layout's cosize
  // items, RuntimeError naming a released carrier.
  void read_into(std::span<std::byte> out, const Layout& out_layout) const;
  // Writes values() in the same order into `dst`, densely encoded as encode()
  // does: size * itemsize bytes, a multi-subtensor tensor's records packed
  // field by field. Each carrier is read through Carrier::gather (one lock
  // per subtensor); no version changes. Throws TypeError naming the dtype when
  // it is abstract and RuntimeError naming a released carrier.
  void read_encoded(std::byte* dst) const;

  // The extent of the first top-level mode (the size of a tuple-shaped one):
  // what len() reports. Throws TypeError for a rank-0 tensor (an empty tuple
  // shape).
  int64_t length() const;

  // Whether the carrier is publicly mutable now (every plane's, if planar).
  bool is_mutable() const;

  // A view with `layout` at `offset`, validated like make().
  std::shared_ptr<Tensor> relayout(Layout layout, int64_t offset) const;

  // Indexes top-level modes in order (spec/core-tensor-representation). An
  // integer, or a slice bound, that is negative counts from the end of its
  // mode; a slice selects what Python's range(*slice.indices(extent)) does.
  // Throws IndexError for an integer out of range or too many items, and
  // ValueError for a partial slice of a tuple mode or a step that is zero or
  // negative (a view cannot reverse a mode: strides are non-negative).
  std::shared_ptr<Tensor> index(const std::vector<IndexItem>& items) const;

  // A broadcast view whose modes are this tensor's, extent-one modes widened
  // with stride 0, followed by further target modes with stride 0. Throws
  // ValueError naming both shapes when a mode is neither equal nor extent one.
  std::shared_ptr<Tensor> broadcast_to(const IntTuple& shape) const;

  // A new Tensor over the same representation (same carrier, offset and
  // layout, or the same planes) without autograd state: not requiring grad,
  // no producing node, no grad.
  std::shared_ptr<Tensor> detach() const;

  // Autograd state (spec/autograd). Internally synchronized: every member
  // below may be called from any thread on a shared Tensor. None of them
  // touches a carrier.

  // Whether gradients flow to this tensor: set on a leaf, or a result with a
  // producing node.
  bool requires_grad() const noexcept { return requires_grad_.load(std::memory_order_acquire); }

  // Sets requires_grad of a leaf. Throws NotImplementedError for a
  // multi-subtensor tensor, RuntimeError for a non-leaf (a tensor with a
  // producing node) and, for true, RuntimeError naming the dtype unless it is
  // Float32. A failed call changes nothing.
  void set_requires_grad(bool requires_grad) const;

  // No producing node (autograd_ctx is None).
  bool is_leaf() const;

  // The producing node, or nullptr.
  std::shared_ptr<autograd::Node> grad_fn() const;

  // Makes `node` this result's producing node; the tensor then requires grad.
  // For an operation's fresh result, before anything else sees it.
  void set_grad_fn(std::shared_ptr<autograd::Node> node) const;

  // Where a gradient of this tensor goes: the producing node; else, for a
  // leaf that requires grad, its accumulator node: the one `make_accumulator`
  // makes for this tensor on first use, reused while it lives; else nullptr.
  // Operations ask through autograd::gradient_edge (ops/accumulate_grad.h),
  // which makes an AccumulateGrad.
  using AccumulatorMaker = std::shared_ptr<autograd::Node> (*)(std::shared_ptr<const Tensor> leaf);
  std::shared_ptr<autograd::Node> gradient_edge(AccumulatorMaker make_accumulator) const;

  // The accumulated gradient of a leaf, or nullptr.
  std::shared_ptr<const Tensor> grad() const;

  // Replaces the gradient.
  void set_grad(std::shared_ptr<const Tensor> grad) const;

  // Replaces the gradient with `desired` when it still is `expected` (the
  // same object, or both null); returns whether it did.
  bool replace_grad(const std::shared_ptr<const Tensor>& expected,
                    std::shared_ptr<const Tensor> desired) const;

  // The constructor of the factories above, public only so that
  // std::make_shared can call it (one allocation for the tensor and its
  // count); nothing outside the class can name its key.
  class Key {
    friend class Tensor;
    explicit Key() = default;
  };
  Tensor(Key, DType dtype, std::optional<Subtensor> single,
         std::vector<std::shared_ptr<Tensor>> planes);

 private:
  DType dtype_;
  std::optional<Subtensor> single_;
  std::vector<std::shared_ptr<Tensor>> planes_;

  // Autograd state, guarded by autograd_mu_ (requires_grad_ is also read
  // without it). No shared_ptr is destroyed while the mutex is held: the last
  // reference to a tensor may destroy a carrier whose destructor takes locks.
  mutable std::mutex autograd_mu_;
  mutable std::atomic<bool> requires_grad_{false};
  mutable std::shared_ptr<autograd::Node> grad_fn_;
  mutable std::shared_ptr<const Tensor> grad_;
  mutable std::weak_ptr<autograd::Node> accumulator_;
};

// The layout `layout` broadcast to `shape` under Tensor::broadcast_to's rules.
Layout broadcast_layout(const Layout& layout, const IntTuple& shape);

}  // namespace strideweave
