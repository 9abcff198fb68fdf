/* {name}: a bot for Tacocat Spelled Backwards, in C99 (no libraries).
 *
 *   make test                                     # its test
 *   tacocat play . house:random --games 20        # locally (builds it first)
 *   tacocat submit . --ladder main                # to the arena (zips this folder)
 *
 * tacocat.c speaks the frames; this file only decides. Print with printf or to stderr: the
 * protocol keeps stdout for itself, and the arena keeps what you print for you. */
#include "tacocat.h"

#include <string.h>

/* Each attack card, lowest first, takes the lowest unused card at least as high; returns 0
 * when some attack card cannot be covered. */
int best_defence(const tc_request *req, int32_t *cards) {
    int used[TC_MAX_CARDS] = {0}, done[TC_MAX_CARDS] = {0};
    for (int k = 0; k < req->attack_size; k++) {
        int lowest = -1, pick = -1;
        for (int i = 0; i < req->attack_size; i++) /* the lowest attack card not yet covered */
            if (!done[i] && (lowest < 0 || req->attack[i] < req->attack[lowest])) lowest = i;
        for (int j = 0; j < req->hand_size && pick < 0; j++)
            if (!used[j] && req->hand[j] >= req->attack[lowest]) pick = j;
        if (pick < 0) return 0;
        used[pick] = done[lowest] = 1;
        cards[lowest] = req->hand[pick];
    }
    return 1;
}

/* The lowest cards against the attack cards from the highest down: always legal. */
void lowest_response(const tc_request *req, int32_t *cards) {
    int done[TC_MAX_CARDS] = {0};
    for (int k = 0; k < req->attack_size; k++) {
        int highest = -1;
        for (int i = 0; i < req->attack_size; i++)
            if (!done[i] && (highest < 0 || req->attack[i] > req->attack[highest])) highest = i;
        done[highest] = 1;
        cards[highest] = req->hand[k];
    }
}

int decide(const tc_request *req, int32_t *cards) {
    int n = 0;
    switch (req->decision) {
    case TC_REPLACE: /* the lower card wins the showdown and high cards defend: send back the middle */
        for (int i = 0; i < req->hand_size && n < req->replace_cap; i++)
            if (req->hand[i] >= 5 && req->hand[i] <= 8) cards[n++] = req->hand[i];
        return n;
    case TC_DUEL: /* winning the duel means attacking first; spend a middle card on it */
        cards[0] = req->hand[req->hand_size / 2];
        return 1;
    case TC_ATTACK: /* the highest card is the hardest to cover */
        cards[0] = req->hand[req->hand_size - 1];
        return 1;
    case TC_DEFEND:
        if (!best_defence(req, cards)) lowest_response(req, cards);
        return req->attack_size;
    default:
        return -1;
    }
}

#ifndef TACOCAT_NO_MAIN
int main(void) { return tc_run("{name}", decide); }
#endif
