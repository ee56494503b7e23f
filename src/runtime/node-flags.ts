/**
 * The Node (V8) flags the long-running `gardener-ipv6 run` process starts with: the image's ENTRYPOINT puts them
 * before the script, and the webhook benchmark and the memory-limit test start the webhook with them, as it ships.
 *
 * `--no-memory-reducer`: V8's memory reducer gives committed heap back when it judges the allocation rate low, and
 * at the latest 100 s after the last full GC (its watchdog). Under steady light load (200 reviews/s) it starts a
 * `Mark-Compact (reduce)` that pauses the webhook 11-17 ms plus marking steps of up to 15 ms, and halves the committed
 * heap, which then has to grow back: p99 latency stays 2-3x higher for the next 10-20 s. A server should keep the
 * heap its load needs; the memory limit stays enforced by V8's ordinary GCs and the container's cgroup. The flag can
 * only be given on the command line: `v8.setFlagsFromString` after start does not stop the reducer, and
 * NODE_OPTIONS refuses it.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--no-memory-reducer'];
