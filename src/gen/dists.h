/* dists.h: the value lists TPC-H data is drawn from (dbgen's dists.dss):
 * the word lists and sentence templates of the text grammar, with their
 * weights, and the uniform lists used by the tables. */
#ifndef DKB_GEN_DISTS_H
#define DKB_GEN_DISTS_H

#include <stdint.h>

/* A weighted list. dbgen picks entry i for a draw j in [1, total weight]
 * when i is the first entry whose running weight sum reaches j. */
typedef struct dkb_wlist {
    int count;
    const char *const *words;
    const uint8_t *weights;
} dkb_wlist;

/* Text grammar word lists. */
extern const dkb_wlist dkb__nouns, dkb__verbs, dkb__adjectives, dkb__adverbs,
    dkb__prepositions, dkb__auxiliaries, dkb__terminators;

/* Sentence templates: each symbol a letter (N noun phrase, V verb phrase,
 * P prepositional phrase, T terminator). Noun phrase templates: N noun,
 * J adjective, D adverb, a ',' after a letter is printed after its word.
 * Verb phrase templates: V verb, X auxiliary, D adverb. */
extern const dkb_wlist dkb__grammar, dkb__np, dkb__vp;

/* Uniform lists (every weight 1 in dists.dss). */
#define DKB_NCOLORS 92
#define DKB_NTYPES 150
#define DKB_NCONTAINERS 40
#define DKB_NNATIONS 25
#define DKB_NREGIONS 5
extern const char *const dkb__colors[DKB_NCOLORS];
extern const char *const dkb__nation_names[DKB_NNATIONS];
extern const int dkb__nation_region[DKB_NNATIONS];
extern const char *const dkb__region_names[DKB_NREGIONS];
extern const char *const dkb__priorities[5];
extern const char *const dkb__instructions[4];
extern const char *const dkb__ship_modes[7];
extern const char *const dkb__segments[5];

/* Part type i: three syllable lists (6 x 5 x 5, last varying fastest). */
extern const char *const dkb__type_syl1[6], *const dkb__type_syl2[5], *const dkb__type_syl3[5];
/* Container i: size (5) x kind (8), kind varying fastest. */
extern const char *const dkb__container_size[5], *const dkb__container_kind[8];

#endif
