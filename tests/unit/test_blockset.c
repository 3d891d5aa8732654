/*
 * test_blockset.c -- the visited set of block numbers.
 *
 * 100 000 random values (many repeated, some anywhere in 64 bits, block 0
 * included) are added to a lanyfs_blockset and to a reference set kept here
 * (a hash table of its own): every add must say "added" exactly
 * when the reference did not hold the value yet, the counts must agree after
 * each add, and membership must agree for every value added and for as many
 * values never added.
 */
#include <string.h>

#include "unit.h"

/* The reference: open addressing with its own hash and an occupancy map. */
struct ref {
    uint64_t *v;  /* values */
    uint8_t *occ; /* slot used */
    size_t cap;   /* a power of two, at least twice the values */
    size_t n;     /* values held */
};

static size_t ref_slot(const struct ref *r, uint64_t x)
{
    size_t i = (size_t)((x * 0x9E3779B97F4A7C15ull) >> 40) & (r->cap - 1);
    while (r->occ[i] && r->v[i] != x)
        i = (i + 1) & (r->cap - 1);
    return i;
}

static bool ref_has(const struct ref *r, uint64_t x)
{
    return r->occ[ref_slot(r, x)];
}

static bool ref_add(struct ref *r, uint64_t x)
{
    size_t i = ref_slot(r, x);
    if (r->occ[i])
        return false;
    r->occ[i] = 1;
    r->v[i] = x;
    r->n++;
    return true;
}

/* A test value: mostly small and repeating, sometimes any 64-bit number but the sentinel. */
static uint64_t pick(struct u_rng *r)
{
    uint64_t k = u_below(r, 10);
    uint64_t v;
    if (k < 6)
        v = u_below(r, 60000);
    else if (k < 8)
        v = u_rand(r) >> u_below(r, 40);
    else
        v = u_rand(r);
    return v == UINT64_MAX ? 0 : v;
}

START_TEST(test_against_reference)
{
    const size_t n = 100000;
    struct u_rng r = {0xB10C};
    struct ref ref = {calloc(1u << 18, sizeof(uint64_t)), calloc(1u << 18, 1), 1u << 18, 0};
    uint64_t *added = calloc(n, sizeof(uint64_t));
    struct lanyfs_blockset *s = lanyfs_blockset_new();
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(lanyfs_blockset_count(s), 0);
    ck_assert(!lanyfs_blockset_has(s, 0));
    for (size_t i = 0; i < n; i++) {
        uint64_t v = i < 3 ? (uint64_t[]){0, 1, UINT64_MAX - 1}[i] : pick(&r);
        added[i] = v;
        bool fresh = ref_add(&ref, v);
        int rc = lanyfs_blockset_add(s, v);
        U_EQ(rc, fresh ? 1 : 0);
        U_EQ(lanyfs_blockset_count(s), ref.n);
        U_ASSERT(lanyfs_blockset_has(s, v), "value %llu missing right after add",
                 (unsigned long long)v);
    }
    for (size_t i = 0; i < n; i++)
        U_ASSERT(lanyfs_blockset_has(s, added[i]), "value %llu lost",
                 (unsigned long long)added[i]);
    /* Values never added are absent. */
    size_t absent = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = pick(&r);
        if (ref_has(&ref, v))
            continue;
        absent++;
        U_ASSERT(!lanyfs_blockset_has(s, v), "value %llu present but never added",
                 (unsigned long long)v);
    }
    ck_assert_uint_gt(absent, n / 4);
    ck_assert_uint_lt(ref.n, n); /* the draw did repeat */
    ck_assert_uint_gt(ref.n, n / 2);
    lanyfs_blockset_free(s);
    lanyfs_blockset_free(NULL);
    free(ref.v);
    free(ref.occ);
    free(added);
}
END_TEST

START_TEST(test_dense_and_strided)
{
    struct lanyfs_blockset *s = lanyfs_blockset_new();
    /* Dense ranges and power-of-two strides, which defeat weak hashes. */
    for (uint64_t b = 0; b < 50000; b++)
        U_EQ(lanyfs_blockset_add(s, b), 1);
    for (uint64_t k = 0; k < 20000; k++)
        U_EQ(lanyfs_blockset_add(s, (k + 1) << 32), 1);
    for (uint64_t b = 0; b < 50000; b += 7)
        U_EQ(lanyfs_blockset_add(s, b), 0);
    ck_assert_uint_eq(lanyfs_blockset_count(s), 70000);
    for (uint64_t b = 0; b < 50000; b++)
        U_ASSERT(lanyfs_blockset_has(s, b), "%llu", (unsigned long long)b);
    for (uint64_t k = 0; k < 20000; k++)
        U_ASSERT(lanyfs_blockset_has(s, (k + 1) << 32), "stride %llu", (unsigned long long)k);
    ck_assert(!lanyfs_blockset_has(s, 50000));
    ck_assert(!lanyfs_blockset_has(s, (uint64_t)20001 << 32));
    ck_assert(!lanyfs_blockset_has(s, 1ull << 31));
    lanyfs_blockset_free(s);
}
END_TEST

static Suite *blockset_suite(void)
{
    Suite *s = suite_create("blockset");
    TCase *tc = tcase_create("blockset");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_against_reference);
    tcase_add_test(tc, test_dense_and_strided);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(blockset_suite)
