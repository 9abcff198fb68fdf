/* The Tacocat bot protocol over stdin/stdout, in plain C99 (docs/PROTOCOL.md has the whole
 * specification). tacocat.c reads the referee's frames and writes the answers; a bot only
 * decides. */
#ifndef TACOCAT_H
#define TACOCAT_H

#include <stddef.h>
#include <stdint.h>

enum tc_decision { TC_REPLACE = 1, TC_DUEL = 2, TC_ATTACK = 3, TC_DEFEND = 4 };

#define TC_MAX_CARDS 64

/* One decision to make: the seat's view of the round (game.proto's DecisionRequest.view;
 * this keeps the part a simple bot needs). Hands are sorted, lowest first. */
typedef struct {
    uint32_t request_id, game, time_left_ms;
    int decision; /* enum tc_decision */
    int32_t round, position, covered, opponent_cards, pile_size, replace_cap;
    int32_t score[2], attacker; /* attacker: -1 before the first attack */
    int hand_size, attack_size;
    int32_t hand[TC_MAX_CARDS], attack[TC_MAX_CARDS]; /* attack: the one to answer */
} tc_request;

/* Writes the chosen cards into cards[] and returns how many, or -1 to give up the game. */
typedef int (*tc_decide_fn)(const tc_request *req, int32_t *cards);

/* Plays the whole match on stdin/stdout; returns the process's exit status. */
int tc_run(const char *name, tc_decide_fn decide);

/* The codec, for tests: a DecisionRequest's bytes into req (0: done, -1: malformed), and an
 * Action as a ClientMessage into out (returns its length; out holds >= 16 + 10 * n). */
int tc_decode_request(const uint8_t *data, size_t size, tc_request *req);
size_t tc_encode_action(uint8_t *out, uint32_t request_id, const int32_t *cards, int n,
                        uint64_t think_us);

#endif
