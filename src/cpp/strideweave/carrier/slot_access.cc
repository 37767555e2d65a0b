#include "strideweave/carrier/slot_access.h"

#include <vector>

#include "strideweave/exec/parallel.h"
#include "strideweave/layout/runs.h"

namespace strideweave {

void SlotReader::read_range(int64_t first, int64_t count, std::byte* out) const {
  carrier_.require_itemsize("read");
  carrier_.require_range_locked(first, count);
  carrier_.do_read_range(first, count, out);
}

const std::byte* SlotReader::host_range(int64_t first, int64_t count) const {
  const std::size_t itemsize = carrier_.require_itemsize("read");
  carrier_.require_range_locked(first, count);
  const std::byte* storage = host();
  return storage == nullptr ? nullptr : storage + static_cast<std::size_t>(first) * itemsize;
}

void SlotReader::gather(const Layout& layout, int64_t offset, std::byte* out,
                        const Layout& out_layout) const {
  const std::size_t itemsize = carrier_.require_itemsize("read");
  if (const std::byte* storage = host()) {
    parallel_copy_strided(storage, layout, offset, out, out_layout, 0, itemsize);
    return;
  }
  if (carrier_.has_foreign_storage() && layout.size() != 0) {
    // A foreign storage's hook is a call into Python: the whole window's span
    // in one range call, then arranged by the kernel.
    std::vector<std::byte> span(static_cast<std::size_t>(layout.cosize()) * itemsize);
    read_range(offset, layout.cosize(), span.data());
    copy_strided(span.data(), layout, 0, out, out_layout, 0, itemsize);
    return;
  }
  const RunPlan plan(layout, offset);
  // The image is `out` itself when out_layout arranges it as the runs do (a
  // compact window read into a compact buffer): one copy, not two.
  const bool in_place = plan.image_layout() == out_layout;
  std::vector<std::byte> image(in_place ? 0 : static_cast<std::size_t>(plan.size()) * itemsize);
  std::byte* cursor = in_place ? out : image.data();
  plan.for_each_run([&](int64_t first, int64_t count) {
    read_range(first, count, cursor);
    cursor += static_cast<std::size_t>(count) * itemsize;
  });
  if (!in_place) copy_strided(image.data(), plan.image_layout(), 0, out, out_layout, 0, itemsize);
}

void SlotReader::gather_values(const Layout& layout, int64_t offset, Value* out,
                               const Layout& out_layout) const {
  if (layout.size() == 0) return;
  if (carrier_.has_foreign_storage()) {
    std::vector<Value> span(static_cast<std::size_t>(layout.cosize()));
    read_values(offset, layout.cosize(), span.data());
    copy_strided(span.data(), layout, 0, out, out_layout, 0);
    return;
  }
  const RunPlan plan(layout, offset);
  std::vector<Value> image(static_cast<std::size_t>(plan.size()));
  Value* cursor = image.data();
  plan.for_each_run([&](int64_t first, int64_t count) {
    read_values(first, count, cursor);
    cursor += count;
  });
  copy_strided(image.data(), plan.image_layout(), 0, out, out_layout, 0);
}

void SlotReader::read_values(int64_t first, int64_t count, Value* out) const {
  carrier_.require_range_locked(first, count);
  carrier_.do_read_values(first, count, out);
}

std::byte* SlotWriter::host_range(int64_t first, int64_t count) const {
  const std::size_t itemsize = carrier_.require_itemsize("write");
  carrier_.require_range_locked(first, count);
  std::byte* storage = carrier_.do_host_data();
  return storage == nullptr ? nullptr : storage + static_cast<std::size_t>(first) * itemsize;
}

void SlotWriter::read_range(int64_t first, int64_t count, std::byte* out) const {
  carrier_.require_itemsize("read");
  carrier_.require_range_locked(first, count);
  if (count > 0) carrier_.do_read_range(first, count, out);
}

void SlotWriter::write_range(int64_t first, int64_t count, const std::byte* in) const {
  carrier_.require_itemsize("write_range");
  carrier_.require_range_locked(first, count);
  validate_encoding(carrier_.dtype_, in, count);
  if (count > 0) carrier_.do_write_range(first, count, in);
}

}  // namespace strideweave
