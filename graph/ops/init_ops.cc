// Initialiser fills (pijit.common.initializer): no tensor inputs, everything in attributes.
//   init_uniform(shape, dtype, low, high, seed=None)                 low + (high - low) U[0, 1)
//   init_normal(shape, dtype, mean, sigma, seed=None)                N(mean, sigma^2)
//   init_truncated_normal(shape, dtype, mean, sigma, a, b, seed=None)  N(mean, sigma^2) on [a, b]
// They draw from kernels/random.h like rand and randn (seed None: the global generator), in one
// pass at the result's dtype: the Python initialisers made a float64 draw, two arithmetic passes
// and a cast (~40 ns an element against ~2 here).
#include "graph/ops/op_helpers.h"
#include "kernels/random.h"

namespace pj {
namespace {

Shape init_shape(const Attrs& a) {
  const IntList& l = a.ints("shape");
  Shape s(l.begin(), l.end());
  for (auto d : s)
    if (d < 0) PJ_THROW(Value) << "negative dimensions are not allowed";
  return s;
}

Metas init_infer(const Attrs& a, const char* who) {
  const DType t = a.dtype("dtype");
  if (!is_floating(t)) PJ_THROW(Type) << who << " does not support dtype " << dtype_name(t);
  return one(init_shape(a), t);
}

std::optional<uint64_t> init_seed(const Attrs& a) {
  if (!a.has("seed") || a.is_none("seed")) return std::nullopt;
  return static_cast<uint64_t>(a.i("seed"));
}

PJ_REGISTER_OP("init_uniform")
    .impure()
    .inputs(0)
    .attrs({"shape", "dtype", "low", "high", "seed"})
    .infer([](const Metas&, const Attrs& a) { return init_infer(a, "init_uniform"); })
    .kernel([](const Tensors&, const Attrs& a, const Tensors& out) {
      uniform_range_into(out[0], a.f("low"), a.f("high"), init_seed(a));
    });

PJ_REGISTER_OP("init_normal")
    .impure()
    .inputs(0)
    .attrs({"shape", "dtype", "mean", "sigma", "seed"})
    .infer([](const Metas&, const Attrs& a) {
      if (!(a.f("sigma") >= 0)) PJ_THROW(Value) << "normal initializer: sigma must be >= 0, got " << a.f("sigma");
      return init_infer(a, "init_normal");
    })
    .kernel([](const Tensors&, const Attrs& a, const Tensors& out) {
      normal_scaled_into(out[0], a.f("mean"), a.f("sigma"), init_seed(a));
    });

PJ_REGISTER_OP("init_truncated_normal")
    .impure()
    .inputs(0)
    .attrs({"shape", "dtype", "mean", "sigma", "a", "b", "seed"})
    .infer([](const Metas&, const Attrs& a) {
      if (!(a.f("sigma") > 0))
        PJ_THROW(Value) << "truncated normal initializer: sigma must be > 0, got " << a.f("sigma");
      if (!(a.f("a") < a.f("b")))
        PJ_THROW(Value) << "truncated normal initializer: a must be less than b, got a = " << a.f("a")
                        << ", b = " << a.f("b");
      return init_infer(a, "init_truncated_normal");
    })
    .kernel([](const Tensors&, const Attrs& a, const Tensors& out) {
      truncated_normal_into(out[0], a.f("mean"), a.f("sigma"), a.f("a"), a.f("b"), init_seed(a));
    });

}  // namespace
}  // namespace pj
