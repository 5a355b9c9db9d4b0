/* gradhub-nn-ops' compiled CPU convolution kernels (stride 1, any padding, dilation and group):
 * the forward convolution and the filter gradient, for float32 and float64, called through
 * ctypes by gradhub_nn_ops.native (which also cuts the batch into chunks for its threads).
 *
 * Each kernel is compiled twice, for the compiler's default x86-64 and for AVX2 with FMA; the
 * entry points choose once per call by what the CPU supports. No Python object is touched: the
 * module-init function only makes this file a valid (empty) extension module. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#define OB 4 /* output maps per register block */
#define QB 3 /* filter-gradient taps per register block */

#define T float
#define VL 8
typedef float vf32 __attribute__((vector_size(32)));
#define VT vf32
#define NAME(f) f##_f32_base
#define ATTR
#include "conv_body.h"
#undef NAME
#undef ATTR
#if defined(__GNUC__) && defined(__x86_64__)
#define GH_X86 1
#define NAME(f) f##_f32_avx2
#define ATTR __attribute__((target("avx2,fma")))
#include "conv_body.h"
#undef NAME
#undef ATTR
#endif
#undef T
#undef VL
#undef VT

#define T double
#define VL 4
typedef double vf64 __attribute__((vector_size(32)));
#define VT vf64
#define NAME(f) f##_f64_base
#define ATTR
#include "conv_body.h"
#undef NAME
#undef ATTR
#ifdef GH_X86
#define NAME(f) f##_f64_avx2
#define ATTR __attribute__((target("avx2,fma")))
#include "conv_body.h"
#undef NAME
#undef ATTR
#endif
#undef T
#undef VL
#undef VT

/* 1 where the AVX2/FMA kernels run, 0 otherwise */
int gh_conv_target(void)
{
#ifdef GH_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

#define ARGS                                                                                       \
    long n, long C, long H, long W, long O, long G, long KH, long KW, long ph, long pw, long dh,   \
        long dw, long OH, long OW
#define PASS n, C, H, W, O, G, KH, KW, ph, pw, dh, dw, OH, OW

#ifdef GH_X86
#define DISPATCH(f, ...) (gh_conv_target() ? f##_avx2(__VA_ARGS__) : f##_base(__VA_ARGS__))
#else
#define DISPATCH(f, ...) f##_base(__VA_ARGS__)
#endif

int gh_conv_fwd_f32(const float *x, const float *w, const float *bias, float *y, ARGS)
{
    return DISPATCH(fwd_f32, x, w, bias, y, PASS);
}

int gh_conv_fwd_f64(const double *x, const double *w, const double *bias, double *y, ARGS)
{
    return DISPATCH(fwd_f64, x, w, bias, y, PASS);
}

int gh_conv_filter_f32(const float *x, const float *dy, float *gw, ARGS)
{
    return DISPATCH(filter_f32, x, dy, gw, PASS);
}

int gh_conv_filter_f64(const double *x, const double *dy, double *gw, ARGS)
{
    return DISPATCH(filter_f64, x, dy, gw, PASS);
}

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_conv_native", .m_doc = NULL, .m_size = 0};

PyMODINIT_FUNC PyInit__conv_native(void) { return PyModule_Create(&module); }
