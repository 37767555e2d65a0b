#include "strideweave/tensor/tensor.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "strideweave/autograd/node.h"
#include "strideweave/carrier/slot_access.h"
#include "strideweave/layout/runs.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

void validate_window(const Carrier& carrier, const Layout& layout, int64_t offset) {
  if (offset < 0) throw ValueError("Tensor offset " + std::to_string(offset) + " is negative");
  if (carrier.is_released()) {
    throw RuntimeError("Tensor over " + carrier.label() + ", which is released");
  }
  if (layout.size() == 0) return;
  const int64_t slots = carrier.slots();
  if (offset > slots || layout.cosize() > slots - offset) {
    throw ValueError("Tensor window [" + std::to_string(offset) + ", " + std::to_string(offset) +
                     " + " + std::to_string(layout.cosize()) + ") exceeds the " +
                     std::to_string(slots) + " slots of " + carrier.label());
  }
}

// `mode` broadcast to `target` (one top-level mode of each).
Layout broadcast_mode(const Layout& mode, const IntTuple& target, const Layout& whole,
                      const IntTuple& whole_target) {
  if (mode.shape() == target) return mode;
  if (mode.shape().is_leaf() && mode.shape().value() == 1) {
    const std::vector<int64_t> zeros(target.leaf_count(), 0);
    return Layout(target, unflatten(zeros, target));
  }
  throw ValueError("cannot broadcast shape " + whole.shape().to_string() + " to " +
                   whole_target.to_string() + ": mode " + mode.shape().to_string() +
                   " is neither equal to " + target.to_string() + " nor of extent 1");
}

// The elements a slice with a positive step selects in a mode of `extent`,
// as Python's slice.indices computes them: the first position and the count.
struct SliceSpan {
  int64_t start;
  int64_t count;
};

// A slice bound clamped into [0, extent]; negative bounds count from the end.
int64_t clamp_bound(std::optional<int64_t> bound, int64_t fallback, int64_t extent) {
  if (!bound) return fallback;
  const int64_t from_start = *bound < 0 ? std::max<int64_t>(0, *bound + extent) : *bound;
  return std::min(from_start, extent);
}

SliceSpan slice_span(const Slice& slice, int64_t extent) {
  if (slice.step == 0) throw ValueError("slice step cannot be zero");
  if (slice.step < 0) {
    throw ValueError("slice step " + std::to_string(slice.step) +
                     " is negative: a view cannot reverse a mode, because strides are "
                     "non-negative");
  }
  const int64_t start = clamp_bound(slice.start, 0, extent);
  const int64_t stop = clamp_bound(slice.stop, extent, extent);
  // stop - start - 1 < extent, so neither the difference nor the quotient overflows.
  return {start, stop > start ? (stop - start - 1) / slice.step + 1 : 0};
}

}  // namespace

Tensor::Tensor(Key /*key*/, DType dtype, std::optional<Subtensor> single,
               std::vector<std::shared_ptr<Tensor>> planes)
    : dtype_(std::move(dtype)), single_(std::move(single)), planes_(std::move(planes)) {}

std::shared_ptr<Tensor> Tensor::make(std::shared_ptr<Carrier> carrier, Layout layout,
                                     int64_t offset) {
  validate_window(*carrier, layout, offset);
  DType dtype = carrier->dtype();
  return std::make_shared<Tensor>(Key{}, std::move(dtype),
                                  Subtensor{std::move(carrier), offset, std::move(layout)},
                                  std::vector<std::shared_ptr<Tensor>>{});
}

std::shared_ptr<Tensor> Tensor::from_planes(DType dtype,
                                            std::vector<std::shared_ptr<Tensor>> planes) {
  if (!dtype.is_compound()) {
    throw TypeError("from_planes needs a compound dtype, not " + dtype.name());
  }
  const std::vector<Field>& fields = dtype.fields();
  if (planes.size() != fields.size()) {
    throw ValueError("from_planes: " + dtype.name() + " has " + std::to_string(fields.size()) +
                     " fields but " + std::to_string(planes.size()) + " planes were given");
  }
  for (std::size_t i = 0; i < planes.size(); ++i) {
    const std::string which = "plane " + std::to_string(i) + " ('" + fields[i].name + "')";
    if (planes[i]->is_multi_subtensor()) {
      throw ValueError("from_planes: " + which + " is itself multi-subtensor");
    }
    if (planes[i]->dtype() != fields[i].dtype) {
      throw ValueError("from_planes: " + which + " has dtype " + planes[i]->dtype().name() +
                       ", field dtype is " + fields[i].dtype.name());
    }
    if (planes[i]->shape() != planes[0]->shape()) {
      throw ValueError("from_planes: " + which + " has shape " + planes[i]->shape().to_string() +
                       ", plane 0 has " + planes[0]->shape().to_string());
    }
  }
  return std::make_shared<Tensor>(Key{}, std::move(dtype), std::nullopt, std::move(planes));
}

const IntTuple& Tensor::shape() const noexcept {
  return single_ ? single_->layout.shape() : planes_.front()->shape();
}

const Subtensor& Tensor::subtensor(const char* operation) const {
  if (!single_) {
    throw NotImplementedError(std::string(operation) +
                              " is not implemented for a multi-subtensor tensor of dtype " +
                              dtype_.name());
  }
  return *single_;
}

std::vector<Value> Tensor::values() const {
  if (single_) {
    const Subtensor& s = *single_;
    std::vector<Value> out(static_cast<std::size_t>(s.layout.size()));
    s.carrier->read_locked("read", [&](const SlotReader& reader) {
      reader.gather_values(s.layout, s.offset, out.data(), compact_col_major(s.layout.shape()));
    });
    return out;
  }
  std::vector<std::vector<Value>> per_plane;
  for (const auto& plane : planes_) per_plane.push_back(plane->values());
  std::vector<Value> out(per_plane.front().size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    Record r;
    for (const auto& plane : per_plane) {
      const Value& v = plane[i];
      if (const bool* b = std::get_if<bool>(&v)) {
        r.fields.emplace_back(*b);
      } else if (const int64_t* n = std::get_if<int64_t>(&v)) {
        r.fields.emplace_back(*n);
      } else {
        r.fields.emplace_back(std::get<double>(v));
      }
    }
    out[i] = std::move(r);
  }
  return out;
}

void Tensor::read_into(std::span<std::byte> out, const Layout& out_layout) const {
  const Subtensor& s = subtensor("read_into");
  const std::optional<std::size_t> itemsize = dtype_.itemsize();
  if (!itemsize) {
    throw TypeError("read_into: dtype " + dtype_.name() + " has no native encoding");
  }
  if (static_cast<std::size_t>(out_layout.cosize()) > out.size() / *itemsize) {
    throw ValueError("read_into: the output holds " + std::to_string(out.size() / *itemsize) +
                     " items; layout " + out_layout.to_string() + " needs " +
                     std::to_string(out_layout.cosize()));
  }
  s.carrier->read_locked("read", [&](const SlotReader& reader) {
    reader.gather(s.layout, s.offset, out.data(), out_layout);
  });
}

void Tensor::read_encoded(std::byte* dst) const {
  if (single_) {
    single_->carrier->gather(single_->layout, single_->offset, dst);
    return;
  }
  const std::optional<std::size_t> record_size = dtype_.itemsize();
  const auto count = static_cast<std::size_t>(shape_size(shape()));
  std::size_t field_offset = 0;
  for (const auto& plane : planes_) {
    const std::size_t field_size = *plane->dtype().itemsize();
    std::vector<std::byte> field(count * field_size);
    plane->read_encoded(field.data());
    for (std::size_t i = 0; i < count; ++i) {
      std::memcpy(dst + i * *record_size + field_offset, field.data() + i * field_size, field_size);
    }
    field_offset += field_size;
  }
}

int64_t Tensor::length() const {
  const IntTuple& s = shape();
  if (s.is_leaf()) return s.value();
  if (s.rank() == 0) throw TypeError("len() of a 0-d tensor");
  return shape_size(s[0]);
}

bool Tensor::is_mutable() const {
  if (single_) return single_->carrier->is_mutable();
  for (const auto& plane : planes_) {
    if (!plane->is_mutable()) return false;
  }
  return true;
}

std::shared_ptr<Tensor> Tensor::relayout(Layout layout, int64_t offset) const {
  const Subtensor& s = subtensor("relayout");
  return make(s.carrier, std::move(layout), offset);
}

std::shared_ptr<Tensor> Tensor::index(const std::vector<IndexItem>& items) const {
  const Subtensor& s = subtensor("indexing");
  const Layout& layout = s.layout;
  if (items.size() > layout.rank()) {
    throw IndexError("too many indices: " + std::to_string(items.size()) +
                     " for a tensor of rank " + std::to_string(layout.rank()));
  }
  int64_t offset = s.offset;
  std::vector<Layout> kept;
  for (std::size_t m = 0; m < layout.rank(); ++m) {
    const Layout mode = layout.mode(m);
    if (m >= items.size()) {
      kept.push_back(mode);
      continue;
    }
    if (const int64_t* i = std::get_if<int64_t>(&items[m])) {
      const int64_t extent = mode.size();
      const int64_t position = *i < 0 ? *i + extent : *i;
      if (position < 0 || position >= extent) {
        throw IndexError("index " + std::to_string(*i) + " is out of range for mode " +
                         std::to_string(m) + " of extent " + std::to_string(extent));
      }
      offset += mode(position);
      continue;
    }
    const Slice& slice = std::get<Slice>(items[m]);
    const int64_t extent = mode.size();
    const SliceSpan span = slice_span(slice, extent);
    if (span.start == 0 && span.count == extent) {
      kept.push_back(mode);
      continue;
    }
    if (!mode.shape().is_leaf()) {
      throw ValueError("mode " + std::to_string(m) + " has the tuple shape " +
                       mode.shape().to_string() + "; only the full slice ':' applies to it");
    }
    // A slice of at most one element keeps the mode's stride; otherwise the
    // step is below the extent, so stride * step <= the mode's cosize.
    const int64_t stride = mode.stride().value();
    if (span.count > 0) offset += span.start * stride;
    kept.push_back(Layout(span.count, span.count > 1 ? stride * slice.step : stride));
  }
  Layout result = kept.size() == 1 && layout.shape().is_leaf() ? kept.front() : make_layout(kept);
  return make(s.carrier, std::move(result), offset);
}

std::shared_ptr<Tensor> Tensor::broadcast_to(const IntTuple& shape) const {
  const Subtensor& s = subtensor("broadcast_to");
  return make(s.carrier, broadcast_layout(s.layout, shape), s.offset);
}

Layout broadcast_layout(const Layout& layout, const IntTuple& shape) {
  const auto fail = [&](const std::string& why) {
    return ValueError("cannot broadcast shape " + layout.shape().to_string() + " to " +
                      shape.to_string() + ": " + why);
  };
  for (int64_t extent : shape.leaves()) {
    if (extent < 0) throw fail("extent " + std::to_string(extent) + " is negative");
  }
  if (layout.shape().is_leaf() || shape.is_leaf()) {
    if (!shape.is_leaf() && shape.rank() >= 1) {
      // An integral layout broadcasts as the first mode of a tuple target.
      return broadcast_layout(make_layout({layout}), shape);
    }
    if (!layout.shape().is_leaf()) throw fail("the target has fewer modes");
    return broadcast_mode(layout, shape, layout, shape);
  }
  if (shape.rank() < layout.rank()) throw fail("the target has fewer modes");
  std::vector<Layout> modes;
  for (std::size_t m = 0; m < shape.rank(); ++m) {
    if (m < layout.rank()) {
      modes.push_back(broadcast_mode(layout.mode(m), shape[m], layout, shape));
    } else {
      const std::vector<int64_t> zeros(shape[m].leaf_count(), 0);
      modes.push_back(Layout(shape[m], unflatten(zeros, shape[m])));
    }
  }
  return make_layout(modes);
}

std::shared_ptr<Tensor> Tensor::detach() const {
  return std::make_shared<Tensor>(Key{}, dtype_, single_, planes_);
}

void Tensor::set_requires_grad(bool requires_grad) const {
  subtensor("requires_grad");
  std::lock_guard lock(autograd_mu_);
  if (grad_fn_) {
    throw RuntimeError(
        "requires_grad can only be set on a leaf tensor; this tensor is the result of '" +
        grad_fn_->name() + "' (use detach() for a leaf over the same storage)");
  }
  if (requires_grad && dtype_ != DType::Float32()) {
    throw RuntimeError("only Float32 tensors can require grad, not dtype " + dtype_.name());
  }
  requires_grad_.store(requires_grad, std::memory_order_release);
}

bool Tensor::is_leaf() const {
  std::lock_guard lock(autograd_mu_);
  return grad_fn_ == nullptr;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  std::lock_guard lock(autograd_mu_);
  return grad_fn_;
}

void Tensor::set_grad_fn(std::shared_ptr<autograd::Node> node) const {
  {
    std::lock_guard lock(autograd_mu_);
    grad_fn_.swap(node);
    requires_grad_.store(true, std::memory_order_release);
  }
}

std::shared_ptr<autograd::Node> Tensor::gradient_edge(AccumulatorMaker make_accumulator) const {
  std::lock_guard lock(autograd_mu_);
  if (grad_fn_) return grad_fn_;
  if (!requires_grad_.load(std::memory_order_relaxed)) return nullptr;
  std::shared_ptr<autograd::Node> accumulator = accumulator_.lock();
  if (!accumulator) {
    accumulator = make_accumulator(shared_from_this());
    accumulator_ = accumulator;
  }
  return accumulator;
}

std::shared_ptr<const Tensor> Tensor::grad() const {
  std::lock_guard lock(autograd_mu_);
  return grad_;
}

void Tensor::set_grad(std::shared_ptr<const Tensor> grad) const {
  std::lock_guard lock(autograd_mu_);
  grad_.swap(grad);
}

bool Tensor::replace_grad(const std::shared_ptr<const Tensor>& expected,
                          std::shared_ptr<const Tensor> desired) const {
  std::lock_guard lock(autograd_mu_);
  if (grad_ != expected) return false;
  grad_.swap(desired);
  return true;
}

}  // namespace strideweave
