/* dist_store.h: the store of a run over several ranks, checked on every
 * rank before any rank runs a query (internal; docs/distributed.md). */
#ifndef DKB_DIST_STORE_H
#define DKB_DIST_STORE_H

#include "dist/comm.h"  // defines: dkb__comm

/* A collective: every rank opens the store at dir (the same path string
 * on every rank; a node's ranks share it read-only), checks it at `verify`
 * (0: dkb_store_open's checks only, 1: the structure, 2: every crc32 too;
 * through the verification record, as dkb run does), takes its
 * fingerprint (the crc32 of its manifest.json, which lists every file with
 * its size and crc32) and closes it. 0 when every rank opened and checked a store and all fingerprints
 * are rank 0's; else on every rank the one line of the lowest failing rank:
 * "rank R: store DIR: ..." (it is missing there, corrupt, ...) or "rank R:
 * store DIR is not rank 0's (manifest crc32 X, rank 0 has Y): ...". */
int dkb__dist_store_check(dkb__comm *c, const char *dir, int verify, dkb_error *err);

#endif
