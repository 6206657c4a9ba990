// A cache of the database and container lists, so moving around the page
// does not re-read them; writes through the page invalidate it and tell
// listeners (the sidebar) to redraw.

export class Catalog extends EventTarget {
  constructor(client) {
    super();
    this.client = client;
    this.dbList = null;
    this.collLists = new Map();
  }

  async databases() {
    if (!this.dbList) this.dbList = await this.client.databases();
    return this.dbList;
  }

  async containers(db) {
    if (!this.collLists.has(db)) this.collLists.set(db, await this.client.containers(db));
    return this.collLists.get(db);
  }

  /** cachedContainers returns what is known without asking the server. */
  cachedContainers(db) {
    return this.collLists.get(db) ?? null;
  }

  /** invalidate forgets the lists (all of them, or one database's
   * containers) and announces the change. */
  invalidate(db) {
    if (db === undefined) {
      this.dbList = null;
      this.collLists.clear();
    } else {
      this.collLists.delete(db);
    }
    this.dispatchEvent(new Event("change"));
  }
}
