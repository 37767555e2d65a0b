// The legacy move registry (spec/interop-movement, "Move registration is
// explicit, validated, and process-global"): exact (source carrier class,
// destination carrier class) pairs to move-operation classes, for
// definition-free carrier classes.
//
// Keys and values are class descriptors, matched by identity: an entry for a
// pair applies to that exact pair alone, never to a subclass of either class.
// Every call seals the carrier classes it names (ClassDescriptor::seal), so a
// class observed here stays definition-free; a pair naming a
// definition-backed class is refused, since its movement belongs to its
// CarrierDefinition's TransferRoutes.
//
// Checks, in order, for every call: both carrier arguments are carrier class
// descriptors (TypeError naming the argument); add() and check_add() then
// check that `operation` is a move-operation descriptor (TypeError); then
// neither carrier class is definition-backed (RuntimeError pointing at
// TransferRoute); add() and check_add() finally check that the pair has no
// entry (ValueError naming both classes). A failed call changes no entry.
//
// global() is the process-global registry of the Python API, created with
// the built-in entries before its first caller: CpuToFileBackedMoveOperation
// for (CPU, FileBacked), FileBackedToCpuMoveOperation for (FileBacked,
// CPU), CpuToBlockDeviceMoveOperation for (CPU, BlockDeviceCarrier) and
// BlockDeviceToCpuMoveOperation for (BlockDeviceCarrier, CPU). Every other pair, (CPU, CPU)
// included, has no entry and dispatches to ElementwiseMoveOperation.
//
// Thread safety: every member may be called from any thread; calls are
// serialized by the registry's mutex, which is never held while anything
// outside the registry runs.
#pragma once

#include <map>
#include <mutex>
#include <utility>

#include "strideweave/carrier/class_descriptor.h"
#include "strideweave/exec/core_mutex.h"

namespace strideweave {

class LegacyMoveRegistry {
 public:
  struct Entry {
    const ClassDescriptor* source;
    const ClassDescriptor* destination;
    const ClassDescriptor* operation;
  };

  // An empty registry (tests); the movement API uses global().
  LegacyMoveRegistry() = default;
  LegacyMoveRegistry(const LegacyMoveRegistry&) = delete;
  LegacyMoveRegistry& operator=(const LegacyMoveRegistry&) = delete;

  // The process-global registry, holding the built-in entries from its
  // creation on; never destroyed.
  static LegacyMoveRegistry& global();

  // Records `operation` for the exact pair.
  void add(const ClassDescriptor& source, const ClassDescriptor& destination,
           const ClassDescriptor& operation);

  // Runs every check of add() without recording anything (a pair may still
  // gain an entry before a later add()).
  void check_add(const ClassDescriptor& source, const ClassDescriptor& destination,
                 const ClassDescriptor& operation) const;

  // Removes and returns the operation class of the exact pair. Throws
  // KeyError naming both classes when the pair has no entry.
  const ClassDescriptor& remove(const ClassDescriptor& source, const ClassDescriptor& destination);

  // The operation class of the exact pair, or nullptr when it has no entry
  // (the caller's fallback applies).
  const ClassDescriptor* find(const ClassDescriptor& source,
                              const ClassDescriptor& destination) const;

  // The operation class of the exact pair, or ElementwiseMoveOperation's
  // when the pair has no entry.
  const ClassDescriptor& dispatch(const ClassDescriptor& source,
                                  const ClassDescriptor& destination) const;

 private:
  using Key = std::pair<const ClassDescriptor*, const ClassDescriptor*>;

  // The checks every call shares (see the file comment), `operation` checked
  // when given; seals both carrier classes.
  static void require_legacy_pair(const char* call, const ClassDescriptor& source,
                                  const ClassDescriptor& destination,
                                  const ClassDescriptor* operation = nullptr);

  // Throws ValueError when the pair has an entry. Requires mu_.
  void require_no_entry(const Key& key) const;

  mutable CoreMutex mu_;  // a core lock (docs/threading.md): a leaf
  std::map<Key, const ClassDescriptor*> entries_;
};

}  // namespace strideweave
