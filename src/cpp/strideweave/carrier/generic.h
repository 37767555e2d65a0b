// Generic: element storage for any dtype, abstract ones included; no pointer
// and no DLPack export (spec/carrier-storage). Its range entry points copy
// element values; the encoded variants encode each element (concrete and
// compound dtypes only).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "strideweave/carrier/carrier.h"

namespace strideweave {

class Generic : public Carrier {
 public:
  // n zero slots (empty when nullopt), or one slot per element of `values`.
  // Throws ValueError for n < 0 or when n and values disagree, and the
  // conversion errors of coerce for a value the dtype cannot represent, and
  // MemoryError naming Generic and n when the slots cannot be allocated.
  Generic(DType dtype, std::optional<int64_t> n = std::nullopt,
          std::optional<std::vector<Value>> values = std::nullopt, bool mutable_ = true);

  static const ClassDescriptor& static_class();
  const ClassDescriptor& carrier_class() const override { return static_class(); }
  std::shared_ptr<Carrier> new_like() const override;

 protected:
  Value do_read(int64_t slot) const override;
  void do_write(int64_t slot, const Value& coerced) override;
  void do_allocate(int64_t n) override;
  void do_release() override;
  void do_read_range(int64_t first, int64_t count, std::byte* out) const override;
  void do_write_range(int64_t first, int64_t count, const std::byte* in) override;
  void do_read_values(int64_t first, int64_t count, Value* out) const override;
  void do_write_values(int64_t first, int64_t count, const Value* coerced) override;

 private:
  std::vector<Value> elements_;
};

}  // namespace strideweave
