// conv2d_block: conv2d -> per-channel affine -> ReLU -> max_pool2d, made by the graph compiler's
// fuse_conv pass from a chain of those ops (never by users); run as one kernel that keeps the
// activation in oneDNN's blocked layout (kernels/conv_block.h), or op by op where it cannot.
//
//   conv2d_block(x, weight[, bias][, m, a, sh]) -> relu?((conv2d(x, weight, bias) - m) * a + sh),
//     max-pooled when pool_kernel_size is set
// Attributes: conv2d's (stride, padding, dilation, groups); bias, affine, relu (bools saying
// which optional inputs and steps there are); max_pool2d's prefixed with pool_ (None: no pooling);
// blocked_in / blocked_out (the layout pass): x's / the result's bytes are in oneDNN's nChw16c
// order, a value only another conv2d_block reads (kernels/conv_block.h).
// m, a, sh are per-channel: shaped [C, 1, 1].
#include "graph/ops/nn_params.h"
#include "graph/ops/op_helpers.h"
#include "kernels/conv_block.h"

namespace pj {
namespace {

const char* const kPoolAttrs[] = {"kernel_size", "stride", "padding", "dilation", "ceil_mode"};

Attrs conv_attrs(const Attrs& a) {
  Attrs c;
  for (const char* k : {"stride", "padding", "dilation", "groups"})
    if (a.has(k)) c.set(k, a.get(k));
  return c;
}

bool has_pool(const Attrs& a) { return a.has("pool_kernel_size") && !a.is_none("pool_kernel_size"); }

Attrs pool_attrs(const Attrs& a) {
  Attrs p;
  for (const char* k : kPoolAttrs)
    if (a.has(std::string("pool_") + k)) p.set(k, a.get(std::string("pool_") + k));
  return p;
}

struct Parts {
  int conv_inputs = 2;  // x, weight[, bias]
  bool affine = false, relu = false, pool = false, blocked_in = false, blocked_out = false;
};

Parts parts_of(const Attrs& a, size_t num_inputs) {
  Parts p;
  p.conv_inputs = a.b("bias") ? 3 : 2;
  p.affine = a.b("affine");
  p.relu = a.b("relu");
  p.pool = has_pool(a);
  p.blocked_in = a.has("blocked_in") && a.b("blocked_in");
  p.blocked_out = a.has("blocked_out") && a.b("blocked_out");
  if (num_inputs != static_cast<size_t>(p.conv_inputs + (p.affine ? 3 : 0)))
    PJ_THROW(Type) << "conv2d_block: " << num_inputs << " inputs do not match its attributes";
  return p;
}

template <typename V>
V head(const V& v, int n) {
  return V(v.begin(), v.begin() + n);
}

Metas block_infer(const Metas& in, const Attrs& a) {
  const Parts p = parts_of(a, in.size());
  Metas conv = get_op("conv2d").infer(head(in, p.conv_inputs), conv_attrs(a));
  if (in[0].dtype != DType::Float32) PJ_THROW(Type) << "conv2d_block computes in Float32";
  if (p.affine)
    for (int k = 0; k < 3; ++k)
      if (in[p.conv_inputs + k].shape != Shape({conv[0].shape[1], 1, 1}) || in[p.conv_inputs + k].dtype != DType::Float32)
        PJ_THROW(Value) << "conv2d_block: per-channel operands must be Float32[" << conv[0].shape[1] << ", 1, 1]";
  const auto blocks_of_16 = [](const Shape& s) { return s[1] % 16 == 0; };
  if (p.blocked_in && !blocks_of_16(in[0].shape))
    PJ_THROW(Value) << "conv2d_block: blocked_in needs input channels in multiples of 16, got " << in[0].shape[1];
  if (p.blocked_out && !blocks_of_16(conv[0].shape))
    PJ_THROW(Value) << "conv2d_block: blocked_out needs output channels in multiples of 16, got " << conv[0].shape[1];
  if (!p.pool) return conv;
  return get_op("max_pool2d").infer(conv, pool_attrs(a));
}

// The ops one by one: the meaning of the block, and its path where the fused one cannot run.
void block_by_ops(const Tensors& in, const Attrs& a, const Tensors& out) {
  const Parts p = parts_of(a, in.size());
  Tensors conv_in = head(in, p.conv_inputs);
  if (p.blocked_in) conv_in[0] = nchw16c_to_nchw(conv_in[0]);
  Tensor y = run_op(get_op("conv2d"), conv_in, conv_attrs(a))[0];
  if (p.affine) {
    const Shape c{y.dim(1), 1, 1};
    auto channel = [&](int k) {
      const Tensor t = in[p.conv_inputs + k].contiguous();
      return t.as_strided(c, contiguous_strides(c), t.offset());
    };
    y = run_op(get_op("sub"), {y, channel(0)}, {})[0];
    y = run_op(get_op("mul"), {y, channel(1)}, {})[0];
    y = run_op(get_op("add"), {y, channel(2)}, {})[0];
  }
  if (p.relu) y = run_op(get_op("relu"), {y}, {})[0];
  if (p.pool) y = run_op(get_op("max_pool2d"), {y}, pool_attrs(a))[0];
  if (p.blocked_out) {
    // blocked bytes have no strided view: the layout pass gives such a value a contiguous buffer
    PJ_CHECK(out[0].is_contiguous()) << "conv2d_block: blocked_out into a non-contiguous tensor";
    y = nchw_to_nchw16c(y);
  }
  copy_into(out[0], y);
}

PJ_REGISTER_OP("conv2d_block")
    .variadic(2)
    .total()
    .attrs({"stride", "padding", "dilation", "groups", "bias", "affine", "relu", "pool_kernel_size", "pool_stride",
            "pool_padding", "pool_dilation", "pool_ceil_mode", "blocked_in", "blocked_out"})
    .infer(block_infer)
    .kernel(block_by_ops)
    .prepare([](const Metas& in, const Attrs& a, const Metas& out) -> PreparedFn {
      const Parts parts = parts_of(a, in.size());
      std::shared_ptr<const ConvBlockPlan> plan = conv_block_plan(conv_block_spec(in, a, out));
      if (!plan) return [a](const Tensors& i, const Tensors& o) { block_by_ops(i, a, o); };
      return [plan, a, parts](const Tensors& i, const Tensors& o) {
        if (!o[0].is_contiguous()) return block_by_ops(i, a, o);
        const int c = parts.conv_inputs;
        conv_block_run(*plan, o[0], i[0], i[1], c == 3 ? i[2] : Tensor(), parts.affine ? i[c] : Tensor(),
                       parts.affine ? i[c + 1] : Tensor(), parts.affine ? i[c + 2] : Tensor());
      };
    });

}  // namespace

ConvBlockSpec conv_block_spec(const Metas& in, const Attrs& a, const Metas& out) {
  const Parts parts = parts_of(a, in.size());
  ConvBlockSpec s;
  s.x = in[0].shape;
  s.w = in[1].shape;
  const Metas conv_in = head(in, parts.conv_inputs);
  s.conv_out = get_op("conv2d").infer(conv_in, conv_attrs(a))[0].shape;
  s.out = out[0].shape;
  s.conv = conv2d_params(conv_in, conv_attrs(a));
  s.bias = parts.conv_inputs == 3;
  s.affine = parts.affine;
  s.relu = parts.relu;
  if (parts.pool) s.pool = pool_params(pool_attrs(a), "max_pool2d", true);
  s.blocked_in = parts.blocked_in;
  s.blocked_out = parts.blocked_out;
  return s;
}

}  // namespace pj
