// The CTC ops (kernels/ctc.h has the recursions and both conventions). This file owns the
// shape and dtype checks, with MindSpore's wording where it has one:
//   ctc_loss(log_probs [T, N, C] float32/64, targets [N, S], input_lengths [N], target_lengths [N];
//            blank=0, zero_infinity=False) -> (neg_log_likelihood [N], log_alpha [N, T, 2S + 1])
//   ctc_loss_grad(dnll [N], log_probs, targets, input_lengths, target_lengths, log_alpha; blank,
//            zero_infinity) -> d log_probs [T, N, C] (internal: ctc_loss's gradient)
//   ctc_loss_sparse(x [max_time, N, C] float, labels_indices [n, 2] int64, labels_values [n] int32,
//            sequence_length [N] int32; preprocess_collapse_repeated=False, ctc_merge_repeated=True,
//            ignore_longer_outputs_than_inputs=False) -> (loss [N], gradient [max_time, N, C])
// Integer inputs: Int32 or Int64 (MindSpore's documented dtypes; the sparse op accepts either
// width for each, as its values are read as integers).
#include <array>

#include "graph/ops/op_helpers.h"
#include "kernels/ctc.h"

namespace pj {
namespace {

void require_int(const char* op, const char* what, DType t) {
  if (t != DType::Int32 && t != DType::Int64)
    PJ_THROW(Type) << "For '" << op << "', the dtype of '" << what << "' must be int32 or int64, but got "
                   << dtype_name(t);
}

void require_rank(const char* op, const char* what, const Shape& s, size_t rank) {
  if (s.size() != rank)
    PJ_THROW(Value) << "For '" << op << "', the dim of " << what << " must be equal to " << rank << ", but got "
                    << s.size() << " (shape " << shape_str(s) << ")";
}

void require_dim(const char* op, const char* what, int64_t got, const char* of, int64_t want) {
  if (got != want)
    PJ_THROW(Value) << "For '" << op << "', " << what << " must be equal to " << of << " = " << want << ", but got "
                    << got;
}

int64_t blank_of(const Attrs& a) { return a.is_none("blank") ? 0 : a.i("blank"); }
bool flag(const Attrs& a, const char* k, bool dflt) { return a.is_none(k) ? dflt : a.b(k); }

// Checks ctc_loss's four inputs (offset: where log_probs sits); returns (T, N, C, S).
std::array<int64_t, 4> check_dense(const char* op, const Metas& in, size_t k, const Attrs& a) {
  const TensorMeta &lp = in[k], &tg = in[k + 1], &il = in[k + 2], &tl = in[k + 3];
  if (lp.dtype != DType::Float32 && lp.dtype != DType::Float64)
    PJ_THROW(Type) << "For '" << op << "', the dtype of 'log_probs' must be float32 or float64, but got "
                   << dtype_name(lp.dtype);
  require_int(op, "targets", tg.dtype);
  require_int(op, "input_lengths", il.dtype);
  require_int(op, "target_lengths", tl.dtype);
  require_rank(op, "log_probs", lp.shape, 3);
  require_rank(op, "targets", tg.shape, 2);
  require_rank(op, "input_lengths", il.shape, 1);
  require_rank(op, "target_lengths", tl.shape, 1);
  const int64_t T = lp.shape[0], N = lp.shape[1], C = lp.shape[2], S = tg.shape[1];
  require_dim(op, "targets.shape[0]", tg.shape[0], "the batch size N", N);
  require_dim(op, "input_lengths.shape[0]", il.shape[0], "the batch size N", N);
  require_dim(op, "target_lengths.shape[0]", tl.shape[0], "the batch size N", N);
  const int64_t blank = blank_of(a);
  if (blank < 0 || blank >= C)
    PJ_THROW(Value) << "For '" << op << "', the 'blank' must be in [0, " << C << ") (C, the classes of "
                    << "log_probs), but got " << blank;
  return {T, N, C, S};
}

PJ_REGISTER_OP("ctc_loss")
    .inputs(4)
    .raises_on_values()  // a length or a target out of range
    .attrs({"blank", "zero_infinity"})
    .infer([](const Metas& in, const Attrs& a) {
      auto [T, N, C, S] = check_dense("CTCLossV2", in, 0, a);
      (void)C;
      return Metas{TensorMeta{Shape{N}, in[0].dtype}, TensorMeta{Shape{N, T, 2 * S + 1}, in[0].dtype}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      ctc_loss_into(out[0], out[1], in[0], in[1], in[2], in[3], blank_of(a), flag(a, "zero_infinity", false));
    });

PJ_REGISTER_OP("ctc_loss_grad")
    .inputs(6)
    .raises_on_values()
    .attrs({"blank", "zero_infinity"})
    .infer([](const Metas& in, const Attrs& a) {
      auto [T, N, C, S] = check_dense("CTCLossV2Grad", in, 1, a);
      if (in[0].shape != Shape{N} || in[5].shape != Shape{N, T, 2 * S + 1})
        PJ_THROW(Value) << "For 'CTCLossV2Grad', grad_out must be (" << N << ",) and log_alpha (" << N << ", " << T
                        << ", " << 2 * S + 1 << "), but got " << shape_str(in[0].shape) << " and "
                        << shape_str(in[5].shape);
      return one(Shape{T, N, C}, in[1].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      ctc_loss_grad_into(out[0], in[0], in[1], in[2], in[3], in[4], in[5], blank_of(a),
                         flag(a, "zero_infinity", false));
    });

PJ_REGISTER_OP("ctc_loss_sparse")
    .inputs(4)
    .raises_on_values()
    .attrs({"preprocess_collapse_repeated", "ctc_merge_repeated", "ignore_longer_outputs_than_inputs"})
    .infer([](const Metas& in, const Attrs&) {
      const char* op = "CTCLoss";
      const TensorMeta &x = in[0], &ix = in[1], &v = in[2], &sl = in[3];
      if (!is_floating(x.dtype))
        PJ_THROW(Type) << "For '" << op << "', the dtype of 'x' must be float16, float32 or float64, but got "
                       << dtype_name(x.dtype);
      require_int(op, "labels_indices", ix.dtype);
      require_int(op, "labels_values", v.dtype);
      require_int(op, "sequence_length", sl.dtype);
      require_rank(op, "'x'", x.shape, 3);
      require_rank(op, "'labels_indices'", ix.shape, 2);
      require_rank(op, "'labels_values'", v.shape, 1);
      require_rank(op, "'sequence_length'", sl.shape, 1);
      require_dim(op, "labels_indices.shape[1]", ix.shape[1], "2", 2);
      require_dim(op, "labels_values.shape[0]", v.shape[0], "labels_indices.shape[0]", ix.shape[0]);
      require_dim(op, "sequence_length.shape[0]", sl.shape[0], "the batch size x.shape[1]", x.shape[1]);
      if (x.shape[2] < 1)
        PJ_THROW(Value) << "For '" << op << "', 'x' must have at least 1 class (the blank), but got shape "
                        << shape_str(x.shape);
      return Metas{TensorMeta{Shape{x.shape[1]}, x.dtype}, TensorMeta{x.shape, x.dtype}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      CtcSparseOptions o;
      o.preprocess_collapse_repeated = flag(a, "preprocess_collapse_repeated", false);
      o.ctc_merge_repeated = flag(a, "ctc_merge_repeated", true);
      o.ignore_longer_outputs_than_inputs = flag(a, "ignore_longer_outputs_than_inputs", false);
      ctc_loss_sparse_into(out[0], out[1], in[0], in[1], in[2], in[3], o);
    });

}  // namespace
}  // namespace pj
