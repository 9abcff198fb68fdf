/* {name}'s test: make test */
#define TACOCAT_NO_MAIN
#include "bot.c"

#include <stdio.h>

static int failures = 0;
#define CHECK(cond) do { if (!(cond)) { printf("FAIL line %d: %s\n", __LINE__, #cond); \
                                         failures++; } } while (0)

int main(void) {
    /* A DecisionRequest: request 7, ATTACK, game 3, a view with the hand 2 5 9 (zigzag). */
    const uint8_t request[] = {0x08, 0x07, 0x10, 0x03, 0xa0, 0x01, 0x03, 0xaa, 0x01, 19,
                               0, 6, 0, 10, 20, 0, 0, 0, 1, 6, 4, 10, 18, 0, 0, 1, 1, 0, 0};
    tc_request req;
    CHECK(tc_decode_request(request, sizeof request, &req) == 0);
    CHECK(req.request_id == 7 && req.decision == TC_ATTACK && req.game == 3);
    CHECK(req.hand_size == 3 && req.hand[0] == 2 && req.hand[2] == 9);
    CHECK(req.attacker == -1 && req.attack_size == 0);

    int32_t cards[TC_MAX_CARDS];
    CHECK(decide(&req, cards) == 1 && cards[0] == 9);

    tc_request defend = {.decision = TC_DEFEND, .hand_size = 3, .hand = {3, 6, 9},
                         .attack_size = 2, .attack = {5, 2}};
    CHECK(decide(&defend, cards) == 2 && cards[0] == 6 && cards[1] == 3);
    tc_request lose = {.decision = TC_DEFEND, .hand_size = 3, .hand = {1, 2, 9},
                       .attack_size = 2, .attack = {5, 7}};
    CHECK(decide(&lose, cards) == 2 && cards[0] == 2 && cards[1] == 1);

    uint8_t out[16 + 10 * TC_MAX_CARDS];
    int32_t two[] = {9, 4};
    size_t size = tc_encode_action(out, 7, two, 2, 0);
    const uint8_t expected[] = {0x12, 0x06, 0x08, 0x07, 0x12, 0x02, 0x09, 0x04};
    CHECK(size == sizeof expected && memcmp(out, expected, size) == 0);

    printf(failures ? "%d checks failed\n" : "all checks passed\n", failures);
    return failures != 0;
}
