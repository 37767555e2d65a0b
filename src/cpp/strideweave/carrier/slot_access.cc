#include "strideweave/carrier/slot_access.h"

#include <utility>
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

namespace {

// The window of `layout` from `offset` read into `out`, item i at
// out_layout(i), in items of type Item, `width` of them per slot (a slot's
// bytes, or one Value): read(first, count, to) reads consecutive slots, and
// arrange(from, from_layout, to) is the strided kernel for Item. Foreign
// storage (a call into Python per range) is read in one call over the
// window's span, holes included; other storage one call per run into an image
// of the runs, which is `out` itself when out_layout arranges it as the runs
// do (one copy, not two). Then arranged.
template <class Item, class Read, class Arrange>
void gather_window(bool foreign, const Layout& layout, int64_t offset, Item* out,
                   const Layout& out_layout, std::size_t width, Read&& read, Arrange&& arrange) {
  if (layout.size() == 0) return;
  if (foreign) {
    std::vector<Item> span(static_cast<std::size_t>(layout.cosize()) * width);
    read(offset, layout.cosize(), span.data());
    arrange(span.data(), layout, out);
    return;
  }
  const RunPlan plan(layout, offset);
  const bool in_place = plan.image_layout() == out_layout;
  std::vector<Item> image(in_place ? 0 : static_cast<std::size_t>(plan.size()) * width);
  Item* cursor = in_place ? out : image.data();
  plan.for_each_run([&](int64_t first, int64_t count) {
    read(first, count, cursor);
    cursor += static_cast<std::size_t>(count) * width;
  });
  if (!in_place) arrange(image.data(), plan.image_layout(), out);
}

}  // namespace

void SlotReader::gather(const Layout& layout, int64_t offset, std::byte* out,
                        const Layout& out_layout) const {
  const std::size_t itemsize = carrier_.require_itemsize("read");
  if (const std::byte* storage = host()) {
    parallel_copy_strided(storage, layout, offset, out, out_layout, 0, itemsize);
    return;
  }
  gather_window(
      carrier_.has_foreign_storage(), layout, offset, out, out_layout, itemsize,
      [&](int64_t first, int64_t count, std::byte* to) { read_range(first, count, to); },
      [&](const std::byte* from, const Layout& from_layout, std::byte* to) {
        copy_strided(from, from_layout, 0, to, out_layout, 0, itemsize);
      });
}

void SlotReader::gather_values(const Layout& layout, int64_t offset, Value* out,
                               const Layout& out_layout) const {
  gather_window(
      carrier_.has_foreign_storage(), layout, offset, out, out_layout, 1,
      [&](int64_t first, int64_t count, Value* to) { read_values(first, count, to); },
      [&](const Value* from, const Layout& from_layout, Value* to) {
        copy_strided(from, from_layout, 0, to, out_layout, 0);
      });
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

void SlotWriter::check_write_range(int64_t first, int64_t count, const std::byte* in) const {
  carrier_.require_itemsize("write_range");
  carrier_.require_range_locked(first, count);
  validate_encoding(carrier_.dtype_, in, count);
}

void SlotWriter::write_range(int64_t first, int64_t count, const std::byte* in) const {
  check_write_range(first, count, in);
  if (count > 0) carrier_.do_write_range(first, count, in);
}

void SlotWriter::start_write_range(int64_t first, int64_t count, const std::byte* in,
                                   Carrier::WriteDone done) const {
  check_write_range(first, count, in);
  if (count == 0) {
    done(nullptr);
    return;
  }
  carrier_.do_start_write_range(first, count, in, std::move(done));
}

}  // namespace strideweave
