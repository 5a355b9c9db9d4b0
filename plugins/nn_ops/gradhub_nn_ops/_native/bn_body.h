/* Batch normalization's kernels of one element type and one instruction set, included by
 * per_type.h with T, NAME(f) and ATTR defined as for conv_body.h. The input x is a C-contiguous
 * (N, C, S) array (S: the product of the spatial sizes), normalized per channel c over its N * S
 * values: N runs of S contiguous values, C * S apart. Each kernel handles the channels
 * [c0, c1); a channel's values are read by one call, in an order fixed by N and S alone (so the
 * results do not depend on how the channels are shared among threads).
 *
 * Per channel, with mu and var the mean and (biased) variance, r = 1 / sqrt(var + eps) and
 * a = gamma r:
 * - forward: y = (x - mu) a + beta;
 * - backward: S_g = sum g, S_gxc = sum g (x - mu); in training
 *   dx = a g - a S_g / n - (x - mu) a r^2 S_gxc / n (n: the count the statistics were taken
 *   over), in inference dx = a g.
 * The sums are accumulated in double, in sixteen lanes (four vectors of four: groups of sixteen
 * values of each run, then groups of four into the first vector) plus one scalar chain for the
 * last values of each run, the lanes added in a fixed order at the end; the arithmetic of each
 * value is in double, rounded once to T. */

#ifndef GH_BN_TYPES
#define GH_BN_TYPES
typedef double gh_v4d __attribute__((vector_size(32)));
#define BN_LOAD(p) ((gh_v4d){(double)(p)[0], (double)(p)[1], (double)(p)[2], (double)(p)[3]})
#define BN_STORE(p, v)                                                                             \
    do {                                                                                           \
        const gh_v4d bn_v_ = (v);                                                                  \
        (p)[0] = (T)bn_v_[0];                                                                      \
        (p)[1] = (T)bn_v_[1];                                                                      \
        (p)[2] = (T)bn_v_[2];                                                                      \
        (p)[3] = (T)bn_v_[3];                                                                      \
    } while (0)
#define BN_FLAG_STATS 1 /* compute the channels' mean and variance (else read them) */
#define BN_FLAG_SUMS 2  /* compute S_g and S_gxc (else read them) */
#define BN_FLAG_TRAIN 4 /* dx by the training formula (else dx = a g) */
#endif

/* the sum of four vectors' lanes and a scalar, in a fixed order */
ATTR static inline double NAME(bn_hsum)(gh_v4d a, gh_v4d b, gh_v4d c, gh_v4d d, double t)
{
    const gh_v4d s = (a + b) + (c + d);
    return ((s[0] + s[1]) + (s[2] + s[3])) + t;
}

/* the mean and the biased variance of one channel (two passes: the sum, then the squared
 * deviations from the mean) */
ATTR static void NAME(bn_channel_stats)(const T *x, long N, long S, long step, double *mean,
                                        double *var)
{
    gh_v4d a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;
    double t = 0;
    for (long n = 0; n < N; n++) {
        const T *p = x + n * step;
        long i = 0;
        for (; i + 16 <= S; i += 16) {
            a0 += BN_LOAD(p + i);
            a1 += BN_LOAD(p + i + 4);
            a2 += BN_LOAD(p + i + 8);
            a3 += BN_LOAD(p + i + 12);
        }
        for (; i + 4 <= S; i += 4)
            a0 += BN_LOAD(p + i);
        for (; i < S; i++)
            t += p[i];
    }
    const double count = (double)N * (double)S;
    const double mu = NAME(bn_hsum)(a0, a1, a2, a3, t) / count;
    gh_v4d q0 = {0, 0, 0, 0}, q1 = q0, q2 = q0, q3 = q0;
    double u = 0;
    for (long n = 0; n < N; n++) {
        const T *p = x + n * step;
        long i = 0;
        for (; i + 16 <= S; i += 16) {
            const gh_v4d d0 = BN_LOAD(p + i) - mu, d1 = BN_LOAD(p + i + 4) - mu;
            const gh_v4d d2 = BN_LOAD(p + i + 8) - mu, d3 = BN_LOAD(p + i + 12) - mu;
            q0 += d0 * d0;
            q1 += d1 * d1;
            q2 += d2 * d2;
            q3 += d3 * d3;
        }
        for (; i + 4 <= S; i += 4) {
            const gh_v4d d0 = BN_LOAD(p + i) - mu;
            q0 += d0 * d0;
        }
        for (; i < S; i++) {
            const double d = p[i] - mu;
            u += d * d;
        }
    }
    *mean = mu;
    *var = NAME(bn_hsum)(q0, q1, q2, q3, u) / count;
}

/* Batch normalization's forward on the channels [c0, c1) of x (N, C, S): where stats is
 * nonzero, the channels' mean and biased variance are computed and written to mean[c] and
 * var[c], else read from them; where y is given, y = (x - mean) gamma / sqrt(var + eps) + beta
 * (gamma and beta: C values each). */
ATTR static void NAME(bn_forward)(const T *x, const T *gamma, const T *beta, double *mean,
                                  double *var, T *y, long N, long C, long S, long c0, long c1,
                                  long stats, double eps)
{
    const long step = C * S;
    for (long c = c0; c < c1; c++) {
        const T *xc = x + c * S;
        if (stats)
            NAME(bn_channel_stats)(xc, N, S, step, &mean[c], &var[c]);
        if (!y)
            continue;
        const double mu = mean[c];
        const double a = (double)gamma[c] / sqrt(var[c] + eps), b = beta[c];
        for (long n = 0; n < N; n++) {
            const T *p = xc + n * step;
            T *q = y + c * S + n * step;
            long i = 0;
            for (; i + 4 <= S; i += 4)
                BN_STORE(q + i, (BN_LOAD(p + i) - mu) * a + b);
            for (; i < S; i++)
                q[i] = (T)((p[i] - mu) * a + b);
        }
    }
}

/* Batch normalization's backward on the channels [c0, c1) of x and g (N, C, S), by the bits of
 * flags: BN_FLAG_STATS computes the channels' mean and biased variance into mean[c], var[c]
 * (else they are read); BN_FLAG_SUMS computes S_g and S_gxc into sg[c], sgxc[c] (else they are
 * read: the sums over every process, say); where dx is given, it gets the training formula's
 * input gradient with the count ``count`` (BN_FLAG_TRAIN) or a g (inference). */
ATTR static void NAME(bn_backward)(const T *x, const T *g, const T *gamma, double *mean,
                                   double *var, double *sg, double *sgxc, T *dx, long N, long C,
                                   long S, long c0, long c1, long flags, long count, double eps)
{
    const long step = C * S;
    for (long c = c0; c < c1; c++) {
        const T *xc = x + c * S, *gc = g + c * S;
        if (flags & BN_FLAG_STATS)
            NAME(bn_channel_stats)(xc, N, S, step, &mean[c], &var[c]);
        const double mu = mean[c];
        if (flags & BN_FLAG_SUMS) {
            const gh_v4d zero = {0, 0, 0, 0};
            gh_v4d a0 = zero, a1 = zero, a2 = zero, a3 = zero;
            gh_v4d b0 = zero, b1 = zero, b2 = zero, b3 = zero;
            double ta = 0, tb = 0;
            for (long n = 0; n < N; n++) {
                const T *p = xc + n * step, *h = gc + n * step;
                long i = 0;
                for (; i + 16 <= S; i += 16) {
                    const gh_v4d g0 = BN_LOAD(h + i), g1 = BN_LOAD(h + i + 4);
                    const gh_v4d g2 = BN_LOAD(h + i + 8), g3 = BN_LOAD(h + i + 12);
                    a0 += g0;
                    a1 += g1;
                    a2 += g2;
                    a3 += g3;
                    b0 += g0 * (BN_LOAD(p + i) - mu);
                    b1 += g1 * (BN_LOAD(p + i + 4) - mu);
                    b2 += g2 * (BN_LOAD(p + i + 8) - mu);
                    b3 += g3 * (BN_LOAD(p + i + 12) - mu);
                }
                for (; i + 4 <= S; i += 4) {
                    const gh_v4d g0 = BN_LOAD(h + i);
                    a0 += g0;
                    b0 += g0 * (BN_LOAD(p + i) - mu);
                }
                for (; i < S; i++) {
                    ta += h[i];
                    tb += h[i] * (p[i] - mu);
                }
            }
            sg[c] = NAME(bn_hsum)(a0, a1, a2, a3, ta);
            sgxc[c] = NAME(bn_hsum)(b0, b1, b2, b3, tb);
        }
        if (!dx)
            continue;
        const double rs = 1.0 / sqrt(var[c] + eps), a = (double)gamma[c] * rs;
        double k = 0, e = 0; /* dx = a g - k - (x - mu) e */
        if (flags & BN_FLAG_TRAIN) {
            k = a * sg[c] / (double)count;
            e = a * rs * rs * sgxc[c] / (double)count;
        }
        for (long n = 0; n < N; n++) {
            const T *p = xc + n * step, *h = gc + n * step;
            T *q = dx + c * S + n * step;
            long i = 0;
            for (; i + 4 <= S; i += 4)
                BN_STORE(q + i, BN_LOAD(h + i) * a - k - (BN_LOAD(p + i) - mu) * e);
            for (; i < S; i++)
                q[i] = (T)(h[i] * a - k - (p[i] - mu) * e);
        }
    }
}
