#include "strideweave/move/move_node.h"

#include <cstddef>
#include <utility>

#include "strideweave/backward/cotangent.h"
#include "strideweave/util/checked_math.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::string route_name(const MoveRoute& route) {
  return route.route != nullptr ? route.route->route_id : route.operation->name();
}

// The cotangent's values under `layout` in fresh storage of `like`'s exact
// class: what the reverse move moves (it releases its source, so never the
// caller's cotangent).
std::shared_ptr<const Tensor> stage(const Tensor& cotangent, const Layout& layout,
                                    const Carrier& like) {
  const std::size_t itemsize = *cotangent.dtype().itemsize();
  const int64_t cosize = layout.size() == 0 ? 0 : layout.cosize();
  std::vector<std::byte> items(static_cast<std::size_t>(
      checked_mul(cosize, static_cast<int64_t>(itemsize), "the staged gradient's size")));
  cotangent.read_into(items, layout);
  std::shared_ptr<Carrier> staged = like.checked_new_like("move (backward)");
  staged->allocate(cosize);
  staged->write_range(0, items);
  return Tensor::make(std::move(staged), layout, 0);
}

}  // namespace

MoveRoute capture_reverse_route(const ClassDescriptor& source, const ClassDescriptor& destination) {
  try {
    return resolve_move_route(destination, source);
  } catch (const NotImplementedError& unavailable) {
    throw NotImplementedError(
        "move: the Tensor requires grad, so its backward must move "
        "gradients from " +
        destination.name() + " back to " + source.name() +
        ", and no route is permitted for that pair (" + unavailable.what() + ")");
  }
}

MoveNode::MoveNode(std::shared_ptr<autograd::Node> next, std::shared_ptr<Carrier> source,
                   Layout source_layout, std::shared_ptr<Carrier> destination, MoveRoute reverse)
    : Node("move", {std::move(next)}),
      source_class_(source->carrier_class()),
      source_layout_(std::move(source_layout)),
      source_version_(source->version()),
      reverse_(reverse),
      route_name_(route_name(reverse)),
      saved_{std::move(source), std::move(destination)} {}

MoveNode::Saved MoveNode::saved() const {
  std::lock_guard lock(mu_);
  return saved_;
}

void MoveNode::validate() const {
  if (saved().source == nullptr) {
    throw RuntimeError(
        "move: trying to backward through the graph a second time; its saved carriers were "
        "freed by the first backward (use retain_graph=True to backward through it again)");
  }
}

void MoveNode::release_saved() {
  Saved dropped;
  std::lock_guard lock(mu_);
  std::swap(dropped, saved_);
}

std::vector<std::shared_ptr<const Tensor>> MoveNode::apply(
    const std::shared_ptr<const Tensor>& cotangent) {
  const Saved carriers = saved();
  if (carriers.source == nullptr) validate();
  autograd::check_cotangent(*cotangent, source_layout_.shape(), carriers.source->dtype(), "move");
  const Layout layout =
      source_layout_.is_injective() ? source_layout_ : compact_col_major(source_layout_.shape());
  std::shared_ptr<const Tensor> staged = stage(*cotangent, layout, *carriers.destination);
  const std::shared_ptr<MoveRequest> reverse = MoveRequest::initiate(
      std::move(staged), carriers.source->checked_new_like("move (backward)"), &reverse_);
  return {reverse->completion().wait()};
}

}  // namespace strideweave
