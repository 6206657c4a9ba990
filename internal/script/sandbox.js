// What every runtime that runs a container's JavaScript gets before the
// script: the service's Error(number, message) and ErrorCodes, and
// bounds on the string builders a single call of which could allocate
// without limit (a loop of calls runs into the time and memory budgets,
// but one call cannot be interrupted).
//
// It evaluates to a function of the largest string a call may build,
// which returns { describe, safeString }: describe(thrown) is what the
// runner reports of a value a script threw, safeString(v) v as text.
(function (maxString) {
  "use strict";
  var global = globalThis;
  var NativeError = Error;

  // Error(number, message), as the service's JavaScript engine takes it:
  // the number becomes err.number, which the service sends as the
  // response's substatus.
  function CosmosError(a, b) {
    var numbered = typeof a === "number" && arguments.length > 1;
    var args = numbered ? [b] : Array.prototype.slice.call(arguments);
    var e = Reflect.construct(NativeError, args, new.target || CosmosError);
    if (numbered) {
      e.number = a;
    }
    return e;
  }
  CosmosError.prototype = NativeError.prototype;
  Object.defineProperty(NativeError.prototype, "constructor", { value: CosmosError, writable: true, configurable: true });
  global.Error = CosmosError;

  var ErrorCodes = Object.freeze({
    BadRequest: 400,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    PreconditionFailed: 412,
    RequestEntityTooLarge: 413,
    RetryWith: 449,
    InternalServerError: 500
  });
  global.ErrorCodes = ErrorCodes;

  function bounded(name, size) {
    var native = String.prototype[name];
    Object.defineProperty(String.prototype, name, {
      value: function () {
        if (size(String(this), arguments) > maxString) {
          throw new RangeError("String." + name + " would build a string longer than " + maxString + " characters");
        }
        return native.apply(this, arguments);
      },
      writable: true,
      configurable: true
    });
  }
  bounded("repeat", function (s, args) { return s.length * Number(args[0]); });
  bounded("padStart", function (s, args) { return Number(args[0]); });
  bounded("padEnd", function (s, args) { return Number(args[0]); });

  function safeString(v) {
    try {
      var s = JSON.stringify(v);
      return s === undefined ? String(v) : s;
    } catch (e) {
      return String(v);
    }
  }

  return {
    safeString: safeString,
    describe: function (v) {
      if (v instanceof NativeError) {
        return { text: String(v), stack: typeof v.stack === "string" ? v.stack : "", number: typeof v.number === "number" ? v.number : 0 };
      }
      return { text: safeString(v), stack: "", number: 0 };
    }
  };
})
