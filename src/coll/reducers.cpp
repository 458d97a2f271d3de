// The public collectives' typed reductions (see reducers.hpp).
#include "coll/reducers.hpp"

#include "coll/reduce_kernels.hpp"

namespace sluice::coll {

namespace {

template <class T>
bool set_reducer(ReduceOp op, Reducer& r) {
  r.elem_size = sizeof(T);
  r.commutative = true;
  switch (op) {
    case ReduceOp::sum:
      r.fn = kernels::reduce_packed<T, kernels::Op::sum>;
      return true;
    case ReduceOp::prod:
      r.fn = kernels::reduce_packed<T, kernels::Op::prod>;
      return true;
    case ReduceOp::min:
      r.fn = kernels::reduce_packed<T, kernels::Op::min>;
      return true;
    case ReduceOp::max:
      r.fn = kernels::reduce_packed<T, kernels::Op::max>;
      return true;
  }
  return false;
}

}  // namespace

bool make_reducer(Element type, ReduceOp op, Reducer& out) {
  switch (type) {
    case Element::i32:
      return set_reducer<std::int32_t>(op, out);
    case Element::i64:
      return set_reducer<std::int64_t>(op, out);
    case Element::u32:
      return set_reducer<std::uint32_t>(op, out);
    case Element::u64:
      return set_reducer<std::uint64_t>(op, out);
    case Element::f32:
      return set_reducer<float>(op, out);
    case Element::f64:
      return set_reducer<double>(op, out);
  }
  return false;
}

}  // namespace sluice::coll
