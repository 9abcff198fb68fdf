'use strict';
// {name}'s tests: node --test
const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const { Bot, bestDefence, lowestResponse } = require('./bot.js');
const { decodeServerFrame, observation, putBytes, putUint, putVarint } = require('./protocol.js');

// A ServerFrame with one DecisionRequest (request 7, ATTACK, game 3) whose view holds the
// hand [2, 5, 9] and no attack.
function attackFrame() {
  const view = [0, 3, 0, 5, 10, 0, 0, 0, -1, 3, 2, 5, 9, 0, 0, -1, -1, 0, 0];
  const packed = [];
  for (const v of view) putVarint(packed, v < 0 ? -2 * v - 1 : 2 * v);
  const request = [];
  putUint(request, 1, 7);
  putUint(request, 2, 3);
  putUint(request, 20, 3);
  putBytes(request, 21, packed);
  const message = [];
  putBytes(message, 2, request);
  const frame = [];
  putBytes(frame, 1, message);
  return Buffer.from(frame);
}

test('decodes a decision request', () => {
  const [msg] = decodeServerFrame(attackFrame());
  assert.strictEqual(msg.kind, 'request');
  assert.strictEqual(msg.requestId, 7);
  assert.strictEqual(msg.decision, 'attack');
  assert.strictEqual(msg.game, 3);
  const obs = observation(msg);
  assert.deepStrictEqual(obs.hand, [2, 5, 9]);
  assert.strictEqual(obs.attacker, -1);
});

test('defends legally', () => {
  assert.deepStrictEqual(bestDefence([3, 6, 9], [5, 2]), [6, 3]);
  assert.strictEqual(bestDefence([1, 2], [5]), null);
  assert.deepStrictEqual(lowestResponse([1, 2, 9], [5, 7]), [2, 1]);
  const bot = new Bot();
  assert.deepStrictEqual(bot.attack({ hand: [2, 5, 9] }), [9]);
  assert.deepStrictEqual(bot.replace({ hand: [2, 5, 6, 9], replaceCap: 1 }), [5]);
});

test('answers a frame on stdout with frames only', () => {
  const frame = attackFrame();
  const header = Buffer.alloc(4);
  header.writeUInt32BE(frame.length);
  const done = spawnSync(process.execPath, [`${__dirname}/bot.js`],
    { input: Buffer.concat([header, frame]) });
  assert.strictEqual(done.status, 0, done.stderr.toString());
  const out = done.stdout;
  const helloSize = out.readUInt32BE(0);
  const answerSize = out.readUInt32BE(4 + helloSize);
  assert.strictEqual(out.length, 8 + helloSize + answerSize);
});
