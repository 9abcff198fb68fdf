// Live viewer: follows a running match over /api/matches/{id}/live (server-sent events).
//
// "game" says how many games have finished; when one more has and "follow" is ticked, the
// page moves to the replay of the game that ended last (the same viewer as the match page). "waiting":
// no worker plays it (yet). "done" says the match is recorded: the page becomes the match
// page.
"use strict";

(function () {
  const banner = document.querySelector("[data-live]");
  if (!banner || !("EventSource" in window)) return;
  const text = document.getElementById("live-match-text");
  const badge = document.getElementById("live-match");
  const follow = document.getElementById("follow");
  const shown = Number(banner.dataset.games || "0");
  let source = null;
  let failures = 0;

  function connect() {
    source = new EventSource(banner.dataset.live);
    source.addEventListener("open", () => { failures = 0; });
    // The server went away (a restart): say so; EventSource retries by itself unless it
    // gave up (CLOSED), when we open it again, less and less often.
    source.addEventListener("error", () => {
      badge.dataset.state = "reconnecting";
      text.textContent = "Lost the server; reconnecting…";
      if (source.readyState === EventSource.CLOSED) {
        failures += 1;
        window.setTimeout(connect, Math.min(1000 * 2 ** failures, 30000));
      }
    });
    listen(source);
  }

  function listen(source) {
    source.addEventListener("game", (event) => {
      const update = JSON.parse(event.data);
      badge.dataset.state = "live";
      text.textContent = "Live: " + update.games + " of " + update.total +
        " games played; each appears here as it ends.";
      if (update.games > shown && update.latest && follow.checked) {
        source.close();
        // The game that ended last, from its first step ("latest", not "games": games end
        // out of schedule order, so the n-th game to end is rarely game n).
        window.location.assign(window.location.pathname + "?game=" + update.latest + "#viewer");
      }
    });
    source.addEventListener("waiting", () => {
      badge.dataset.state = "waiting";
      text.textContent = "Waiting for a worker to start this match.";
    });
    source.addEventListener("done", (event) => {
      source.close();
      const update = JSON.parse(event.data);
      badge.dataset.state = "done";
      text.textContent = "The match is " + update.status + ".";
      if (follow.checked) window.location.assign(update.url);
    });
  }
  connect();
  window.addEventListener("pagehide", () => source && source.close());
})();
