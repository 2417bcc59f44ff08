/**
 * Node's flags for the benchmarks `npm run bench` runs (and their npm scripts): the image's ENTRYPOINT's,
 * so the servers they measure run as pods run them. A test holds the three to the same list.
 */
export const BENCH_NODE_FLAGS: readonly string[] = ['--disable-warning=TimeoutNegativeWarning', '--no-memory-reducer'];
