/* text_pool.c: dbgen's 300 MiB text pool, the text every comment is cut from.
 *
 * The pool is a run of sentences, each followed by one space, cut off at
 * DKB_TEXT_POOL_SIZE bytes. A sentence is a grammar template (e.g. noun
 * phrase, verb phrase, terminator) filled with words; every choice, of
 * template or word, is one draw of the text stream, weighted as in dists.c.
 *
 * Speed: draws come from a buffer filled 8 lanes at a time (breaking the
 * generator's serial dependency), choices map a draw to an entry by table
 * lookup, and words are stored with their trailing punctuation and space in
 * 32-byte slots that are copied whole. */
#include <string.h>

#include "gen/dists.h"
#include "gen/gen_internal.h"

/* A word with what follows it, in a fixed-size slot. */
typedef struct word {
    char s[31];
    uint8_t len;
} word;

/* A weighted list ready for O(1) picks: entry index for draw j - 1. */
typedef struct pick_table {
    uint32_t total;
    uint8_t index[460];
} pick_table;

/* Words lists of the same distribution can differ in what follows the word
 * (an adjective followed by ',' in "J, J N"). */
typedef struct vocab {
    pick_table grammar, np, vp, nouns, verbs, adjectives, adverbs, preps, auxs, terms;
    word noun[45], verb[40], adj[29], adj_comma[29], adverb[28], prep[47], aux[18], term[6];
} vocab;

#define LANES 8
#define BLOCK 4096 /* draws per refill, a multiple of LANES */
#define SENTENCE_MAX_DRAWS 32

typedef struct draws {
    uint32_t lane[LANES];  /* the next LANES values of the stream */
    uint32_t jump;         /* 16807^LANES */
    uint32_t buf[BLOCK];
    const uint32_t *next, *end;
} draws;

static void pick_init(pick_table *t, const dkb_wlist *l) {
    uint32_t j = 0;
    for (int i = 0; i < l->count; i++)
        for (int w = 0; w < l->weights[i]; w++) t->index[j++] = (uint8_t)i;
    t->total = j;
}

static void words_init(word *out, const dkb_wlist *l, const char *suffix) {
    for (int i = 0; i < l->count; i++) {
        memset(&out[i], 0, sizeof out[i]);
        size_t n = strlen(l->words[i]), m = strlen(suffix);
        memcpy(out[i].s, l->words[i], n);
        memcpy(out[i].s + n, suffix, m);
        out[i].len = (uint8_t)(n + m);
    }
}

static void vocab_init(vocab *v) {
    pick_init(&v->grammar, &dkb__grammar);
    pick_init(&v->np, &dkb__np);
    pick_init(&v->vp, &dkb__vp);
    pick_init(&v->nouns, &dkb__nouns);
    pick_init(&v->verbs, &dkb__verbs);
    pick_init(&v->adjectives, &dkb__adjectives);
    pick_init(&v->adverbs, &dkb__adverbs);
    pick_init(&v->preps, &dkb__prepositions);
    pick_init(&v->auxs, &dkb__auxiliaries);
    pick_init(&v->terms, &dkb__terminators);
    words_init(v->noun, &dkb__nouns, " ");
    words_init(v->verb, &dkb__verbs, " ");
    words_init(v->adj, &dkb__adjectives, " ");
    words_init(v->adj_comma, &dkb__adjectives, ", ");
    words_init(v->adverb, &dkb__adverbs, " ");
    words_init(v->prep, &dkb__prepositions, " the ");
    words_init(v->aux, &dkb__auxiliaries, " ");
    /* A terminator replaces the space before it; the space after it is the
     * one that separates sentences in the pool. */
    words_init(v->term, &dkb__terminators, " ");
}

static void draws_refill(draws *d) {
    size_t keep = (size_t)(d->end - d->next);
    memmove(d->buf, d->next, keep * sizeof d->buf[0]);
    size_t n = keep;
    uint32_t lane[LANES], jump = d->jump;
    uint32_t *buf = d->buf;
    memcpy(lane, d->lane, sizeof lane);
    for (; n + LANES <= BLOCK; n += LANES)
        for (int k = 0; k < LANES; k++) {
            buf[n + k] = lane[k];
            lane[k] = dkb__pm_mul(lane[k], jump);
        }
    memcpy(d->lane, lane, sizeof lane);
    d->next = d->buf;
    d->end = d->buf + n;
}

static void draws_init(draws *d, uint32_t seed) {
    uint32_t x = seed;
    for (int k = 0; k < LANES; k++) {
        x = dkb__pm_next(x);
        d->lane[k] = x;
    }
    d->jump = dkb__pm_pow(LANES);
    d->next = d->end = d->buf;
    draws_refill(d);
}

static inline unsigned pick(const pick_table *t, uint32_t x) {
    return t->index[((uint64_t)x * t->total) / DKB_PM_M];
}

static inline char *put(char *cp, const word *w) {
    memcpy(cp, w->s, sizeof w->s + 1);
    return cp + w->len;
}

#define PICK_WORD(table, words) put(cp, &(words)[pick(&v->table, *x++)])

static char *noun_phrase(const vocab *v, char *cp, const uint32_t **xp) {
    const uint32_t *x = *xp;
    switch (pick(&v->np, *x++)) {
    case 0: /* N */
        break;
    case 1: /* J N */
        cp = PICK_WORD(adjectives, v->adj);
        break;
    case 2: /* J, J N */
        cp = PICK_WORD(adjectives, v->adj_comma);
        cp = PICK_WORD(adjectives, v->adj);
        break;
    default: /* D J N */
        cp = PICK_WORD(adverbs, v->adverb);
        cp = PICK_WORD(adjectives, v->adj);
        break;
    }
    cp = PICK_WORD(nouns, v->noun);
    *xp = x;
    return cp;
}

static char *verb_phrase(const vocab *v, char *cp, const uint32_t **xp) {
    const uint32_t *x = *xp;
    unsigned form = pick(&v->vp, *x++); /* V, X V, V D, X V D */
    if (form & 1) cp = PICK_WORD(auxs, v->aux);
    cp = PICK_WORD(verbs, v->verb);
    if (form >= 2) cp = PICK_WORD(adverbs, v->adverb);
    *xp = x;
    return cp;
}

static char *prep_phrase(const vocab *v, char *cp, const uint32_t **xp) {
    const uint32_t *x = *xp;
    cp = PICK_WORD(preps, v->prep);
    *xp = x;
    return noun_phrase(v, cp, xp);
}

/* One sentence and its trailing space at cp; returns the new end. */
static char *sentence(const vocab *v, char *cp, const uint32_t **xp) {
    unsigned form = pick(&v->grammar, *(*xp)++);
    cp = noun_phrase(v, cp, xp);
    switch (form) {
    case 0: /* N V T */
        cp = verb_phrase(v, cp, xp);
        break;
    case 1: /* N V P T */
        cp = verb_phrase(v, cp, xp);
        cp = prep_phrase(v, cp, xp);
        break;
    case 2: /* N V N T */
        cp = verb_phrase(v, cp, xp);
        cp = noun_phrase(v, cp, xp);
        break;
    case 3: /* N P V N T */
        cp = prep_phrase(v, cp, xp);
        cp = verb_phrase(v, cp, xp);
        cp = noun_phrase(v, cp, xp);
        break;
    default: /* N P V P T */
        cp = prep_phrase(v, cp, xp);
        cp = verb_phrase(v, cp, xp);
        cp = prep_phrase(v, cp, xp);
        break;
    }
    const uint32_t *x = *xp;
    cp = put(cp - 1, &v->term[pick(&v->terms, *x++)]);
    *xp = x;
    return cp;
}

void dkb__text_pool_build(char *pool) {
    vocab voc;
    draws dr;
    const vocab *v = &voc;
    draws *d = &dr;
    vocab_init(&voc);
    draws_init(d, dkb__stream_seed(DKB_S_TEXT));
    char *cp = pool, *end = pool + DKB_TEXT_POOL_SIZE;
    /* Sentences never reach back before their own start, so the pool is
     * complete once a sentence starts at or after its end. */
    while (cp < end) {
        if (d->end - d->next < SENTENCE_MAX_DRAWS) draws_refill(d);
        cp = sentence(v, cp, &d->next);
    }
}
