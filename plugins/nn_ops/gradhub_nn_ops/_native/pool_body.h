/* The 2x2 max-pooling kernels (kernel 2x2, stride 2, windows covering the input exactly) of one
 * element type and one instruction set, included by native.c once per (type, target) with T,
 * NAME(f) and ATTR defined as for conv_body.h.
 *
 * Arrays are rows of windows: an input-shaped array is (r, 2, w) in C order (two input rows of w
 * values per row of windows), an output-shaped one (r, w / 2). The window of output (i, j) holds,
 * in window order, e0 = in[i, 0, 2j], e1 = in[i, 0, 2j + 1], e2 = in[i, 1, 2j], e3 = in[i, 1, 2j + 1].
 * Its first maximum is the first element equal to the window's maximum, or the first NaN where
 * the window holds one (as the numpy kernels: ties, -0.0 and 0.0 included, keep the earlier
 * element). Arithmetic is that of the numpy kernels: gradients are multiplied by the 0/1 mask
 * (so an infinite or NaN gradient gives NaN where the mask is 0), and a window's masked sum is
 * (g0 m0 + g2 m2) + (g1 m1 + g3 m3). */

/* the first-maximum mask of the window (a, b, c, d) as four 0/1 values of T, without branches
 * (comparisons as selects, so that the loops vectorize) */
#define FIRST_MAX(a, b, c, d, m0, m1, m2, m3)                                                      \
    const int t01 = ((b) > (a)) | (((b) != (b)) & ((a) == (a)));                                 \
    const int t23 = ((d) > (c)) | (((d) != (d)) & ((c) == (c)));                                 \
    const T v01 = t01 ? (b) : (a), v23 = t23 ? (d) : (c);                                         \
    const int low = (v23 > v01) | ((v23 != v23) & (v01 == v01));                                 \
    const T m0 = (T)((t01 | low) ^ 1), m1 = (T)(t01 & (low ^ 1)), m2 = (T)((t23 ^ 1) & low),     \
            m3 = (T)(t23 & low)

/* The same in vectors of VL windows: a, b, c, d the windows' elements (VT), k0-k3 the masks
 * (VI lanes of -1 / 0) */
#define FIRST_MAX_V(a, b, c, d, k0, k1, k2, k3)                                                    \
    const VI t01 = ((b) > (a)) | (((b) != (b)) & ((a) == (a)));                                  \
    const VI t23 = ((d) > (c)) | (((d) != (d)) & ((c) == (c)));                                  \
    const VT v01 = (VT)(((VI)(b) & t01) | ((VI)(a) & ~t01));                                      \
    const VT v23 = (VT)(((VI)(d) & t23) | ((VI)(c) & ~t23));                                      \
    const VI low = (v23 > v01) | ((v23 != v23) & (v01 == v01));                                  \
    const VI k0 = ~(t01 | low), k1 = t01 & ~low, k2 = ~t23 & low, k3 = t23 & low

/* the window elements of VL windows from j: rows r0, r1 of the input */
#define LOAD_WINDOWS(r0, r1, j, a, b, c, d)                                                        \
    VT a, b, c, d;                                                                                 \
    {                                                                                              \
        VT p, q;                                                                                   \
        memcpy(&p, (r0) + 2 * (j), sizeof p);                                                      \
        memcpy(&q, (r0) + 2 * (j) + VL, sizeof q);                                                 \
        a = SHUF(p, q, EVEN_IDX);                                                                  \
        b = SHUF(p, q, ODD_IDX);                                                                   \
        memcpy(&p, (r1) + 2 * (j), sizeof p);                                                      \
        memcpy(&q, (r1) + 2 * (j) + VL, sizeof q);                                                 \
        c = SHUF(p, q, EVEN_IDX);                                                                  \
        d = SHUF(p, q, ODD_IDX);                                                                   \
    }

/* store the pairs (p, q) of VL windows interleaved: p q p q ... at out */
#define STORE_PAIRS(out, p, q)                                                                     \
    {                                                                                              \
        const VT lo_ = SHUF(p, q, ILO_IDX), hi_ = SHUF(p, q, IHI_IDX);                            \
        memcpy((out), &lo_, sizeof lo_);                                                           \
        memcpy((out) + VL, &hi_, sizeof hi_);                                                      \
    }

/* 0/1 values of T from a mask of -1 / 0 lanes */
#define ONES(k) ((VT)((k) & (VI)((VT){0} + 1)))

/* y = the windows' maxima (NaN where a window holds NaN) */
ATTR static void NAME(pool_max)(const T *x, T *y, long r, long w)
{
    const long h = w / 2;
    for (long i = 0; i < r; i++) {
        const T *x0 = x + 2 * i * w, *x1 = x0 + w;
        T *yr = y + i * h;
        for (long j = 0; j < h; j++) {
            const T a = x0[2 * j], b = x0[2 * j + 1], c = x1[2 * j], d = x1[2 * j + 1];
            const T p = (a > b || a != a) ? a : b; /* numpy's maximum: ties give b */
            const T q = (c > d || c != c) ? c : d;
            yr[j] = (p > q || p != p) ? p : q;
        }
    }
}

/* m (bool, input-shaped) = 1 at the first element of each window equal to y's value for it
 * (the first NaN where y is NaN): with y the windows' maxima, the first-maximum mask */
#define FIRST_EQUAL(q0, q1, q2, q3, k0, k1, k2, k3)                                                \
    k0 = (q0);                                                                                     \
    k1 = (q1) & ~(q0);                                                                             \
    k2 = (q2) & ~((q0) | (q1));                                                                    \
    k3 = (q3) & ~((q0) | (q1) | (q2))
ATTR static void NAME(pool_mask)(const T *x, const T *y, unsigned char *m, long r, long w)
{
    const long h = w / 2, hv = h - h % VL;
    for (long i = 0; i < r; i++) {
        const T *x0 = x + 2 * i * w, *x1 = x0 + w;
        const T *yr = y + i * h;
        unsigned char *m0 = m + 2 * i * w, *m1 = m0 + w;
        for (long j = 0; j < hv; j += VL) {
            LOAD_WINDOWS(x0, x1, j, a, b, c, d);
            VT v;
            memcpy(&v, yr + j, sizeof v);
            const VI vn = v != v;
            VI k0, k1, k2, k3;
            FIRST_EQUAL((a == v) | ((a != a) & vn), (b == v) | ((b != b) & vn),
                        (c == v) | ((c != c) & vn), (d == v) | ((d != d) & vn), k0, k1, k2, k3);
            for (int l = 0; l < VL; l++) {
                m0[2 * (j + l)] = (unsigned char)(k0[l] & 1);
                m0[2 * (j + l) + 1] = (unsigned char)(k1[l] & 1);
                m1[2 * (j + l)] = (unsigned char)(k2[l] & 1);
                m1[2 * (j + l) + 1] = (unsigned char)(k3[l] & 1);
            }
        }
        for (long j = hv; j < h; j++) {
            const T a = x0[2 * j], b = x0[2 * j + 1], c = x1[2 * j], d = x1[2 * j + 1], v = yr[j];
            const int vn = v != v;
            int k0, k1, k2, k3;
            FIRST_EQUAL((a == v) | ((a != a) & vn), (b == v) | ((b != b) & vn),
                        (c == v) | ((c != c) & vn), (d == v) | ((d != d) & vn), k0, k1, k2, k3);
            m0[2 * j] = (unsigned char)k0;
            m0[2 * j + 1] = (unsigned char)k1;
            m1[2 * j] = (unsigned char)k2;
            m1[2 * j + 1] = (unsigned char)k3;
        }
    }
}

/* dx (input-shaped) = dy spread over each window times its first-maximum mask of x */
ATTR static void NAME(pool_backward)(const T *x, const T *dy, T *dx, long r, long w)
{
    const long h = w / 2, hv = h - h % VL;
    for (long i = 0; i < r; i++) {
        const T *x0 = x + 2 * i * w, *x1 = x0 + w;
        const T *g = dy + i * h;
        T *d0 = dx + 2 * i * w, *d1 = d0 + w;
        for (long j = 0; j < hv; j += VL) {
            LOAD_WINDOWS(x0, x1, j, a, b, c, d);
            FIRST_MAX_V(a, b, c, d, k0, k1, k2, k3);
            VT v;
            memcpy(&v, g + j, sizeof v);
            const VT p0 = v * ONES(k0), p1 = v * ONES(k1), p2 = v * ONES(k2), p3 = v * ONES(k3);
            STORE_PAIRS(d0 + 2 * j, p0, p1);
            STORE_PAIRS(d1 + 2 * j, p2, p3);
        }
        for (long j = hv; j < h; j++) {
            const T a = x0[2 * j], b = x0[2 * j + 1], c = x1[2 * j], d = x1[2 * j + 1];
            FIRST_MAX(a, b, c, d, k0, k1, k2, k3);
            const T v = g[j];
            d0[2 * j] = v * k0;
            d0[2 * j + 1] = v * k1;
            d1[2 * j] = v * k2;
            d1[2 * j + 1] = v * k3;
        }
    }
}

/* out (output-shaped) = each window's sum of g times the first-maximum mask of x */
ATTR static void NAME(pool_gather)(const T *x, const T *g, T *out, long r, long w)
{
    const long h = w / 2, hv = h - h % VL;
    for (long i = 0; i < r; i++) {
        const T *x0 = x + 2 * i * w, *x1 = x0 + w;
        const T *g0 = g + 2 * i * w, *g1 = g0 + w;
        T *o = out + i * h;
        for (long j = 0; j < hv; j += VL) {
            LOAD_WINDOWS(x0, x1, j, a, b, c, d);
            FIRST_MAX_V(a, b, c, d, k0, k1, k2, k3);
            LOAD_WINDOWS(g0, g1, j, ga, gb, gc, gd);
            const VT sum = (ga * ONES(k0) + gc * ONES(k2)) + (gb * ONES(k1) + gd * ONES(k3));
            memcpy(o + j, &sum, sizeof sum);
        }
        for (long j = hv; j < h; j++) {
            const T a = x0[2 * j], b = x0[2 * j + 1], c = x1[2 * j], d = x1[2 * j + 1];
            FIRST_MAX(a, b, c, d, k0, k1, k2, k3);
            o[j] = (g0[2 * j] * k0 + g1[2 * j] * k2) + (g0[2 * j + 1] * k1 + g1[2 * j + 1] * k3);
        }
    }
}

/* dx (input-shaped) = dy spread over each window times the mask m */
ATTR static void NAME(pool_unpool)(const T *dy, const unsigned char *m, T *dx, long r, long w)
{
    const long h = w / 2;
    for (long i = 0; i < r; i++) {
        const unsigned char *m0 = m + 2 * i * w, *m1 = m0 + w;
        const T *g = dy + i * h;
        T *d0 = dx + 2 * i * w, *d1 = d0 + w;
        for (long j = 0; j < h; j++) {
            const T v = g[j];
            d0[2 * j] = v * (T)m0[2 * j];
            d0[2 * j + 1] = v * (T)m0[2 * j + 1];
            d1[2 * j] = v * (T)m1[2 * j];
            d1[2 * j + 1] = v * (T)m1[2 * j + 1];
        }
    }
}

/* out (output-shaped) = each window's sum of g times the mask m */
ATTR static void NAME(pool_masked)(const T *g, const unsigned char *m, T *out, long r, long w)
{
    const long h = w / 2;
    for (long i = 0; i < r; i++) {
        const unsigned char *m0 = m + 2 * i * w, *m1 = m0 + w;
        const T *g0 = g + 2 * i * w, *g1 = g0 + w;
        T *o = out + i * h;
        for (long j = 0; j < h; j++)
            o[j] = (g0[2 * j] * (T)m0[2 * j] + g1[2 * j] * (T)m1[2 * j]) +
                   (g0[2 * j + 1] * (T)m0[2 * j + 1] + g1[2 * j + 1] * (T)m1[2 * j + 1]);
    }
}
