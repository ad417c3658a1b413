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
 * 32-byte slots that are copied whole. The pool is built in 64 independent
 * ranges, in parallel, each starting at a known sentence start (byte offset
 * and position in the text stream, see `checkpoints`). */
#include <omp.h>
#include <string.h>

#include "common/countof.h"  // defines: DKB_COUNTOF
#include "gen/dists.h"
#include "gen/gen_internal.h"

/* A word with what follows it, in a fixed-size slot. */
typedef struct word {
    char s[31];
    uint8_t len;
} word;

/* A weighted list ready for O(1) picks: entry index for draw j - 1. */
#define MAX_TOTAL_WEIGHT 456 /* prepositions */
typedef struct pick_table {
    uint32_t total;
    uint8_t index[MAX_TOTAL_WEIGHT];
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
/* A sentence writes at most 21 word slots of 32 bytes. */
#define SENTENCE_MAX_BYTES 1024

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

/* Start after `consumed` draws of the text stream. */
static void draws_init(draws *d, uint64_t consumed) {
    uint32_t x = dkb__pm_mul(dkb__stream_seed(DKB_S_TEXT), dkb__pm_pow(consumed));
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

/* Where the pool can be built from in parallel: sentence starts (byte
 * offset, and draws of the text stream consumed before them) at about every
 * 1/64 of the pool. Found by building the pool serially (test_gen_pool.c
 * checks the parallel build against the serial one). */
static const struct {
    uint32_t byte, draws;
} checkpoints[] = {
    {0, 0}, {4915241, 999681}, {9830424, 1997578}, {14745632, 2995878}, {19660810, 3994456},
    {24576005, 4994415}, {29491204, 5993033}, {34406458, 6992231}, {39321619, 7989946},
    {44236860, 8988086}, {49152080, 9985726}, {54067240, 10984303}, {58982448, 11982626},
    {63897654, 12981039}, {68812820, 13978590}, {73728061, 14977119}, {78643223, 15975809},
    {83558406, 16974621}, {88473607, 17972832}, {93388833, 18970884}, {98304011, 19969514},
    {103219235, 20967157}, {108134421, 21965660}, {113049609, 22963870}, {117964817, 23962009},
    {122880028, 24960696}, {127795221, 25958341}, {132710407, 26956355}, {137625648, 27955512},
    {142540843, 28954089}, {147456075, 29953145}, {152371200, 30951391}, {157286442, 31949852},
    {162201607, 32947459}, {167116822, 33945699}, {172032033, 34942996}, {176947229, 35941282},
    {181862442, 36939134}, {186777602, 37937056}, {191692844, 38936382}, {196608019, 39934233},
    {201523205, 40932799}, {206438492, 41931302}, {211353633, 42928893}, {216268868, 43928375},
    {221184046, 44926300}, {226099227, 45924162}, {231014512, 46922817}, {235929648, 47919803},
    {240844852, 48917562}, {245760024, 49915779}, {250675206, 50913937}, {255590452, 51912282},
    {260505627, 52909622}, {265420831, 53907741}, {270336037, 54906394}, {275251227, 55904232},
    {280166424, 56901718}, {285081613, 57899409}, {289996806, 58897093}, {294912013, 59896251},
    {299827223, 60894032}, {304742424, 61892593}, {309657615, 62890765},
};

/* Write the pool's bytes [begin, end), given that a sentence starts at byte
 * `begin` after `consumed` draws. The sentence reaching `end` is cut there:
 * sentences are written through a staging buffer near `end`, so nothing at
 * or past `end` is touched (ranges are built concurrently). */
static void build_range(char *pool, uint64_t consumed, uint32_t begin, uint32_t end) {
    vocab voc;
    draws dr;
    vocab_init(&voc);
    draws_init(&dr, consumed);
    char *cp = pool + begin, *stop = pool + end;
    char stage[SENTENCE_MAX_BYTES + 64];
    while (cp < stop) {
        if (dr.end - dr.next < SENTENCE_MAX_DRAWS) draws_refill(&dr);
        if (stop - cp > SENTENCE_MAX_BYTES) {
            cp = sentence(&voc, cp, &dr.next);
        } else {
            size_t n = (size_t)(sentence(&voc, stage, &dr.next) - stage);
            if (n > (size_t)(stop - cp)) n = (size_t)(stop - cp);
            memcpy(cp, stage, n);
            cp += n;
        }
    }
}

void dkb__text_pool_build_serial(char *pool) { build_range(pool, 0, 0, DKB_TEXT_POOL_SIZE); }

void dkb__text_pool_build(char *pool, int threads) {
    if (threads < 1) threads = omp_get_max_threads();
    int n = (int)DKB_COUNTOF(checkpoints);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int i = 0; i < n; i++)
        build_range(pool, checkpoints[i].draws, checkpoints[i].byte,
                    i + 1 < n ? checkpoints[i + 1].byte : DKB_TEXT_POOL_SIZE);
}
