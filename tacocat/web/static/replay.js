// Replay viewer: steps through one game from the JSON the server put in the page
// (#replay-data, the same object as GET /api/matches/{id}/games/{n}, n from 1).
//
// Every step carries the whole picture after it (hands, covered spaces, Tacocat's position,
// score), so any step can be drawn on its own. Text goes in with textContent only.
// Keys: ← → step, PageUp/PageDown round, Home/End, Space play/pause.
"use strict";

(function () {
  const dataEl = document.getElementById("replay-data");
  const viewer = document.getElementById("viewer");
  if (!dataEl || !viewer) return;
  const R = JSON.parse(dataEl.textContent);
  const steps = R.steps;
  const last = steps.length - 1;
  const $ = (id) => document.getElementById(id);
  const slider = $("step-slider");
  const counter = $("step-counter");
  const board = $("board");
  const action = $("action");
  const text = $("step-text");
  const roundList = $("round-list");
  const seatPanels = [$("seat-0"), $("seat-1")];
  const playButton = viewer.querySelector('[data-go="play"]');
  let index = 0;
  let timer = null;

  function el(tag, className, content) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (content !== undefined && content !== null) node.textContent = String(content);
    return node;
  }

  function card(rank, extra) {
    const node = el("span", "card" + (extra ? " " + extra : ""), rank);
    node.setAttribute("aria-label", "card " + rank);
    return node;
  }

  function cardRow(cards, extra, marks) {
    const row = el("span", "cards");
    if (!cards || !cards.length) {
      row.append(el("span", "muted", "none"));
      return row;
    }
    cards.forEach((rank, i) => row.append(card(rank, marks ? marks[i] : extra)));
    return row;
  }

  function seatLabel(seat) {
    return "Seat " + seat;
  }

  function arrowOf(arrow) {
    if (arrow === "both") return ["\u2190\u2192", "both", "arrows at both seats"];
    return arrow === 0 ? ["\u2190", "a0", "arrow at seat 0"] : ["\u2192", "a1", "arrow at seat 1"];
  }

  // -- the header -------------------------------------------------------------------------

  function drawPlayers() {
    const box = $("players");
    box.textContent = "";
    [0, 1].forEach((seat) => {
      const span = el("span", "p" + seat);
      span.append(el("span", "muted", seatLabel(seat) + (seat === 0 ? " (low goal ←): " : " (high goal →): ")));
      span.append(document.createTextNode(R.players[seat]));
      box.append(span);
    });
    box.append(el("span", "result", outcomeText(R.result)));
  }

  function outcomeText(result) {
    if (result.reason === "goal") return "Seat " + result.winner + " wins (goal)";
    if (result.reason === "forfeit")
      return "Seat " + result.winner + " wins (seat " + result.offender + " forfeits: " + result.fault + ")";
    if (result.reason === "round_limit") return "Draw (round limit)";
    return "Aborted";
  }

  // -- the board --------------------------------------------------------------------------

  function drawBoard(step) {
    board.textContent = "";
    const sizes = R.board.hand_sizes;
    const goal = (seat) => {
      const g = el("div", "goal g" + seat);
      g.append(el("span", null, seatLabel(seat) + " goal"));
      if (step.position === (seat === 0 ? -1 : sizes.length)) g.append(el("span", "tacocat"));
      return g;
    };
    board.append(goal(0));
    const covered = [];
    sizes.forEach((size, s) => {
      const classes = ["space"];
      if (step.covered[s]) { classes.push("covered"); covered.push(s); }
      if (step.position === s) classes.push("current");
      if (step.kind === "move" && step.move && step.move.from === s) classes.push("from");
      const cell = el("div", classes.join(" "));
      cell.dataset.space = String(s);
      cell.append(el("span", "idx", s));
      cell.append(el("span", "size", size));
      const [glyph, cls, label] = arrowOf(R.board.arrows[s]);
      const arrow = el("span", "arrow " + cls, glyph);
      arrow.title = label;
      cell.append(arrow);
      if (step.position === s) cell.append(el("span", "tacocat"));
      cell.title = "space " + s + ": hand size " + size + ", " + label +
        (step.covered[s] ? ", covered" : "");
      board.append(cell);
    });
    board.append(goal(1));
    const where = step.position < 0 ? "in seat 0's goal" :
      step.position >= sizes.length ? "in seat 1's goal" : "on space " + step.position;
    board.setAttribute("aria-label", "Track: Tacocat " + where + "; covered spaces: " +
      (covered.length ? covered.join(", ") : "none"));
    board.dataset.position = String(step.position);
  }

  // -- the seats --------------------------------------------------------------------------

  function newCards(hand, drawn) {
    const marks = hand.map(() => null);
    const left = (drawn || []).slice();
    for (let i = hand.length - 1; i >= 0; i--) {
      const j = left.indexOf(hand[i]);
      if (j >= 0) { marks[i] = "new"; left.splice(j, 1); }
    }
    return marks;
  }

  function actingSeats(step) {
    if (step.kind === "trick") return [step.trick.attacker];
    if (step.kind === "replace") return step.order;
    if (step.kind === "move" && step.winner !== null && step.winner !== undefined) return [step.winner];
    if (step.kind === "result" && step.result.winner !== null) return [step.result.winner];
    return [];
  }

  function drawSeats(step) {
    const acting = actingSeats(step);
    seatPanels.forEach((panel, seat) => {
      panel.textContent = "";
      panel.classList.toggle("acting", acting.includes(seat));
      const head = el("div", "seat-head");
      const who = el("div");
      who.append(el("div", "seat-sub", seatLabel(seat) + (seat === R.a_seat ? " · side A" : " · side B")));
      who.append(el("div", "seat-name", R.players[seat]));
      head.append(who);
      head.append(el("span", "won", step.score[seat] + (step.score[seat] === 1 ? " round" : " rounds") + " won"));
      panel.append(head);
      panel.append(el("div", "sub-label", "Hand (" + step.hands[seat].length + ")"));
      const marks = step.kind === "replace" ? newCards(step.hands[seat], step.drawn[seat]) : null;
      const hand = cardRow(step.hands[seat], null, marks);
      hand.dataset.testid = "hand-" + seat;
      panel.append(hand);
    });
  }

  // -- what happens ----------------------------------------------------------------------

  function playRow(label, cards, testid, extra) {
    const row = el("div", "play-row");
    row.append(el("span", "who", label));
    const c = cardRow(cards, extra);
    c.dataset.testid = testid;
    row.append(c);
    return row;
  }

  function verdict(textValue, seat) {
    return el("div", "verdict" + (seat === null || seat === undefined ? "" : " w" + seat), textValue);
  }

  function drawAction(step) {
    action.textContent = "";
    const kinds = { deal: "Deal", replace: "Replace", duel: "Duel", trick: "Trick",
      showdown: "Showdown", move: "Move", result: "Game over" };
    let title = kinds[step.kind] || step.kind;
    if (step.kind === "trick") title += " " + (step.trick.number + 1);
    action.append(el("div", "kind", "Round " + (step.round + 1) + " · " + title));
    if (step.kind === "deal") {
      action.append(el("div", null, step.size + " cards each; " + step.pile + " in the draw pile"));
    } else if (step.kind === "replace") {
      step.order.forEach((seat) => {
        const row = playRow(seatLabel(seat) + " discards", step.replace[seat], "discard-" + seat, "sm");
        action.append(row);
        if (step.replace[seat].length) action.append(playRow("draws", step.drawn[seat], "drawn-" + seat, "sm new"));
      });
    } else if (step.kind === "duel") {
      action.append(playRow("Seat 0", [step.duel[0]], "duel-0"));
      action.append(playRow("Seat 1", [step.duel[1]], "duel-1"));
      action.append(verdict(step.attacker === null ? "Tie: duel again" : seatLabel(step.attacker) + " attacks first", step.attacker));
    } else if (step.kind === "trick") {
      const t = step.trick;
      const grid = el("div", "trick");
      grid.dataset.testid = "trick";
      const labels = el("div", "trick-labels");
      labels.append(el("span", "who", seatLabel(t.attacker) + " attacks"));
      labels.append(el("span", "who", seatLabel(1 - t.attacker) + " answers"));
      grid.append(labels);
      t.attack.forEach((rank, j) => {
        const answer = t.response[j];
        const ok = answer >= rank;
        const col = el("div", "trick-col");
        col.append(card(rank, "atk"));
        col.append(card(answer, "rsp"));
        col.append(el("span", "mark " + (ok ? "ok" : "no"), ok ? "defends" : "sacrifice"));
        grid.append(col);
      });
      action.append(grid);
      action.append(verdict(t.defended ? seatLabel(1 - t.attacker) + " defended: attacks next"
        : seatLabel(t.attacker) + " attacks again", t.defended ? 1 - t.attacker : t.attacker));
    } else if (step.kind === "showdown") {
      action.append(playRow("Seat 0", [step.showdown[0]], "showdown-0"));
      action.append(playRow("Seat 1", [step.showdown[1]], "showdown-1"));
      action.append(verdict(step.winner === null ? "Tie" : seatLabel(step.winner) + " wins the round (lower card)", step.winner));
    } else if (step.kind === "move") {
      if (step.move) {
        const to = step.move.to < 0 ? "seat 0's goal" : step.move.to >= R.board.hand_sizes.length ? "seat 1's goal" : "space " + step.move.to;
        action.append(verdict(seatLabel(step.winner) + " moves Tacocat", step.winner));
        action.append(el("div", null, "space " + step.move.from + " → " + to + "; a tile covers space " + step.move.covered));
      } else {
        action.append(verdict("Tie: Tacocat stays", null));
      }
    } else if (step.kind === "result") {
      const v = verdict(outcomeText(step.result), step.result.winner);
      v.dataset.testid = "outcome";
      action.append(v);
    }
  }

  // -- the round list and the controls ----------------------------------------------------

  function drawRounds() {
    roundList.textContent = "";
    R.rounds.forEach((round) => {
      const li = el("li");
      const b = el("button", round.winner === null ? "" : "w" + round.winner);
      b.type = "button";
      const who = round.winner === null ? (round.showdown ? "tie" : "cut short") : "seat " + round.winner;
      b.textContent = "R" + (round.index + 1) + " · " + who;
      b.setAttribute("aria-label", "Round " + (round.index + 1) + " on space " + round.space + ", " + who);
      b.dataset.round = String(round.index);
      b.addEventListener("click", () => { stop(); show(round.first_step); });
      li.append(b);
      roundList.append(li);
    });
  }

  function roundStart(r) {
    return R.rounds[Math.max(0, Math.min(R.rounds.length - 1, r))].first_step;
  }

  function show(i) {
    index = Math.max(0, Math.min(last, i));
    const step = steps[index];
    viewer.dataset.step = String(index);
    viewer.dataset.kind = step.kind;
    viewer.dataset.round = String(step.round);
    drawBoard(step);
    drawSeats(step);
    drawAction(step);
    text.textContent = step.text;
    slider.value = String(index);
    counter.textContent = "Step " + (index + 1) + " of " + steps.length + " · round " + (step.round + 1);
    viewer.querySelectorAll("[data-go]").forEach((b) => {
      const go = b.dataset.go;
      if (go === "play") return;
      b.disabled = (go === "first" || go === "prev" || go === "prev-round") ? index === 0 : index === last;
    });
    roundList.querySelectorAll("button").forEach((b) => {
      b.setAttribute("aria-current", Number(b.dataset.round) === step.round ? "true" : "false");
    });
    if (history.replaceState) history.replaceState(null, "", "#step-" + (index + 1));
  }

  function go(what) {
    const step = steps[index];
    if (what === "first") show(0);
    else if (what === "last") show(last);
    else if (what === "prev") show(index - 1);
    else if (what === "next") show(index + 1);
    else if (what === "prev-round") {
      const start = roundStart(step.round);
      show(index > start ? start : roundStart(step.round - 1));
    } else if (what === "next-round") {
      show(step.round + 1 < R.rounds.length ? roundStart(step.round + 1) : last);
    }
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    playButton.setAttribute("aria-pressed", "false");
    playButton.textContent = "Play";
  }

  function play() {
    if (timer !== null) { stop(); return; }
    if (index === last) show(0);
    playButton.setAttribute("aria-pressed", "true");
    playButton.textContent = "Pause";
    timer = setInterval(() => {
      if (index >= last) stop(); else show(index + 1);
    }, 900);
  }

  viewer.querySelectorAll("[data-go]").forEach((b) => {
    b.addEventListener("click", () => {
      if (b.dataset.go === "play") play(); else { stop(); go(b.dataset.go); }
    });
  });
  slider.max = String(last);
  slider.addEventListener("input", () => { stop(); show(Number(slider.value)); });

  const KEYS = { ArrowRight: "next", ArrowLeft: "prev", Home: "first", End: "last",
    PageDown: "next-round", PageUp: "prev-round" };
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    const tag = target && target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable)) return;
    if (event.key === " " || event.key === "Spacebar") {
      if (tag === "BUTTON" || tag === "A" || tag === "SUMMARY") return;
      event.preventDefault();
      play();
      return;
    }
    const what = KEYS[event.key];
    if (!what) return;
    event.preventDefault();
    stop();
    go(what);
  });

  drawPlayers();
  drawRounds();
  const hash = location.hash;
  const wanted = /^#step-(\d+)$/.exec(hash);
  show(wanted ? Number(wanted[1]) - 1 : 0);
  if (hash === "#viewer" || wanted) viewer.scrollIntoView();
})();
