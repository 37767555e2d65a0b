#include "strideweave/carrier/builtins.h"

#include "strideweave/carrier/block_device.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/foreign_storage.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/carrier/metal.h"

namespace strideweave {

std::span<const ClassDescriptor* const> builtin_carrier_classes() {
  static const ClassDescriptor* const classes[] = {
      &Carrier::static_class(),
      &CPU::static_class(),
      &Generic::static_class(),
      &FileBacked::static_class(),
      &BlockDeviceCarrier::static_class(),
      &Metal::static_class(),
      &ForeignStorageCarrier::static_class(),
  };
  return classes;
}

}  // namespace strideweave
