// boot.js starts pagesim's WebAssembly binary. Everything else (the map
// and the panel) is drawn by the Go program; this file only loads it and
// shows a message instead of a blank page when that fails.
"use strict";
(function () {
  function fail(msg) {
    var el = document.getElementById("boot-error");
    el.textContent = "pagesim could not start: " + msg;
    el.hidden = false;
    var st = document.getElementById("boot-status");
    if (st) st.hidden = true;
  }
  window.pagesimBoot = { start: performance.now(), fail: fail };
  if (typeof WebAssembly !== "object" || typeof Go !== "function") {
    fail("this browser does not run WebAssembly.");
    return;
  }
  var go = new Go();
  function run(result) {
    window.pagesimBoot.loaded = performance.now();
    go.run(result.instance).then(function () {
      fail("the simulator stopped unexpectedly (the browser console has the details). Reload the page to start again.");
    });
  }
  function instantiate(resp) {
    if (!resp.ok) throw new Error("pagesim.wasm: HTTP " + resp.status);
    // instantiateStreaming needs the application/wasm type; some static
    // hosts send another, so fall back to a plain download.
    if (WebAssembly.instantiateStreaming && (resp.headers.get("Content-Type") || "").indexOf("application/wasm") === 0) {
      return WebAssembly.instantiateStreaming(resp, go.importObject);
    }
    return resp.arrayBuffer().then(function (b) { return WebAssembly.instantiate(b, go.importObject); });
  }
  fetch("pagesim.wasm").then(instantiate).then(run).catch(function (e) {
    fail(String((e && e.message) || e));
  });
})();
