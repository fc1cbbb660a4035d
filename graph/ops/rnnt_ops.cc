// The RNN-T loss op (kernels/rnnt.h has the recursions). Shape and dtype checks, in MindSpore's
// wording where it has one:
//   rnnt_loss(acts [B, T, U + 1, V] float32/64, labels [B, U] int32/64, input_lengths [B],
//             label_lengths [B]; blank=0) -> (costs [B], grads [B, T, U + 1, V])
// (ops.RNNTLoss casts float16 acts to float32 around the op.)
#include "graph/ops/op_helpers.h"
#include "kernels/rnnt.h"

namespace pj {
namespace {

void require_int(const char* what, DType t) {
  if (t != DType::Int32 && t != DType::Int64)
    PJ_THROW(Type) << "For 'RNNTLoss', the dtype of '" << what << "' must be int32, but got " << dtype_name(t);
}

void require_rank(const char* what, const Shape& s, size_t rank) {
  if (s.size() != rank)
    PJ_THROW(Value) << "For 'RNNTLoss', the dimension of '" << what << "' must be " << rank << ", but got "
                    << s.size() << " (shape " << shape_str(s) << ")";
}

int64_t blank_of(const Attrs& a) { return a.is_none("blank") ? 0 : a.i("blank"); }

PJ_REGISTER_OP("rnnt_loss")
    .inputs(4)
    .raises_on_values()  // a length or a label out of range
    .attrs({"blank"})
    .infer([](const Metas& in, const Attrs& a) {
      const TensorMeta &x = in[0], &l = in[1], &il = in[2], &ll = in[3];
      if (x.dtype != DType::Float32 && x.dtype != DType::Float64)
        PJ_THROW(Type) << "For 'RNNTLoss', the dtype of 'acts' must be float16 or float32, but got "
                       << dtype_name(x.dtype);
      require_int("labels", l.dtype);
      require_int("input_lengths", il.dtype);
      require_int("label_lengths", ll.dtype);
      require_rank("acts", x.shape, 4);
      require_rank("labels", l.shape, 2);
      require_rank("input_lengths", il.shape, 1);
      require_rank("label_lengths", ll.shape, 1);
      const int64_t B = x.shape[0], U1 = x.shape[2], V = x.shape[3];
      if (l.shape[0] != B || il.shape[0] != B || ll.shape[0] != B)
        PJ_THROW(Value) << "For 'RNNTLoss', the batch size of 'labels', 'input_lengths' and 'label_lengths' must "
                        << "be acts.shape[0] = " << B << ", but got " << shape_str(l.shape) << ", "
                        << shape_str(il.shape) << " and " << shape_str(ll.shape);
      if (l.shape[1] != U1 - 1)
        PJ_THROW(Value) << "For 'RNNTLoss', labels.shape[1] must be acts.shape[2] - 1 = " << U1 - 1
                        << ", but got " << l.shape[1];
      const int64_t blank = blank_of(a);
      if (blank < 0 || blank >= V)
        PJ_THROW(Value) << "For 'RNNTLoss', the 'blank_label' must be in [0, " << V << ") (acts.shape[3]), but got "
                        << blank;
      return Metas{TensorMeta{Shape{B}, x.dtype}, TensorMeta{x.shape, x.dtype}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      rnnt_loss_into(out[0], out[1], in[0], in[1], in[2], in[3], blank_of(a));
    });

}  // namespace
}  // namespace pj
