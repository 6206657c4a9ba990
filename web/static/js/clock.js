// The server's clock. With --clock-control the server runs on a manual
// clock that only moves when told to (POST /_ebb/clock), so the page
// reads it to compute "expires in" and lets the user advance it; without
// it, server time is the wall clock.

import { ApiError } from "./api.js";

export class ServerClock extends EventTarget {
  constructor(client) {
    super();
    this.client = client;
    this.controlled = false;
    this.epochSeconds = null;
  }

  /**
   * detect asks the server with a signed GET /_ebb/clock, which answers
   * 404 when clock control is off. config.json already says whether it
   * is on, so a server without it is not asked (the browser would log
   * the expected 404 as an error on every visit).
   */
  async detect(config) {
    if (config && config.clockControl === false) return;
    try {
      this.update(await this.client.clock());
      this.controlled = true;
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
    }
  }

  /** now returns the server's time in epoch seconds. */
  now() {
    return this.controlled && this.epochSeconds !== null ? this.epochSeconds : Date.now() / 1000;
  }

  /** refresh re-reads a manual clock (another client may have moved it). */
  async refresh() {
    if (this.controlled) this.update(await this.client.clock());
  }

  /** advance moves a manual clock. Besides "change" it announces
   * "advance", on which views reload what the move may have expired. */
  async advance(seconds) {
    this.update(await this.client.advanceClock(seconds));
    this.dispatchEvent(new Event("advance"));
  }

  /** update records a reading and announces "change" (the time shown). */
  update(reading) {
    this.epochSeconds = reading.epochSeconds;
    this.nowText = reading.now;
    this.dispatchEvent(new Event("change"));
  }
}
