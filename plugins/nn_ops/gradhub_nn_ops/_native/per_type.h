/* The kernels of one element type, included by native.c once per type with T, VT, VL, VI, VB
 * (where used), the index vectors EVEN_IDX, ODD_IDX, ILO_IDX, IHI_IDX and the name suffix SUF
 * defined: compiled for the default target (NAME(f) = f_SUF_base) and, on x86-64, for AVX2 with
 * FMA (f_SUF_avx2). Undefines the type's macros at the end. */

#define GH_CAT3(a, b, c) a##_##b##_##c
#define GH_NAME(f, s, t) GH_CAT3(f, s, t)

#define NAME(f) GH_NAME(f, SUF, base)
#define ATTR
#include "conv_body.h"
#include "pool_body.h"
#include "act_body.h"
#include "norm_body.h"
#include "bn_body.h"
#undef NAME
#undef ATTR

#ifdef GH_X86
#define NAME(f) GH_NAME(f, SUF, avx2)
#define ATTR __attribute__((target("avx2,fma")))
#include "conv_body.h"
#include "pool_body.h"
#include "act_body.h"
#include "norm_body.h"
#include "bn_body.h"
#undef NAME
#undef ATTR
#endif

#undef T
#undef VL
#undef VT
#undef VI
#undef EVEN_IDX
#undef ODD_IDX
#undef ILO_IDX
#undef IHI_IDX
#undef SUF
