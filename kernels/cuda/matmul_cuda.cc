#include "kernels/cuda/matmul_cuda.h"


#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "common/check.h"
#include "kernels/cuda/backend.h"
#include "kernels/cuda/driver.h"
#include "kernels/cuda/fused_cuda.h"

#ifdef PIJIT_CUDA_BUILT
#include <cublasLt.h>
#endif

namespace pj::cuda {

#ifdef PIJIT_CUDA_BUILT
namespace {

struct Lt {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtGetStatusName) status_name = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
  cublasLtHandle_t handle = nullptr;
  std::string why;
};

// Hopper's recommended cuBLASLt workspace.
constexpr size_t kWorkspaceBytes = 32u << 20;

const Lt& lt() {
  static const Lt l = [] {
    Lt r;
    if (!backend().usable) return r.why = "no usable GPU: " + backend().why, r;
    void* lib = cuda_library("libcublasLt", &r.why);
    if (!lib) return r;
    Symbols sym(lib);
    sym(r.create, "cublasLtCreate");
    sym(r.status_name, "cublasLtGetStatusName");
    sym(r.desc_create, "cublasLtMatmulDescCreate");
    sym(r.desc_set, "cublasLtMatmulDescSetAttribute");
    sym(r.layout_create, "cublasLtMatrixLayoutCreate");
    sym(r.pref_create, "cublasLtMatmulPreferenceCreate");
    sym(r.pref_set, "cublasLtMatmulPreferenceSetAttribute");
    sym(r.pref_destroy, "cublasLtMatmulPreferenceDestroy");
    sym(r.heuristic, "cublasLtMatmulAlgoGetHeuristic");
    sym(r.matmul, "cublasLtMatmul");
    if (!sym.all()) return r.why = "libcublasLt lacks a function pijit calls", r;
    DeviceBuffer probe(1);  // the driver's context is current before cuBLASLt starts
    if (cublasStatus_t st = r.create(&r.handle)) r.why = std::string("cublasLtCreate failed: ") + r.status_name(st);
    return r;
  }();
  if (!l.why.empty()) PJ_THROW(Runtime) << l.why;
  return l;
}

void check(cublasStatus_t st, const char* call) {
  if (st != CUBLAS_STATUS_SUCCESS) PJ_THROW(Runtime) << call << " failed: " << lt().status_name(st);
}

// One shape's descriptors and algorithm, made once (the descriptors are never freed: plans live
// as long as the process, like oneDNN's primitive cache).
struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
};

// cuBLASLt is column-major: row-major C[m, n] = A[m, k] @ op(B) is column-major
// C^T[n, m] = op(B)^T[n, k] @ A^T[k, m], where A's row-major bytes are A^T column-major (ld k) and
// B's are B^T (ld n), or for B[n, k], B column-major [k, n] (ld k), transposed.
Plan make_plan(const MatmulShape& s) {
  const Lt& l = lt();
  Plan p;
  check(l.desc_create(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
  check(l.desc_set(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "cublasLtMatmulDescSetAttribute");
  check(l.desc_set(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "cublasLtMatmulDescSetAttribute");
  const cublasLtEpilogue_t epi = s.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  check(l.desc_set(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi), "cublasLtMatmulDescSetAttribute");
  if (s.trans_b)
    check(l.layout_create(&p.a, CUDA_R_32F, s.k, s.n, s.k), "cublasLtMatrixLayoutCreate");
  else
    check(l.layout_create(&p.a, CUDA_R_32F, s.n, s.k, s.n), "cublasLtMatrixLayoutCreate");
  check(l.layout_create(&p.b, CUDA_R_32F, s.k, s.m, s.k), "cublasLtMatrixLayoutCreate");
  check(l.layout_create(&p.c, CUDA_R_32F, s.n, s.m, s.n), "cublasLtMatrixLayoutCreate");
  cublasLtMatmulPreference_t pref = nullptr;
  check(l.pref_create(&pref), "cublasLtMatmulPreferenceCreate");
  const size_t ws = kWorkspaceBytes;
  check(l.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws), "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t st = l.heuristic(l.handle, p.desc, p.a, p.b, p.c, p.c, pref, 1, &result, &found);
  l.pref_destroy(pref);
  check(st, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    PJ_THROW(Runtime) << "cuBLASLt has no algorithm for a float32 matmul of " << s.m << "x" << s.k << " by "
                      << (s.trans_b ? "transposed " : "") << s.k << "x" << s.n;
  p.algo = result.algo;
  p.workspace = result.workspaceSize;
  return p;
}

}  // namespace

void matmul_cuda(const MatmulShape& s, const float* a, const float* b, const float* bias, float* c) {
  if (s.m < 0 || s.n < 0 || s.k < 0)
    PJ_THROW(Value) << "matmul sizes must not be negative, got m=" << s.m << " n=" << s.n << " k=" << s.k;
  if (s.bias && !bias) PJ_THROW(Value) << "matmul with a bias needs the bias pointer";
  const Lt& l = lt();
  if (s.m == 0 || s.n == 0) return;
  if (s.k == 0) PJ_THROW(NotImplemented) << "a GPU matmul over k=0 (the result is the bias, or zeros)";
  static std::mutex mu;
  static std::map<std::tuple<int64_t, int64_t, int64_t, bool, bool>, Plan> plans;
  static std::unique_ptr<DeviceBuffer> workspace;
  // (one lock around the launch too: the bias pointer is set on the shape's shared descriptor)
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_tuple(s.m, s.n, s.k, s.trans_b, s.bias);
  auto it = plans.find(key);
  if (it == plans.end()) it = plans.emplace(key, make_plan(s)).first;
  const Plan& p = it->second;
  if (!workspace) workspace = std::make_unique<DeviceBuffer>(kWorkspaceBytes);
  if (s.bias) check(l.desc_set(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias), "cublasLtMatmulDescSetAttribute");
  const float one = 1.f, zero = 0.f;
  check(l.matmul(l.handle, p.desc, &one, b, p.a, a, p.b, &zero, c, p.c, c, p.c, &p.algo, workspace->get(), p.workspace,
                 nullptr),
        "cublasLtMatmul");
  if (s.relu) {
    const std::vector<const void*> in = {c};
    fused_cuda_run("in=1; r1=relu(r0); out=(r1)", 0, s.m * s.n, in, {c});
  }
}

#else

void matmul_cuda(const MatmulShape&, const float*, const float*, const float*, float*) {
  PJ_THROW(Runtime) << "no usable GPU: " << backend().why;
}

#endif

}  // namespace pj::cuda
