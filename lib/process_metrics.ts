/**
 * Process metrics (`process_resident_memory_bytes`, `process_cpu_seconds_total`, heap) refreshed on
 * every scrape.
 *
 * @module
 */
import process from "node:process";
import type { Registry } from "./metrics.ts";

/** Registers gauges that read the process's memory and CPU when `/metrics` is rendered. */
export function processMetrics(registry: Registry): void {
  const rss = registry.gauge("process_resident_memory_bytes", "Resident memory size in bytes.");
  const heap = registry.gauge("process_heap_used_bytes", "V8 heap in use, in bytes.");
  const cpu = registry.gauge("process_cpu_seconds_total", "User and system CPU time spent, in seconds.");
  const start = registry.gauge(
    "process_start_time_seconds",
    "Start time of the process since the Unix epoch.",
  );
  start.set({}, Math.round(Date.now() / 1000 - performance.now() / 1000));
  const refresh = () => {
    const mem = Deno.memoryUsage();
    rss.set({}, mem.rss);
    heap.set({}, mem.heapUsed);
    const usage = process.cpuUsage();
    cpu.set({}, (usage.user + usage.system) / 1e6);
  };
  registry.onCollect(refresh);
}
