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

    // Natives that read an array-like argument index by index: the arguments list of apply and
    // construct, the source of a typed array (constructed, from, set), String.raw's strings.
    function isObject(v) {
        return (typeof v === "object" && v !== null) || typeof v === "function";
    }

    function checkArgument(v, label) {
        if (isObject(v)) check(steps(v, label), label);
    }

    function byArgument(holder, name, label, at) {
        var original = holder[name];
        install(holder, name, {
            m: function () {
                checkArgument(arguments[at], label);
                return guarded(original, this, arguments);
            }
        }.m, original);
    }

    // apply and construct call the script's functions, so they cannot hold the prototypes still;
    // the arguments list is copied here instead, where every index reaches the interrupt
    // handler, and the native gets a dense array (past 65,535 entries it refuses before reading).
    var MAX_ARGUMENTS = 65535;

    function argumentsList(list, label) {
        if (!isObject(list)) return list;
        var len = steps(list, label);
        check(len, label);
        len = toLength(list.length);
        if (len > MAX_ARGUMENTS) return list;
        var copy = [];
        for (var i = 0; i < len; i++) createAt(copy, i, list[i]);
        return copy;
    }

    function byList(holder, name, label, at) {
        var original = holder[name];
        install(holder, name, {
            m: function () {
                var args = [];
                for (var i = 0; i < arguments.length; i++) createAt(args, i, arguments[i]);
                if (at < args.length) args[at] = argumentsList(args[at], label);
                return apply(original, this, args);
            }
        }.m, original);
    }

    byList(Function.prototype, "apply", "Function.prototype.apply", 1);
    byList(Reflect, "apply", "Reflect.apply", 2);
    byList(Reflect, "construct", "Reflect.construct", 1);
    var TypedArray = getProto(Uint8Array);
    byArgument(TypedArray, "from", "TypedArray.from", 0);
    byArgument(TypedArray.prototype, "set", "TypedArray.prototype.set", 0);

    // String.raw reads its template's `raw` once; an accessor (or a proxy) could answer the native
    // another array-like than the one checked here.
    (function () {
        var original = String.raw;
        install(String, "raw", {
            raw: function (template) {
                var label = "String.raw";
                if (isObject(template)) {
                    for (var p = template; p !== null; p = getProto(p)) {
                        if (isProxy(p)) refuse(label);
                        var d = getOwn(p, "raw");
                        if (d === undefined) continue;
                        if (!("value" in d)) refuse(label);
                        checkArgument(d.value, label);
                        break;
                    }
                }
                return guarded(original, this, arguments);
            }
        }.raw, original);
    })();

    // The typed array constructors copy an array-like argument index by index. Each is replaced
    // by a constructor that checks it first and constructs the original (subclasses and
    // instanceof keep working: the prototype object is the original's).
    [
        "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array",
        "Uint32Array", "Float16Array", "Float32Array", "Float64Array", "BigInt64Array",
        "BigUint64Array"
    ].forEach(function (name) {
        var C = g[name];
        if (typeof C !== "function") return;
        var construct = Reflect.construct;
        var label = name;
        var W = function () {
            if (new.target === undefined) throw new TypeErr("constructor " + name + " requires 'new'");
            checkArgument(arguments[0], label);
            running++;
            try {
                return construct(C, arguments, new.target === W ? C : new.target);
            } finally {
                running--;
            }
        };
        define(W, "name", { value: name, configurable: true });
        define(W, "length", { value: C.length, configurable: true });
        define(W, "prototype", { value: C.prototype, writable: false, enumerable: false, configurable: false });
        define(W, "BYTES_PER_ELEMENT", { value: C.BYTES_PER_ELEMENT, writable: false, enumerable: false, configurable: false });
        Object.setPrototypeOf(W, TypedArray);
        define(C.prototype, "constructor", { value: W, writable: true, enumerable: false, configurable: true });
        define(g, name, { value: W, writable: true, enumerable: false, configurable: true });
    });

    // JSON.stringify reads every index of every array it meets, holes through the prototype
    // chain. The value is first copied here, as the native would see it (toJSON, the replacer,
    // enumerable own keys), into plain objects and dense arrays, each array checked as the
    // methods are; the native then writes out the copy.
    var stringify = JSON.stringify;
    var keysOf = Object.keys;
    var unboxes = [Number.prototype.valueOf, String.prototype.valueOf, Boolean.prototype.valueOf,
        typeof BigInt === "function" ? BigInt.prototype.valueOf : undefined];

    function unboxesAs(i, v) {
        if (unboxes[i] === undefined) return false;
        try {
            apply(unboxes[i], v, []);
            return true;
        } catch (e) {
            return false;
        }
    }

    function boxed(v) {
        return unboxesAs(0, v) || unboxesAs(1, v) || unboxesAs(2, v) || unboxesAs(3, v);
    }

    // `seen`: the objects being copied, outermost first ({items, count}), for the cycle check.
    function copyForJson(holder, key, value, replacer, names, seen) {
        if (isObject(value) || typeof value === "bigint") {
            var toJSON = value.toJSON;
            if (typeof toJSON === "function") value = apply(toJSON, value, [key]);
        }
        if (replacer !== undefined) value = apply(replacer, holder, [key, value]);
        if (typeof value !== "object" || value === null || boxed(value)) return value;
        if (isProxy(value)) refuse("JSON.stringify");
        for (var s = 0; s < seen.count; s++) {
            if (seen.items[s] === value) throw new TypeErr("circular reference in JSON.stringify");
        }
        createAt(seen.items, seen.count, value);
        seen.count++;
        var out;
        if (isArray(value)) {
            check(steps(value, "JSON.stringify"), "JSON.stringify");
            var len = toLength(value.length);
            out = [];
            for (var i = 0; i < len; i++) {
                var item = copyForJson(value, "" + i, value[i], replacer, names, seen);
                createAt(out, i, item === undefined || typeof item === "function" || typeof item === "symbol" ? null : item);
            }
        } else {
            var keys = names !== undefined ? names : keysOf(value);
            out = {};
            for (var k = 0; k < keys.length; k++) {
                var v = copyForJson(value, keys[k], value[keys[k]], replacer, names, seen);
                if (v !== undefined && typeof v !== "function" && typeof v !== "symbol") createAt(out, keys[k], v);
            }
        }
        seen.count--;
        return out;
    }

    // The property names a replacer array allows: its strings and numbers (boxed or not), once each.
    function allowedNames(replacer) {
        check(steps(replacer, "JSON.stringify"), "JSON.stringify");
        var names = [];
        var count = 0;
        var len = toLength(replacer.length);
        for (var i = 0; i < len; i++) {
            var r = replacer[i];
            var name;
            if (typeof r === "string" || typeof r === "number") name = "" + r;
            else if (isObject(r) && (unboxesAs(0, r) || unboxesAs(1, r))) name = "" + r;
            else continue;
            var known = false;
            for (var j = 0; j < count; j++) if (names[j] === name) known = true;
            if (!known) createAt(names, count++, name);
        }
        return names;
    }

    install(JSON, "stringify", {
        stringify: function (value, replacer, space) {
            var fn;
            var names;
            if (typeof replacer === "function") fn = replacer;
            else if (isArray(replacer)) names = allowedNames(replacer);
            var root = {};
            createAt(root, "", value);
            var copy = copyForJson(root, "", value, fn, names, { items: [], count: 0 });
            return apply(stringify, JSON, [copy, null, space]);
        }
    }.stringify, stringify);

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
