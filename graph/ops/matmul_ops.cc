// matmul with numpy's semantics: a 1-D operand gains a dim (a: (k,) -> (1, k); b: (k,) -> (k, 1))
// that is removed from the result again, batch dims broadcast, 0-d operands are refused, and the
// result dtype is promote(a, b). Errors use numpy's gufunc wording, so messages match numpy's.
#include "graph/ops/op_helpers.h"
#include "kernels/matmul.h"

namespace pj {
namespace {

constexpr const char* kSignature = "(n?,k),(k,m?)->(n?,m?)";

std::string compact_shape(const Shape& s, size_t from, size_t to) {
  std::string r = "(";
  for (size_t i = from; i < to; ++i) r += (i > from ? "," : "") + std::to_string(s[i]);
  return r + (to - from == 1 ? ",)" : ")");
}

// Result shape of a @ b, or numpy's error.
Shape matmul_shape(const Shape& a, const Shape& b) {
  for (int i = 0; i < 2; ++i)
    if ((i == 0 ? a : b).empty())
      PJ_THROW(Value) << "matmul: Input operand " << i << " does not have enough dimensions (has 0, "
                      << "gufunc core with signature " << kSignature << " requires 1)";
  const int64_t ka = a.back(), kb = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (ka != kb)
    PJ_THROW(Value) << "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                    << "signature " << kSignature << " (size " << kb << " is different from " << ka << ")";
  const size_t na = a.size() > 2 ? a.size() - 2 : 0, nb = b.size() > 2 ? b.size() - 2 : 0;
  Shape out;
  try {
    out = broadcast_shapes(Shape(a.begin(), a.begin() + na), Shape(b.begin(), b.begin() + nb));
  } catch (const Error&) {
    auto remapped = [](const Shape& s, size_t n) {
      std::string r = compact_shape(s, 0, s.size()) + "->(";
      for (size_t i = 0; i < n; ++i) r += std::to_string(s[i]) + ",";
      return r + "newaxis,newaxis)";
    };
    PJ_THROW(Value) << "operands could not be broadcast together with remapped shapes "
                    << "[original->remapped]: " << remapped(a, na) << " " << remapped(b, nb)
                    << "  and requested shape (" << a[a.size() - 2] << "," << b.back() << ")";
  }
  if (a.size() > 1) out.push_back(a[a.size() - 2]);
  if (b.size() > 1) out.push_back(b.back());
  return out;
}

// `t` with a size-1 dim inserted at `pos` (a view; the stride of a size-1 dim is irrelevant).
Tensor insert_dim(const Tensor& t, int pos) {
  Shape s = t.shape(), st = t.strides();
  s.insert(s.begin() + pos, 1);
  st.insert(st.begin() + pos, 0);
  return t.as_strided(s, st, t.offset());
}

PJ_REGISTER_OP("matmul")
    .inputs(2)
    .infer([](const Metas& in, const Attrs&) {
      return one(matmul_shape(in[0].shape, in[1].shape), promote(in[0].dtype, in[1].dtype));
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) {
      DType t = out[0].dtype();
      Tensor a = as_dtype(in[0], t), b = as_dtype(in[1], t), c = out[0];
      if (a.ndim() == 1) {
        a = insert_dim(a, 0);
        c = insert_dim(c, c.ndim() - (b.ndim() == 1 ? 0 : 1));
      }
      if (b.ndim() == 1) {
        b = insert_dim(b, 1);
        c = insert_dim(c, c.ndim());
      }
      matmul_into(c, a, b);
    })
    .prepare([](const Metas& in, const Attrs& attrs, const Metas& out) -> PreparedFn {
      bool direct = in[0].shape.size() >= 2 && in[1].shape.size() >= 2;
      for (const TensorMeta& m : {in[0], in[1], out[0]}) direct = direct && m.dtype == DType::Float32;
      const OpDef& op = get_op("matmul");
      if (!direct) return [&op, attrs](const Tensors& i, const Tensors& o) { op.kernel(i, attrs, o); };
      std::shared_ptr<MatmulState> state = make_matmul_state();
      return [state](const Tensors& i, const Tensors& o) { matmul_prepared_into(*state, o[0], i[0], i[1]); };
    });

}  // namespace
}  // namespace pj
