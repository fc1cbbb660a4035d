// Indexing ops: gather, index_select, one_hot, sort, topk, and numpy subscripts.
//
// A subscript travels as the attribute "items" (encode_index_items: 4 ints per item) plus one
// extra tensor input per Array item, in order:
//   basic_index(x; items)               x[items] without arrays: a view
//   index(x, *arrays; items)            x[items], any items: a new tensor when arrays are present
//   index_put(x, value, *arrays; items) a copy of x with x[items] = value (functional; the
//                                       in-place form is pj::index_put, which the binding calls)
// index's infer raises NotImplemented for boolean masks, whose result shape depends on data.
#include "graph/ops/op_helpers.h"
#include "kernels/index_ops.h"
#include "kernels/sort_ops.h"

namespace pj {
namespace {

// Tensors that stand in for index arrays when only their shapes are known (infer).
std::vector<Tensor> placeholders(const Metas& in, size_t first) {
  std::vector<Tensor> out;
  for (size_t i = first; i < in.size(); ++i)
    out.push_back(Tensor::view_of(Storage::allocate(0), in[i].shape, Shape(in[i].shape.size(), 0), 0,
                                  in[i].dtype));
  return out;
}

Tensors tail(const Tensors& in, size_t first) { return Tensors(in.begin() + first, in.end()); }

PJ_REGISTER_OP("basic_index")
    .total()  // constant indices: infer checks them
    .inputs(1)
    .attrs({"items"})
    .view()
    .infer([](const Metas& in, const Attrs& a) {
      return one(index_shape(in[0].shape, decode_index_items(a.ints("items"), {})), in[0].dtype);
    })
    .run([](const Tensors& in, const Attrs& a) {
      return Tensors{basic_index_view(in[0], decode_index_items(a.ints("items"), {}))};
    });

PJ_REGISTER_OP("index")
    .raises_on_values()
    .variadic(1)
    .attrs({"items"})
    .infer([](const Metas& in, const Attrs& a) {
      auto items = decode_index_items(a.ints("items"), placeholders(in, 1));
      return one(index_shape(in[0].shape, items), in[0].dtype);
    })
    .run([](const Tensors& in, const Attrs& a) {
      return Tensors{advanced_index(in[0], decode_index_items(a.ints("items"), tail(in, 1)))};
    });

// accumulate=True: x[items] += value, repeated positions adding up (the gradient of `index`).
PJ_REGISTER_OP("index_put")
    .variadic(2)
    .attrs({"items", "accumulate"})
    .infer([](const Metas& in, const Attrs& a) {
      if (a.b("accumulate") && !is_floating(in[0].dtype))
        PJ_THROW(Type) << "index_put(accumulate=True) needs a floating tensor, got " << dtype_name(in[0].dtype);
      return one(in[0].shape, in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      copy_into(out[0], in[0]);
      IndexItems items = decode_index_items(a.ints("items"), tail(in, 2));
      if (a.b("accumulate")) index_put_accumulate(out[0], items, in[1]);
      else index_put(out[0], items, in[1]);
    });

// index_add's and scatter_add's operands: integer indices, one floating dtype for base and src.
void check_add_operands(const char* op, const TensorMeta& base, const TensorMeta& index, const TensorMeta& src) {
  if (!is_integral(index.dtype, false))
    PJ_THROW(Type) << op << "(): index must be an integer tensor, but got " << dtype_name(index.dtype);
  if (!is_floating(base.dtype) || src.dtype != base.dtype)
    PJ_THROW(Type) << op << "(): base and src must have one floating dtype, got " << dtype_name(base.dtype) << " and "
                   << dtype_name(src.dtype);
}

// index_add(base, index, src; axis): base with src's slices added at index along axis (the
// gradient of gather, index_select and embedding).
PJ_REGISTER_OP("index_add")
    .raises_on_values()
    .inputs(3)
    .attrs({"axis"})
    .infer([](const Metas& in, const Attrs& a) {
      const TensorMeta &base = in[0], &index = in[1], &src = in[2];
      check_add_operands("index_add", base, index, src);
      if (index.shape.size() != 1) PJ_THROW(Value) << "index_add(): index must be 1-D, got shape " << shape_str(index.shape);
      const int axis = normalize_axis(a.i("axis", 0), static_cast<int>(base.shape.size()));
      Shape want = base.shape;
      want[axis] = index.shape[0];
      if (src.shape != want)
        PJ_THROW(Value) << "index_add(): src has shape " << shape_str(src.shape) << ", expected " << shape_str(want);
      return one(base.shape, base.dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      index_add_into(out[0], in[0], in[1], in[2], normalize_axis(a.i("axis", 0), in[0].ndim()));
    });

// scatter_add(base, index, src; axis): torch.scatter_add (the gradient of sort and topk).
PJ_REGISTER_OP("scatter_add")
    .raises_on_values()
    .inputs(3)
    .attrs({"axis"})
    .infer([](const Metas& in, const Attrs& a) {
      const TensorMeta &base = in[0], &index = in[1], &src = in[2];
      check_add_operands("scatter_add", base, index, src);
      const int axis = normalize_axis(a.i("axis", 0), static_cast<int>(base.shape.size()));
      bool ok = index.shape == src.shape && src.shape.size() == base.shape.size();
      for (size_t d = 0; ok && d < base.shape.size(); ++d) ok = static_cast<int>(d) == axis || src.shape[d] == base.shape[d];
      if (!ok)
        PJ_THROW(Value) << "scatter_add(): index " << shape_str(index.shape) << " and src " << shape_str(src.shape)
                        << " must have one shape, that of base " << shape_str(base.shape) << " but along axis " << axis;
      return one(base.shape, base.dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      scatter_add_into(out[0], in[0], in[1], in[2], normalize_axis(a.i("axis", 0), in[0].ndim()));
    });

PJ_REGISTER_OP("gather")
    .raises_on_values()
    .inputs(2)
    .attrs({"axis"})
    .infer([](const Metas& in, const Attrs& a) {
      if (!is_integral(in[1].dtype, false))
        PJ_THROW(Type) << "gather(): input_indices must be an integer tensor, but got "
                       << dtype_name(in[1].dtype);
      return one(gather_shape(in[0].shape, in[1].shape, a.i("axis", 0), nullptr), in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      int axis = 0;
      gather_shape(in[0].shape(), in[1].shape(), a.i("axis", 0), &axis);
      gather_into(out[0], in[0], in[1], axis);
    });

// index_select(x, index; axis): index is 1-D.
PJ_REGISTER_OP("index_select")
    .raises_on_values()
    .inputs(2)
    .attrs({"axis"})
    .infer([](const Metas& in, const Attrs& a) {
      return one(index_select_shape(in[0].shape, in[1].shape, a.i("axis"), nullptr), in[0].dtype);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      int axis = 0;
      index_select_shape(in[0].shape(), in[1].shape(), a.i("axis"), &axis);
      check_index_dtype(in[1], "index_select(): index");
      gather_into(out[0], in[0], in[1], axis);
    });

// one_hot(indices; depth, on_value=1, off_value=0, axis=-1, dtype=Float32).
PJ_REGISTER_OP("one_hot")
    .inputs(1)
    .attrs({"depth", "on_value", "off_value", "axis", "dtype"})
    .infer([](const Metas& in, const Attrs& a) {
      if (!is_integral(in[0].dtype, false))
        PJ_THROW(Type) << "one_hot(): indices must be an integer tensor, but got " << dtype_name(in[0].dtype);
      DType t = a.is_none("dtype") ? DType::Float32 : a.dtype("dtype");
      return one(one_hot_shape(in[0].shape, a.i("depth"), a.i("axis", -1), nullptr), t);
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      int axis = 0;
      one_hot_shape(in[0].shape(), a.i("depth"), a.i("axis", -1), &axis);
      double on = a.is_none("on_value") ? 1.0 : a.f("on_value");
      double off = a.is_none("off_value") ? 0.0 : a.f("off_value");
      one_hot_into(out[0], in[0], on, off, axis);
    });

// sort(x; axis=-1, descending=False) -> (values, indices: Int64), stable.
PJ_REGISTER_OP("sort")
    .inputs(1)
    .attrs({"axis", "descending"})
    .infer([](const Metas& in, const Attrs& a) {
      normalize_axis(a.i("axis", -1), static_cast<int>(in[0].shape.size()));
      return Metas{{in[0].shape, in[0].dtype}, {in[0].shape, DType::Int64}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      int axis = normalize_axis(a.i("axis", -1), in[0].ndim());
      sort_into(out[0], out[1], in[0], axis, a.b("descending", false));
    });

// topk(x; k, axis=-1, largest=True, sorted=True) -> (values, indices: Int64).
PJ_REGISTER_OP("topk")
    .inputs(1)
    .attrs({"k", "axis", "largest", "sorted"})
    .infer([](const Metas& in, const Attrs& a) {
      Shape s = topk_shape(in[0].shape, a.i("k"), a.i("axis", -1), nullptr);
      return Metas{{s, in[0].dtype}, {s, DType::Int64}};
    })
    .kernel([](const Tensors& in, const Attrs& a, const Tensors& out) {
      int axis = 0;
      topk_shape(in[0].shape(), a.i("k"), a.i("axis", -1), &axis);
      topk_into(out[0], out[1], in[0], axis, a.b("largest", true), a.b("sorted", true));
    });

}  // namespace
}  // namespace pj
