/* Standardize's kernels of one element type and one instruction set, included by per_type.h with
 * T, NAME(f) and ATTR defined as for conv_body.h: rows of m contiguous values, each centred and
 * scaled to unit variance, y = (x - mu) / sqrt(var + eps) (optionally y gamma + beta, gamma and
 * beta of one row's length), and the row's input gradient
 * dx = r (g - mean(g)) - (x - mu) r^3 mean(g (x - mu)) with r = 1 / sqrt(var + eps) (g gamma in
 * place of g with gamma), with the sums over rows of gamma's and beta's gradients. The sums
 * are accumulated in double in four independent chains (exact for float32 rows of any length
 * that fits memory, and about numpy's pairwise sums' accuracy for float64). */

/* the mean and 1 / sqrt(var + eps) of one row of m values */
ATTR static void NAME(row_moments)(const T *x, long m, double eps, double *mu, double *rs)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    long i = 0;
    for (; i + 4 <= m; i += 4) {
        s0 += x[i];
        s1 += x[i + 1];
        s2 += x[i + 2];
        s3 += x[i + 3];
    }
    for (; i < m; i++)
        s0 += x[i];
    const double mean = ((s0 + s1) + (s2 + s3)) / (double)m;
    double q0 = 0, q1 = 0, q2 = 0, q3 = 0;
    for (i = 0; i + 4 <= m; i += 4) {
        const double d0 = x[i] - mean, d1 = x[i + 1] - mean;
        const double d2 = x[i + 2] - mean, d3 = x[i + 3] - mean;
        q0 += d0 * d0;
        q1 += d1 * d1;
        q2 += d2 * d2;
        q3 += d3 * d3;
    }
    for (; i < m; i++) {
        const double d = x[i] - mean;
        q0 += d * d;
    }
    *mu = mean;
    *rs = 1.0 / sqrt(((q0 + q1) + (q2 + q3)) / (double)m + eps);
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
        if (gamma) {
            for (long i = 0; i < m; i++)
                yr[i] = (T)((xr[i] - mu) * rs * gamma[i] + beta[i]);
        } else {
            for (long i = 0; i < m; i++)
                yr[i] = (T)((xr[i] - mu) * rs);
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
        if (dgamma) {
            for (long i = 0; i < m; i++) {
                dgamma[i] += gr[i] * (xr[i] - mu) * rs;
                dbeta[i] += gr[i];
            }
        }
        if (!dx)
            continue;
        T *dr = dx + r * m;
        double a0 = 0, a1 = 0, b0 = 0, b1 = 0;
        long i = 0;
        if (gamma) {
            for (; i + 2 <= m; i += 2) {
                const double g0 = (double)gr[i] * gamma[i], g1 = (double)gr[i + 1] * gamma[i + 1];
                a0 += g0;
                a1 += g1;
                b0 += g0 * (xr[i] - mu);
                b1 += g1 * (xr[i + 1] - mu);
            }
            for (; i < m; i++) {
                const double g0 = (double)gr[i] * gamma[i];
                a0 += g0;
                b0 += g0 * (xr[i] - mu);
            }
        } else {
            for (; i + 2 <= m; i += 2) {
                a0 += gr[i];
                a1 += gr[i + 1];
                b0 += gr[i] * (xr[i] - mu);
                b1 += gr[i + 1] * (xr[i + 1] - mu);
            }
            for (; i < m; i++) {
                a0 += gr[i];
                b0 += gr[i] * (xr[i] - mu);
            }
        }
        const double mg = (a0 + a1) / (double)m;
        const double c = rs * rs * rs * ((b0 + b1) / (double)m);
        if (gamma) {
            for (i = 0; i < m; i++)
                dr[i] = (T)(rs * ((double)gr[i] * gamma[i] - mg) - (xr[i] - mu) * c);
        } else {
            for (i = 0; i < m; i++)
                dr[i] = (T)(rs * (gr[i] - mg) - (xr[i] - mu) * c);
        }
    }
}
