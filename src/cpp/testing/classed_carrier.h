// A built-in carrier standing for an instance of another exact class, as a
// Python subclass's instance does: for C++ tests of class-keyed dispatch
// (the legacy registry, definitions and their routes).
#pragma once

#include <utility>

#include "strideweave/carrier/class_descriptor.h"

namespace strideweave::testing_util {

template <class Base>
class Classed : public Base {
 public:
  template <class... Args>
  explicit Classed(const ClassDescriptor& exact, Args&&... args)
      : Base(std::forward<Args>(args)...), exact_(exact) {}
  const ClassDescriptor& carrier_class() const override { return exact_; }

 private:
  const ClassDescriptor& exact_;
};

}  // namespace strideweave::testing_util
