// Properties of tensors and DLPack export for any generated layout and offset.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstring>

#include "layout_generators.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/interop/dlpack_export.h"
#include "strideweave/tensor/tensor.h"
#include "testing/counting_owner.h"

namespace strideweave::proptest {
namespace {

// A CPU carrier holding offset + cosize + extra distinct Int32 values.
std::shared_ptr<CPU> distinct_carrier(int64_t slots) {
  std::vector<Value> values;
  for (int64_t i = 0; i < slots; ++i) values.emplace_back(i * 7 + 1);
  return std::make_shared<CPU>(DType::Int32(), std::nullopt, values);
}

RC_GTEST_PROP(core_tensor_representation__tolist_reads_logical_values_through_any_layout,
              clause1__values_follow_the_layout, ()) {
  const Layout layout = *gen_layout();
  const int64_t offset = *rc::gen::inRange<int64_t>(0, 9);
  const int64_t extra = *rc::gen::inRange<int64_t>(0, 4);
  auto carrier = distinct_carrier(offset + layout.cosize() + extra);
  const auto tensor = Tensor::make(carrier, layout, offset);
  const std::vector<Value> values = tensor->values();
  RC_ASSERT(static_cast<int64_t>(values.size()) == layout.size());
  for (int64_t i = 0; i < layout.size(); ++i) {
    RC_ASSERT(std::get<int64_t>(values[static_cast<std::size_t>(i)]) ==
              (offset + layout(i)) * 7 + 1);
  }
  RC_ASSERT(carrier->version() == 0u);
}

RC_GTEST_PROP(interop_movement__the_exported_buffer_describes_the_layouts_flattened_leaf_modes,
              requirement__for_any_layout, ()) {
  const Layout layout = *gen_layout();
  const int64_t offset = *rc::gen::inRange<int64_t>(0, 9);
  auto carrier = distinct_carrier(offset + layout.cosize());
  const auto tensor = Tensor::make(carrier, layout, offset);
  const bool versioned = *rc::gen::arbitrary<bool>();
  ExportRequest request;
  if (versioned) request.max_version = IntPair{1, *rc::gen::inRange<int64_t>(0, 5)};
  testing_util::CountingOwner counter;
  ExportedTensor e = export_dlpack(*tensor, request, counter.owner());
  const dlpack::DLTensor& dl = versioned ? e.versioned->dl_tensor : e.legacy->dl_tensor;
  const std::vector<LeafMode> modes = layout.leaf_modes();
  RC_ASSERT(dl.ndim == static_cast<int32_t>(modes.size()));
  for (std::size_t k = 0; k < modes.size(); ++k) {
    RC_ASSERT(dl.shape[k] == modes[k].extent);
    RC_ASSERT(dl.strides[k] == modes[k].stride);
  }
  RC_ASSERT(dl.byte_offset == static_cast<uint64_t>(offset) * 4u);
  RC_ASSERT(reinterpret_cast<uintptr_t>(dl.data) == reinterpret_cast<uintptr_t>(carrier->data()));
  // Every element a consumer addresses is the tensor's element.
  const std::vector<Value> values = tensor->values();
  for (int64_t i = 0; i < layout.size(); ++i) {
    int64_t rest = i;
    int64_t element = 0;
    for (std::size_t k = 0; k < modes.size(); ++k) {
      element += (rest % dl.shape[k]) * dl.strides[k];
      rest /= dl.shape[k];
    }
    int32_t stored = 0;
    std::memcpy(&stored, static_cast<const std::byte*>(dl.data) + dl.byte_offset + element * 4,
                sizeof stored);
    RC_ASSERT(stored == std::get<int64_t>(values[static_cast<std::size_t>(i)]));
  }
  if (versioned) {
    e.versioned->deleter(e.versioned);
  } else {
    e.legacy->deleter(e.legacy);
  }
  RC_ASSERT(counter.allocations == 1 && counter.releases == 1);
  RC_ASSERT(carrier->version() == 0u);
}

}  // namespace
}  // namespace strideweave::proptest
