// Creation ops: no tensor inputs, everything in attributes.
//   arange(start, stop=None, step=1, dtype=None)   stop None: range(0, start); dtype None: Int64
//                                                  when start/stop/step are all ints, else Float32
//   linspace(start, stop, num, dtype=Float32, endpoint=True)
//   eye(n, m=None, k=0, dtype=Float32)
//   full(shape, value, dtype=None)                 dtype None: Bool/Int64/Float32 from value's type
//   ones(shape, dtype=Float32), zeros(shape, dtype=Float32)
//   rand(shape, dtype=Float32, seed=None)          uniform [0, 1)
//   randn(shape, dtype=Float32, seed=None)         standard normal
//   randint(low, high, shape, dtype=Int64, seed=None)  uniform integers in [low, high)
// The random ops draw from kernels/random.h: seed None uses (and advances) the global generator.
#include "graph/ops/op_helpers.h"
#include "kernels/creation_ops.h"
#include "kernels/random.h"

namespace pj {
namespace {

Shape shape_attr(const Attrs& a) {
  const AttrValue& v = a.get("shape");
  if (auto* p = std::get_if<int64_t>(&v)) return Shape{*p};
  const IntList& l = a.ints("shape");
  Shape s(l.begin(), l.end());
  for (auto d : s)
    if (d < 0) PJ_THROW(Value) << "negative dimensions are not allowed";
  return s;
}

DType dtype_attr(const Attrs& a, DType dflt) { return a.is_none("dtype") ? dflt : a.dtype("dtype"); }

bool is_int_attr(const Attrs& a, const std::string& k) {
  if (a.is_none(k)) return true;
  const AttrValue& v = a.get(k);
  return std::holds_alternative<int64_t>(v) || std::holds_alternative<bool>(v);
}

// arange's (start, stop, step) with numpy's one-argument form resolved.
struct Range {
  bool ints;
  int64_t istart, istop, istep;
  double start, stop, step;
};

Range range_attrs(const Attrs& a) {
  Range r;
  r.ints = is_int_attr(a, "start") && is_int_attr(a, "stop") && is_int_attr(a, "step");
  bool one_arg = a.is_none("stop");
  if (r.ints) {
    r.istart = one_arg ? 0 : a.i("start");
    r.istop = one_arg ? a.i("start") : a.i("stop");
    r.istep = a.i("step", 1);
  }
  r.start = one_arg ? 0.0 : a.f("start");
  r.stop = one_arg ? a.f("start") : a.f("stop");
  r.step = a.is_none("step") ? 1.0 : a.f("step");
  return r;
}

PJ_REGISTER_OP("arange")
    .total()
    .inputs(0)
    .attrs({"start", "stop", "step", "dtype"})
    .infer([](const Metas&, const Attrs& a) {
      Range r = range_attrs(a);
      int64_t n = r.ints ? arange_length_int(r.istart, r.istop, r.istep)
                         : arange_length(r.start, r.stop, r.step);
      return one({n}, dtype_attr(a, r.ints ? DType::Int64 : DType::Float32));
    })
    .kernel([](const Tensors&, const Attrs& a, const Tensors& out) {
      Range r = range_attrs(a);
      if (r.ints && !is_floating(out[0].dtype())) arange_int_into(out[0], r.istart, r.istep);
      else arange_into(out[0], r.start, r.step);
    });

PJ_REGISTER_OP("linspace")
    .total()
    .inputs(0)
    .attrs({"start", "stop", "num", "dtype", "endpoint"})
    .infer([](const Metas&, const Attrs& a) {
      check_linspace_num(a.i("num"));
      return one({a.i("num")}, dtype_attr(a, DType::Float32));
    })
    .kernel([](const Tensors&, const Attrs& a, const Tensors& out) {
      linspace_into(out[0], a.f("start"), a.f("stop"), a.b("endpoint", true));
    });

PJ_REGISTER_OP("eye")
    .total()
    .inputs(0)
    .attrs({"n", "m", "k", "dtype"})
    .infer([](const Metas&, const Attrs& a) {
      int64_t n = a.i("n"), m = a.i("m", n);
      if (n < 0 || m < 0) PJ_THROW(Value) << "negative dimensions are not allowed";
      return one({n, m}, dtype_attr(a, DType::Float32));
    })
    .kernel([](const Tensors&, const Attrs& a, const Tensors& out) { eye_into(out[0], a.i("k", 0)); });

PJ_REGISTER_OP("full")
    .total()
    .inputs(0)
    .attrs({"shape", "value", "dtype"})
    .infer([](const Metas&, const Attrs& a) {
      const AttrValue& v = a.get("value");
      DType dflt = std::holds_alternative<bool>(v)      ? DType::Bool
                   : std::holds_alternative<int64_t>(v) ? DType::Int64
                                                        : DType::Float32;
      return one(shape_attr(a), dtype_attr(a, dflt));
    })
    .kernel([](const Tensors&, const Attrs& a, const Tensors& out) {
      const AttrValue& v = a.get("value");
      // Integers are filled exactly (a double would round int64 values above 2^53).
      if (auto* p = std::get_if<int64_t>(&v)) copy_into(out[0], Tensor::scalar_int(*p, out[0].dtype()));
      else fill(out[0], a.f("value"));
    });

// `full` with the shape of its input (its data is not read): a gradient's zeros or seed keeps the
// sizes of the value it stands for when a graph is planned for other sizes (dynamic shapes).
PJ_REGISTER_OP("full_like")
    .total()
    .inputs(1)
    .attrs({"value", "dtype"})
    .infer([](const Metas& in, const Attrs& a) {
      const AttrValue& v = a.get("value");
      DType dflt = std::holds_alternative<bool>(v)      ? DType::Bool
                   : std::holds_alternative<int64_t>(v) ? DType::Int64
                                                        : DType::Float32;
      return one(in[0].shape, dtype_attr(a, dflt));
    })
    .kernel([](const Tensors&, const Attrs& a, const Tensors& out) {
      const AttrValue& v = a.get("value");
      if (auto* p = std::get_if<int64_t>(&v)) copy_into(out[0], Tensor::scalar_int(*p, out[0].dtype()));
      else fill(out[0], a.f("value"));
    });

void register_constant(const char* name, double value) {
  OpRegistrar(name)
      .inputs(0)
      .attrs({"shape", "dtype"})
      .infer([](const Metas&, const Attrs& a) { return one(shape_attr(a), dtype_attr(a, DType::Float32)); })
      .kernel([value](const Tensors&, const Attrs&, const Tensors& out) { fill(out[0], value); });
}

std::optional<uint64_t> seed_attr(const Attrs& a) {
  if (a.is_none("seed")) return std::nullopt;
  return static_cast<uint64_t>(a.i("seed"));
}

struct Registrations {
  Registrations() {
    register_constant("ones", 1);
    register_constant("zeros", 0);
  }
} registrations;

PJ_REGISTER_OP("rand")
    .impure()
    .inputs(0)
    .attrs({"shape", "dtype", "seed"})
    .infer([](const Metas&, const Attrs& a) {
      DType t = dtype_attr(a, DType::Float32);
      if (!is_floating(t)) PJ_THROW(Type) << "rand does not support dtype " << dtype_name(t);
      return one(shape_attr(a), t);
    })
    .kernel([](const Tensors&, const Attrs& a, const Tensors& out) { uniform_into(out[0], seed_attr(a)); });

PJ_REGISTER_OP("randn")
    .impure()
    .inputs(0)
    .attrs({"shape", "dtype", "seed"})
    .infer([](const Metas&, const Attrs& a) {
      DType t = dtype_attr(a, DType::Float32);
      if (!is_floating(t)) PJ_THROW(Type) << "randn does not support dtype " << dtype_name(t);
      return one(shape_attr(a), t);
    })
    .kernel([](const Tensors&, const Attrs& a, const Tensors& out) { normal_into(out[0], seed_attr(a)); });

PJ_REGISTER_OP("randint")
    .impure()
    .inputs(0)
    .attrs({"low", "high", "shape", "dtype", "seed"})
    .infer([](const Metas&, const Attrs& a) {
      DType t = dtype_attr(a, DType::Int64);
      check_randint_bounds(a.i("low"), a.i("high"), t);
      return one(shape_attr(a), t);
    })
    .kernel([](const Tensors&, const Attrs& a, const Tensors& out) {
      randint_into(out[0], a.i("low"), a.i("high"), seed_attr(a));
    });

}  // namespace
}  // namespace pj
