// Live ladder page: server-sent events from /api/ladders/{name}/events.
//
// Each "update" event carries the ladder's version and the page fragments, rendered (and
// escaped) by the server with the same code as the first page load; this script only swaps
// them in. An update older than what the page shows is ignored; rows whose content changed
// flash briefly. The stream is opened again after a server restart; the badge says whether
// we are live or reconnecting.
"use strict";

(function () {
  const main = document.querySelector("main[data-events]");
  if (!main) return;
  const live = document.getElementById("live");
  const liveText = document.getElementById("live-text");

  function setLive(state, text) {
    live.dataset.state = state;
    liveText.textContent = text;
  }

  function rowKeys(root) {
    const keys = new Map();
    root.querySelectorAll("tr[data-version], tr[data-match]").forEach((tr) => {
      keys.set(tr.dataset.version || tr.dataset.match, tr.textContent);
    });
    return keys;
  }

  const showRetired = document.getElementById("show-retired");
  if (showRetired) {
    showRetired.addEventListener("change", () => {
      main.dataset.retired = showRetired.checked ? "shown" : "hidden";
    });
  }

  const applied = new Map(); // fragment -> the HTML it shows (skip identical swaps)

  function apply(update) {
    const shown = Number(main.dataset.version || "0");
    if (Number(update.version) < shown) return;
    for (const [key, html] of Object.entries(update.html)) {
      const target = document.querySelector('[data-fragment="' + CSS.escape(key) + '"]');
      if (!target || applied.get(key) === html) continue;
      applied.set(key, html);
      const before = rowKeys(target);
      target.innerHTML = html; // server-rendered, every value escaped there
      target.querySelectorAll("tr[data-version], tr[data-match]").forEach((tr) => {
        const key = tr.dataset.version || tr.dataset.match;
        if (before.size && before.get(key) !== tr.textContent) tr.classList.add("changed");
      });
    }
    main.dataset.version = String(update.version);
    const at = new Date(update.at * 1000);
    setLive("live", "live · updated " + at.toLocaleTimeString());
  }

  // Without the stream (a proxy that buffers it, or a browser out of connections to this
  // server: six per host, shared by every tab), fetch the same update every few seconds,
  // so the badge never stays at "connecting".
  let streaming = false;
  let poller = null;
  function poll() {
    fetch(main.dataset.events.replace(/\/events$/, "/update"))
      .then((response) => (response.ok ? response.json() : Promise.reject(response.status)))
      .then((update) => {
        if (streaming) return;
        apply(update);
        const at = new Date(update.at * 1000).toLocaleTimeString();
        setLive("live", "live (polling) · updated " + at);
      })
      .catch(() => setLive("reconnecting", "lost the server; reconnecting…"));
  }
  function startPolling() {
    if (streaming || poller !== null) return;
    poll();
    poller = window.setInterval(poll, 5000);
  }
  window.setTimeout(startPolling, 3000);

  if (!("EventSource" in window)) {
    startPolling();
    return;
  }
  let source = null;
  let failures = 0;
  function connect() {
    source = new EventSource(main.dataset.events);
    source.addEventListener("open", () => {
      streaming = true;
      failures = 0;
      if (poller !== null) window.clearInterval(poller);
      poller = null;
      setLive("live", "live");
    });

    // A server restart: EventSource retries by itself, unless it gave up (CLOSED: the
    // server answered with an error while starting), when it is opened again here, less
    // and less often; polling fills in meanwhile.
    source.addEventListener("error", () => {
      streaming = false;
      window.setTimeout(startPolling, 3000);
      if (source.readyState === EventSource.CLOSED) {
        failures += 1;
        const wait = Math.min(1000 * 2 ** failures, 30000);
        window.setTimeout(connect, wait);
        setLive("reconnecting", "lost the server; reconnecting in " + wait / 1000 + " s…");
      } else {
        setLive("reconnecting", "lost the server; reconnecting…");
      }
    });
    source.addEventListener("update", (event) => {
      try {
        apply(JSON.parse(event.data));
      } catch (err) {
        console.error("bad live update", err);
      }
    });
  }
  connect();
  window.addEventListener("pagehide", () => source && source.close());
})();
