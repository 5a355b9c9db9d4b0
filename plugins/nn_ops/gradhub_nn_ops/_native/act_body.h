/* ReLU's kernels of one element type and one instruction set, included by per_type.h with T,
 * NAME(f) and ATTR defined as for conv_body.h. The arithmetic is that of the numpy kernels:
 * the forward is numpy's maximum(x, 0) (NaN kept, -0.0 gives 0.0), the backward g times the
 * 0/1 value of y > 0. Plain loops: the compiler vectorizes them. */

/* y = max(x, 0) over n values */
ATTR static void NAME(relu)(const T *x, T *y, long n)
{
    for (long i = 0; i < n; i++) {
        const T v = x[i];
        y[i] = ((v > 0) | (v != v)) ? v : (T)0;
    }
}

/* out = g * (y > 0) over n values */
ATTR static void NAME(relu_backward)(const T *g, const T *y, T *out, long n)
{
    for (long i = 0; i < n; i++) {
        const T m = y[i] > 0 ? (T)1 : (T)0; /* a select, not a branch: the loop vectorizes */
        out[i] = g[i] * m;
    }
}
