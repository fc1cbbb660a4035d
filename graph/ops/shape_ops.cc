// Shape ops. The views (reshape, transpose/permute, squeeze, expand_dims/unsqueeze, flatten,
// broadcast_to, split) `run` by returning as_strided views of their input; reshape and flatten
// copy only when no strides express the result (numpy's rule; same_storage tells which). Their
// `infer` gives the shapes for capture. concat, stack and tile are ordinary infer+kernel ops.
#include "graph/ops/op_helpers.h"
#include "kernels/shape_ops.h"

namespace pj {
namespace {

// An IntList attribute that may also be given as one int, or None/missing (nullopt).
std::optional<IntList> opt_ints(const Attrs& a, const std::string& k) {
  if (a.is_none(k)) return std::nullopt;
  const AttrValue& v = a.get(k);
  if (auto* p = std::get_if<int64_t>(&v)) return IntList{*p};
  return a.ints(k);
}

IntList ints_of(const Attrs& a, const std::string& k) {
  auto v = opt_ints(a, k);
  if (!v) PJ_THROW(Type) << "attribute '" << k << "' must be a tuple of ints";
  return *v;
}

// The split of `shape` along the op's axis, from "sections" (int: numpy's equal parts; a list is
// taken as split points, as numpy.split's one argument) or "indices" (split points).
std::vector<std::pair<int64_t, int64_t>> split_ranges(const Shape& shape, const Attrs& a, int* axis) {
  if (shape.empty()) PJ_THROW(Value) << "split(): cannot split a 0-d tensor";
  *axis = normalize_axis(a.i("axis", 0), static_cast<int>(shape.size()));
  int64_t len = shape[*axis];
  if (!a.is_none("sections")) {
    if (std::holds_alternative<IntList>(a.get("sections")))
      return split_ranges_indices(len, a.ints("sections"));
    return split_ranges_sections(len, a.i("sections"));
  }
  if (!a.is_none("indices")) return split_ranges_indices(len, a.ints("indices"));
  PJ_THROW(Type) << "split(): one of 'sections' or 'indices' is required";
}

Metas one_meta(const Shape& s, DType t) { return one(s, t); }

PJ_REGISTER_OP("reshape")
    .total()
    .inputs(1)
    .attrs({"shape"})
    .view()
    .infer([](const Metas& in, const Attrs& a) {
      return one_meta(reshape_shape(in[0].shape, ints_of(a, "shape")), in[0].dtype);
    })
    .run([](const Tensors& in, const Attrs& a) { return Tensors{reshape(in[0], ints_of(a, "shape"))}; });

// transpose(perm=None reverses the dims, as numpy); permute requires perm (Tensor.permute(*axes)).
PJ_REGISTER_OP("transpose")
    .total()
    .inputs(1)
    .attrs({"perm"})
    .view()
    .infer([](const Metas& in, const Attrs& a) {
      const Shape& s = in[0].shape;
      auto perm = opt_ints(a, "perm");
      if (!perm) return one_meta(Shape(s.rbegin(), s.rend()), in[0].dtype);
      std::vector<int> p = check_permutation(*perm, static_cast<int>(s.size()));
      Shape o;
      for (int d : p) o.push_back(s[d]);
      return one_meta(o, in[0].dtype);
    })
    .run([](const Tensors& in, const Attrs& a) {
      auto perm = opt_ints(a, "perm");
      return Tensors{perm ? permute(in[0], *perm) : transpose_all(in[0])};
    });

PJ_REGISTER_OP("permute")
    .total()
    .inputs(1)
    .attrs({"perm"})
    .view()
    .infer([](const Metas& in, const Attrs& a) {
      std::vector<int> p = check_permutation(ints_of(a, "perm"), static_cast<int>(in[0].shape.size()));
      Shape o;
      for (int d : p) o.push_back(in[0].shape[d]);
      return one_meta(o, in[0].dtype);
    })
    .run([](const Tensors& in, const Attrs& a) { return Tensors{permute(in[0], ints_of(a, "perm"))}; });

PJ_REGISTER_OP("squeeze")
    .total()
    .inputs(1)
    .attrs({"axis"})
    .view()
    .infer([](const Metas& in, const Attrs& a) {
      return one_meta(squeeze_shape(in[0].shape, opt_ints(a, "axis")), in[0].dtype);
    })
    .run([](const Tensors& in, const Attrs& a) { return Tensors{squeeze(in[0], opt_ints(a, "axis"))}; });

void register_expand_dims(const char* name) {
  OpRegistrar(name)
      .total()
      .inputs(1)
      .attrs({"axis"})
      .view()
      .infer([](const Metas& in, const Attrs& a) {
        Shape s = in[0].shape;
        s.insert(s.begin() + expand_dims_axis(a.i("axis"), static_cast<int>(s.size())), 1);
        return one_meta(s, in[0].dtype);
      })
      .run([](const Tensors& in, const Attrs& a) { return Tensors{expand_dims(in[0], a.i("axis"))}; });
}

struct Registrations {
  Registrations() {
    register_expand_dims("expand_dims");
    register_expand_dims("unsqueeze");
  }
} registrations;

PJ_REGISTER_OP("flatten")
    .total()
    .inputs(1)
    .attrs({"start_dim", "end_dim"})
    .view()
    .infer([](const Metas& in, const Attrs& a) {
      return one_meta(flatten_shape(in[0].shape, a.i("start_dim", 0), a.i("end_dim", -1)), in[0].dtype);
    })
    .run([](const Tensors& in, const Attrs& a) {
      return Tensors{flatten(in[0], a.i("start_dim", 0), a.i("end_dim", -1))};
    });

PJ_REGISTER_OP("broadcast_to")
    .total()
    .inputs(1)
    .attrs({"shape"})
    .view()
    .infer([](const Metas& in, const Attrs& a) {
      return one_meta(broadcast_to_shape(in[0].shape, ints_of(a, "shape")), in[0].dtype);
    })
    .run([](const Tensors& in, const Attrs& a) { return Tensors{broadcast_to(in[0], ints_of(a, "shape"))}; });

PJ_REGISTER_OP("split")
    .total()
    .inputs(1)
    .attrs({"sections", "indices", "axis"})
    .view()
    .infer([](const Metas& in, const Attrs& a) {
      int axis = 0;
      Metas out;
      for (auto& [start, n] : split_ranges(in[0].shape, a, &axis)) {
        Shape s = in[0].shape;
        s[axis] = n;
        out.push_back({s, in[0].dtype});
      }
      return out;
    })
    .run([](const Tensors& in, const Attrs& a) {
      int axis = 0;
      auto ranges = split_ranges(in[0].shape(), a, &axis);
      return split_views(in[0], axis, ranges);
    });

std::vector<Shape> shapes_of(const Metas& in) {
  std::vector<Shape> s;
  for (auto& m : in) s.push_back(m.shape);
  return s;
}
DType dtype_of_all(const Metas& in) {
  std::vector<DType> d;
  for (auto& m : in) d.push_back(m.dtype);
  return promote_all(d);
}

// concat(*tensors, axis=0): dtypes promote together.
PJ_REGISTER_OP("concat")
    .total()
    .inputs(-1)
    .attrs({"axis"})
    .infer([](const Metas& in, const Attrs& a) {
      Shape s = concat_shape(shapes_of(in), a.i("axis", 0), nullptr);
      return one_meta(s, dtype_of_all(in));
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      int axis = 0;
      std::vector<Shape> shapes;
      for (auto& t : in) shapes.push_back(t.shape());
      concat_shape(shapes, a.i("axis", 0), &axis);
      concat_into(out[0], in, axis);
    });

PJ_REGISTER_OP("stack")
    .total()
    .inputs(-1)
    .attrs({"axis"})
    .infer([](const Metas& in, const Attrs& a) {
      Shape s = stack_shape(shapes_of(in), a.i("axis", 0), nullptr);
      return one_meta(s, dtype_of_all(in));
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      int axis = 0;
      std::vector<Shape> shapes;
      for (auto& t : in) shapes.push_back(t.shape());
      stack_shape(shapes, a.i("axis", 0), &axis);
      stack_into(out[0], in, axis);
    });

// stop_gradient(x): x's values, through which no gradient flows (a view: a new tensor identity
// over the same data, so a gradient tape does not see it as x).
PJ_REGISTER_OP("stop_gradient")
    .total()
    .inputs(1)
    .view()
    .infer([](const Metas& in, const Attrs&) { return one_meta(in[0].shape, in[0].dtype); })
    .run([](const Tensors& in, const Attrs&) {
      return Tensors{in[0].as_strided(in[0].shape(), in[0].strides(), in[0].offset())};
    });

PJ_REGISTER_OP("tile")
    .total()
    .inputs(1)
    .attrs({"reps"})
    .infer([](const Metas& in, const Attrs& a) {
      return one_meta(tile_shape(in[0].shape, ints_of(a, "reps")), in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs&, const Tensors& out) { tile_into(out[0], in[0]); });

}  // namespace
}  // namespace pj
