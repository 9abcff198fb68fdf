'use strict';
// The Tacocat bot protocol over stdin/stdout, by hand (docs/PROTOCOL.md has the whole
// specification). A frame is a 4-byte big-endian length, then a protobuf message: the bot
// sends one Hello, then reads a ServerFrame and answers it with a ClientFrame, until a
// MatchEnd or the end of its input. Only the fields a bot needs are decoded; protobuf's
// rules make skipping the others safe. No packages: the arena's sandbox has no network.
//
// stdout carries the frames and nothing else: console.log is pointed at stderr below,
// and stderr is the bot's log (its owner reads it in the arena).

const fs = require('fs');

const PROTOCOL_VERSION = 2;
const MAX_FRAME = 1 << 20;
const DECISIONS = { 1: 'replace', 2: 'duel', 3: 'attack', 4: 'defend' };

console.log = console.error;

// ---------------------------------------------------------------- protobuf, reading

// Calls visit(field, wireType, value) for each field of the message in buf[start, end):
// value is a number for a varint, a Buffer for a length-delimited field.
function eachField(buf, start, end, visit) {
  const at = { pos: start };
  while (at.pos < end) {
    const key = readVarint(buf, at);
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) {
      visit(field, wire, readVarint(buf, at));
    } else if (wire === 2) {
      const length = readVarint(buf, at);
      if (at.pos + length > end) throw new Error('a field runs past its message');
      visit(field, wire, buf.subarray(at.pos, at.pos + length));
      at.pos += length;
    } else if (wire === 1 || wire === 5) {
      at.pos += wire === 1 ? 8 : 4;
    } else {
      throw new Error(`wire type ${wire} is not protobuf's`);
    }
  }
}

function readVarint(buf, at) {
  let value = 0;
  let scale = 1;
  for (;;) {
    if (at.pos >= buf.length) throw new Error('a varint runs past its message');
    const byte = buf[at.pos++];
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return value;
    scale *= 128;
  }
}

// A packed `repeated sint32` (zigzag varints).
function readSint32s(bytes) {
  const values = [];
  const at = { pos: 0 };
  while (at.pos < bytes.length) {
    const v = readVarint(bytes, at);
    values.push(v % 2 ? -(v + 1) / 2 : v / 2);
  }
  return values;
}

// A DecisionRequest: request id, decision, game, and the view (game.proto spells out its
// layout; this reads the part a simple bot needs).
function decodeRequest(buf) {
  const req = { requestId: 0, decision: '', game: 0, timeLeftMs: 0, view: [] };
  eachField(buf, 0, buf.length, (field, wire, value) => {
    if (field === 1) req.requestId = value;
    else if (field === 2) req.decision = DECISIONS[value] || '';
    else if (field === 3) req.timeLeftMs = value;
    else if (field === 20) req.game = value;
    else if (field === 21) {
      if (wire === 2) req.view.push(...readSint32s(value));
      else req.view.push(value % 2 ? -(value + 1) / 2 : value / 2);
    }
  });
  return req;
}

// The observation a bot decides on, from the packed view.
function observation(req) {
  const v = req.view;
  const handSize = v[9];
  const hand = v.slice(10, 10 + handSize);
  const attackSize = v[10 + handSize];
  const attack = v.slice(11 + handSize, 11 + handSize + attackSize);
  return {
    decision: req.decision, game: req.game, timeLeftMs: req.timeLeftMs,
    round: v[0], position: v[1], opponentCards: v[3], pileSize: v[4], replaceCap: v[5],
    score: [v[6], v[7]], attacker: v[8], hand, attack,
  };
}

// A ServerFrame as a list of { kind, ... } messages.
function decodeServerFrame(buf) {
  const messages = [];
  eachField(buf, 0, buf.length, (field, wire, msg) => {
    if (field !== 1) return;
    eachField(msg, 0, msg.length, (kind, _, body) => {
      if (kind === 1) messages.push({ kind: 'start', ...gameOf(body) });
      else if (kind === 2) messages.push({ kind: 'request', ...decodeRequest(body) });
      else if (kind === 3) messages.push({ kind: 'result', ...gameOf(body) });
      else if (kind === 4) messages.push({ kind: 'end' });
      else if (kind === 5) messages.push({ kind: 'error', ...decodeError(body) });
    });
  });
  return messages;
}

function gameOf(buf) {
  let game = 0;
  eachField(buf, 0, buf.length, (field, wire, value) => { if (field === 1) game = value; });
  return { game };
}

function decodeError(buf) {
  const error = { code: 0, message: '', fatal: false, game: 0 };
  eachField(buf, 0, buf.length, (field, wire, value) => {
    if (field === 1) error.code = value;
    else if (field === 2) error.message = value.toString('utf8');
    else if (field === 3) error.fatal = value !== 0;
    else if (field === 4) error.game = value;
  });
  return error;
}

// ---------------------------------------------------------------- protobuf, writing

function putVarint(out, value) {
  while (value >= 0x80) {
    out.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  out.push(value);
}

function putBytes(out, field, bytes) {
  putVarint(out, field * 8 + 2);
  putVarint(out, bytes.length);
  for (const b of bytes) out.push(b);
}

function putUint(out, field, value) {
  if (value) {
    putVarint(out, field * 8);
    putVarint(out, value);
  }
}

// ClientMessage { action = 2: Action { request_id = 1, cards = 2 (packed), think_us = 3 } }
function encodeAction(requestId, cards, thinkUs) {
  const action = [];
  putUint(action, 1, requestId);
  const packed = [];
  for (const card of cards) putVarint(packed, card);
  if (packed.length) putBytes(action, 2, packed);
  putUint(action, 3, thinkUs);
  const message = [];
  putBytes(message, 2, action);
  return message;
}

// ClientMessage { failure = 4: BotFailure { request_id = 1, message = 2, think_us = 3 } }
function encodeFailure(requestId, text, thinkUs) {
  const failure = [];
  putUint(failure, 1, requestId);
  putBytes(failure, 2, Buffer.from(text.slice(0, 1000), 'utf8'));
  putUint(failure, 3, thinkUs);
  const message = [];
  putBytes(message, 4, failure);
  return message;
}

// ClientMessage { hello = 3: Hello { bot_name = 1, sdk_version = 2, protocol = 3 } }
function encodeHello(name) {
  const hello = [];
  putBytes(hello, 1, Buffer.from(name, 'utf8'));
  putBytes(hello, 2, Buffer.from('javascript-starter', 'utf8'));
  putUint(hello, 3, PROTOCOL_VERSION);
  const message = [];
  putBytes(message, 3, hello);
  return message;
}

// ---------------------------------------------------------------- frames

function readExactly(size) {
  const buf = Buffer.alloc(size);
  let got = 0;
  while (got < size) {
    let n;
    try {
      n = fs.readSync(0, buf, got, size - got, null);
    } catch (err) {
      if (err.code === 'EAGAIN') continue;
      if (err.code === 'EOF') return null;
      throw err;
    }
    if (n === 0) {
      if (got === 0) return null;
      throw new Error('the input ended inside a frame');
    }
    got += n;
  }
  return buf;
}

function readFrame() {
  const header = readExactly(4);
  if (header === null) return null;
  const size = header.readUInt32BE(0);
  if (size > MAX_FRAME) throw new Error(`a frame of ${size} bytes, over ${MAX_FRAME}`);
  return size ? readExactly(size) : Buffer.alloc(0);
}

function writeFrame(bytes) {
  const buf = Buffer.alloc(4 + bytes.length);
  buf.writeUInt32BE(bytes.length, 0);
  Buffer.from(bytes).copy(buf, 4);
  let sent = 0;
  while (sent < buf.length) {
    try {
      sent += fs.writeSync(1, buf, sent, buf.length - sent);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
    }
  }
}

// ---------------------------------------------------------------- the match

// Plays one match: makeBot() makes a fresh bot for each game (per-game memory lives in
// it); bot[decision](obs) returns the cards to play.
function run(name, makeBot) {
  writeFrame(encodeHello(name));
  const bots = new Map();
  for (;;) {
    const data = readFrame();
    if (data === null) return;
    const answers = [];
    for (const msg of decodeServerFrame(data)) {
      if (msg.kind === 'start') bots.set(msg.game, makeBot());
      else if (msg.kind === 'result') bots.delete(msg.game);
      else if (msg.kind === 'end') return;
      else if (msg.kind === 'error') {
        console.error(`referee: ${msg.message}`);
        if (msg.fatal) return;
      } else if (msg.kind === 'request') {
        const started = process.hrtime.bigint();
        const thinkUs = () => Number((process.hrtime.bigint() - started) / 1000n);
        try {
          const bot = bots.get(msg.game);
          const cards = bot[msg.decision](observation(msg));
          answers.push(encodeAction(msg.requestId, cards, thinkUs()));
        } catch (err) {
          console.error(err && err.stack ? err.stack : String(err));
          answers.push(encodeFailure(msg.requestId, String(err), thinkUs()));
        }
      }
    }
    if (answers.length) {
      const frame = [];
      for (const answer of answers) putBytes(frame, 1, answer);
      writeFrame(frame);
    }
  }
}

module.exports = {
  run, decodeServerFrame, decodeRequest, observation, encodeAction, encodeHello, putVarint,
  putBytes, putUint,
};
