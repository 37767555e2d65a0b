// The autograd node of a differentiable move (spec/interop-movement, "Move
// participates in autograd across the carrier boundary").
//
// A move whose source requires grad, initiated under grad mode, captures the
// reverse route (destination class -> source class) before any forward work
// and, at its successful terminal commit, makes one MoveNode the producing
// node of the published Tensor. The node saves the source class (through the
// source carrier, released by the move: new_like stays valid), the source
// layout and version, the forward destination (whose class stages the
// cotangent) and the captured reverse route.
//
// apply(cotangent), on the thread running backward:
//   1. the cotangent contract (autograd::check_cotangent: a live tensor of the
//      source's shape and dtype under an injective layout), errors naming
//      "move";
//   2. the gradient layout: the source layout when injective, otherwise the
//      canonical layout of its shape;
//   3. staging: the cotangent's values under that layout in fresh storage of
//      the forward destination's exact class (new_like, allocate, one
//      write_range), so the caller's cotangent is never moved or released;
//   4. the reverse move: MoveRequest::initiate of the staged tensor into
//      new_like() of the source, through the captured route, then a wait for
//      its terminal outcome. Its failure is apply's exception; no other
//      carrier is substituted.
// The result is the detached gradient: fresh storage of the source's exact
// class, the gradient layout, offset 0.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "strideweave/autograd/node.h"
#include "strideweave/carrier/carrier.h"
#include "strideweave/layout/layout.h"
#include "strideweave/move/carrier_definition.h"
#include "strideweave/move/request.h"

namespace strideweave {

class MoveNode final : public autograd::Node {
 public:
  MoveNode(std::shared_ptr<autograd::Node> next, std::shared_ptr<Carrier> source,
           Layout source_layout, std::shared_ptr<Carrier> destination, MoveRoute reverse);

  std::vector<std::shared_ptr<const Tensor>> apply(
      const std::shared_ptr<const Tensor>& cotangent) override;

  // Throws RuntimeError once release_saved() dropped the saved carriers.
  void validate() const override;
  void release_saved() override;

  // What backward needs, kept after release_saved() for inspection.
  const ClassDescriptor& source_class() const noexcept { return source_class_; }
  const Layout& source_layout() const noexcept { return source_layout_; }
  uint64_t source_version() const noexcept { return source_version_; }
  // The reverse route: a definition route's id, or a move operation class's name.
  const std::string& route() const noexcept { return route_name_; }

 private:
  struct Saved {
    std::shared_ptr<Carrier> source;
    std::shared_ptr<Carrier> destination;
  };
  Saved saved() const;

  const ClassDescriptor& source_class_;
  const Layout source_layout_;
  const uint64_t source_version_;
  const MoveRoute reverse_;
  const std::string route_name_;
  mutable std::mutex mu_;
  Saved saved_;  // both null once released
};

// The reverse route a differentiable move from `source` to `destination`
// captures: resolve_move_route(destination, source). Throws
// NotImplementedError naming both classes and the reason when none is
// permitted.
MoveRoute capture_reverse_route(const ClassDescriptor& source, const ClassDescriptor& destination);

}  // namespace strideweave
