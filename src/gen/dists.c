/* dists.c: the value lists of TPC-H data generation, with the weights
 * dbgen 2.14 uses (dists.dss), as constant tables. */
#include "gen/dists.h"

/* ---- text grammar (weighted) ---- */
static const char *const nouns_words[] = {
    "packages", "requests", "accounts", "deposits", "foxes", "ideas", "theodolites",
    "pinto beans", "instructions", "dependencies", "excuses", "platelets", "asymptotes",
    "courts", "dolphins", "multipliers", "sauternes", "warthogs", "frets", "dinos",
    "attainments", "somas", "Tiresias", "patterns", "forges", "braids", "frays", "warhorses",
    "dugouts", "notornis", "epitaphs", "pearls", "tithes", "waters", "orbits", "gifts",
    "sheaves", "depths", "sentiments", "decoys", "realms", "pains", "grouches", "escapades",
    "hockey players"
};
static const uint8_t nouns_weights[] = {
    40, 40, 40, 40, 20, 20, 20, 20, 20, 10, 10, 10, 10, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
};
const dkb_wlist dkb__nouns = {45, nouns_words, nouns_weights};

static const char *const verbs_words[] = {
    "sleep", "wake", "are", "cajole", "haggle", "nag", "use", "boost", "affix", "detect",
    "integrate", "maintain", "nod", "was", "lose", "sublate", "solve", "thrash", "promise",
    "engage", "hinder", "print", "x-ray", "breach", "eat", "grow", "impress", "mold", "poach",
    "serve", "run", "dazzle", "snooze", "doze", "unwind", "kindle", "play", "hang", "believe",
    "doubt"
};
static const uint8_t verbs_weights[] = {
    20, 20, 20, 20, 20, 10, 10, 10, 5, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
};
const dkb_wlist dkb__verbs = {40, verbs_words, verbs_weights};

static const char *const adjectives_words[] = {
    "special", "pending", "unusual", "express", "furious", "sly", "careful", "blithe", "quick",
    "fluffy", "slow", "quiet", "ruthless", "thin", "close", "dogged", "daring", "brave",
    "stealthy", "permanent", "enticing", "idle", "busy", "regular", "final", "ironic", "even",
    "bold", "silent"
};
static const uint8_t adjectives_weights[] = {
    20, 20, 20, 20, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 50, 40, 40, 30,
    20, 10
};
const dkb_wlist dkb__adjectives = {29, adjectives_words, adjectives_weights};

static const char *const adverbs_words[] = {
    "sometimes", "always", "never", "furiously", "slyly", "carefully", "blithely", "quickly",
    "fluffily", "slowly", "quietly", "ruthlessly", "thinly", "closely", "doggedly", "daringly",
    "bravely", "stealthily", "permanently", "enticingly", "idly", "busily", "regularly",
    "finally", "ironically", "evenly", "boldly", "silently"
};
static const uint8_t adverbs_weights[] = {
    1, 1, 1, 50, 50, 50, 40, 30, 20, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
};
const dkb_wlist dkb__adverbs = {28, adverbs_words, adverbs_weights};

static const char *const prepositions_words[] = {
    "about", "above", "according to", "across", "after", "against", "along", "alongside of",
    "among", "around", "at", "atop", "before", "behind", "beneath", "beside", "besides",
    "between", "beyond", "by", "despite", "during", "except", "for", "from", "in place of",
    "inside", "instead of", "into", "near", "of", "on", "outside", "over", "past", "since",
    "through", "throughout", "to", "toward", "under", "until", "up", "upon", "whithout",
    "with", "within"
};
static const uint8_t prepositions_weights[] = {
    50, 50, 50, 50, 50, 40, 40, 30, 30, 20, 10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
};
const dkb_wlist dkb__prepositions = {47, prepositions_words, prepositions_weights};

static const char *const auxiliaries_words[] = {
    "do", "may", "might", "shall", "will", "would", "can", "could", "should", "ought to",
    "must", "will have to", "shall have to", "could have to", "should have to", "must have to",
    "need to", "try to"
};
static const uint8_t auxiliaries_weights[] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
};
const dkb_wlist dkb__auxiliaries = {18, auxiliaries_words, auxiliaries_weights};

static const char *const terminators_words[] = {
    ".", ";", ":", "?", "!", "--"
};
static const uint8_t terminators_weights[] = {
    50, 1, 1, 1, 1, 1
};
const dkb_wlist dkb__terminators = {6, terminators_words, terminators_weights};

static const char *const grammar_words[] = {
    "N V T", "N V P T", "N V N T", "N P V N T", "N P V P T"
};
static const uint8_t grammar_weights[] = {
    3, 3, 3, 1, 1
};
const dkb_wlist dkb__grammar = {5, grammar_words, grammar_weights};

static const char *const np_words[] = {
    "N", "J N", "J, J N", "D J N"
};
static const uint8_t np_weights[] = {
    10, 20, 10, 50
};
const dkb_wlist dkb__np = {4, np_words, np_weights};

static const char *const vp_words[] = {
    "V", "X V", "V D", "X V D"
};
static const uint8_t vp_weights[] = {
    30, 1, 40, 1
};
const dkb_wlist dkb__vp = {4, vp_words, vp_weights};

const char *const dkb__colors[DKB_NCOLORS] = {
    "almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched", "blue",
    "blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon", "chocolate", "coral",
    "cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim", "dodger", "drab",
    "firebrick", "floral", "forest", "frosted", "gainsboro", "ghost", "goldenrod", "green",
    "grey", "honeydew", "hot", "indian", "ivory", "khaki", "lace", "lavender", "lawn", "lemon",
    "light", "lime", "linen", "magenta", "maroon", "medium", "metallic", "midnight", "mint",
    "misty", "moccasin", "navajo", "navy", "olive", "orange", "orchid", "pale", "papaya",
    "peach", "peru", "pink", "plum", "powder", "puff", "purple", "red", "rose", "rosy",
    "royal", "saddle", "salmon", "sandy", "seashell", "sienna", "sky", "slate", "smoke",
    "snow", "spring", "steel", "tan", "thistle", "tomato", "turquoise", "violet", "wheat",
    "white", "yellow"
};

/* ---- uniform lists ---- */
const char *const dkb__nation_names[DKB_NNATIONS] = {
    "ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA", "FRANCE", "GERMANY",
    "INDIA", "INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA", "MOROCCO", "MOZAMBIQUE",
    "PERU", "CHINA", "ROMANIA", "SAUDI ARABIA", "VIETNAM", "RUSSIA", "UNITED KINGDOM",
    "UNITED STATES",
};
const int dkb__nation_region[DKB_NNATIONS] = {
    0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2, 4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1,
};
const char *const dkb__region_names[DKB_NREGIONS] = {
    "AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST",
};
const char *const dkb__priorities[5] = {
    "1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW",
};
const char *const dkb__instructions[4] = {
    "DELIVER IN PERSON", "COLLECT COD", "TAKE BACK RETURN", "NONE",
};
const char *const dkb__ship_modes[7] = {
    "REG AIR", "AIR", "RAIL", "TRUCK", "MAIL", "FOB", "SHIP",
};
const char *const dkb__segments[5] = {
    "AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY",
};

const char *const dkb__type_syl1[6] = {"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"};
const char *const dkb__type_syl2[5] = {"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"};
const char *const dkb__type_syl3[5] = {"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"};

const char *const dkb__container_size[5] = {"SM", "LG", "MED", "JUMBO", "WRAP"};
const char *const dkb__container_kind[8] = {
    "CASE", "BOX", "BAG", "JAR", "PACK", "PKG", "CAN", "DRUM",
};
