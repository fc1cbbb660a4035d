// Elementwise ops: unary, binary (numpy broadcasting and promotion), clamp, where, cast.
#include "graph/ops/op_helpers.h"
#include "kernels/elementwise.h"

namespace pj {
namespace {

DType unary_out_dtype(char kind, DType in) {
  return kind == 'F' ? to_floating(in) : kind == 'B' ? DType::Bool : in;
}

void register_unary(const char* name, UnaryOp op, char kind) {
  OpRegistrar r(name);
  // Bit patterns are dtype-specific (uint64 computed as int64 would shift its sign bit in).
  if (kind == 'I' || kind == 'B') r.storage_dtypes();
  r.total()
      .elementwise()
      .inputs(1)
      .infer([kind, op](const Metas& in, const Attrs&) {
        if (op == UnaryOp::abs && is_complex(in[0].dtype)) return one(in[0].shape, real_dtype(in[0].dtype));
        DType t = unary_out_dtype(kind, in[0].dtype);
        // the kernel computes in the output dtype (I and B: in the input's own)
        check_unary_dtype(op, kind == 'B' ? in[0].dtype : t);
        return one(in[0].shape, t);
      })
      .kernel([op, kind](const Tensors& in, const Attrs&, const Tensors& out) {
        if (op == UnaryOp::abs && is_complex(in[0].dtype())) return complex_part_into(ComplexPart::abs, out[0], in[0]);
        if (kind == 'B') return unary_into(op, out[0], in[0]);
        unary_into(op, out[0], as_dtype(in[0], out[0].dtype()));
      })
      .eager([op](absl::Span<const Tensor> in, Tensor* out) { return unary_fast(op, in[0], out); });
}

// The dtype binary op `kind` computes in, and its result dtype.
DType binary_compute_dtype(char kind, BinaryOp op, DType a, DType b) {
  DType t = promote(a, b);
  if (op == BinaryOp::div || kind == 'F') return to_floating(t);
  return t;
}

void register_binary(const char* name, BinaryOp op, char kind) {
  OpRegistrar r(name);
  // An integer pow raises on a negative exponent's value (check_integer_pow): unused, it still runs.
  if (op != BinaryOp::pow) r.total();
  if (kind == 'I') r.storage_dtypes();  // every integer width as it is (numpy's wrap-around and shifts)
  r.elementwise()
      .inputs(2)
      .infer([op, kind](const Metas& in, const Attrs&) {
        Shape s = broadcast_shapes(in[0].shape, in[1].shape);
        DType c = binary_compute_dtype(kind, op, in[0].dtype, in[1].dtype);
        if (kind == 'A' || kind == 'F' || kind == 'I' || is_complex(c)) check_binary_dtype(op, c);
        return one(std::move(s), kind == 'C' || kind == 'L' ? DType::Bool : c);
      })
      .kernel([op, kind](const Tensors& in, const Attrs&, const Tensors& out) {
        DType c = binary_compute_dtype(kind, op, in[0].dtype(), in[1].dtype());
        binary_into(op, out[0], as_dtype(in[0], c), as_dtype(in[1], c));
      })
      .eager([op](absl::Span<const Tensor> in, Tensor* out) { return binary_fast(op, in[0], in[1], out); });
}

struct Registrations {
  Registrations() {
#define PJ_X(name, kind) register_unary(#name, UnaryOp::name, #kind[0]);
    PJ_UNARY_OPS(PJ_X)
#undef PJ_X
#define PJ_X(name, kind) register_binary(#name, BinaryOp::name, #kind[0]);
    PJ_BINARY_OPS(PJ_X)
#undef PJ_X
  }
} registrations;

Metas same_as_input(const Metas& in, const Attrs&) { return one(in[0].shape, in[0].dtype); }

// population_count(x): set bits of each integer in its own width, as uint8 (MindSpore's
// PopulationCount).
PJ_REGISTER_OP("population_count")
    .storage_dtypes()
    .total()
    .elementwise()
    .inputs(1)
    .infer([](const Metas& in, const Attrs&) {
      if (!is_integral(in[0].dtype, false))
        PJ_THROW(Type) << "population_count does not support dtype " << dtype_name(in[0].dtype) << ": it takes integers";
      return one(in[0].shape, DType::UInt8);
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) { population_count_into(out[0], in[0]); });

PJ_REGISTER_OP("logical_not")
    .total()
    .inputs(1)
    .infer([](const Metas& in, const Attrs&) { return one(in[0].shape, DType::Bool); })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      copy_into(out[0], in[0]);  // to bool: x != 0
      binary_into(BinaryOp::eq, out[0], out[0], Tensor::scalar(0, DType::Bool));
    });

// clamp(x, min=None, max=None) with scalar bounds; the result keeps x's dtype.
PJ_REGISTER_OP("clamp")
    .total()
    .elementwise()
    .inputs(1)
    .attrs({"min", "max"})
    .infer([](const Metas& in, const Attrs& a) {
      if (in[0].dtype == DType::Bool) PJ_THROW(Type) << "clamp does not support dtype Bool";
      if (a.is_none("min") && a.is_none("max"))
        PJ_THROW(Value) << "clamp: at least one of 'min' or 'max' must not be None";
      return same_as_input(in, a);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      bool has_lo = !a.is_none("min"), has_hi = !a.is_none("max");
      if (!has_lo && !has_hi) PJ_THROW(Value) << "clamp: at least one of 'min' or 'max' must not be None";
      clamp_into(out[0], in[0], has_lo ? a.f("min") : 0, has_hi ? a.f("max") : 0, has_lo, has_hi);
    });

// where(cond, x, y): cond is cast to bool, x and y promoted together, all three broadcast.
PJ_REGISTER_OP("where")
    .total()
    .inputs(3)
    .infer([](const Metas& in, const Attrs&) {
      Shape s = broadcast_shapes(broadcast_shapes(in[0].shape, in[1].shape), in[2].shape);
      return one(std::move(s), promote(in[1].dtype, in[2].dtype));
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      DType t = out[0].dtype();
      where_into(out[0], as_dtype(in[0], DType::Bool), as_dtype(in[1], t), as_dtype(in[2], t));
    });

PJ_REGISTER_OP("cast")
    .storage_dtypes()
    .total()
    .inputs(1)
    .attrs({"dtype"})
    .infer([](const Metas& in, const Attrs& a) { return one(in[0].shape, a.dtype("dtype")); })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) { copy_into(out[0], in[0]); });

// A contiguous copy (Tensor.copy(), contiguous() of a view).
PJ_REGISTER_OP("copy")
    .storage_dtypes()
    .total()
    .inputs(1)
    .infer(same_as_input)
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) { copy_into(out[0], in[0]); });

// contiguous() of a graph value whose layout is known only when the graph runs (a view): the
// value itself when contiguous (still aliasing what it views, as in eager), else a copy.
PJ_REGISTER_OP("contiguous")
    .storage_dtypes()
    .total()
    .inputs(1)
    .view()
    .infer(same_as_input)
    .run([](const Tensors& in, const Attrs&) {
      if (in[0].is_contiguous()) return Tensors{in[0]};
      Tensor out = Tensor::empty(in[0].shape(), in[0].dtype());
      copy_into(out, in[0]);
      return Tensors{out};
    });

}  // namespace
}  // namespace pj
