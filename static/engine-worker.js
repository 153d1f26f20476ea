// engine-worker.js is the page's engine worker: a Web Worker that runs
// pagesim-engine.wasm, the engine without the map or the panel, so that a
// run can go flat out off the page's main thread (ui/app/worker.go says
// what it is asked and what it sends back). The page starts it with
// new Worker("engine-worker.js"); messages that arrive before the binary
// has started wait in a queue.
"use strict";
importScripts("wasm_exec.js");
var queue = [];
self.onmessage = function (e) {
  if (self.pagesimEngine) self.pagesimEngine(e.data);
  else queue.push(e.data);
};
// pagesimYield lets the messages that wait (a cancel) in between two
// slices of a run: a promise that resolves after the queued events, with
// no timer's minimum delay.
self.pagesimYield = function () {
  return new Promise(function (resolve) {
    var ch = new MessageChannel();
    ch.port1.onmessage = function () { ch.port1.close(); resolve(); };
    ch.port2.postMessage(0);
  });
};
var go = new Go();
function instantiate(resp) {
  if (!resp.ok) throw new Error("pagesim-engine.wasm: HTTP " + resp.status);
  if (WebAssembly.instantiateStreaming && (resp.headers.get("Content-Type") || "").indexOf("application/wasm") === 0) {
    return WebAssembly.instantiateStreaming(resp, go.importObject);
  }
  return resp.arrayBuffer().then(function (b) { return WebAssembly.instantiate(b, go.importObject); });
}
fetch("pagesim-engine.wasm").then(instantiate).then(function (result) {
  go.run(result.instance);
  if (!self.pagesimEngine) throw new Error("pagesim-engine.wasm did not start");
  var q = queue;
  queue = [];
  q.forEach(function (m) { self.pagesimEngine(m); });
}).catch(function (e) {
  self.postMessage({ failed: String((e && e.message) || e) });
});
