/* The Tacocat bot protocol, by hand: frames are a 4-byte big-endian length and a protobuf
 * message. The bot sends one Hello (a ClientMessage), then reads a ServerFrame and answers
 * its requests with one ClientFrame, until a MatchEnd or the end of its input. Only the
 * fields a bot needs are decoded; protobuf's rules make skipping the others safe. */
#define _POSIX_C_SOURCE 200809L
#include "tacocat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROTOCOL_VERSION 2
#define MAX_FRAME (1u << 20)

/* ------------------------------------------------------------ protobuf, reading */

typedef struct { const uint8_t *p, *end; } reader;

static int read_varint(reader *r, uint64_t *value) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) { *value = v; return 0; }
    }
    return -1;
}

/* The next field: 1 and its number, wire type and value (a varint) or bytes (wire type 2);
 * 0 at the end; -1 for malformed bytes. */
static int next_field(reader *r, uint32_t *field, int *wire, uint64_t *value, reader *bytes) {
    uint64_t key;
    if (r->p >= r->end) return 0;
    if (read_varint(r, &key)) return -1;
    *field = (uint32_t)(key >> 3);
    *wire = (int)(key & 7);
    switch (*wire) {
    case 0: return read_varint(r, value) ? -1 : 1;
    case 1: case 5: {
        size_t skip = *wire == 1 ? 8 : 4;
        if ((size_t)(r->end - r->p) < skip) return -1;
        r->p += skip;
        return 1;
    }
    case 2:
        if (read_varint(r, value) || *value > (uint64_t)(r->end - r->p)) return -1;
        bytes->p = r->p;
        bytes->end = r->p + *value;
        r->p += *value;
        return 1;
    default: return -1;
    }
}

static int32_t zigzag(uint64_t v) { return (int32_t)((v >> 1) ^ (~(v & 1) + 1)); }

/* The view's values in order: see game.proto, DecisionRequest.view. */
static int decode_view(const int32_t *v, int n, tc_request *req) {
    int at = 9;
    if (n < 11) return -1;
    req->round = v[0]; req->position = v[1]; req->covered = v[2];
    req->opponent_cards = v[3]; req->pile_size = v[4]; req->replace_cap = v[5];
    req->score[0] = v[6]; req->score[1] = v[7]; req->attacker = v[8];
    req->hand_size = v[at++];
    if (req->hand_size < 0 || req->hand_size > TC_MAX_CARDS || at + req->hand_size >= n) return -1;
    memcpy(req->hand, v + at, sizeof(int32_t) * (size_t)req->hand_size);
    at += req->hand_size;
    req->attack_size = v[at++];
    if (req->attack_size < 0 || req->attack_size > TC_MAX_CARDS || at + req->attack_size > n)
        return -1;
    memcpy(req->attack, v + at, sizeof(int32_t) * (size_t)req->attack_size);
    return 0;
}

int tc_decode_request(const uint8_t *data, size_t size, tc_request *req) {
    static int32_t view[4096];
    int n = 0, wire, got;
    uint32_t field;
    uint64_t value;
    reader r = {data, data + size}, bytes;
    memset(req, 0, sizeof *req);
    while ((got = next_field(&r, &field, &wire, &value, &bytes)) == 1) {
        if (field == 1 && wire == 0) req->request_id = (uint32_t)value;
        else if (field == 2 && wire == 0) req->decision = (int)value;
        else if (field == 3 && wire == 0) req->time_left_ms = (uint32_t)value;
        else if (field == 20 && wire == 0) req->game = (uint32_t)value;
        else if (field == 21 && wire == 2) {
            while (bytes.p < bytes.end && n < 4096) {
                if (read_varint(&bytes, &value)) return -1;
                view[n++] = zigzag(value);
            }
        } else if (field == 21 && wire == 0 && n < 4096) view[n++] = zigzag(value);
    }
    return got < 0 ? -1 : decode_view(view, n, req);
}

/* ------------------------------------------------------------ protobuf, writing */

static size_t put_varint(uint8_t *out, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) { out[n++] = (uint8_t)(v | 0x80); v >>= 7; }
    out[n++] = (uint8_t)v;
    return n;
}

static size_t put_uint(uint8_t *out, uint32_t field, uint64_t v) {
    if (!v) return 0;
    size_t n = put_varint(out, (uint64_t)field << 3);
    return n + put_varint(out + n, v);
}

static size_t put_bytes(uint8_t *out, uint32_t field, const uint8_t *data, size_t size) {
    size_t n = put_varint(out, ((uint64_t)field << 3) | 2);
    n += put_varint(out + n, size);
    memmove(out + n, data, size);
    return n + size;
}

/* ClientMessage { action = 2: Action { request_id = 1, cards = 2 (packed), think_us = 3 } } */
size_t tc_encode_action(uint8_t *out, uint32_t request_id, const int32_t *cards, int n,
                        uint64_t think_us) {
    uint8_t action[16 + 10 * TC_MAX_CARDS], packed[10 * TC_MAX_CARDS];
    size_t size = put_uint(action, 1, request_id), packed_size = 0;
    for (int i = 0; i < n && i < TC_MAX_CARDS; i++)
        packed_size += put_varint(packed + packed_size, (uint64_t)(int64_t)cards[i]);
    if (packed_size) size += put_bytes(action + size, 2, packed, packed_size);
    size += put_uint(action + size, 3, think_us);
    return put_bytes(out, 2, action, size);
}

/* ClientMessage { failure = 4: BotFailure { request_id = 1, message = 2 } } */
static size_t encode_failure(uint8_t *out, uint32_t request_id, const char *text) {
    uint8_t failure[128];
    size_t size = put_uint(failure, 1, request_id);
    size += put_bytes(failure + size, 2, (const uint8_t *)text, strlen(text));
    return put_bytes(out, 4, failure, size);
}

/* ------------------------------------------------------------ frames */

static int frames_out = 1;

static int read_exactly(uint8_t *buf, size_t size) {
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(0, buf + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return got == 0 ? 0 : -1;
        got += (size_t)n;
    }
    return 1;
}

static int write_frame(const uint8_t *data, size_t size) {
    uint8_t header[4] = {(uint8_t)(size >> 24), (uint8_t)(size >> 16), (uint8_t)(size >> 8),
                         (uint8_t)size};
    const uint8_t *parts[2] = {header, data};
    size_t sizes[2] = {4, size};
    for (int i = 0; i < 2; i++) {
        for (size_t done = 0; done < sizes[i];) {
            ssize_t n = write(frames_out, parts[i] + done, sizes[i] - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return -1;
            done += (size_t)n;
        }
    }
    return 0;
}

static uint64_t now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* ------------------------------------------------------------ the match */

int tc_run(const char *name, tc_decide_fn decide) {
    /* stdout carries the frames only: they go out on a copy of it, and printf reaches
     * stderr, the bot's log. */
    frames_out = dup(1);
    dup2(2, 1);
    uint8_t hello[256], message[300];
    size_t size = put_bytes(hello, 1, (const uint8_t *)name, strnlen(name, 100));
    size += put_bytes(hello + size, 2, (const uint8_t *)"c-starter", 9);
    size += put_uint(hello + size, 3, PROTOCOL_VERSION);
    size_t hello_size = put_bytes(message, 3, hello, size);
    if (write_frame(message, hello_size)) return 1;

    uint8_t header[4], *frame = NULL, *out = NULL;
    size_t out_cap = 0;
    for (;;) {
        int got = read_exactly(header, 4);
        if (got == 0) break; /* the referee closed our input: the match is over */
        uint32_t frame_size = (uint32_t)header[0] << 24 | (uint32_t)header[1] << 16
                              | (uint32_t)header[2] << 8 | header[3];
        if (got < 0 || frame_size > MAX_FRAME) { fprintf(stderr, "bad frame\n"); return 4; }
        uint8_t *bigger = realloc(frame, frame_size ? frame_size : 1);
        if (!bigger) return 5;
        frame = bigger;
        if (frame_size && read_exactly(frame, frame_size) != 1) return 4;
        /* Room for every answer the frame could ask for: each request is >= 4 bytes. */
        size_t need = (frame_size / 4 + 1) * (40 + 10 * TC_MAX_CARDS);
        if (need > out_cap) {
            free(out);
            out = malloc(need);
            if (!out) return 5;
            out_cap = need;
        }
        size_t out_size = 0;
        int ended = 0;
        reader r = {frame, frame + frame_size}, msg, body;
        uint32_t field, kind;
        int wire, kind_wire;
        uint64_t value;
        while (next_field(&r, &field, &wire, &value, &msg) == 1) {
            if (field != 1 || wire != 2) continue;
            while (next_field(&msg, &kind, &kind_wire, &value, &body) == 1) {
                if (kind == 4) ended = 1; /* MatchEnd */
                if (kind == 5) fprintf(stderr, "the referee reported an error\n");
                if (kind != 2 || kind_wire != 2) continue; /* only requests need answers */
                tc_request req;
                int32_t cards[TC_MAX_CARDS];
                uint8_t answer[40 + 10 * TC_MAX_CARDS];
                uint64_t started = now_us();
                if (tc_decode_request(body.p, (size_t)(body.end - body.p), &req)) {
                    fprintf(stderr, "an undecodable request\n");
                    return 4;
                }
                int n = decide(&req, cards);
                size_t answer_size = n < 0
                    ? encode_failure(answer, req.request_id, "the bot gave up")
                    : tc_encode_action(answer, req.request_id, cards, n, now_us() - started);
                out_size += put_bytes(out + out_size, 1, answer, answer_size);
            }
        }
        if (out_size && write_frame(out, out_size)) break;
        if (ended) break;
    }
    free(frame);
    free(out);
    return 0;
}
