#include "strideweave/compose/builtins.h"

#include "strideweave/compose/evictable.h"

namespace strideweave {

std::span<const ClassDescriptor* const> builtin_composite_carrier_classes() {
  static const ClassDescriptor* const classes[] = {
      &Evictable::static_class(),
  };
  return classes;
}

}  // namespace strideweave
