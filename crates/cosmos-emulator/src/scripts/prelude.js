// The server-side API a script sees: getContext(), its collection, request and response, and
// console.log. Collection operations go to the host one at a time (`__host`, JSON in and out);
// their callbacks run after the script's function returns, in order, as the service runs them
// after the current call completes. Nothing else outside the script is reachable.
(function (g) {
    "use strict";
    var host = g.__host;
    var input = JSON.parse(g.__input);
    var parse = JSON.parse;
    var stringify = JSON.stringify;
    delete g.__host;
    delete g.__input;
    var queue = [];
    var refused = false;
    var logs = [];
    var logChars = 0;
    var MAX_LOG_CHARS = input.maxLogChars;
    var requestBody = input.requestBody;
    var responseBody = input.hasResponseBody ? input.responseBody : undefined;

    function text(x) {
        if (typeof x === "string") return x;
        if (x !== null && typeof x === "object") {
            try { return stringify(x); } catch (e) { return String(x); }
        }
        return String(x);
    }

    function format(args) {
        var parts = Array.prototype.slice.call(args);
        var out = "";
        if (typeof parts[0] === "string") {
            var f = parts.shift();
            out = f.replace(/%[sdifjoO%]/g, function (m) {
                if (m === "%%") return "%";
                if (parts.length === 0) return m;
                var v = parts.shift();
                if (m === "%d" || m === "%i") return String(m === "%i" ? parseInt(v, 10) : Number(v));
                if (m === "%f") return String(parseFloat(v));
                return text(v);
            });
        }
        var rest = parts.map(text).join(" ");
        return out && rest ? out + " " + rest : out + rest;
    }

    // Recording stops at MAX_LOG_CHARS characters in all, newlines between lines included; the
    // line that reaches the cap is cut there.
    g.console = {
        log: function () {
            if (!input.logging || logChars >= MAX_LOG_CHARS) return;
            var line = format(arguments);
            var separator = logs.length > 0 ? 1 : 0;
            var room = MAX_LOG_CHARS - logChars - separator;
            if (line.length > room) {
                line = line.slice(0, room);
                var last = line.charCodeAt(line.length - 1);
                if (last >= 0xD800 && last <= 0xDBFF) line = line.slice(0, line.length - 1);
                logChars = MAX_LOG_CHARS;
            } else {
                logChars += separator + line.length;
            }
            logs.push(line);
        }
    };

    function errorOf(e) {
        var err = new Error(e.message);
        err.number = e.number;
        err.body = stringify({ code: e.code, message: e.message });
        return err;
    }

    // Sends one operation; queues its callback when accepted.
    function call(payload, callback) {
        if (refused) return false;
        var r = parse(host(stringify(payload)));
        if (!r.accepted) {
            refused = true;
            return false;
        }
        queue.push(function () {
            var err = r.err ? errorOf(r.err) : undefined;
            if (typeof callback === "function") {
                callback.call(undefined, err, err ? undefined : r.resource, r.options || {});
            } else if (err) {
                throw err;
            }
        });
        return true;
    }

    function split(options, callback) {
        if (typeof options === "function") return [{}, options];
        return [options || {}, callback];
    }

    function ifMatch(options) {
        var c = options.accessCondition;
        if (c && typeof c === "object" && String(c.type).toLowerCase() === "ifmatch") return String(c.condition);
        return null;
    }

    function page(options) {
        return {
            pageSize: typeof options.pageSize === "number" ? options.pageSize : null,
            continuation: typeof options.continuation === "string" ? options.continuation : null
        };
    }

    var collection = {
        getSelfLink: function () { return input.selfLink; },
        getAltLink: function () { return input.altLink; },
        createDocument: function (link, doc, options, callback) {
            var a = split(options, callback);
            return call({ op: "create", link: String(link), doc: doc, upsert: false,
                disableAutomaticIdGeneration: !!a[0].disableAutomaticIdGeneration }, a[1]);
        },
        upsertDocument: function (link, doc, options, callback) {
            var a = split(options, callback);
            return call({ op: "create", link: String(link), doc: doc, upsert: true,
                disableAutomaticIdGeneration: !!a[0].disableAutomaticIdGeneration }, a[1]);
        },
        replaceDocument: function (link, doc, options, callback) {
            var a = split(options, callback);
            return call({ op: "replace", link: String(link), doc: doc, ifMatch: ifMatch(a[0]) }, a[1]);
        },
        deleteDocument: function (link, options, callback) {
            var a = split(options, callback);
            return call({ op: "delete", link: String(link), ifMatch: ifMatch(a[0]) }, a[1]);
        },
        readDocument: function (link, options, callback) {
            var a = split(options, callback);
            return call({ op: "read", link: String(link) }, a[1]);
        },
        queryDocuments: function (link, query, options, callback) {
            var a = split(options, callback);
            var p = page(a[0]);
            return call({ op: "query", link: String(link), query: query,
                pageSize: p.pageSize, continuation: p.continuation }, a[1]);
        },
        readDocuments: function (link, options, callback) {
            var a = split(options, callback);
            var p = page(a[0]);
            return call({ op: "query", link: String(link), query: "SELECT * FROM root",
                pageSize: p.pageSize, continuation: p.continuation }, a[1]);
        }
    };

    function notServed(what) {
        return function () { throw new Error(what + " is not served by the emulator."); };
    }

    var request = {
        getBody: function () { return requestBody; },
        setBody: function (body) {
            if (input.kind !== "pre") throw new Error("Only a pre-trigger can set the request body.");
            requestBody = body;
        },
        getValue: function (key) { return key === "Body" ? requestBody : undefined; },
        setValue: function (key, value) {
            if (key !== "Body") throw new Error("The request value " + key + " cannot be set by a script in the emulator.");
            request.setBody(value);
        },
        getOperationType: function () { return input.operation; }
    };

    var response = {
        getBody: function () { return responseBody; },
        setBody: function (body) {
            if (input.kind === "pre") throw new Error("A pre-trigger cannot set the response body.");
            responseBody = body;
        },
        appendBody: function (value) {
            response.setBody((responseBody === undefined ? "" : String(responseBody)) + String(value));
        },
        getValue: function (key) { return key === "Body" ? responseBody : undefined; },
        setValue: function (key, value) {
            if (key !== "Body") throw new Error("The response value " + key + " cannot be set by a script in the emulator.");
            response.setBody(value);
        },
        appendValue: function (key, value) {
            if (key !== "Body") throw new Error("The response value " + key + " cannot be set by a script in the emulator.");
            response.appendBody(value);
        },
        getMaxResponseBodySize: function () { return input.maxResponseBytes; },
        getResourceQuotaCurrentUsage: notServed("getResourceQuotaCurrentUsage"),
        getQuotaCurrentUsage: notServed("getQuotaCurrentUsage")
    };

    var context = {
        getCollection: function () { return collection; },
        getRequest: function () { return request; },
        getResponse: function () {
            if (input.kind === "pre") throw new Error("A pre-trigger has no response.");
            return response;
        }
    };

    g.getContext = function () { return context; };
    g.ErrorCodes = {
        BadRequest: 400, Forbidden: 403, NotFound: 404, Conflict: 409, PreconditionFailed: 412,
        RequestEntityTooLarge: 413, RetryWith: 449, InternalServerError: 500
    };
    Object.defineProperty(g, "__", {
        get: function () {
            throw new Error("The JavaScript query API (__) is not served by the emulator: use queryDocuments.");
        }
    });

    g.__run = function (source) {
        var outcome;
        try {
            var fn = (0, eval)("(" + source + "\n)");
            if (typeof fn !== "function") throw new Error("The script's body is not a function.");
            fn.apply(undefined, input.args);
            while (queue.length > 0) queue.shift()();
            outcome = { ok: true, hasBody: responseBody !== undefined,
                body: responseBody === undefined ? null : responseBody,
                requestBody: requestBody === undefined ? null : requestBody, logs: logs };
        } catch (e) {
            var described = (e instanceof Error) ? String(e) + (e.stack ? "\n" + e.stack : "") : text(e);
            outcome = { ok: false, thrown: described, logs: logs };
        }
        return stringify(outcome);
    };
})(globalThis);
