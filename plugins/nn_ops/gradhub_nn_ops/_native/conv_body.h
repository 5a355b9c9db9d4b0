/* The convolution kernels of one element type and one instruction set, included by
 * conv_native.c once per (type, target) with these macros defined:
 *   T       element type (float or double)
 *   VT      a GCC vector of T, 32 bytes; VL its number of lanes
 *   NAME(f) the function's name for this (type, target)
 *   ATTR    the function attribute choosing the target (empty: the compiler's default)
 *
 * Both kernels take the batch as given (the caller cuts it into chunks and runs the chunks on
 * its threads) and arrays in C order: x (n, C, H, W), w (O, C / G, KH, KW), y and dy
 * (n, O, OH, OW) with OH = H + 2 ph - dh (KH - 1), OW likewise (stride 1). Output rows are
 * computed in blocks of 2 VL positions (two vectors), each block's sums kept in registers for OB
 * output maps at a time; the padded input rows are long enough for whole blocks, so the last
 * block of a row reads zeros past the row's end and only its valid part is stored.
 * The order of every sum is fixed by the shapes alone. */

/* one sample's input x (C, H, W) copied into the interior of its zero-padded rows xp (C, Hp, Wa),
 * ph rows and pw columns in (the borders, zero, are never written) */
static inline void NAME(pad_rows)(T *xp, const T *xs, long C, long H, long W, long Hp, long Wa,
                                  long ph, long pw)
{
    for (long c = 0; c < C; c++)
        for (long r = 0; r < H; r++)
            memcpy(xp + (c * Hp + r + ph) * Wa + pw, xs + (c * H + r) * W, (size_t)W * sizeof(T));
}

ATTR static int NAME(fwd)(const T *x, const T *w, const T *bias, T *y, long n, long C, long H,
                          long W, long O, long G, long KH, long KW, long ph, long pw, long dh,
                          long dw, long OH, long OW)
{
    const long cg = C / G, og = O / G, kk = KH * KW;
    const long B = 2 * VL, nb = (OW + B - 1) / B;
    const long Hp = H + 2 * ph, Wa = nb * B + (KW - 1) * dw;
    const long ogp = (og + OB - 1) / OB * OB; /* output maps per group, padded to OB */
    T *xp = calloc((size_t)C * Hp * Wa + 1, sizeof(T)); /* + 1: never a request for 0 bytes */
    /* the weights repacked as (G, ogp / OB, cg, KH, KW, OB), zeros for the padded maps: the OB
     * weights that multiply one input vector are adjacent */
    T *wp = calloc((size_t)G * ogp * cg * kk + 1, sizeof(T));
    if (!xp || !wp) {
        free(xp);
        free(wp);
        return -1;
    }
    for (long g = 0; g < G; g++)
        for (long o = 0; o < og; o++)
            for (long c = 0; c < cg; c++)
                for (long k = 0; k < kk; k++)
                    wp[(((g * (ogp / OB) + o / OB) * cg + c) * kk + k) * OB + o % OB] =
                        w[((g * og + o) * cg + c) * kk + k];
    for (long s = 0; s < n; s++) {
        const T *xs = x + s * C * H * W;
        T *ys = y + s * O * OH * OW;
        NAME(pad_rows)(xp, xs, C, H, W, Hp, Wa, ph, pw);
        for (long g = 0; g < G; g++)
            for (long o0 = 0; o0 < og; o0 += OB) {
                const long ob = og - o0 < OB ? og - o0 : OB;
                const T *wb = wp + (g * (ogp / OB) + o0 / OB) * cg * kk * OB;
                for (long oh = 0; oh < OH; oh++)
                    for (long b = 0; b < nb; b++) {
                        VT acc[OB][2];
                        for (int j = 0; j < OB; j++) {
                            T v = (bias && j < ob) ? bias[g * og + o0 + j] : (T)0;
                            acc[j][0] = (VT){0} + v;
                            acc[j][1] = acc[j][0];
                        }
                        const T *wc = wb;
                        for (long c = 0; c < cg; c++)
                            for (long kh = 0; kh < KH; kh++) {
                                const T *xr = xp + ((g * cg + c) * Hp + oh + kh * dh) * Wa + b * B;
                                for (long kw = 0; kw < KW; kw++, wc += OB) {
                                    VT x0, x1;
                                    memcpy(&x0, xr + kw * dw, sizeof x0);
                                    memcpy(&x1, xr + kw * dw + VL, sizeof x1);
                                    for (int j = 0; j < OB; j++) {
                                        acc[j][0] += wc[j] * x0;
                                        acc[j][1] += wc[j] * x1;
                                    }
                                }
                            }
                        const long len = OW - b * B < B ? OW - b * B : B;
                        for (int j = 0; j < ob; j++) {
                            T *yr = ys + ((g * og + o0 + j) * OH + oh) * OW + b * B;
                            if (len == B) {
                                memcpy(yr, &acc[j][0], sizeof acc[j][0]);
                                memcpy(yr + VL, &acc[j][1], sizeof acc[j][1]);
                            } else {
                                T tmp[2 * VL];
                                memcpy(tmp, &acc[j][0], sizeof acc[j][0]);
                                memcpy(tmp + VL, &acc[j][1], sizeof acc[j][1]);
                                memcpy(yr, tmp, (size_t)len * sizeof(T));
                            }
                        }
                    }
            }
    }
    free(xp);
    free(wp);
    return 0;
}

/* filter gradient, added into gw (O, C / G, KH, KW):
 * gw[o, c, kh, kw] += sum_{s, oh, ow} dy[s, o, oh, ow] * xpad[s, g C/G + c, oh + kh dh, ow + kw dw]
 * The samples are taken in groups of about FILTER_BLOCK bytes of padded copies (x with its zero
 * borders, dy with its rows padded to whole vectors, cache-resident); within a group, for OB
 * output maps times QB taps (c, kh, kw) at a time, one vector of positions per sum, the sums run
 * over every sample, row and vector of the group: each loaded dy vector serves QB taps and each
 * input vector OB maps. A sum's lanes are added in lane order at the end of each group. */
ATTR static int NAME(filter)(const T *x, const T *dy, T *gw, long n, long C, long H, long W,
                             long O, long G, long KH, long KW, long ph, long pw, long dh, long dw,
                             long OH, long OW)
{
    const long cg = C / G, og = O / G, kk = KH * KW, taps = cg * kk;
    const long nb = (OW + VL - 1) / VL, Wb = nb * VL;
    const long Hp = H + 2 * ph, Wa = Wb + (KW - 1) * dw;
    const long ogp = (og + OB - 1) / OB * OB;
    const long tp = (taps + QB - 1) / QB * QB;
    const long xs_len = C * Hp * Wa, ds_len = G * ogp * OH * Wb; /* per sample */
    long sb = FILTER_BLOCK / (long)sizeof(T) / (xs_len + ds_len + 1); /* samples per group */
    sb = sb < 1 ? 1 : sb > n ? n : sb;
    T *xp = calloc((size_t)sb * xs_len + 1, sizeof(T)); /* + 1: never a request for 0 bytes */
    /* dy as (n, G, ogp, OH, Wb): rows padded with zeros to whole vectors, maps to a multiple
     * of OB */
    T *dp = calloc((size_t)sb * ds_len + 1, sizeof(T));
    long *off = malloc((size_t)(tp + 1) * sizeof(long)); /* each tap's offset in a group's xp */
    if (!xp || !dp || !off) {
        free(xp);
        free(dp);
        free(off);
        return -1;
    }
    for (long t = 0; t < tp; t++) {
        const long c = t / kk, kh = t % kk / KW, kw = t % KW;
        off[t] = t < taps ? (c * Hp + kh * dh) * Wa + kw * dw : 0; /* padding taps: discarded */
    }
    for (long s0 = 0; s0 < n; s0 += sb) {
        const long ns = n - s0 < sb ? n - s0 : sb;
        for (long s = 0; s < ns; s++) {
            const T *xs = x + (s0 + s) * C * H * W;
            const T *ds = dy + (s0 + s) * O * OH * OW;
            NAME(pad_rows)(xp + s * xs_len, xs, C, H, W, Hp, Wa, ph, pw);
            for (long g = 0; g < G; g++)
                for (long o = 0; o < og; o++)
                    for (long r = 0; r < OH; r++)
                        memcpy(dp + s * ds_len + ((g * ogp + o) * OH + r) * Wb,
                               ds + ((g * og + o) * OH + r) * OW, (size_t)OW * sizeof(T));
        }
        for (long g = 0; g < G; g++)
            for (long o0 = 0; o0 < og; o0 += OB) {
                const long ob = og - o0 < OB ? og - o0 : OB;
                for (long t0 = 0; t0 < tp; t0 += QB) {
                    /* the OB x QB sums in named variables, so that they stay in registers */
                    VT a00 = {0}, a01 = {0}, a02 = {0}, a10 = {0}, a11 = {0}, a12 = {0};
                    VT a20 = {0}, a21 = {0}, a22 = {0}, a30 = {0}, a31 = {0}, a32 = {0};
                    for (long s = 0; s < ns; s++) {
                        const T *xg = xp + s * xs_len + g * cg * Hp * Wa;
                        const T *x0 = xg + off[t0], *x1 = xg + off[t0 + 1],
                                *x2 = xg + off[t0 + 2];
                        const T *dr = dp + s * ds_len + (g * ogp + o0) * OH * Wb;
                        for (long oh = 0; oh < OH; oh++, dr += Wb) {
                            for (long b = 0; b < Wb; b += VL) {
                                VT v0, v1, v2, d;
                                memcpy(&v0, x0 + b, sizeof v0);
                                memcpy(&v1, x1 + b, sizeof v1);
                                memcpy(&v2, x2 + b, sizeof v2);
                                memcpy(&d, dr + b, sizeof d);
                                a00 += d * v0, a01 += d * v1, a02 += d * v2;
                                memcpy(&d, dr + OH * Wb + b, sizeof d);
                                a10 += d * v0, a11 += d * v1, a12 += d * v2;
                                memcpy(&d, dr + 2 * OH * Wb + b, sizeof d);
                                a20 += d * v0, a21 += d * v1, a22 += d * v2;
                                memcpy(&d, dr + 3 * OH * Wb + b, sizeof d);
                                a30 += d * v0, a31 += d * v1, a32 += d * v2;
                            }
                            x0 += Wa, x1 += Wa, x2 += Wa;
                        }
                    }
                    const VT acc[OB][QB] = {
                        {a00, a01, a02}, {a10, a11, a12}, {a20, a21, a22}, {a30, a31, a32}};
                    for (int j = 0; j < ob; j++)
                        for (int q = 0; q < QB && t0 + q < taps; q++) {
                            T sum = 0;
                            for (int l = 0; l < VL; l++)
                                sum += acc[j][q][l];
                            gw[(g * og + o0 + j) * taps + t0 + q] += sum;
                        }
                }
            }
    }
    free(xp);
    free(dp);
    free(off);
    return 0;
}
