// Op checks of the MoE routing kernels (cuda/moe_route.hpp) against their CPU oracle (nn/moe_route.hpp, the
// model's own routing arithmetic), on the same seeded inputs. The affinities are the only values whose last bits
// may differ (expf, log1pf): they are held to a bound, and every later step is run by the oracle from the device's
// own affinities and compared exactly (selection, weights, grouping, gather, combine, counts) or within a stated
// rounding bound (balance loss, router backward). The harness (op_check.hpp) drives them from the gpu tests
// (small and odd shapes) and from trex_cuda_op_perf (the model's sizes).
#pragma once
#include <cstdint>
#include <vector>

#include "op_check.hpp"

namespace trex::cuda::check {

// The router forward (a, sel, w), the grouping (counts and offsets on the device and on the host, order_tok,
// order_slot, row_of) and, unless hash, the balance loss and its per-sequence counts, for B sequences of T tokens,
// E experts, k per token. hash: a 97-row tid2eid table of distinct experts per row (the bias ignored). ties:
// scores and bias drawn from a few values, so that a + bias ties exactly and the lower index must win. a within
// 16 u |a| of the CPU's; sel, w, the grouping and the counts exactly the oracle's from the device's a; the loss
// within 4 (T + 2E + B + 8) 2^-53 of it (sums of positive doubles); a and the loss the same bits on a second call.
OpReport check_moe_route(Harness& h, int64_t B, int64_t T, int64_t E, int64_t k, bool hash, bool ties);

// Gather of token rows (d floats) and routing weights into expert order, the gather without weights (the
// backward's output gradients) and the combine (routed rows added onto pre-filled token rows) after a device
// grouping of a random selection: every output exactly the oracle's (copies; the same float additions in the
// same order).
OpReport check_moe_dispatch(Harness& h, int64_t N, int64_t E, int64_t k, int64_t d);

// The router backward from random routing-weight gradients, after the device's forward (and balance loss unless
// hash): ds against nn::moe_route_backward on the device's a and sel, per element within 32 u |ref| + 4 (2k + 6) u
// |sigmoid grad| (the magnitudes of its route and balance terms); ds from the gradients in expert order (through
// row_of) the same bits as from [N, k]; the same bits on a second call.
OpReport check_moe_route_backward(Harness& h, int64_t B, int64_t T, int64_t E, int64_t k, bool hash);

// The bounds above, for the checks and for their CPU test (tests/cuda/moe_route_ref_test.cpp: the kernels'
// reorderings of the same arithmetic, with every exp moved by 2 ulp, stay inside them; a wrong term does not).
constexpr double kMoeAffinityRtol = 16.0 / 16777216.0;  // |a - a_cpu| <= 16 u a
double moe_balance_loss_bound(int64_t B, int64_t T, int64_t E, double ref);
// Per element of ds [N, E] (ref: the oracle's ds); balance false: a hash layer.
std::vector<double> moe_route_backward_bound(const float* scores, const float* a, const int32_t* sel, const float* dw,
                                             const float* ref, int64_t N, int64_t E, int64_t k, float R, bool balance,
                                             int64_t B, int64_t T, double alpha);

}  // namespace trex::cuda::check
