// A test's page: while it runs, poll its JSON and rewrite the report and the verdict;
// stop once it has ended (the server's words, as `tacocat test` prints them).
"use strict";

(function () {
  const main = document.querySelector("[data-trial]");
  if (!main || main.dataset.open !== "1") return;
  const every = Number(main.dataset.interval || "2000");
  const set = (selector, text) => {
    const node = document.querySelector(selector);
    if (node) node.textContent = text;
  };
  const sign = (x, digits) => (x >= 0 ? "+" : "") + x.toFixed(digits);

  let failures = 0;
  async function poll() {
    let data;
    try {
      const response = await fetch(main.dataset.poll, { cache: "no-store" });
      if (!response.ok) throw new Error("HTTP " + response.status);
      data = await response.json();
    } catch (error) {
      // The server is away (a restart): say so, and try again less and less often.
      failures += 1;
      const wait = Math.min(every * 2 ** failures, 30000);
      set("#trial-line", "The server does not answer (" + error.message + "); reconnecting in " +
          Math.round(wait / 1000) + " s…");
      window.setTimeout(poll, wait);
      return;
    }
    failures = 0;
    set("[data-field=games]", data.games.toLocaleString("en"));
    set("[data-field=score]", data.score.toFixed(3));
    set("[data-field=elo]", sign(data.elo, 1) + " ± " + data.elo_margin.toFixed(1));
    set("[data-field=llr]", sign(data.llr, 2));
    data.pentanomial.forEach((count, i) => set("[data-pair='" + i + "']",
                                               count.toLocaleString("en")));
    set("#trial-line", data.line);
    set("#trial-verdict", data.verdict);
    const badge = document.getElementById("trial-status");
    badge.textContent = data.status;
    badge.className = "badge " + data.status;
    main.dataset.open = data.open ? "1" : "0";
    main.dataset.status = data.status;
    if (data.open) window.setTimeout(poll, every);
  }
  window.setTimeout(poll, every);
})();
