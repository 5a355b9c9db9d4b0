/* Standardize's kernels of one element type and one instruction set, included by per_type.h with
 * T, NAME(f) and ATTR defined as for conv_body.h: rows of m contiguous values, each centred and
 * scaled to unit variance, y = (x - mu) / sqrt(var + eps) (optionally y gamma + beta, gamma and
 * beta of one row's length), and the row's input gradient
 * dx = r (g - mean(g)) - (x - mu) r^3 mean(g (x - mu)) with r = 1 / sqrt(var + eps) (g gamma in
 * place of g with gamma), with the sums over rows of gamma's and beta's gradients. The
 * elementwise work is done in T, the sums are accumulated in double in GH_NORM_LANES independent chains (element i goes to chain
 * i mod GH_NORM_LANES, which the compiler keeps in vector registers), the chains then added in
 * a fixed tree: exact for float32 rows of any length that fits memory, and about numpy's
 * pairwise sums' accuracy for float64; the same bits for any thread count. */

#ifndef GH_NORM_LANES
#define GH_NORM_LANES 16
/* the GH_NORM_LANES chains of s added pairwise (a fixed order), then tail */
static inline double gh_norm_total(const double *s, double tail)
{
    double t[GH_NORM_LANES];
    for (int k = 0; k < GH_NORM_LANES; k++)
        t[k] = s[k];
    for (int w = GH_NORM_LANES / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; k++)
            t[k] = t[k] + t[k + w];
    return t[0] + tail;
}
#endif

/* the mean and 1 / sqrt(var + eps) of one row of m values: float32 rows in one pass, the sums
 * of d = x - x[0] and of d^2 in double (each d and d^2 exact or rounded once in double: the
 * variance S2 / m - (S1 / m)^2 keeps about 1e-10 of relative accuracy even where the mean lies
 * a thousand standard deviations from x[0], far below float32's rounding); float64 rows in two
 * passes (the mean, then the squares of x - mean) */
ATTR static void NAME(row_moments)(const T *x, long m, double eps, double *mu, double *rs)
{
    if (sizeof(T) == 4 && m > 0) {
        const double x0 = (double)x[0];
        double s1[GH_NORM_LANES] = {0}, s2[GH_NORM_LANES] = {0}, t1 = 0, t2 = 0;
        long i = 0;
        for (; i + GH_NORM_LANES <= m; i += GH_NORM_LANES)
            for (int k = 0; k < GH_NORM_LANES; k++) {
                const double d = (double)x[i + k] - x0;
                s1[k] += d;
                s2[k] += d * d;
            }
        for (; i < m; i++) {
            const double d = (double)x[i] - x0;
            t1 += d;
            t2 += d * d;
        }
        const double dm = gh_norm_total(s1, t1) / (double)m;
        double var = gh_norm_total(s2, t2) / (double)m - dm * dm;
        *mu = x0 + dm;
        *rs = 1.0 / sqrt((var > 0 ? var : 0.0) + eps);
        return;
    }
    double s[GH_NORM_LANES] = {0}, tail = 0;
    long i = 0;
    for (; i + GH_NORM_LANES <= m; i += GH_NORM_LANES)
        for (int k = 0; k < GH_NORM_LANES; k++)
            s[k] += (double)x[i + k];
    for (; i < m; i++)
        tail += (double)x[i];
    const double mean = gh_norm_total(s, tail) / (double)m;
    double q[GH_NORM_LANES] = {0};
    tail = 0;
    for (i = 0; i + GH_NORM_LANES <= m; i += GH_NORM_LANES)
        for (int k = 0; k < GH_NORM_LANES; k++) {
            const double d = (double)x[i + k] - mean;
            q[k] += d * d;
        }
    for (; i < m; i++) {
        const double d = (double)x[i] - mean;
        tail += d * d;
    }
    *mu = mean;
    *rs = 1.0 / sqrt(gh_norm_total(q, tail) / (double)m + eps);
}

/* y = (x - mu) / sqrt(var + eps) on rows of m values, then, where gamma (and beta) are given
 * (m values each, both or neither), y * gamma + beta in the same pass */
ATTR static void NAME(standardize)(const T *x, const T *gamma, const T *beta, T *y, long rows,
                                   long m, double eps)
{
    for (long r = 0; r < rows; r++) {
        const T *xr = x + r * m;
        T *yr = y + r * m;
        double mu, rs;
        NAME(row_moments)(xr, m, eps, &mu, &rs);
        /* x - mu in double (mu rounded to T could be off by more than the spread of x), the
         * rest in T (float32 vectors) */
        const T rt = (T)rs;
        if (gamma) {
            for (long i = 0; i < m; i++)
                yr[i] = (T)((double)xr[i] - mu) * rt * gamma[i] + beta[i];
        } else {
            for (long i = 0; i < m; i++)
                yr[i] = (T)((double)xr[i] - mu) * rt;
        }
    }
}

/* The gradients of standardize for the output gradient g on rows of m values. With gamma given,
 * the standardized values' gradient is gg = g gamma; otherwise gg = g. Where dx is given,
 * dx = r (gg - mean(gg)) - (x - mu) r^3 mean(gg (x - mu)); where dgamma and dbeta are given (m
 * doubles each, both or neither), the rows' sums of g (x - mu) r and of g are added to them. */
ATTR static void NAME(standardize_backward)(const T *x, const T *g, const T *gamma, T *dx,
                                            double *restrict dgamma, double *restrict dbeta,
                                            long rows, long m, double eps)
{
    for (long r = 0; r < rows; r++) {
        const T *xr = x + r * m, *gr = g + r * m;
        double mu, rs;
        NAME(row_moments)(xr, m, eps, &mu, &rs);
        /* with gamma, dx and the parameters' sums: one pass for the sums of both */
        const int fused = dgamma && dx && gamma;
        if (dgamma && !fused) {
            for (long i = 0; i < m; i++) {
                dgamma[i] += gr[i] * (xr[i] - mu) * rs;
                dbeta[i] += gr[i];
            }
        }
        if (!dx)
            continue;
        T *dr = dx + r * m;
        double a[GH_NORM_LANES] = {0}, b[GH_NORM_LANES] = {0}, at = 0, bt = 0;
        long i = 0;
        if (fused) {
            for (; i + GH_NORM_LANES <= m; i += GH_NORM_LANES)
                for (int k = 0; k < GH_NORM_LANES; k++) {
                    const double gd = gr[i + k], d = (double)xr[i + k] - mu;
                    dgamma[i + k] += gd * d * rs;
                    dbeta[i + k] += gd;
                    const double g0 = gd * gamma[i + k];
                    a[k] += g0;
                    b[k] += g0 * d;
                }
            for (; i < m; i++) {
                const double gd = gr[i], d = (double)xr[i] - mu;
                dgamma[i] += gd * d * rs;
                dbeta[i] += gd;
                const double g0 = gd * gamma[i];
                at += g0;
                bt += g0 * d;
            }
        } else if (gamma) {
            for (; i + GH_NORM_LANES <= m; i += GH_NORM_LANES)
                for (int k = 0; k < GH_NORM_LANES; k++) {
                    const double g0 = (double)gr[i + k] * gamma[i + k];
                    a[k] += g0;
                    b[k] += g0 * ((double)xr[i + k] - mu);
                }
            for (; i < m; i++) {
                const double g0 = (double)gr[i] * gamma[i];
                at += g0;
                bt += g0 * ((double)xr[i] - mu);
            }
        } else {
            for (; i + GH_NORM_LANES <= m; i += GH_NORM_LANES)
                for (int k = 0; k < GH_NORM_LANES; k++) {
                    a[k] += (double)gr[i + k];
                    b[k] += (double)gr[i + k] * ((double)xr[i + k] - mu);
                }
            for (; i < m; i++) {
                at += gr[i];
                bt += gr[i] * ((double)xr[i] - mu);
            }
        }
        const double mg = gh_norm_total(a, at) / (double)m;
        const double c = rs * rs * rs * (gh_norm_total(b, bt) / (double)m);
        const T rt = (T)rs, mgt = (T)mg, ct = (T)c; /* (x - mu in double, as above) */
        if (gamma) {
            for (i = 0; i < m; i++)
                dr[i] = rt * (gr[i] * gamma[i] - mgt) - (T)((double)xr[i] - mu) * ct;
        } else {
            for (i = 0; i < m; i++)
                dr[i] = rt * (gr[i] - mgt) - (T)((double)xr[i] - mu) * ct;
        }
    }
}
