// The server-side API of Cosmos DB, as documented for its JavaScript
// (https://azure.github.io/azure-cosmosdb-js-server/), over the host's
// synchronous operations. The host (Go) stores and validates; this file
// gives the operations the service's shape: optional options and
// callbacks, callbacks run after the calling code returns (in a queue, as
// the service runs them), errors thrown when no callback takes them, and
// the "accepted" result.
//
// It runs after sandbox.js, and evaluates to a function of the host and
// sandbox.js's safeString that installs the globals and returns the
// control object the runner uses.
(function (host, safeString) {
  "use strict";
  var global = globalThis;
  var CosmosError = Error; // sandbox.js's, which takes (number, message)
  var ErrorCodes = global.ErrorCodes;

  global.console = Object.freeze({
    log: function () {
      var parts = [];
      for (var i = 0; i < arguments.length; i++) {
        var a = arguments[i];
        parts.push(typeof a === "string" ? a : safeString(a));
      }
      host.log(parts.join(" "));
    }
  });

  // The queue of callbacks: the service calls an operation's callback
  // after the code that started it returns, never inside it.
  var queue = [];
  var head = 0;
  function later(fn) {
    queue.push(fn);
  }
  function drain() {
    while (head < queue.length) {
      var fn = queue[head];
      queue[head++] = undefined;
      fn();
    }
  }

  // opError is a failed operation's error: err.number is its status and
  // its message the service's {"Errors": [...]} body.
  function opError(status, message) {
    var e = new CosmosError(status, JSON.stringify({ Errors: [message] }));
    e.body = e.message;
    return e;
  }

  // settle hands an operation's outcome r ([status, body, continuation])
  // to its callback, or throws its error when there is none.
  function settle(r, callback, parse) {
    var err, resource, options = {};
    if (r[0] >= 300) {
      err = opError(r[0], r[1]);
    } else if (callback !== undefined) {
      // Only a callback sees the resource: parse it for one.
      resource = parse ? parse(r[1]) : undefined;
      if (r[2] !== undefined && r[2] !== "") {
        options.continuation = r[2];
      }
      options.currentCollectionSizeInMB = host.sizeInMB();
      options.maxCollectionSizeInMB = host.maxSizeInMB();
    }
    if (callback !== undefined) {
      later(function () { callback.call(collection, err, resource, options); });
    } else if (err !== undefined) {
      later(function () { throw err; });
    }
    return true;
  }

  function parseJSON(s) {
    return s === "" ? undefined : JSON.parse(s);
  }

  function checkCallback(callback) {
    if (callback !== undefined && typeof callback !== "function") {
      throw new CosmosError(ErrorCodes.BadRequest, "The callback must be a function.");
    }
  }

  // args reads the optional (options, callback) pair.
  function optionsAndCallback(options, callback) {
    if (typeof options === "function") {
      return { options: {}, callback: options };
    }
    checkCallback(callback);
    return { options: options || {}, callback: callback };
  }

  function documentJSON(doc) {
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
      throw new CosmosError(ErrorCodes.BadRequest, "The document must be a JSON object.");
    }
    return JSON.stringify(doc);
  }

  function etagOf(options) {
    return options.etag === undefined ? "" : String(options.etag);
  }

  function queryJSON(q) {
    if (typeof q === "string") {
      return JSON.stringify({ query: q });
    }
    if (q === null || typeof q !== "object") {
      throw new CosmosError(ErrorCodes.BadRequest, "The query must be a string or {query, parameters}.");
    }
    return JSON.stringify(q);
  }

  function pageSizeOf(options) {
    return options.pageSize === undefined ? -1 : Number(options.pageSize);
  }

  function continuationOf(options) {
    return options.continuation === undefined || options.continuation === null ? "" : String(options.continuation);
  }

  var collection = {
    getSelfLink: function () { return host.selfLink(); },
    getAltLink: function () { return host.altLink(); },
    createDocument: function (link, doc, options, callback) {
      var a = optionsAndCallback(options, callback);
      var body = documentJSON(doc);
      if (!host.accept()) return false;
      return settle(host.create(String(link), body, !!a.options.disableAutomaticIdGeneration), a.callback, parseJSON);
    },
    upsertDocument: function (link, doc, options, callback) {
      var a = optionsAndCallback(options, callback);
      var body = documentJSON(doc);
      if (!host.accept()) return false;
      return settle(host.upsert(String(link), body, !!a.options.disableAutomaticIdGeneration, etagOf(a.options)), a.callback, parseJSON);
    },
    replaceDocument: function (link, doc, options, callback) {
      var a = optionsAndCallback(options, callback);
      var body = documentJSON(doc);
      if (!host.accept()) return false;
      return settle(host.replace(String(link), body, etagOf(a.options)), a.callback, parseJSON);
    },
    deleteDocument: function (link, options, callback) {
      var a = optionsAndCallback(options, callback);
      if (!host.accept()) return false;
      return settle(host.remove(String(link), etagOf(a.options)), a.callback);
    },
    readDocument: function (link, options, callback) {
      var a = optionsAndCallback(options, callback);
      if (!host.accept()) return false;
      return settle(host.read(String(link), a.options.ifNoneMatch === undefined ? "" : String(a.options.ifNoneMatch)), a.callback, parseJSON);
    },
    readDocuments: function (link, options, callback) {
      var a = optionsAndCallback(options, callback);
      if (!host.accept()) return false;
      return settle(host.query(String(link), "", pageSizeOf(a.options), continuationOf(a.options)), a.callback, JSON.parse);
    },
    queryDocuments: function (link, query, options, callback) {
      var a = optionsAndCallback(options, callback);
      var q = queryJSON(query);
      if (!host.accept()) return false;
      return settle(host.query(String(link), q, pageSizeOf(a.options), continuationOf(a.options)), a.callback, JSON.parse);
    }
  };

  // The JavaScript query API (__): a pipeline of stages over every
  // document in the request's partition, ending in value().
  function Chain(stages) {
    this.stages = stages;
  }
  function stage(name, make) {
    Chain.prototype[name] = function () {
      return new Chain(this.stages.concat([make.apply(null, arguments)]));
    };
    // __.filter(p[, options][, callback]) and the like: a one-stage
    // pipeline, run at once.
    collection[name] = function () {
      var n = make.length;
      var rest = Array.prototype.slice.call(arguments, n);
      var c = new Chain([make.apply(null, Array.prototype.slice.call(arguments, 0, n))]);
      return c.value(rest[0], rest[1]);
    };
  }
  function predicate(fn) {
    if (typeof fn !== "function") {
      throw new CosmosError(ErrorCodes.BadRequest, "The query API takes a function here.");
    }
    return fn;
  }
  stage("filter", function (fn) {
    predicate(fn);
    return function (docs) { return docs.filter(function (d) { return fn.call(d, d); }); };
  });
  stage("map", function (fn) {
    predicate(fn);
    return function (docs) { return docs.map(function (d) { return fn.call(d, d); }); };
  });
  stage("pluck", function (name) {
    return function (docs) { return docs.map(function (d) { return d === null || d === undefined ? undefined : d[name]; }); };
  });
  stage("flatten", function (shallow) {
    return function (docs) {
      var out = [];
      (function flat(a, depth) {
        for (var i = 0; i < a.length; i++) {
          if (Array.isArray(a[i]) && (depth === 0 || !shallow)) {
            flat(a[i], depth + 1);
          } else {
            out.push(a[i]);
          }
        }
      })(docs, 0);
      return out;
    };
  });
  function sorter(fn, descending) {
    predicate(fn);
    return function (docs) {
      var keyed = docs.map(function (d, i) { return { k: fn.call(d, d), i: i, d: d }; });
      keyed.sort(function (x, y) {
        var c = x.k < y.k ? -1 : x.k > y.k ? 1 : 0;
        return (descending ? -c : c) || x.i - y.i;
      });
      return keyed.map(function (x) { return x.d; });
    };
  }
  stage("sortBy", function (fn) { return sorter(fn, false); });
  stage("sortByDescending", function (fn) { return sorter(fn, true); });

  Chain.prototype.value = function (options, callback) {
    var a = optionsAndCallback(options, callback);
    var docs = [];
    var cont = "";
    do {
      if (!host.accept()) return { isAccepted: false };
      var r = host.query(host.selfLink(), "", -1, cont);
      if (r[0] >= 300) {
        settle(r, a.callback);
        return { isAccepted: true };
      }
      docs = docs.concat(JSON.parse(r[1]));
      cont = r[2];
    } while (cont !== "");
    var out = docs;
    for (var i = 0; i < this.stages.length; i++) {
      out = this.stages[i](out);
    }
    settle([200, ""], a.callback && function (err, _, opts) { a.callback.call(collection, err, out, opts); });
    return { isAccepted: true };
  };
  collection.chain = function () { return new Chain([]); };
  collection.value = function (options, callback) { return new Chain([]).value(options, callback); };

  // The state of one call, which begin() resets: a runtime serves many
  // calls of one script.
  var responseBody, responseSet, requestBody, requestSet, operationType;
  var response = {
    getBody: function () { return responseBody; },
    setBody: function (b) { responseBody = b; responseSet = true; },
    appendBody: function (s) { responseBody = (responseBody === undefined ? "" : String(responseBody)) + String(s); responseSet = true; },
    getMaxResponseBodySize: function () { return host.maxResponseBody; }
  };
  var request = {
    getBody: function () { return requestBody; },
    setBody: function (b) { requestBody = b; requestSet = true; },
    getOperationType: function () { return operationType; },
    getValue: function (name) { return undefined; }
  };

  var context = Object.freeze({
    getCollection: function () { return collection; },
    getRequest: function () { return request; },
    getResponse: function () { return response; },
    abort: function (err) { throw err === undefined ? new CosmosError("The script aborted.") : err; }
  });
  global.getContext = function () { return context; };
  global.__ = collection;

  return {
    // begin starts a call: the request and response bodies (JSON, "" for
    // none) and the operation a trigger runs for.
    begin: function (requestJSON, responseJSON, operation) {
      queue = [];
      head = 0;
      requestBody = requestJSON === "" ? undefined : JSON.parse(requestJSON);
      requestSet = false;
      responseBody = responseJSON === "" ? undefined : JSON.parse(responseJSON);
      responseSet = false;
      operationType = operation;
    },
    // run calls the script's function with the arguments in argsJSON (a
    // JSON array) and then every callback it queued.
    run: function (fn, argsJSON) {
      if (typeof fn !== "function") {
        throw new TypeError("The script's body is not a function.");
      }
      fn.apply(undefined, JSON.parse(argsJSON));
      drain();
    },
    responseJSON: function () {
      return !responseSet || responseBody === undefined ? "" : JSON.stringify(responseBody);
    },
    // requestJSON is the request body a trigger set, "" when it set none:
    // the request then goes on as it came, not as JavaScript numbers
    // would round it.
    requestJSON: function () {
      return !requestSet || requestBody === undefined ? "" : JSON.stringify(requestBody);
    }
  };
})
