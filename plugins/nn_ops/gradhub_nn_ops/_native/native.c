/* gradhub-nn-ops' compiled CPU kernels, called through ctypes by gradhub_nn_ops.native (which
 * also cuts the work into chunks for its threads), for float32 and float64:
 * - convolutions with stride 1 (any padding, dilation and group): the forward convolution and
 *   the filter gradient (conv_body.h);
 * - 2x2 max pooling with stride 2: the maxima, the first-maximum mask, the backward, the masked
 *   gather, unpooling and pooling (pool_body.h);
 * - ReLU's forward and backward (act_body.h);
 * - standardize's forward and backward (norm_body.h);
 * - batch normalization's forward and backward over the channels of (N, C, S) arrays
 *   (bn_body.h).
 *
 * Each kernel is compiled twice, for the compiler's default x86-64 and for AVX2 with FMA; the
 * entry points choose once per call by what the CPU supports. No Python object is touched: the
 * module-init function only makes this file a valid (empty) extension module. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OB 4 /* output maps per register block */
#define QB 3 /* filter-gradient taps per register block */
#define FILTER_BLOCK 262144 /* bytes of padded samples per group of the filter gradient */

#if defined(__GNUC__) && defined(__x86_64__)
#define GH_X86 1
#endif

#ifdef __clang__
#define SHUF(a, b, idx) __builtin_shufflevector(a, b, idx)
#else
#define SHUF(a, b, idx) __builtin_shuffle(a, b, idx)
#endif

#define T float
#define VL 8
typedef float vf32 __attribute__((vector_size(32)));
typedef int vi32 __attribute__((vector_size(32)));
#define VT vf32
#define VI vi32
#define EVEN_IDX ((vi32){0, 2, 4, 6, 8, 10, 12, 14})
#define ODD_IDX ((vi32){1, 3, 5, 7, 9, 11, 13, 15})
#define ILO_IDX ((vi32){0, 8, 1, 9, 2, 10, 3, 11})
#define IHI_IDX ((vi32){4, 12, 5, 13, 6, 14, 7, 15})
#define SUF f32
#include "per_type.h"

#define T double
#define VL 4
typedef double vf64 __attribute__((vector_size(32)));
typedef long long vi64 __attribute__((vector_size(32)));
#define VT vf64
#define VI vi64
#define EVEN_IDX ((vi64){0, 2, 4, 6})
#define ODD_IDX ((vi64){1, 3, 5, 7})
#define ILO_IDX ((vi64){0, 4, 1, 5})
#define IHI_IDX ((vi64){2, 6, 3, 7})
#define SUF f64
#include "per_type.h"

/* 1 where the AVX2/FMA kernels run, 0 otherwise */
int gh_target(void)
{
#ifdef GH_X86
    static int target = -1; /* found at the first call (any thread finds the same value) */
    if (target < 0) {
        __builtin_cpu_init();
        target = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return target;
#else
    return 0;
#endif
}

#define ARGS                                                                                       \
    long n, long C, long H, long W, long O, long G, long KH, long KW, long ph, long pw, long dh,   \
        long dw, long OH, long OW
#define PASS n, C, H, W, O, G, KH, KW, ph, pw, dh, dw, OH, OW

#ifdef GH_X86
#define DISPATCH(f, ...) (gh_target() ? f##_avx2(__VA_ARGS__) : f##_base(__VA_ARGS__))
#else
#define DISPATCH(f, ...) f##_base(__VA_ARGS__)
#endif

#define CONV_ENTRIES(SUF, T)                                                                       \
    int gh_conv_fwd_##SUF(const T *x, const T *w, const T *bias, T *y, ARGS)                       \
    {                                                                                              \
        return DISPATCH(fwd_##SUF, x, w, bias, y, PASS);                                           \
    }                                                                                              \
    int gh_conv_filter_##SUF(const T *x, const T *dy, T *gw, ARGS)                                 \
    {                                                                                              \
        return DISPATCH(filter_##SUF, x, dy, gw, PASS);                                            \
    }

CONV_ENTRIES(f32, float)
CONV_ENTRIES(f64, double)

#define POOL_ENTRIES(SUF, T)                                                                       \
    void gh_pool_max_##SUF(const T *x, T *y, long r, long w)                                       \
    {                                                                                              \
        DISPATCH(pool_max_##SUF, x, y, r, w);                                                      \
    }                                                                                              \
    void gh_pool_mask_##SUF(const T *x, const T *y, unsigned char *m, long r, long w)              \
    {                                                                                              \
        DISPATCH(pool_mask_##SUF, x, y, m, r, w);                                                  \
    }                                                                                              \
    void gh_pool_backward_##SUF(const T *x, const T *dy, T *dx, long r, long w)                    \
    {                                                                                              \
        DISPATCH(pool_backward_##SUF, x, dy, dx, r, w);                                            \
    }                                                                                              \
    void gh_pool_gather_##SUF(const T *x, const T *g, T *out, long r, long w)                      \
    {                                                                                              \
        DISPATCH(pool_gather_##SUF, x, g, out, r, w);                                              \
    }                                                                                              \
    void gh_pool_unpool_##SUF(const T *dy, const unsigned char *m, T *dx, long r, long w)          \
    {                                                                                              \
        DISPATCH(pool_unpool_##SUF, dy, m, dx, r, w);                                              \
    }                                                                                              \
    void gh_pool_masked_##SUF(const T *g, const unsigned char *m, T *out, long r, long w)          \
    {                                                                                              \
        DISPATCH(pool_masked_##SUF, g, m, out, r, w);                                              \
    }

POOL_ENTRIES(f32, float)
POOL_ENTRIES(f64, double)

#define ACT_ENTRIES(SUF, T)                                                                        \
    void gh_relu_##SUF(const T *x, T *y, long n) { DISPATCH(relu_##SUF, x, y, n); }                \
    void gh_relu_backward_##SUF(const T *g, const T *y, T *out, long n)                            \
    {                                                                                              \
        DISPATCH(relu_backward_##SUF, g, y, out, n);                                               \
    }

ACT_ENTRIES(f32, float)
ACT_ENTRIES(f64, double)

#define NORM_ENTRIES(SUF, T)                                                                       \
    void gh_standardize_##SUF(const T *x, const T *gamma, const T *beta, T *y, long rows, long m,  \
                              double eps)                                                          \
    {                                                                                              \
        DISPATCH(standardize_##SUF, x, gamma, beta, y, rows, m, eps);                              \
    }                                                                                              \
    void gh_standardize_backward_##SUF(const T *x, const T *g, const T *gamma, T *dx,              \
                                       double *dgamma, double *dbeta, long rows, long m,           \
                                       double eps)                                                 \
    {                                                                                              \
        DISPATCH(standardize_backward_##SUF, x, g, gamma, dx, dgamma, dbeta, rows, m, eps);        \
    }

NORM_ENTRIES(f32, float)
NORM_ENTRIES(f64, double)

#define BN_ENTRIES(SUF, T)                                                                         \
    void gh_bn_forward_##SUF(const T *x, const T *gamma, const T *beta, double *mean,              \
                             double *var, T *y, long N, long C, long S, long c0, long c1,          \
                             long stats, double eps)                                               \
    {                                                                                              \
        DISPATCH(bn_forward_##SUF, x, gamma, beta, mean, var, y, N, C, S, c0, c1, stats, eps);     \
    }                                                                                              \
    void gh_bn_backward_##SUF(const T *x, const T *g, const T *gamma, double *mean, double *var,   \
                              double *sg, double *sgxc, T *dx, long N, long C, long S, long c0,    \
                              long c1, long flags, long count, double eps)                         \
    {                                                                                              \
        DISPATCH(bn_backward_##SUF, x, g, gamma, mean, var, sg, sgxc, dx, N, C, S, c0, c1, flags,  \
                 count, eps);                                                                      \
    }

BN_ENTRIES(f32, float)
BN_ENTRIES(f64, double)

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_native_kernels", .m_doc = NULL, .m_size = 0};

PyMODINIT_FUNC PyInit__native_kernels(void) { return PyModule_Create(&module); }
