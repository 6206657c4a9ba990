// Starting and stopping an ebb process for a browser test: the JS SDK
// suite's helper (in memory, plain HTTP, manual clock, a loopback port),
// which uses nothing but node's own modules.

export { EMULATOR_KEY, startEbb } from "../../js/lib/server.js";
