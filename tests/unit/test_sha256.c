/*
 * test_sha256.c -- SHA-256 (src/core/sha256.c): FIPS 180-4's vectors with
 * the rounds lanyfs_sha256_init picks (the SHA extensions where the
 * processor has them) and with the portable rounds, the two against each
 * other on every length and split of a buffer, and the hex form.
 */
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "unit.h"

static void hash(bool portable, const void *d, size_t n, char hex[65])
{
    struct lanyfs_sha256 c;
    uint8_t sum[LANYFS_SHA256_LEN];
    if (portable)
        lanyfs_sha256_init_portable(&c);
    else
        lanyfs_sha256_init(&c);
    lanyfs_sha256_update(&c, d, n);
    lanyfs_sha256_final(&c, sum);
    lanyfs_sha256_hex(sum, hex);
}

START_TEST(test_vectors)
{
    static const struct {
        const char *msg;
        const char *want;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklm"
         "nopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    char hex[65];
    for (int portable = 0; portable < 2; portable++) {
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
            hash(portable, v[i].msg, strlen(v[i].msg), hex);
            ck_assert_str_eq(hex, v[i].want);
        }
        /* One million 'a', fed in uneven pieces. */
        static uint8_t a[1000000];
        memset(a, 'a', sizeof(a));
        struct lanyfs_sha256 c;
        uint8_t sum[LANYFS_SHA256_LEN];
        if (portable)
            lanyfs_sha256_init_portable(&c);
        else
            lanyfs_sha256_init(&c);
        for (size_t off = 0, step = 1; off < sizeof(a); off += step, step = step * 3 % 1001 + 1)
            lanyfs_sha256_update(&c, a + off, step < sizeof(a) - off ? step : sizeof(a) - off);
        lanyfs_sha256_final(&c, sum);
        lanyfs_sha256_hex(sum, hex);
        ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }
}
END_TEST

/* Both rounds agree on every length up to 300 bytes and every two-piece split. */
START_TEST(test_rounds_agree)
{
    uint8_t buf[300];
    uint32_t x = 0x12345678;
    for (size_t i = 0; i < sizeof(buf); i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (uint8_t)(x >> 16);
    }
    for (size_t n = 0; n <= sizeof(buf); n++) {
        char a[65], b[65];
        hash(true, buf, n, a);
        hash(false, buf, n, b);
        ck_assert_str_eq(a, b);
        for (size_t cut = 0; cut <= n; cut += 7) {
            struct lanyfs_sha256 c;
            uint8_t sum[LANYFS_SHA256_LEN];
            lanyfs_sha256_init(&c);
            lanyfs_sha256_update(&c, buf, cut);
            lanyfs_sha256_update(&c, buf + cut, n - cut);
            lanyfs_sha256_final(&c, sum);
            lanyfs_sha256_hex(sum, b);
            ck_assert_str_eq(a, b);
        }
    }
    /* The one-call form is the same hash. */
    uint8_t one[LANYFS_SHA256_LEN];
    char h1[65], h2[65];
    lanyfs_sha256(buf, sizeof(buf), one);
    lanyfs_sha256_hex(one, h1);
    hash(true, buf, sizeof(buf), h2);
    ck_assert_str_eq(h1, h2);
}
END_TEST

static Suite *sha256_suite(void)
{
    Suite *s = suite_create("sha256");
    TCase *tc = tcase_create("sha256");
    tcase_add_test(tc, test_vectors);
    tcase_add_test(tc, test_rounds_agree);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(sha256_suite)
