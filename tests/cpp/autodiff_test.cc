// Reverse-mode autodiff (graph/autodiff.h): every rule against central finite differences in
// float64, the graph and eager contexts agreeing, the backward graph's text, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "graph/autodiff.h"
#include "graph/ir.h"
#include "test_util.h"

namespace pj::graph {
namespace {

// sum_k <seed_k, f_k(inputs)>, the scalar whose gradient differentiate() computes.
double objective(const Graph& fwd, const Tensors& in, const Tensors& seeds) {
  Tensors out = execute(fwd, in);
  double s = 0;
  for (size_t k = 0; k < out.size(); ++k)
    for (int64_t i = 0; i < out[k].numel(); ++i) s += out[k].item_double(i) * seeds[k].item_double(i);
  return s;
}

Tensor copy_of(const Tensor& t) {
  Tensor c = Tensor::empty(t.shape(), t.dtype());
  copy_into(c, t);
  return c;
}

// Differentiates `text` with respect to every floating input and compares each gradient element
// with (F(x + h) - F(x - h)) / 2h.
// `fixed` gives inputs by position (class indices, probabilities) instead of random values; those
// are not differentiated (a loss's target and class weights have no rule).
void check_gradients(const std::string& text, unsigned seed = 1, double positive_from = -1e300,
                     std::map<int, Tensor> fixed = {}) {
  SCOPED_TRACE(text);
  Graph fwd = parse_graph(text);
  std::vector<int> wrt;
  Tensors in;
  for (size_t k = 0; k < fwd.inputs().size(); ++k) {
    const TensorMeta& m = fwd.value(fwd.inputs()[k]).meta;
    Tensor t = fixed.count(static_cast<int>(k)) ? fixed[static_cast<int>(k)] : testing::random(m.shape, m.dtype, seed + k);
    if (positive_from > -1e300 && !fixed.count(static_cast<int>(k)))  // for log, sqrt, pow: inputs kept in the domain
      for (int64_t i = 0; i < t.numel(); ++i) testing::set_item(t, i, std::abs(t.item_double(i)) + positive_from);
    in.push_back(t);
    if (differentiable(m.dtype) && !fixed.count(static_cast<int>(k))) wrt.push_back(static_cast<int>(k));
  }
  Tensors seeds;
  for (int v : fwd.outputs()) seeds.push_back(testing::random(fwd.value(v).meta.shape, DType::Float64, seed + 100 + v));
  Graph both = differentiate(fwd, wrt);
  Tensors args = in;
  args.insert(args.end(), seeds.begin(), seeds.end());
  Tensors res = execute(both, args);
  ASSERT_EQ(res.size(), fwd.outputs().size() + wrt.size());
  for (size_t j = 0; j < wrt.size(); ++j) {
    const int k = wrt[j];
    const Tensor& grad = res[fwd.outputs().size() + j];
    ASSERT_EQ(grad.shape(), in[k].shape());
    for (int64_t i = 0; i < in[k].numel(); ++i) {
      // float32 inputs (mixed-dtype ops) take a step their rounding does not swamp; the step is
      // what was stored.
      const double rel = in[k].dtype() == DType::Float64 ? 1e-6 : 1e-3;
      const double h = rel * std::max(1.0, std::abs(in[k].item_double(i)));
      Tensors plus = in, minus = in;
      plus[k] = copy_of(in[k]);
      minus[k] = copy_of(in[k]);
      testing::set_item(plus[k], i, in[k].item_double(i) + h);
      testing::set_item(minus[k], i, in[k].item_double(i) - h);
      const double step = plus[k].item_double(i) - minus[k].item_double(i);
      const double fd = (objective(fwd, plus, seeds) - objective(fwd, minus, seeds)) / step;
      EXPECT_NEAR(grad.item_double(i), fd, 1e-5 * std::max(1.0, std::abs(fd))) << "input " << k << " element " << i;
    }
  }
}

std::string unary(const char* op) {
  return std::string("graph(%0: Float64[2, 3] x) {\n  %1: Float64[2, 3] = ") + op + "(%0)\n  return (%1,)\n}\n";
}

TEST(Autodiff, ElementwiseRulesMatchFiniteDifferences) {
  for (const char* op : {"neg", "exp", "expm1", "square", "tanh", "sigmoid", "softplus", "silu", "erf", "gelu",
                         "gelu_tanh", "sin", "cos", "relu", "abs", "reciprocal"})
    check_gradients(unary(op));
  for (const char* op : {"log", "log1p", "sqrt", "rsqrt"}) check_gradients(unary(op), 2, 0.5);
  check_gradients(unary("tan"), 3, -1e300);
  for (const char* op : {"add", "sub", "mul", "div", "maximum", "minimum"})
    check_gradients(std::string("graph(%0: Float64[2, 3] x, %1: Float64[3] y) {\n  %2: Float64[2, 3] = ") + op +
                    "(%0, %1)\n  return (%2,)\n}\n");
  check_gradients("graph(%0: Float64[2, 3] x, %1: Float64[2, 1] y) {\n  %2: Float64[2, 3] = pow(%0, %1)\n  return (%2,)\n}\n",
                  4, 0.5);
  check_gradients("graph(%0: Float64[4] x) {\n  %1: Float64[4] = clamp(%0) min=-1.0, max=2.0\n  return (%1,)\n}\n");
  check_gradients(
      "graph(%0: Float64[2, 3] x, %1: Float64[2, 3] y, %2: Float64[3] z) {\n"
      "  %3: Bool[2, 3] = gt(%0, %1)\n"
      "  %4: Float64[2, 3] = where(%3, %1, %2)\n"
      "  return (%4,)\n}\n");
  // a mixed-dtype product: the float32 input's gradient comes back in float32
  check_gradients("graph(%0: Float64[3] x, %1: Float32[3] y) {\n  %2: Float64[3] = mul(%0, %1)\n  return (%2,)\n}\n");
}

TEST(Autodiff, ReductionShapeAndMatrixRulesMatchFiniteDifferences) {
  const char* graphs[] = {
      "graph(%0: Float64[2, 3, 4] x) {\n  %1: Float64[3] = sum(%0) axis=(0, 2), keepdims=False\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3] x) {\n  %1: Float64[2, 1] = mean(%0) axis=1, keepdims=True\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3] x) {\n  %1: Float64[] = max(%0) axis=None, keepdims=False\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3] x) {\n  %1: Float64[3] = min(%0) axis=0, keepdims=False\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3] x) {\n  %1: Float64[2] = logsumexp(%0) axis=1, keepdims=False\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3] x) {\n  %1: Float64[3] = var(%0) axis=0, keepdims=False, ddof=1\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3] x) {\n  %1: Float64[2] = prod(%0) axis=1, keepdims=False\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3] x) {\n  %1: Float64[2, 1] = std(%0) axis=1, keepdims=True, ddof=0\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3] x) {\n  %1: Float64[] = std(%0) axis=None, keepdims=False, ddof=0\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3] x) {\n  %1: Float64[2, 3] = softmax(%0) axis=-1\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3] x) {\n  %1: Float64[2, 3] = log_softmax(%0) axis=0\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3] x) {\n  %1: Float64[3, 2] = reshape(%0) shape=(3, 2)\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3, 4] x) {\n  %1: Float64[4, 2, 3] = transpose(%0) perm=(2, 0, 1)\n  return (%1,)\n}\n",
      "graph(%0: Float64[3] x) {\n  %1: Float64[2, 3] = broadcast_to(%0) shape=(2, 3)\n  return (%1,)\n}\n",
      "graph(%0: Float64[2, 3] x, %1: Float64[3, 4] w) {\n  %2: Float64[2, 4] = matmul(%0, %1)\n  return (%2,)\n}\n",
      "graph(%0: Float64[2, 2, 3] x, %1: Float64[3, 4] w) {\n  %2: Float64[2, 2, 4] = matmul(%0, %1)\n  return (%2,)\n}\n",
      "graph(%0: Float64[3] x, %1: Float64[3, 4] w) {\n  %2: Float64[4] = matmul(%0, %1)\n  return (%2,)\n}\n",
      "graph(%0: Float64[2, 3] x, %1: Float64[3] v) {\n  %2: Float64[2] = matmul(%0, %1)\n  return (%2,)\n}\n",
      "graph(%0: Float64[2, 3] x, %1: Float64[4, 3] w, %2: Float64[4] b) {\n  %3: Float64[2, 4] = dense(%0, %1, %2)\n"
      "  return (%3,)\n}\n",
  };
  for (const char* text : graphs) check_gradients(text);
}

std::string g64(const std::string& inputs, const std::string& body, const std::string& ret) {
  return "graph(" + inputs + ") {\n" + body + "  return (" + ret + ",)\n}\n";
}

TEST(Autodiff, LossRulesMatchFiniteDifferences) {
  const std::string pair = "%0: Float64[2, 3] x, %1: Float64[2, 3] t";
  for (const char* r : {"'mean'", "'sum'", "'none'"}) {
    const std::string out = std::string(r) == "'none'" ? "Float64[2, 3]" : "Float64[]";
    check_gradients(g64(pair, "  %2: " + out + " = mse_loss(%0, %1) reduction=" + r + "\n", "%2"));
    check_gradients(g64(pair, "  %2: " + out + " = l1_loss(%0, %1) reduction=" + r + "\n", "%2"));
    check_gradients(g64(pair, "  %2: " + out + " = smooth_l1_loss(%0, %1) reduction=" + r + ", beta=0.7\n", "%2"));
  }
  check_gradients(g64("%0: Float64[2, 3] x, %1: Float64[3] t", "  %2: Float64[] = mse_loss(%0, %1) reduction='mean'\n", "%2"));
  Tensor labels = testing::from_doubles({0, 1, 1, 0.3, 0, 1}, {2, 3}, DType::Float64);
  Tensor w = testing::from_doubles({0.5, 2, 1.5}, DType::Float64);
  // probabilities in (0, 1): sigmoid of the random input
  check_gradients(g64("%0: Float64[2, 3] x, %1: Float64[2, 3] t, %2: Float64[3] w",
                      "  %3: Float64[2, 3] = sigmoid(%0)\n  %4: Float64[] = binary_cross_entropy(%3, %1, %2) reduction='mean'\n",
                      "%4"),
                  1, -1e300, {{1, labels}, {2, w}});
  check_gradients(g64("%0: Float64[2, 3] x, %1: Float64[2, 3] t",
                      "  %2: Float64[2, 3] = sigmoid(%0)\n  %3: Float64[2, 3] = binary_cross_entropy(%2, %1) reduction='none'\n",
                      "%3"),
                  1, -1e300, {{1, labels}});
  check_gradients(g64("%0: Float64[2, 3] x, %1: Float64[2, 3] t, %2: Float64[3] w, %3: Float64[3] pw",
                      "  %4: Float64[] = binary_cross_entropy_with_logits(%0, %1, %2, %3) reduction='sum', "
                      "has_weight=True, has_pos_weight=True\n", "%4"),
                  1, -1e300, {{1, labels}, {2, w}, {3, testing::from_doubles({1, 3, 0.5}, DType::Float64)}});
  check_gradients(g64("%0: Float64[2, 3] x, %1: Float64[2, 3] t",
                      "  %2: Float64[2, 3] = binary_cross_entropy_with_logits(%0, %1) reduction='none'\n", "%2"),
                  1, -1e300, {{1, labels}});
}

TEST(Autodiff, ClassLossRulesMatchFiniteDifferences) {
  Tensor t = testing::from_ints({2, 0, -100, 1}, DType::Int64);  // one sample ignored
  Tensor t2 = testing::from_ints({2, 0, 1, 1, 0, 2}, DType::Int64);
  for (const char* attrs : {"reduction='mean', ignore_index=-100, label_smoothing=0.0",
                            "reduction='sum', ignore_index=-100, label_smoothing=0.2",
                            "reduction='none', ignore_index=-100, label_smoothing=0.1"}) {
    const bool none = std::string(attrs).find("'none'") != std::string::npos;
    const std::string out = none ? "Float64[4]" : "Float64[]";
    check_gradients(g64("%0: Float64[4, 3] x, %1: Int64[4] t, %2: Float64[3] w",
                        "  %3: " + out + " = cross_entropy(%0, %1, %2) " + attrs + "\n", "%3"), 1, -1e300, {{1, t}, {2, testing::from_doubles({0.5, 2, 1.5}, DType::Float64)}});
    check_gradients(g64("%0: Float64[4, 3] x, %1: Int64[4] t",
                        "  %2: " + out + " = cross_entropy(%0, %1) " + attrs + "\n", "%2"), 1, -1e300, {{1, t}});
  }
  // spatial: [N, C, S] with S = 3
  check_gradients(g64("%0: Float64[2, 3, 3] x, %1: Int64[2, 3] t",
                      "  %2: Float64[] = cross_entropy(%0, %1) reduction='mean', ignore_index=-100, label_smoothing=0.0\n",
                      "%2"), 1, -1e300, {{1, t2.as_strided({2, 3}, {3, 1}, 0)}});
  // class probabilities
  Tensor p = testing::from_doubles({0.2, 0.5, 0.3, 1, 0, 0}, {2, 3}, DType::Float64);
  check_gradients(g64("%0: Float64[2, 3] x, %1: Float64[2, 3] p",
                      "  %2: Float64[] = cross_entropy(%0, %1) reduction='mean', ignore_index=-100, label_smoothing=0.1\n",
                      "%2").c_str(), 1, -1e300, {{1, p}});
  check_gradients(g64("%0: Float64[4, 3] x, %1: Int64[4] t",
                      "  %2: Float64[] = nll_loss(%0, %1) reduction='mean', ignore_index=-100\n", "%2"), 1, -1e300, {{1, t}});
}

TEST(Autodiff, ConvPoolNormAndDropoutRulesMatchFiniteDifferences) {
  const std::string conv = "%0: Float64[2, 4, 7, 6] x, %1: Float64[6, 2, 3, 2] w, %2: Float64[6] b";
  check_gradients(g64(conv, "  %3: Float64[2, 6, 3, 5] = conv2d(%0, %1, %2) stride=(2, 1), padding=(1, 0, 0, 1), "
                            "dilation=(1, 2), groups=2\n", "%3"));
  check_gradients(g64("%0: Float64[1, 2, 5, 5] x, %1: Float64[3, 2, 3, 3] w",
                      "  %2: Float64[1, 3, 3, 3] = conv2d(%0, %1) stride=(2, 2), padding='same', dilation=(1, 1), groups=1\n",
                      "%2"));
  const std::string x = "%0: Float64[2, 3, 5, 6] x";
  check_gradients(g64(x, "  %1: Float64[2, 3, 3, 3] = max_pool2d(%0) kernel_size=(2, 2), stride=(2, 2), padding=(1, 0), "
                         "dilation=(1, 1), ceil_mode=False\n", "%1"));
  check_gradients(g64(x, "  %1: Float64[2, 3, 3, 4] = avg_pool2d(%0) kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), "
                         "ceil_mode=True, count_include_pad=False, divisor_override=None\n", "%1"));
  check_gradients(g64(x, "  %1: Float64[2, 3, 2, 4] = adaptive_avg_pool2d(%0) output_size=(2, 4)\n", "%1"));
  const std::string bn = "%0: Float64[4, 3, 2, 2] x, %1: Float64[3] g, %2: Float64[3] b, %3: Float64[3] rm, %4: Float64[3] rv";
  for (const char* training : {"True", "False"})
    check_gradients(g64(bn, std::string("  %5: Float64[4, 3, 2, 2], %6: Float64[3], %7: Float64[3] = batch_norm(%0, %1, %2, %3, %4) "
                                        "training=") + training + ", momentum=0.9, eps=1e-05\n", "%5"),
                    3, 0.5);
  check_gradients(g64("%0: Float64[2, 3, 4] x, %1: Float64[3, 4] g, %2: Float64[3, 4] b",
                      "  %3: Float64[2, 3, 4], %4: Float64[2, 1, 1], %5: Float64[2, 1, 1] = layer_norm(%0, %1, %2) "
                      "begin_norm_axis=1, eps=1e-05\n", "%3"));
  check_gradients(g64("%0: Float64[3, 4] x",
                      "  %1: Float64[3, 4], %2: Bool[3, 4] = dropout(%0) p=0.4, training=True, seed=7\n", "%1"));
}

TEST(Autodiff, IndexingEmbeddingScanPadAndTransposedConvRulesMatchFiniteDifferences) {
  Tensor idx = testing::from_ints({2, 0, 2, 1}, DType::Int64);  // a repeated row accumulates
  check_gradients(g64("%0: Float64[3, 5] x, %1: Int64[4] i", "  %2: Float64[4, 5] = index_select(%0, %1) axis=0\n", "%2"),
                  1, -1e300, {{1, idx}});
  check_gradients(g64("%0: Float64[2, 3, 2] x, %1: Int64[2, 2] i", "  %2: Float64[2, 2, 2, 2] = gather(%0, %1) axis=1\n", "%2"),
                  1, -1e300, {{1, idx.as_strided({2, 2}, {2, 1}, 0)}});
  // (padding_idx: that row gets no gradient by definition; the torch oracle checks it)
  check_gradients(g64("%0: Float64[3, 4] w, %1: Int64[4] i", "  %2: Float64[4, 4] = embedding(%0, %1) padding_idx=None\n", "%2"),
                  1, -1e300, {{1, idx}});
  check_gradients(g64("%0: Float64[2, 4] x", "  %1: Float64[2, 4] = cumsum(%0) axis=1\n", "%1"));
  check_gradients(g64("%0: Float64[3, 4] x",
                      "  %1: Float64[3, 4], %2: Int64[3, 4] = sort(%0) axis=0, descending=True\n", "%1"));
  check_gradients(g64("%0: Float64[3, 5] x",
                      "  %1: Float64[3, 2], %2: Int64[3, 2] = topk(%0) k=2, axis=-1, largest=True, sorted=True\n", "%1"));
  check_gradients(g64("%0: Float64[2, 4, 3] x, %1: Float64[4] g, %2: Float64[4] b",
                      "  %3: Float64[2, 4, 3], %4: Float64[2, 2], %5: Float64[2, 2] = group_norm(%0, %1, %2) "
                      "num_groups=2, eps=1e-05\n", "%3"));
  check_gradients(g64("%0: Float64[2, 4] x", "  %1: Float64[8] = cumsum(%0) axis=None\n", "%1"));
  check_gradients(g64("%0: Float64[2, 3, 4] x",
                      "  %1: Float64[2, 4, 5] = pad(%0) pads=(2, -1, 1, 0), mode='constant', value=0.0\n", "%1"));
  check_gradients(g64("%0: Float64[2, 4, 3, 3] x, %1: Float64[4, 3, 3, 2] w, %2: Float64[6] b",
                      "  %3: Float64[2, 6, 7, 3] = conv_transpose2d(%0, %1, %2) stride=(2, 1), padding=(1, 0, 0, 1), "
                      "output_padding=(1, 0), dilation=(1, 1), groups=2\n", "%3"));
}

TEST(Autodiff, AnMlpLossAndSharedValues) {
  // x used twice, two outputs, a graph constant: gradients accumulate over every use.
  check_gradients(
      "graph(%0: Float64[4, 3] x, %1: Float64[5, 3] w1, %2: Float64[5] b1, %3: Float64[2, 5] w2) {\n"
      "  %4: Float64[] = constant (0.5)\n"
      "  %5: Float64[4, 5] = dense(%0, %1, %2)\n"
      "  %6: Float64[4, 5] = tanh(%5)\n"
      "  %7: Float64[4, 2] = dense(%6, %3)\n"
      "  %8: Float64[4, 2] = log_softmax(%7) axis=-1\n"
      "  %9: Float64[] = mean(%8) axis=None, keepdims=False\n"
      "  %10: Float64[4, 3] = mul(%0, %4)\n"
      "  %11: Float64[4, 3] = mul(%10, %0)\n"
      "  return (%9, %11)\n}\n");
}

TEST(Autodiff, BackwardGraphText) {
  Graph g = parse_graph("graph(%0: Float32[3] x, %1: Float32[3] y) {\n  %2: Float32[3] = mul(%0, %1)  # line 7\n"
                        "  %3: Float32[3] = exp(%2)  # line 8\n  return (%3,)\n}\n");
  EXPECT_EQ(differentiate(g, {0}).to_string(),
            "graph(%0: Float32[3] x, %1: Float32[3] y, %2: Float32[3] grad of output 0) {\n"
            "  %3: Float32[3] = mul(%0, %1)  # line 7\n"
            "  %4: Float32[3] = exp(%3)  # line 8\n"
            "  %5: Float32[3] = mul(%2, %4)  # line 8\n"
            "  %6: Float32[3] = mul(%5, %1)  # line 7\n"
            "  return (%4, %6)\n"
            "}\n");
}

TEST(Autodiff, ErrorsNameTheOpAndTheInput) {
  auto error_of = [](const std::string& text, std::vector<int> wrt) {
    try {
      differentiate(parse_graph(text), wrt);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("graph(%0: Float32[1, 1, 4, 4] x) {\n  %1: Float32[1, 1, 4, 8] = interpolate(%0) size=(4, 8), mode='nearest'"
                     "  # line 4\n  return (%1,)\n}\n", {0})
                .find("cannot differentiate through 'interpolate' (line 4): it has no gradient rule"),
            std::string::npos);
  EXPECT_NE(error_of("graph(%0: Int64[3] i) {\n  %1: Int64[3] = neg(%0)\n  return (%1,)\n}\n", {0})
                .find("cannot differentiate with respect to i: it is Int64"),
            std::string::npos);
  // An integer path carries no gradient: argmax's result does not need a rule.
  EXPECT_EQ(error_of("graph(%0: Float32[3] x) {\n  %1: Int64[] = argmax(%0) axis=None\n  %2: Float32[3] = exp(%0)\n"
                     "  return (%1, %2)\n}\n", {0}),
            "no error");
}

TEST(Autodiff, EagerContextRunsTheSameRules) {
  // The tape's backward runs rules at once; same numbers as the graph.
  Tensor x = testing::random({2, 3}, DType::Float64, 5), d = testing::random({2, 3}, DType::Float64, 6);
  EagerGradContext c;
  GradArgs a;
  a.in = {c.add(x)};
  a.out = {c.add(call_op1("tanh", {x}))};
  a.dout = {c.add(d)};
  a.needs = {true};
  Attrs none;
  a.attrs = &none;
  Tensor eager = c.tensor(grad_rule(get_op("tanh"))(c, a)[0]);
  Graph g = differentiate(parse_graph(unary("tanh")), {0});
  Tensor graph = execute(g, {x, d})[1];
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(eager.item_double(i), graph.item_double(i));
}

TEST(Autodiff, EveryRuleNamesARegisteredOp) {
  for (const std::string& name : grad_rule_names()) EXPECT_NE(find_op(name), nullptr) << name;
  EXPECT_GE(grad_rule_names().size(), 50u);
}

}  // namespace
}  // namespace pj::graph
