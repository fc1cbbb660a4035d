// Small layer ops: dropout, embedding, dense (kernels/nn_misc.h). This file owns attribute
// parsing and every user-facing error; messages name the op and the shapes.
//
//   dropout(x; p=0.5, training=True, seed=None) -> (y, mask)
//     y = x * mask / (1 - p), mask: Bool, x's shape. 0 <= p < 1 (ValueError otherwise). Not
//     training, or p == 0: y = x, mask all true, no random numbers drawn. seed None draws from
//     the global Philox stream (pj.set_seed makes it reproducible); an int seed is used as the
//     Philox key from counter 0, leaving the global stream alone. (The op takes p, the drop
//     probability, as MindSpore >= 2.0 and PyTorch do; old MindSpore's keep_prob is 1 - p.)
//   embedding(weight [V, D], indices (Int32/Int64, any shape); padding_idx=None) -> out
//     out = weight[indices], shape indices.shape + (D,). padding_idx (in [-V, V), normalised) only
//     matters to the backward (no gradient for that row); the forward output ignores it.
//   dense(x [..., in], weight [out, in], bias [out]?; relu=False) -> x @ weight.T + bias, shape
//     [..., out] (MindSpore's ops.dense; PyTorch's linear). relu (set by the fuse_dense pass, never
//     by users): then relu of that, the eager relu run in place on the result while it is in cache.
#include "graph/ops/op_helpers.h"
#include "kernels/elementwise.h"
#include "kernels/nn_misc.h"
#include "kernels/weight_cache.h"

namespace pj {
namespace {

double dropout_p(const Attrs& a) {
  double p = a.is_none("p") ? 0.5 : a.f("p");
  if (!(p >= 0 && p < 1)) PJ_THROW(Value) << "dropout: p must be in [0, 1), but got " << p;
  return p;
}

std::optional<uint64_t> seed_attr(const Attrs& a) {
  if (a.is_none("seed")) return std::nullopt;
  return static_cast<uint64_t>(a.i("seed"));
}

PJ_REGISTER_OP("dropout")
    .impure()
    .inputs(1)
    .attrs({"p", "training", "seed"})
    .infer([](const Metas& in, const Attrs& a) {
      require_floating("dropout", "x", in[0].dtype);
      dropout_p(a);
      return Metas{{in[0].shape, in[0].dtype}, {in[0].shape, DType::Bool}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      dropout_into(out[0], out[1], in[0], dropout_p(a), a.b("training", true), seed_attr(a));
    });

PJ_REGISTER_OP("embedding")
    .raises_on_values()
    .inputs(2)
    .attrs({"padding_idx"})
    .infer([](const Metas& in, const Attrs& a) {
      const TensorMeta &w = in[0], &idx = in[1];
      require_floating("embedding", "weight", w.dtype);
      if (w.shape.size() != 2)
        PJ_THROW(Value) << "embedding: weight must be 2-D (num_embeddings, embedding_dim), but got shape "
                        << shape_str(w.shape);
      if (idx.dtype != DType::Int32 && idx.dtype != DType::Int64)
        PJ_THROW(Type) << "embedding: indices must be Int32 or Int64, but got " << dtype_name(idx.dtype);
      if (!a.is_none("padding_idx")) {
        const int64_t p = a.i("padding_idx"), V = w.shape[0];
        if (p < -V || p >= V)
          PJ_THROW(Value) << "embedding: padding_idx " << p << " is out of range for " << V
                          << " embeddings (weight shape " << shape_str(w.shape) << ")";
      }
      Shape s = idx.shape;
      s.push_back(w.shape[1]);
      return one(std::move(s), w.dtype);
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) { embedding_into(out[0], in[0], in[1]); });

bool dense_relu(const Attrs& a) { return a.has("relu") && a.b("relu"); }

void dense_kernel(const Tensors& in, const Attrs& a, const Tensors& out) {
  const DType t = out[0].dtype();
  dense_into(out[0], as_dtype(in[0], t), as_dtype(in[1], t), in.size() == 3 ? as_dtype(in[2], t) : Tensor());
  if (dense_relu(a)) unary_into(UnaryOp::relu, out[0], out[0]);
}

PJ_REGISTER_OP("dense")
    .inputs(-1)
    .attrs({"relu"})
    .infer([](const Metas& in, const Attrs&) {
      if (in.size() < 2 || in.size() > 3)
        PJ_THROW(Type) << "dense() takes 2 or 3 tensor inputs but " << in.size() << " were given";
      const TensorMeta &x = in[0], &w = in[1];
      require_floating("dense", "input", x.dtype);
      require_floating("dense", "weight", w.dtype);
      if (x.shape.empty()) PJ_THROW(Value) << "dense: input must have at least 1 dim, but got shape ()";
      if (w.shape.size() != 2)
        PJ_THROW(Value) << "dense: weight must be 2-D (out_features, in_features), but got shape " << shape_str(w.shape);
      if (x.shape.back() != w.shape[1])
        PJ_THROW(Value) << "dense: input has " << x.shape.back() << " features but weight expects " << w.shape[1]
                        << " (weight shape " << shape_str(w.shape) << ")";
      DType t = promote(x.dtype, w.dtype);
      if (in.size() == 3) {
        require_floating("dense", "bias", in[2].dtype);
        if (in[2].shape != Shape{w.shape[0]})
          PJ_THROW(Value) << "dense: bias has shape " << shape_str(in[2].shape) << " but expected (" << w.shape[0]
                          << ",) (weight shape " << shape_str(w.shape) << ")";
        t = promote(t, in[2].dtype);
      }
      Shape s = x.shape;
      s.back() = w.shape[0];
      return one(std::move(s), t);
    })
    .kernel(dense_kernel)
    .prepare([](const Metas& in, const Attrs& a, const Metas& out) -> PreparedFn {
      // float32 throughout: the oneDNN plan is made once here; the launch only binds pointers.
      bool f32 = out[0].dtype == DType::Float32;
      for (const TensorMeta& m : in) f32 = f32 && m.dtype == DType::Float32;
      const int64_t K = in[1].shape[1], N = in[1].shape[0], M = shape_numel(in[0].shape) / std::max<int64_t>(K, 1);
      std::shared_ptr<const DensePlan> plan = f32 && M > 0 && K > 0 && N > 0 ? dense_plan(M, K, N, in.size() == 3) : nullptr;
      if (!plan) return [a](const Tensors& i, const Tensors& o) { dense_kernel(i, a, o); };
      auto memo = std::make_shared<WeightMemo>();
      std::shared_ptr<DenseBinding> binding = make_dense_binding();
      const bool relu = dense_relu(a);
      return [plan, memo, binding, relu, a](const Tensors& i, const Tensors& o) {
        if (!o[0].is_contiguous()) return dense_kernel(i, a, o);
        // (dense_run reads only the pointers of x and out: their shapes are the plan's)
        dense_run(*plan, o[0], i[0], i[1], i.size() == 3 ? i[2] : Tensor(), memo.get(), binding.get());
        if (relu) unary_into(UnaryOp::relu, o[0], o[0]);
      };
    });

}  // namespace
}  // namespace pj
