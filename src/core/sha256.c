/*
 * sha256.c -- SHA-256 (FIPS 180-4), portable rounds and, on x86, the SHA
 * extensions (sha256.h).
 */
#include <string.h>

#include "sha256.h"

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

static inline uint32_t ror32(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

/* The compression function over nblocks 64-byte blocks, portable. */
static void sha_blocks_c(uint32_t st[8], const uint8_t *p, size_t nblocks)
{
    for (; nblocks != 0; nblocks--, p += 64) {
        uint32_t w[64];
        for (int t = 0; t < 16; t++)
            w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
                   (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
        for (int t = 16; t < 64; t++) {
            uint32_t s0 = ror32(w[t - 15], 7) ^ ror32(w[t - 15], 18) ^ (w[t - 15] >> 3);
            uint32_t s1 = ror32(w[t - 2], 17) ^ ror32(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        uint32_t a = st[0], b = st[1], c = st[2], d = st[3];
        uint32_t e = st[4], f = st[5], g = st[6], h = st[7];
        for (int t = 0; t < 64; t++) {
            uint32_t t1 = h + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) + ((e & f) ^ (~e & g)) +
                          sha_k[t] + w[t];
            uint32_t t2 =
                (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        st[0] += a;
        st[1] += b;
        st[2] += c;
        st[3] += d;
        st[4] += e;
        st[5] += f;
        st[6] += g;
        st[7] += h;
    }
}

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

/*
 * The same with the SHA extensions.  The state is kept as ABEF and CDGH,
 * as sha256rnds2 wants it; each group of four rounds takes four message
 * words, the first four groups from the block, later ones from
 *     X[g] = msg2(msg1(X[g-4], X[g-3]) + (X[g-2]:X[g-1] shifted by a word), X[g-1]).
 */
__attribute__((target("sha,sse4.1,ssse3"))) static void sha_blocks_ni(uint32_t st[8],
                                                                       const uint8_t *p,
                                                                       size_t nblocks)
{
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_loadu_si128((const __m128i *)(const void *)&st[0]);
    __m128i s1 = _mm_loadu_si128((const __m128i *)(const void *)&st[4]);
    tmp = _mm_shuffle_epi32(tmp, 0xb1);      /* CDAB */
    s1 = _mm_shuffle_epi32(s1, 0x1b);        /* EFGH */
    __m128i s0 = _mm_alignr_epi8(tmp, s1, 8); /* ABEF */
    s1 = _mm_blend_epi16(s1, tmp, 0xf0);     /* CDGH */
    for (; nblocks != 0; nblocks--, p += 64) {
        __m128i save0 = s0, save1 = s1;
        __m128i x[4];
        for (int g = 0; g < 16; g++) {
            __m128i m;
            if (g < 4) {
                m = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * g));
                x[g] = _mm_shuffle_epi8(m, swap);
            } else {
                __m128i a = _mm_sha256msg1_epu32(x[g & 3], x[(g + 1) & 3]);
                a = _mm_add_epi32(a, _mm_alignr_epi8(x[(g + 3) & 3], x[(g + 2) & 3], 4));
                x[g & 3] = _mm_sha256msg2_epu32(a, x[(g + 3) & 3]);
            }
            m = _mm_add_epi32(x[g & 3],
                              _mm_loadu_si128((const __m128i *)(const void *)&sha_k[4 * g]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, m);
            m = _mm_shuffle_epi32(m, 0x0e);
            s0 = _mm_sha256rnds2_epu32(s0, s1, m);
        }
        s0 = _mm_add_epi32(s0, save0);
        s1 = _mm_add_epi32(s1, save1);
    }
    tmp = _mm_shuffle_epi32(s0, 0x1b);       /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xb1);        /* DCHG */
    s0 = _mm_blend_epi16(tmp, s1, 0xf0);     /* DCBA */
    s1 = _mm_alignr_epi8(s1, tmp, 8);        /* HGFE */
    _mm_storeu_si128((__m128i *)(void *)&st[0], s0);
    _mm_storeu_si128((__m128i *)(void *)&st[4], s1);
}

/* CPUID: SHA is leaf 7 EBX bit 29, SSSE3 and SSE4.1 leaf 1 ECX bits 9 and 19. */
static bool sha_have_ni(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) || !(c & (1u << 19)))
        return false;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));
}
#endif

#if defined(__x86_64__) || defined(__i386__)
static bool have_ni(void)
{
    static int known = -1; /* -1 unknown, 0 no, 1 yes; a race only repeats the query */
    if (known < 0)
        known = sha_have_ni() ? 1 : 0;
    return known == 1;
}
#endif

static const uint32_t sha_iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

bool lanyfs_sha256_accelerated(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return have_ni();
#else
    return false;
#endif
}

void lanyfs_sha256_init_portable(struct lanyfs_sha256 *c)
{
    memcpy(c->h, sha_iv, sizeof(sha_iv));
    c->len = 0;
    c->fill = 0;
    c->rounds = sha_blocks_c;
}

void lanyfs_sha256_init(struct lanyfs_sha256 *c)
{
    lanyfs_sha256_init_portable(c);
#if defined(__x86_64__) || defined(__i386__)
    if (have_ni())
        c->rounds = sha_blocks_ni;
#endif
}

void lanyfs_sha256_update(struct lanyfs_sha256 *c, const void *data, size_t n)
{
    const uint8_t *p = data;
    c->len += n;
    if (c->fill != 0) {
        size_t k = 64 - c->fill < n ? 64 - c->fill : n;
        memcpy(c->buf + c->fill, p, k);
        c->fill += k;
        p += k;
        n -= k;
        if (c->fill < 64)
            return;
        c->rounds(c->h, c->buf, 1);
        c->fill = 0;
    }
    if (n >= 64) {
        c->rounds(c->h, p, n / 64);
        p += n & ~(size_t)63;
        n &= 63;
    }
    if (n != 0)
        memcpy(c->buf, p, n);
    c->fill = n;
}

void lanyfs_sha256_final(struct lanyfs_sha256 *c, uint8_t out[LANYFS_SHA256_LEN])
{
    uint64_t bits = c->len * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = c->fill < 56 ? 56 - c->fill : 120 - c->fill;
    for (int i = 0; i < 8; i++)
        pad[padlen + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
    lanyfs_sha256_update(c, pad, padlen + 8);
    for (int i = 0; i < 32; i++)
        out[i] = (uint8_t)(c->h[i / 4] >> (24 - 8 * (i % 4)));
}

void lanyfs_sha256(const void *data, size_t len, uint8_t out[LANYFS_SHA256_LEN])
{
    struct lanyfs_sha256 c;
    lanyfs_sha256_init(&c);
    lanyfs_sha256_update(&c, data, len);
    lanyfs_sha256_final(&c, out);
}

void lanyfs_sha256_hex(const uint8_t sum[LANYFS_SHA256_LEN], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < LANYFS_SHA256_LEN; i++) {
        hex[2 * i] = digits[sum[i] >> 4];
        hex[2 * i + 1] = digits[sum[i] & 15];
    }
    hex[64] = '\0';
}
