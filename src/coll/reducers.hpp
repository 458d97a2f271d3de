// The typed reducers behind the public collectives' (Element, ReduceOp) pairs, from the
// kernel library MPI shares (reduce_kernels.hpp).
#pragma once

#include <sluice/collectives.hpp>

#include "coll/coll.hpp"

namespace sluice::coll {

// The reducer for `type` and `op`; false when the pair is out of range.
bool make_reducer(Element type, ReduceOp op, Reducer& out);

}  // namespace sluice::coll
