// Preload for the conformance runner (`node --require ./loopback.cjs …`): every TCP
// `listen()` in the process that names no host, or a wildcard/non-loopback one, binds
// 127.0.0.1 instead. The runner's client-mode mock servers call `listen(0)` (all
// interfaces) and hand out `http://localhost:PORT`; with this they stay on loopback.
//
// Binding must stay synchronous: the mock servers read `server.address()` right after
// `listen()`. Node resolves any host given to `listen()` with `dns.lookup`, which answers
// on a later tick even for an IP literal, so while our injected call runs, `dns.lookup`
// answers 127.0.0.1 at once (and defers to the real one for anything else).
"use strict"
const dns = require("node:dns")
const net = require("node:net")

const LOOPBACK_HOST = "127.0.0.1"
const loopbackHosts = new Set(["127.0.0.1", "localhost", "::1"])
const realListen = net.Server.prototype.listen
const realLookup = dns.lookup

function immediateLookup(hostname, options, callback) {
  const done = typeof options === "function" ? options : callback
  if (hostname !== LOOPBACK_HOST || typeof done !== "function") return realLookup.apply(dns, arguments)
  if (options !== null && typeof options === "object" && options.all === true) {
    done(null, [{ address: LOOPBACK_HOST, family: 4 }])
  } else done(null, LOOPBACK_HOST, 4)
  return {}
}

const isPort = (value) => typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value))

// The arguments with the host forced to loopback, or undefined when they need no change
// (a loopback host, a pipe/unix socket path, a handle or file descriptor).
function loopbackArguments(args) {
  const [first] = args
  if (first === undefined || first === null || typeof first === "function") {
    // listen(), listen(cb), listen(undefined|null, …): a random port on all interfaces
    return [0, LOOPBACK_HOST, ...args.slice(first === undefined || first === null ? 1 : 0)]
  }
  if (isPort(first)) {
    const second = args[1]
    if (typeof second === "string") {
      return loopbackHosts.has(second) ? undefined : [first, LOOPBACK_HOST, ...args.slice(2)]
    }
    return [first, LOOPBACK_HOST, ...args.slice(1)]
  }
  if (
    typeof first === "object" && first.path === undefined && first.fd === undefined && first.handle === undefined &&
    first._handle === undefined
  ) {
    return loopbackHosts.has(first.host) ? undefined : [{ ...first, host: LOOPBACK_HOST }, ...args.slice(1)]
  }
  return undefined
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const forced = loopbackArguments(args)
  if (forced === undefined) return realListen.apply(this, args)
  dns.lookup = immediateLookup
  try {
    return realListen.apply(this, forced)
  } finally {
    dns.lookup = realLookup
  }
}
