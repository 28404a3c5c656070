// Bounds the work of the built-ins whose native loops run over a length the script chooses without
// ever reaching the runtime's interrupt handler (see guards.rs for why and how). Runs before
// prelude.js and before any script; everything it needs is captured here, so nothing a script
// does later (replacing Reflect, Object or Array.prototype members) changes what it checks.
(function (g) {
    "use strict";
    var MAX_STEPS = g.__guardSteps;
    var isProxy = g.__isProxy;
    var exceeded = g.__exceeded;
    delete g.__guardSteps;
    delete g.__isProxy;
    delete g.__exceeded;

    var apply = Reflect.apply;
    var getProto = Object.getPrototypeOf;
    var getOwn = Object.getOwnPropertyDescriptor;
    var define = Object.defineProperty;
    var isArray = Array.isArray;
    var toObject = Object;
    var toNumber = Number;
    var floor = Math.floor;
    var RangeErr = RangeError;
    var TypeErr = TypeError;
    var MAX_LENGTH = 9007199254740991;
    var typedLength = getOwn(getProto(Uint8Array.prototype), "length").get;
    // Objects on an ordinary receiver's chain that a native lookup visits anyway (the receiver,
    // Array.prototype or Object.prototype): the baseline every cost is measured against.
    var BASE_DEPTH = 3;

    // Stops the script as running past its time: the runtime's interrupt handler ends it at its
    // next check, and the error thrown here ends this call now.
    function refuse(name) {
        exceeded();
        throw new RangeErr(name + " would run past the script's bounds and was stopped.");
    }

    function toLength(v) {
        var n = toNumber(v);
        if (!(n > 0)) return 0;
        if (n > MAX_LENGTH) return MAX_LENGTH;
        return floor(n);
    }

    // The steps a native loop over `o` may take: its length times the objects a lookup of a
    // missing index visits beyond the baseline. Refuses what cannot be bounded before the call: a
    // proxy anywhere on the chain, or a length that is an accessor or an object (either could
    // answer the native differently than it answered here).
    function steps(o, name) {
        if (o === null || o === undefined) return 0;
        var obj = toObject(o);
        var len = 0;
        var found = false;
        var depth = 0;
        for (var p = obj; p !== null; p = getProto(p)) {
            if (isProxy(p)) refuse(name);
            depth++;
            if (found) continue;
            var d = getOwn(p, "length");
            if (d === undefined) continue;
            found = true;
            if ("value" in d) {
                var v = d.value;
                if ((typeof v === "object" && v !== null) || typeof v === "function") refuse(name);
                len = toLength(v);
            } else if (d.get === typedLength) {
                len = toLength(apply(typedLength, obj, []));
            } else {
                refuse(name);
            }
        }
        return len * (depth > BASE_DEPTH ? depth - BASE_DEPTH + 1 : 1);
    }

    function check(total, name) {
        if (total > MAX_STEPS) refuse(name);
    }

    // Guarded natives running now (a getter they call may call another). While one runs, no
    // prototype may change: a getter it calls could otherwise lengthen the chain it walks.
    var running = 0;

    function guarded(original, self, args) {
        running++;
        try {
            return apply(original, self, args);
        } finally {
            running--;
        }
    }

    function install(holder, name, wrapped, original) {
        define(wrapped, "name", { value: name, configurable: true });
        define(wrapped, "length", { value: original.length, configurable: true });
        define(holder, name, { value: wrapped, writable: false, enumerable: false, configurable: false });
    }

    // Methods whose work is bounded by the receiver's length. `polls`: the native's loop reaches
    // the interrupt handler at every index, so a slow lookup cannot hold it (no need to hold the
    // prototypes still while it runs).
    function byReceiver(name, polls) {
        var original = Array.prototype[name];
        if (typeof original !== "function") return;
        var label = "Array.prototype." + name;
        var wrapped = {
            m: function () {
                check(steps(this, label), label);
                return polls ? apply(original, this, arguments) : guarded(original, this, arguments);
            }
        }.m;
        install(Array.prototype, name, wrapped, original);
    }

    [
        "copyWithin", "fill", "join", "reverse", "shift", "slice", "sort", "splice",
        "toLocaleString", "toReversed", "toSorted", "toSpliced", "toString", "unshift", "with"
    ].forEach(function (name) { byReceiver(name, false); });
    [
        "every", "filter", "find", "findIndex", "findLast", "findLastIndex", "forEach", "includes",
        "indexOf", "lastIndexOf", "map", "reduce", "reduceRight", "some"
    ].forEach(function (name) { byReceiver(name, true); });

    // The iterators an array-like gives walk it natively when a built-in (Iterator.prototype.drop,
    // toArray...) drives them, so they are bounded as the methods are. `values` is also
    // `Array.prototype[Symbol.iterator]`, and stays the same function there.
    ["keys", "entries", "values"].forEach(function (name) { byReceiver(name, false); });
    define(Array.prototype, Symbol.iterator, {
        value: Array.prototype.values, writable: false, enumerable: false, configurable: false
    });

    // concat spreads the receiver and any argument the native finds spreadable; every object
    // argument is counted as if it were (its spreadability may be a getter).
    (function () {
        var original = Array.prototype.concat;
        var label = "Array.prototype.concat";
        var wrapped = {
            concat: function () {
                var total = steps(this, label);
                for (var i = 0; i < arguments.length; i++) {
                    var a = arguments[i];
                    if ((typeof a === "object" && a !== null) || typeof a === "function") {
                        total += steps(a, label);
                    }
                }
                check(total, label);
                return guarded(original, this, arguments);
            }
        }.concat;
        install(Array.prototype, "concat", wrapped, original);
    })();

    // flat and flatMap descend into nested arrays the native would walk unchecked: they run here,
    // in JavaScript, where every step reaches the interrupt handler.
    function createAt(target, index, value) {
        define(target, index, { value: value, writable: true, enumerable: true, configurable: true });
    }

    function flatten(target, at, source, depth, mapper, thisArg) {
        var len = toLength(source.length);
        for (var i = 0; i < len; i++) {
            if (!(i in source)) continue;
            var element = source[i];
            if (mapper !== undefined) element = apply(mapper, thisArg, [element, i, source]);
            if (depth > 0 && isArray(element)) {
                at = flatten(target, at, element, depth - 1, undefined, undefined);
            } else {
                if (at >= MAX_LENGTH) throw new TypeErr("The flattened array is too long.");
                createAt(target, at, element);
                at++;
            }
        }
        return at;
    }

    install(Array.prototype, "flat", {
        flat: function () {
            if (this === null || this === undefined) throw new TypeErr("Array.prototype.flat called on null or undefined");
            var source = toObject(this);
            var d = arguments.length > 0 ? arguments[0] : undefined;
            var depth = d === undefined ? 1 : toNumber(d);
            depth = depth !== depth || depth < 0 ? 0 : floor(depth);
            var target = [];
            flatten(target, 0, source, depth, undefined, undefined);
            return target;
        }
    }.flat, Array.prototype.flat);

    install(Array.prototype, "flatMap", {
        flatMap: function (mapper) {
            if (this === null || this === undefined) throw new TypeErr("Array.prototype.flatMap called on null or undefined");
            var source = toObject(this);
            if (typeof mapper !== "function") throw new TypeErr("flatMap mapper function is not callable");
            var target = [];
            flatten(target, 0, source, 1, mapper, arguments.length > 1 ? arguments[1] : undefined);
            return target;
        }
    }.flatMap, Array.prototype.flatMap);

    // Array.from copies an array-like (one without an iterator) index by index.
    (function () {
        var original = Array.from;
        var wrapped = {
            from: function (items) {
                if (typeof items !== "string") check(steps(items, "Array.from"), "Array.from");
                return guarded(original, this, arguments);
            }
        }.from;
        install(Array, "from", wrapped, original);
    })();

    // Every way to change an existing object's prototype refuses while a guarded native runs.
    function settled(name) {
        if (running > 0) throw new TypeErr(name + " cannot change a prototype while a built-in walks an array.");
    }
    [[Object, "setPrototypeOf"], [Reflect, "setPrototypeOf"]].forEach(function (pair) {
        var original = pair[0][pair[1]];
        install(pair[0], pair[1], {
            m: function () {
                settled(pair[1]);
                return apply(original, this, arguments);
            }
        }.m, original);
    });
    (function () {
        var d = getOwn(Object.prototype, "__proto__");
        var set = d.set;
        var wrapped = {
            set: function (value) {
                settled("__proto__");
                return apply(set, this, [value]);
            }
        };
        var setter = getOwn(wrapped, "set").value;
        define(setter, "name", { value: "set __proto__", configurable: true });
        define(Object.prototype, "__proto__", { get: d.get, set: setter, enumerable: false, configurable: false });
    })();
})(globalThis);
