"""The last part of a reproduction script: the numeric reference as backends/numeric.py takes it
(central differences of the float64 loss; every element of a tensor of at most 256, else 16
seeded ±1 directions as numeric_dirs.py draws them, compared as g . v), and main(),
which prints the table."""

NUMERIC = '''

FULL_MAX, DIRECTIONS, REL_EPS = 256, 16, 1e-6


def moved_loss(name):
    """loss(delta): the float64 loss with `delta` added to tensor `name` (a leaf's or a
    parameter's values, or a recorded tensor through an injection), and the base it moves."""
    if name in LEAVES64:
        base = LEAVES64[name]
        return base, lambda d: loss64({**LEAVES64, name: base + d}, PARAMS64)
    if name in PARAMS64:
        base = PARAMS64[name]
        return base, lambda d: loss64(LEAVES64, {**PARAMS64, name: base + d})
    base = VALUES[name].astype(np.float64)     # the run's value: it sizes the steps
    return base, lambda d: loss64(LEAVES64, PARAMS64, (name, d))


def full(base, loss):
    flat = base.reshape(-1)
    grad = np.empty(flat.size)
    for i in range(flat.size):
        h = REL_EPS * max(1.0, abs(flat[i]))
        step = np.zeros(flat.size)
        step[i] = h
        grad[i] = (loss(step.reshape(base.shape)) - loss(-step.reshape(base.shape))) / (2 * h)
    return grad.reshape(base.shape)


def directions(name, shape):
    """The tensor's 16 random directions, as gradviz draws them whatever the run: direction k is
    ceil(n / 64) raw 64-bit outputs of the tensor's own seeded stream, bit i (little-endian) -1
    where set and +1 where not; each of norm sqrt(n)."""
    n = max(1, int(np.prod(shape)))
    words = -(-n // 64)
    raw = np.random.default_rng([0, zlib.crc32(("numeric:" + name).encode())]
                                ).bit_generator.random_raw(DIRECTIONS * words)
    bits = raw.astype("<u8").view(np.uint8).reshape(DIRECTIONS, words * 8)
    rows = np.stack([1.0 - 2.0 * np.unpackbits(b, count=n, bitorder="little") for b in bits])
    return rows, np.full(DIRECTIONS, np.sqrt(n))


def projected(name, base, loss):
    """(rows, norms, the numeric derivative along each direction v / |v|)."""
    finite = base[np.isfinite(base)]
    eps = REL_EPS * max(1.0, float(np.sqrt(np.mean(np.square(finite)))) if finite.size else 1.0)
    rows, norms = directions(name, base.shape)
    numeric = np.empty(DIRECTIONS)
    for k in range(DIRECTIONS):
        step = (eps / norms[k]) * rows[k].reshape(base.shape)
        numeric[k] = (loss(step) - loss(-step)) / (2 * eps)
    return rows, norms, numeric


def numeric_of():
    """name -> ("full", gradient) or ("projection", rows, norms, numeric along them)."""
    out = {}
    for name, _ in ROWS:
        if name in NO_NUMERIC or (name in LEAVES and LEAVES[name].dtype.kind != "f"):
            continue
        base, loss = moved_loss(name)
        out[name] = ("full", full(base, loss)) if base.size <= FULL_MAX else \\
            ("projection",) + projected(name, base, loss)
    return out
'''

TAIL = '''

def max_abs(a, b):
    if a is None or b is None:
        return "-"
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    both = np.isfinite(a) & np.isfinite(b)
    return f"{float(np.abs(a[both] - b[both]).max()) if both.any() else 0.0:.3g}"


def against_numeric(g, numeric):
    """max |g - numeric|, element by element or along the random directions (g . v / |v|)."""
    if g is None or numeric is None:
        return "-"
    if numeric[0] == "full":
        return max_abs(g, numeric[1])
    _, rows, norms, along = numeric
    return max_abs(np.einsum("ij,j->i", rows, np.asarray(g, dtype=np.float64).reshape(-1)) / norms,
                   along)


def main():
    custom = gradients("custom") if "custom" in MODES else {}
    default = gradients("default") if "default" in MODES else {}
    numeric = numeric_of() if custom else {}
    rows = [("tensor", "shape", "|custom-default|", "|custom-numeric|")]
    for name, shape in ROWS:
        c = custom.get(name)
        rows.append((name, shape, max_abs(c, default.get(name)),
                     against_numeric(c, numeric.get(name))))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    print(f"{OP_NAME} ({FRAMEWORK}), {GRAPH} graph, {RUN_DTYPE} on {DEVICE}")
    for r in rows:
        print("  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip())
    for name, why in NO_NUMERIC.items():
        print(f"no numeric reference of {name}: {why}")


if __name__ == "__main__":
    main()
'''
