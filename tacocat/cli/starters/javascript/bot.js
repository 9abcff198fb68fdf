'use strict';
// {name}: a bot for Tacocat Spelled Backwards, in JavaScript (node, no packages).
//
//   node --test                                   # its test
//   tacocat play . house:random --games 20        # locally, against a house bot
//   tacocat submit . --ladder main                # to the arena (zips this folder)
//
// protocol.js speaks the frames; this file only decides. Hands are sorted, lowest first.
// Print with console.error (stdout carries the frames): the arena keeps it for you.

const { run } = require('./protocol.js');

class Bot {
  // One object per game: the arena plays several games at once and makes a fresh one for
  // each, so fields are per-game memory.
  replace(obs) {
    // The lower card wins the showdown and high cards defend: send back the middle.
    return obs.hand.filter((card) => card >= 5 && card <= 8).slice(0, obs.replaceCap);
  }

  duel(obs) {
    // Winning the duel means attacking first; spend a middle card on it.
    return [obs.hand[Math.floor(obs.hand.length / 2)]];
  }

  attack(obs) {
    // The highest card is the hardest to cover, and the lowest stays for the showdown.
    return [obs.hand[obs.hand.length - 1]];
  }

  defend(obs) {
    // Cover the attack as cheaply as possible; if that cannot be done, the rules say the
    // lowest cards must go.
    return bestDefence(obs.hand, obs.attack) || lowestResponse(obs.hand, obs.attack);
  }
}

// Each attack card, lowest first, takes the lowest unused card at least as high.
function bestDefence(hand, attack) {
  const available = [...hand];
  const response = new Array(attack.length);
  const order = attack.map((_, i) => i).sort((i, j) => attack[i] - attack[j]);
  for (const i of order) {
    const pos = available.findIndex((card) => card >= attack[i]);
    if (pos < 0) return null;
    response[i] = available.splice(pos, 1)[0];
  }
  return response;
}

// The lowest cards against the attack cards from the highest down: always legal.
function lowestResponse(hand, attack) {
  const order = attack.map((_, i) => i).sort((i, j) => attack[j] - attack[i]);
  const response = new Array(attack.length);
  order.forEach((i, k) => { response[i] = hand[k]; });
  return response;
}

if (require.main === module) {
  run('{name}', () => new Bot());
}

module.exports = { Bot, bestDefence, lowestResponse };
