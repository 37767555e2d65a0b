// Conversion between Python integers / nested tuples and IntTuple.
#pragma once

#include <pybind11/pybind11.h>

#include <string_view>

#include "strideweave/layout/int_tuple.h"

namespace strideweave::bindings {

// Converts an int, or a (nested) tuple or list of ints, to an IntTuple.
// Throws TypeError naming `what` and the offending object for a leaf that is
// not an integer or is a bool, or for any other container; ValueError for an
// integer outside int64, and ValueError naming `what` for nesting deeper than
// IntTuple::kMaxDepth, detected before descending further. Lists are copied
// before their items are read, so an item's __index__ may mutate them.
IntTuple to_int_tuple(pybind11::handle obj, std::string_view what);

// The items of a list or a tuple (a subclass of either included) as stored,
// copied into a new tuple (an exact tuple is returned as is): the subclass's
// __len__, __iter__ and __getitem__ are not called, so reading the items runs
// no caller's code and cannot be told a length they contradict. Requires
// PyList_Check or PyTuple_Check.
pybind11::tuple stored_items(pybind11::handle list_or_tuple);

// An int for a leaf, a tuple of converted elements otherwise.
pybind11::object from_int_tuple(const IntTuple& t);

}  // namespace strideweave::bindings
