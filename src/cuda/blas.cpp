// cuBLASLt products in the row-major convention (blas.hpp). A row-major C[m,n] is the column-major C^T[n,m], and
// C^T = op(B)^T op(A)^T: cuBLASLt is called with the operands swapped (its A is trex's B, its B trex's A), its
// m = n, n = m, and each operand's row-major layout read as the transposed column-major one.
#include "cuda/blas.hpp"

#include <string>

#include "cuda/check.hpp"
#include "cuda/cublaslt_api.hpp"
#include "util/error.hpp"

namespace trex::cuda {

void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line) {
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + cublaslt().status_name(s) +
              " (" + cublaslt().status_string(s) + ")");
}

struct Blas::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;  // cuBLASLt's A (trex B), B (trex A), C = D
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (la) cublaslt().layout_destroy(la);
    if (lb) cublaslt().layout_destroy(lb);
    if (lc) cublaslt().layout_destroy(lc);
    if (desc) cublaslt().desc_destroy(desc);
  }
};

namespace {
int alignment(const void* p) {
  const auto u = reinterpret_cast<uintptr_t>(p);
  int a = 256;
  while (a > 1 && (u % uintptr_t(a)) != 0) a /= 2;
  return a;
}

std::string describe(const DeviceGemm& g) {
  return std::string(g.type == GemmType::bf16 ? "bf16" : "fp32") + " gemm m=" + std::to_string(g.m) +
         " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) + (g.trans_a ? " A^T" : " A") +
         (g.trans_b ? " B^T" : " B") + " lda=" + std::to_string(g.lda) + " ldb=" + std::to_string(g.ldb) +
         " ldc=" + std::to_string(g.ldc);
}
}  // namespace

Blas::Blas(size_t workspace_bytes) : workspace_(workspace_bytes) { TREX_CUBLAS_CHECK(cublaslt().create(&handle_)); }

Blas::~Blas() {
  for (auto& [k, p] : plans_) delete p;
  if (handle_) cublaslt().destroy(handle_);
}

const Blas::Plan& Blas::plan(const DeviceGemm& g) {
  const Key key{int(g.type), g.trans_a, g.trans_b, g.m, g.n, g.k, g.lda, g.ldb, g.ldc,
                alignment(g.a), alignment(g.b), alignment(g.c)};
  if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
  auto* p = new Plan;
  try {
    const cudaDataType_t t = g.type == GemmType::bf16 ? CUDA_R_16BF : CUDA_R_32F;
    TREX_CUBLAS_CHECK(cublaslt().desc_create(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t opa = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLASLt's A is trex's B
    const cublasOperation_t opb = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    TREX_CUBLAS_CHECK(cublaslt().desc_set_attribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
    TREX_CUBLAS_CHECK(cublaslt().desc_set_attribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
    // Column-major shapes as stored: trex B is [k,n] row-major (= [n,k] column-major) or, transposed, [n,k]
    // row-major (= [k,n] column-major); likewise A.
    const uint64_t a_rows = g.trans_b ? uint64_t(g.k) : uint64_t(g.n), a_cols = g.trans_b ? g.n : g.k;
    const uint64_t b_rows = g.trans_a ? uint64_t(g.m) : uint64_t(g.k), b_cols = g.trans_a ? g.k : g.m;
    TREX_CUBLAS_CHECK(cublaslt().layout_create(&p->la, t, a_rows, a_cols, g.ldb));
    TREX_CUBLAS_CHECK(cublaslt().layout_create(&p->lb, t, b_rows, b_cols, g.lda));
    TREX_CUBLAS_CHECK(cublaslt().layout_create(&p->lc, CUDA_R_32F, uint64_t(g.n), uint64_t(g.m), g.ldc));
    struct Preference {  // destroyed however this ends
      cublasLtMatmulPreference_t p = nullptr;
      ~Preference() {
        if (p) cublaslt().preference_destroy(p);
      }
    } pref;
    TREX_CUBLAS_CHECK(cublaslt().preference_create(&pref.p));
    const uint64_t ws = workspace_.bytes();
    const uint32_t al_a = uint32_t(std::get<10>(key)), al_b = uint32_t(std::get<9>(key)),
                   al_c = uint32_t(std::get<11>(key));
    // Checked: an alignment left unset makes the heuristic assume 256-byte operands and pick a kernel that faults on
    // ours (tensors in the flat parameter buffer are only element-aligned).
    TREX_CUBLAS_CHECK(
        cublaslt().preference_set_attribute(pref.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    TREX_CUBLAS_CHECK(
        cublaslt().preference_set_attribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof al_a));
    TREX_CUBLAS_CHECK(
        cublaslt().preference_set_attribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof al_b));
    TREX_CUBLAS_CHECK(
        cublaslt().preference_set_attribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof al_c));
    TREX_CUBLAS_CHECK(
        cublaslt().preference_set_attribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c, sizeof al_c));
    cublasLtMatmulHeuristicResult_t res{};
    int found = 0;
    TREX_CUBLAS_CHECK(
        cublaslt().algo_get_heuristic(handle_, p->desc, p->la, p->lb, p->lc, p->lc, pref.p, 1, &res, &found));
    if (found == 0) throw Error("cuBLASLt has no algorithm for " + describe(g));
    p->algo = res.algo;
  } catch (...) {
    delete p;
    throw;
  }
  plans_.emplace(key, p);
  return *p;
}

void Blas::gemm(const DeviceGemm& g, cudaStream_t stream) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) throw Error("cuda gemm: empty shape in " + describe(g));
  const int64_t a_cols = g.trans_a ? g.m : g.k, b_cols = g.trans_b ? g.k : g.n;
  if (g.lda < a_cols || g.ldb < b_cols || g.ldc < g.n)
    throw Error("cuda gemm: leading dimension below the row length in " + describe(g));
  const Plan& p = plan(g);
  TREX_CUBLAS_CHECK(cublaslt().matmul(handle_, p.desc, &g.alpha, g.b, p.la, g.a, p.lb, &g.beta, g.c, p.lc, g.c, p.lc,
                                   &p.algo, workspace_.as<void>(), workspace_.bytes(), stream));
}

}  // namespace trex::cuda
