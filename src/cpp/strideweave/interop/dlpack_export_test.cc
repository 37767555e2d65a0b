#include "strideweave/interop/dlpack_export.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/compose/evictable.h"
#include "strideweave/util/error.h"
#include "strideweave/util/mapped_memory.h"
#include "testing/counting_owner.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using T = IntTuple;
T tup(std::initializer_list<IntTuple> e) { return IntTuple::tuple(e); }

std::shared_ptr<Tensor> float_tensor(bool mutable_ = true) {
  auto c = std::make_shared<CPU>(DType::Float32(), 30, std::nullopt, mutable_);
  return Tensor::make(c, Layout(tup({2, tup({3, 4})}), tup({1, tup({2, 6})})), 5);
}

using testing_util::CountingOwner;

TEST(interop_movement__the_exported_buffer_describes_the_layouts_flattened_leaf_modes,
     flatten_a_hierarchical_layout) {
  auto t = float_tensor();
  CountingOwner counter;
  ExportedTensor e = export_dlpack(*t, ExportRequest{IntPair{1, 0}, {}, false}, counter.owner());
  ASSERT_NE(e.versioned, nullptr);
  const dlpack::DLTensor& dl = e.versioned->dl_tensor;
  EXPECT_EQ(dl.ndim, 3);
  EXPECT_EQ(std::vector<int64_t>(dl.shape, dl.shape + 3), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(std::vector<int64_t>(dl.strides, dl.strides + 3), (std::vector<int64_t>{1, 2, 6}));
  EXPECT_EQ(dl.byte_offset, 20u);
  EXPECT_EQ(dl.data,
            static_cast<void*>(std::static_pointer_cast<CPU>(t->subtensor("t").carrier)->data()));
  EXPECT_EQ(e.versioned->version.major, 1u);
  EXPECT_EQ(e.versioned->version.minor, 0u);
  EXPECT_EQ(e.versioned->flags, 0u);
  EXPECT_EQ(counter.live(), 1);
  e.versioned->deleter(e.versioned);
  EXPECT_EQ(counter.allocations, 1);
  EXPECT_EQ(counter.releases, 1);
}

TEST(interop_movement__versioned_exports_advertise_mutability_as_an_advisory_read_only_flag,
     mark_an_immutable_tensor_read_only) {
  CountingOwner counter;
  ExportedTensor e =
      export_dlpack(*float_tensor(false), ExportRequest{IntPair{1, 0}, {}, false}, counter.owner());
  EXPECT_EQ(e.versioned->flags, dlpack::kFlagBitmaskReadOnly);
  e.versioned->deleter(e.versioned);
  EXPECT_EQ(counter.releases, 1);
  EXPECT_EQ(counter.live(), 0);
}

TEST(interop_movement__dlpack_export_produces_version_1_0_or_the_legacy_structure_on_request,
     fall_back_to_the_legacy_structure) {
  CountingOwner counter;
  ExportedTensor e =
      export_dlpack(*float_tensor(), ExportRequest{IntPair{0, 9}, {}, false}, counter.owner());
  ASSERT_NE(e.legacy, nullptr);
  EXPECT_EQ(e.versioned, nullptr);
  e.legacy->deleter(e.legacy);
  EXPECT_EQ(counter.releases, 1);
  EXPECT_EQ(counter.live(), 0);
}

TEST(interop_movement__export_is_zero_copy_same_device_and_stream_agnostic, refuse_a_copy_export) {
  CountingOwner counter;
  EXPECT_THROW(export_dlpack(*float_tensor(), ExportRequest{{}, {}, true}, counter.owner()),
               BufferError);
  EXPECT_THROW(
      export_dlpack(*float_tensor(), ExportRequest{{}, IntPair{2, 0}, false}, counter.owner()),
      BufferError);
  EXPECT_EQ(counter.allocations, 0);
}

TEST(interop_movement__only_float32_and_int32_logical_dtypes_are_exportable,
     reject_an_unsupported_dtype) {
  auto t = Tensor::make(std::make_shared<CPU>(DType::Bool(), 2), Layout(T(2)), 0);
  const std::string dtype_error = testing_util::message_of<BufferError>(
      [&] { export_dlpack(*t, ExportRequest{}, ExportOwner{}); });
  EXPECT_NE(dtype_error.find("Float32 and Int32"), std::string::npos) << dtype_error;
  // The carrier opt-in is resolved first: a Bool Generic tensor fails on the carrier.
  auto g = Tensor::make(std::make_shared<Generic>(DType::Bool(), 2), Layout(T(2)), 0);
  const std::string carrier_error = testing_util::message_of<BufferError>(
      [&] { export_dlpack(*g, ExportRequest{}, ExportOwner{}); });
  EXPECT_NE(carrier_error.find("Generic"), std::string::npos) << carrier_error;
}

TEST(interop_movement__multi_subtensor_tensors_reject_dlpack_export,
     reject_a_multi_subtensor_export) {
  auto plane = float_tensor();
  const DType rec = DType::compound({{"a", DType::Float32()}, {"b", DType::Float32()}});
  auto t = Tensor::from_planes(rec, {plane, plane});
  EXPECT_THROW(export_dlpack(*t, ExportRequest{}, ExportOwner{}), NotImplementedError);
  EXPECT_THROW(dlpack_device(*t), NotImplementedError);
}

TEST(interop_movement__the_exported_buffer_describes_the_layouts_flattened_leaf_modes,
     clause4__arrays_for_every_rank) {
  // Rank 0 still gets non-null arrays; rank 9 has as many as it has leaf modes.
  for (const Layout& layout : {Layout(tup({})), Layout(tup({1, 2, 1, 2, 1, 2, 1, 2, 1}))}) {
    auto c = std::make_shared<CPU>(DType::Int32(), 20);
    auto t = Tensor::make(c, layout, 3);
    CountingOwner counter;
    ExportedTensor e = export_dlpack(*t, ExportRequest{}, counter.owner());
    const dlpack::DLTensor& dl = e.legacy->dl_tensor;
    ASSERT_NE(dl.shape, nullptr);
    ASSERT_NE(dl.strides, nullptr);
    ASSERT_EQ(dl.ndim, static_cast<int32_t>(layout.leaf_modes().size()));
    for (int32_t k = 0; k < dl.ndim; ++k) {
      EXPECT_EQ(dl.shape[k], layout.leaf_modes()[static_cast<std::size_t>(k)].extent);
      EXPECT_EQ(dl.strides[k], layout.leaf_modes()[static_cast<std::size_t>(k)].stride);
    }
    e.legacy->deleter(e.legacy);
    EXPECT_EQ(counter.releases, 1);
    EXPECT_EQ(counter.live(), 0);
  }
}

TEST(interop_movement__a_carrier_opts_into_dlpack_through_dlpack_info, clause4__null_pointer) {
  auto c = std::make_shared<CPU>(DType::Float32(), 4);
  auto t = Tensor::make(c, Layout(T(4)), 0);
  c->release();
  EXPECT_THROW(export_dlpack(*t, ExportRequest{}, ExportOwner{}), BufferError);
}

TEST(interop_movement__dlpack_export_produces_version_1_0_or_the_legacy_structure_on_request,
     clause2__no_max_version) {
  // A request with no max_version produces the legacy structure, fully described.
  std::vector<Value> values{int64_t{-2147483648}, int64_t{7}, int64_t{2147483647}};
  auto c = std::make_shared<CPU>(DType::Int32(), std::nullopt, values, false);
  auto t = Tensor::make(c, Layout(T(2), T(1)), 1);
  CountingOwner counter;
  ExportedTensor e = export_dlpack(*t, ExportRequest{}, counter.owner());
  ASSERT_NE(e.legacy, nullptr);
  ASSERT_EQ(e.versioned, nullptr);
  const dlpack::DLTensor& dl = e.legacy->dl_tensor;
  EXPECT_EQ(dl.data, static_cast<void*>(c->data()));
  EXPECT_EQ(dl.byte_offset, 4u);
  EXPECT_EQ(dl.device.device_type, dlpack::kDLCPU);
  EXPECT_EQ(dl.ndim, 1);
  EXPECT_EQ(dl.shape[0], 2);
  EXPECT_EQ(dl.strides[0], 1);
  EXPECT_EQ(dl.dtype.code, dlpack::kDLInt);
  EXPECT_EQ(dl.dtype.bits, 32);
  EXPECT_EQ(dl.dtype.lanes, 1);
  EXPECT_EQ(counter.live(), 1);
  e.legacy->deleter(e.legacy);
  EXPECT_EQ(counter.releases, 1);
  EXPECT_EQ(counter.live(), 0);
}

TEST(interop_movement__only_float32_and_int32_logical_dtypes_are_exportable,
     clause1__int32_bounds) {
  // Both bounds of Int32 reach the consumer's buffer as native int32 values.
  std::vector<Value> values{int64_t{-2147483648}, int64_t{2147483647}};
  auto c = std::make_shared<CPU>(DType::Int32(), std::nullopt, values);
  auto t = Tensor::make(c, Layout(T(2)), 0);
  CountingOwner counter;
  ExportedTensor e = export_dlpack(*t, ExportRequest{IntPair{1, 0}, {}, false}, counter.owner());
  const dlpack::DLTensor& dl = e.versioned->dl_tensor;
  int32_t read[2];
  std::memcpy(read, static_cast<const std::byte*>(dl.data) + dl.byte_offset, sizeof read);
  EXPECT_EQ(read[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(read[1], std::numeric_limits<int32_t>::max());
  e.versioned->deleter(e.versioned);
  EXPECT_EQ(counter.releases, 1);
}

// -- carrier-storage: memory an export addresses is never another's ----------

TEST(carrier_storage__release_relinquishes_storage_once,
     clause7__an_export_keeps_a_released_buffer_from_reuse) {
  // A heap buffer and a mapped one (kMappedBytes or more).
  for (const int64_t n : {int64_t{16}, static_cast<int64_t>(kMappedBytes / sizeof(float))}) {
    SCOPED_TRACE(n);
    const std::size_t retired = retired_mapped_bytes();
    auto c = std::make_shared<CPU>(DType::Float32(), n);
    c->write_range_values(0, std::vector<Value>{2.5, 3.5});
    auto t = Tensor::make(c, Layout(T(n)), 0);
    CountingOwner counter;
    ExportedTensor e = export_dlpack(*t, ExportRequest{}, counter.owner());
    const auto* stale = static_cast<const float*>(e.legacy->dl_tensor.data);
    c->release();
    std::vector<std::shared_ptr<CPU>> fresh;
    for (int i = 0; i < 8; ++i) {
      fresh.push_back(std::make_shared<CPU>(DType::Float32(), n));
      EXPECT_NE(static_cast<const void*>(fresh.back()->data()), static_cast<const void*>(stale));
    }
    if (n == 16) {  // kept with its bytes
      EXPECT_EQ(stale[0], 2.5f);
      EXPECT_EQ(stale[1], 3.5f);
    } else {  // retired: inaccessible, never read here
      EXPECT_EQ(retired_mapped_bytes(), retired + kMappedBytes);
    }
    e.legacy->deleter(e.legacy);
    EXPECT_EQ(counter.live(), 0);
    EXPECT_EQ(retired_mapped_bytes(), retired);
  }
}

TEST(carrier_storage__carriers_opt_into_dlpack_through_the_dlpack_info_hook,
     clause8__refuse_a_part_of_a_composite) {
  auto fast =
      std::make_shared<CPU>(DType::Float32(), std::nullopt, std::vector<Value>{1.0, 2.0, 3.0});
  auto evictable = Evictable::make(fast, std::make_shared<Generic>(DType::Float32()));
  auto t = Tensor::make(fast, Layout(T(3)), 0);
  const uint64_t version = fast->version();
  CountingOwner counter;
  const std::string message = testing_util::message_of<BufferError>(
      [&] { export_dlpack(*t, ExportRequest{IntPair{1, 0}, {}, false}, counter.owner()); });
  EXPECT_NE(message.find(fast->label()), std::string::npos) << message;
  EXPECT_NE(message.find("owned by " + evictable->label()), std::string::npos) << message;
  EXPECT_EQ(counter.allocations, 0);
  EXPECT_EQ(fast->version(), version);
  EXPECT_FALSE(fast->is_released());
  EXPECT_EQ(fast->owner(), evictable);
}

// A CPU carrier whose dlpack_info() hook gives an empty carrier slots: the
// buffer it reports is not the one the export held before the hook.
class AllocatingHook : public CPU {
 public:
  AllocatingHook() : CPU(DType::Float32()) {}
  bool dlpack_info_runs_caller_code() const override { return true; }
  DLPackInfo dlpack_info() const override {
    auto& self = const_cast<AllocatingHook&>(*this);  // a hook acting on its own carrier
    if (self.slots() == 0) self.allocate(4);
    return CPU::dlpack_info();
  }
};

TEST(carrier_storage__carriers_opt_into_dlpack_through_the_dlpack_info_hook,
     clause7__refuse_storage_replaced_by_the_hook) {
  auto c = std::make_shared<AllocatingHook>();
  auto t = Tensor::make(c, Layout(T(0)), 0);
  CountingOwner counter;
  const std::string message = testing_util::message_of<BufferError>(
      [&] { export_dlpack(*t, ExportRequest{}, counter.owner()); });
  EXPECT_NE(message.find(c->label()), std::string::npos) << message;
  EXPECT_NE(message.find("replaced"), std::string::npos) << message;
  EXPECT_EQ(counter.allocations, 0);
}

}  // namespace
}  // namespace strideweave
