/**
 * A clock for controller tests that moves only when told: periods, delays and backoff run in no
 * real time, in the order their times fall. It knows the work queues made on it, so a test can wait
 * until the controller has done what it can without time moving ({@link FakeClock.settle}).
 *
 * What runs outside the clock (the in-memory apiserver, the fake provider, informers) answers
 * within a few turns of the event loop, which is what `settle` waits out.
 *
 * @module
 */
import type { Clock, Quiescent, TimerId } from "../lib/clock.ts";

interface Timer {
  at: number;
  fn: () => void;
  /** Set for intervals. */
  every?: number;
  /** Creation order: timers due at the same time fire in it. */
  seq: number;
}

/** Turns of the event loop with no work in hand before the controller counts as settled. */
const QUIET_TURNS = 5;
/**
 * The same for quick turns (an in-process world): work was seen to resume after up to 12 of them,
 * and the order of a run's requests then depended on the machine's speed; 50 cost about 1 ms.
 */
const QUICK_QUIET_TURNS = 50;
/** A controller that never settles is a defect of the test or of the controller: say so. */
const MAX_TURNS = 20_000;

/** A macrotask turn: lets pending I/O callbacks, promise chains and stream reads run. */
function turn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * A macrotask turn without the timer's clamp (a nested `setTimeout(0)` waits ~2 ms here): enough
 * when nothing outside the process is awaited (the explorer's in-process world), 100 times faster.
 */
function quickTurn(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(0);
  });
}

/** See the module doc. */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #nextId = 1;
  readonly #timers = new Map<TimerId, Timer>();
  readonly #queues: Quiescent[] = [];
  /** Work outside the clock under way (an in-process cloud call): `settle` waits for it. */
  #tracked = 0;

  readonly #turn: () => Promise<void>;
  readonly #quietTurns: number;

  /**
   * Starts at `start` (default: the real time now, so objects stamped by the apiserver compare).
   * `inProcess`: nothing the work awaits is outside the process (no socket, no subprocess), so
   * `settle` may take quick turns of the event loop.
   */
  constructor(start = Date.now(), options: { inProcess?: boolean } = {}) {
    this.#now = start;
    this.#turn = options.inProcess ? quickTurn : turn;
    this.#quietTurns = options.inProcess ? QUICK_QUIET_TURNS : QUIET_TURNS;
  }

  /** The fake time. */
  now(): number {
    return this.#now;
  }

  /** A one-shot timer at now + `ms`. */
  setTimeout(fn: () => void, ms: number): TimerId {
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn, seq: this.#seq++ });
    return id;
  }

  /** Cancels a timer. */
  clearTimeout(id: TimerId): void {
    this.#timers.delete(id);
  }

  /** A timer every `ms` (at least 1 ms). */
  setInterval(fn: () => void, ms: number): TimerId {
    const every = Math.max(1, ms);
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#now + every, fn, every, seq: this.#seq++ });
    return id;
  }

  /** Cancels an interval. */
  clearInterval(id: TimerId): void {
    this.#timers.delete(id);
  }

  /** Keeps the queue, to know when work has settled. */
  watch(queue: Quiescent): void {
    this.#queues.push(queue);
  }

  /** The queue named `name` made on this clock (the newest of that name). */
  queue(name: string): Quiescent {
    const found = this.#queues.findLast((q) => q.name === name);
    if (!found) {
      throw new Error(`no work queue "${name}" (known: ${this.#queues.map((q) => q.name).join(", ")})`);
    }
    return found;
  }

  /**
   * Counts `work` as under way until it ends: for work that never waits on this clock (an in-process
   * simulator answering a call) but may take more turns of the event loop than `settle` waits out.
   */
  track<T>(work: Promise<T>): Promise<T> {
    this.#tracked++;
    this.#seq++;
    return work.finally(() => {
      this.#tracked--;
      this.#seq++;
    });
  }

  /** Timers set and not yet fired or cancelled. */
  get pending(): number {
    return this.#timers.size;
  }

  /**
   * Waits until nothing has moved for a few turns of the event loop (no queue took a step, no timer
   * was set): what the controller can do without time moving is done. A reconcile waiting on this
   * clock (a sleep, a delay) counts as done until time moves; one waiting on real time does not
   * hold `settle` up (give it this clock instead).
   */
  async settle(): Promise<void> {
    let quiet = 0;
    let last = this.#movement();
    for (let turns = 0; turns < MAX_TURNS; turns++) {
      await this.#turn();
      const now = this.#movement();
      quiet = now === last && this.#tracked === 0 ? quiet + 1 : 0;
      last = now;
      if (quiet >= this.#quietTurns) return;
    }
    const busy = this.#queues.filter((q) => !q.idle).map((q) => q.name);
    throw new Error(
      `work never settled after ${MAX_TURNS} turns (queues busy: ${busy.join(", ") || "none"})`,
    );
  }

  /** A sum that changes whenever a queue takes a step or a timer is set. */
  #movement(): number {
    return this.#queues.reduce((sum, q) => sum + q.steps, this.#seq);
  }

  /**
   * Moves time forward by `ms`, firing each timer when its time comes (in time order, intervals as
   * often as they fall) and letting the work it starts settle before the next.
   */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    await this.settle();
    for (;;) {
      const next = this.#due(end);
      if (!next) break;
      const [id, timer] = next;
      this.#now = Math.max(this.#now, timer.at);
      if (timer.every) timer.at += timer.every;
      else this.#timers.delete(id);
      timer.fn();
      await this.settle();
    }
    this.#now = end;
  }

  /**
   * Lets fake time follow real time (for scenarios that wait with `eventually`): every few real
   * milliseconds, time moves by what passed. Returns a function that stops following.
   */
  followRealTime(stepMs = 5): () => void {
    let last = performance.now();
    const follow = setInterval(() => {
      const now = performance.now();
      this.#fire(this.#now + (now - last));
      last = now;
    }, stepMs);
    return () => clearInterval(follow);
  }

  /** Fires every timer due by `end`, in time order, without waiting for work (real time moves too). */
  #fire(end: number): void {
    for (let next = this.#due(end); next; next = this.#due(end)) {
      const [id, timer] = next;
      this.#now = Math.max(this.#now, timer.at);
      if (timer.every) timer.at += timer.every;
      else this.#timers.delete(id);
      timer.fn();
    }
    this.#now = Math.max(this.#now, end);
  }

  /** The earliest timer due by `end`, ties in creation order. */
  #due(end: number): [TimerId, Timer] | undefined {
    let best: [TimerId, Timer] | undefined;
    for (const entry of this.#timers) {
      const t = entry[1];
      if (t.at > end) continue;
      if (!best || t.at < best[1].at || (t.at === best[1].at && t.seq < best[1].seq)) best = entry;
    }
    return best;
  }
}
