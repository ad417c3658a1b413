/* dist_store.c: every rank of a distributed run opens and checks its
 * store, and all of them must hold the same one (dist_store.h). */
#include <stdio.h>
#include <string.h>

#include "dist/dist_store.h"
#include "dkb/store.h"
#include "store/reader_internal.h"  // defines: struct dkb_store (manifest_crc)
#include "store/verify_cache.h"     // defines: dkb__store_verify_cached

/* Open, check and fingerprint the store at dir on this rank. */
static int check_here(const char *dir, int verify, int64_t *fp, dkb_error *err) {
    dkb_store *s = NULL;
    dkb_error e = {0};
    int rc = dkb_store_open(dir, 0, &s, &e);
    if (!rc && verify > 0)
        rc = dkb__store_verify_cached(s, verify > 1 ? DKB__VERIFY_FULL : DKB__VERIFY_STRUCTURE, NULL, &e);
    if (!rc) *fp = (int64_t)s->manifest_crc;
    dkb_store_close(s);
    if (!rc) return 0;
    const char *msg = e.msg[0] ? e.msg : dkb_strerror(rc);
    if (strstr(msg, dir)) return dkb_fail(err, rc, "store %s", msg);
    return dkb_fail(err, rc, "store %s: %s", dir, msg);
}

int dkb__dist_store_check(dkb__comm *c, const char *dir, int verify, dkb_error *err) {
    int64_t fp = -1;
    int rc = check_here(dir, verify, &fp, err);
    if ((rc = dkb__comm_agree(c, rc, err))) return rc;
    int64_t all[2] = {-fp, fp};  /* one all-reduce: minus the min and the max over the ranks */
    if ((rc = dkb__comm_allreduce(c, all, 2, DKB__COMM_I64, DKB__COMM_MAX, err))) return rc;
    if (-all[0] == all[1]) return 0;
    int64_t root = fp;
    if ((rc = dkb__comm_bcast(c, &root, sizeof root, 0, err))) return rc;
    if (fp != root)
        rc = dkb_fail(err, DKB_EINVAL,
                      "store %s is not rank 0's (manifest crc32 0x%08llx, rank 0 has 0x%08llx): every rank needs the "
                      "same store (one dkb gen, shared or copied)",
                      dir, (unsigned long long)fp, (unsigned long long)root);
    rc = dkb__comm_agree(c, rc, err);
    return rc ? rc : dkb_fail(err, DKB_EINTERNAL, "store %s: fingerprints differ but none from rank 0's", dir);
}
