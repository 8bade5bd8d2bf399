//! A deterministic discrete-event simulation of a continuous-batching server
//! (docs/calibration-serving.md, "The simulator").
//!
//! The server runs engine steps back to back. Each step decodes one token of every running
//! request past its prompt and spends what is left of a token budget (`max_num_batched_tokens`)
//! on prompt chunks, first of the requests already admitted, then of waiting requests it
//! admits while fewer than `max_running` run (chunked prefill, as in Sarathi-Serve and vLLM
//! V1's scheduler). Engines that prioritise prefill (SGLang's default) instead run a prefill-only
//! step whenever a prompt is waiting, and decode steps otherwise. A step's duration comes
//! from the roofline of [`super::speed::serve`], called with the step's shape.
//!
//! Requests arrive as a closed loop (`clients` clients, each sending its next request when
//! the last one ends: a benchmark's `--max-concurrency`), all at once (a burst: a benchmark's
//! `--request-rate inf`) or as a Poisson process with a fixed seed. The simulation is exact
//! for its model and cheap: decode progress is a global step counter (each running request
//! remembers the counter at its first token), so a step costs O(1) plus the prompt chunks
//! and completions it handles, and runs of identical decode steps are skipped over in one go
//! up to the next completion or arrival.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// How requests arrive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrivals {
    /// `clients` clients each keep one request in flight.
    Closed { clients: u64 },
    /// `requests` requests arrive together at time zero.
    Burst { requests: u64 },
    /// A Poisson process of `rate` requests per second.
    Poisson { rate: f64 },
}

/// How an engine mixes prompt chunks with decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduling {
    /// Decodes and prompt chunks share every step (vLLM V1, TensorRT-LLM, LMDeploy).
    Mixed,
    /// A step is either prompt chunks or decodes, prompts first (SGLang's default).
    PrefillFirst,
}

/// One engine step's work, as the roofline reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// Requests decoding one token each, and the mean context each attends to.
    pub decode: f64,
    pub decode_context: f64,
    /// Prompt tokens processed, and the mean context their attention spans.
    pub prefill: f64,
    pub prefill_context: f64,
}

#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// The most requests running at once (`seqs`, `max_num_seqs`).
    pub max_running: u64,
    /// Tokens one step processes at most (decodes count one each).
    pub batch_tokens: u64,
    /// Prompt and output tokens per request: every request's with fixed lengths, else the
    /// means of exponential distributions (`varied`), each draw at most
    /// [`MAX_SPREAD`] times its mean.
    pub prompt: u64,
    pub output: u64,
    pub varied: bool,
    /// Expected output tokens a decode step gives each sequence: 1, or with speculative
    /// decoding its accepted drafts plus the target's own token.
    pub tokens_per_step: f64,
    pub arrivals: Arrivals,
    pub scheduling: Scheduling,
    /// Tokens of KV cache the replica holds (`u64::MAX`: no limit), counting a token of
    /// every layer. A request is admitted only while the running requests' footprints leave
    /// room for its own; the first always is. A footprint is the KV of the prompt plus
    /// `output_reserve` of the output (1 for an engine that reserves the whole output up
    /// front; 0.5, what a request holds on average over its life, for one that allocates
    /// blocks as tokens come and keeps the cache full), its sliding-window layers' share
    /// (`kv_local_share` of a token's bytes) counted for at most `kv_window` tokens.
    pub kv_tokens: u64,
    pub kv_local_share: f64,
    pub kv_window: u64,
    /// Share of a request's output its footprint counts (the engine's `output_reserve`).
    pub output_reserve: f64,
    /// Whether the engine admits a request while its next prompt chunk fits the cache the
    /// running requests hold now (not their footprints) and, when a step's new tokens do
    /// not fit, preempts the newest running request: its cache is freed and it waits at
    /// the head of the queue to recompute its prompt and its output so far (vLLM V1's
    /// scheduler). `output_reserve` then plays no part.
    pub preempt: bool,
}

/// Requests a Poisson run simulates.
pub const POISSON_REQUESTS: u64 = 400;
/// Waves of a closed loop: the first fills the server, the later ones are measured.
pub const CLOSED_WAVES: u64 = 3;
/// Largest burst simulated request by request; a larger one is simulated at this size.
pub const MAX_REQUESTS: u64 = 100_000;
/// Work bound (steps plus request events) of one simulation: past it, the simulation stops
/// and reports what has completed.
pub const MAX_WORK: u64 = 2_000_000;
/// The longest varied length, in means.
pub const MAX_SPREAD: f64 = 8.0;
/// The seed of the Poisson arrivals: the same deployment always gives the same figures.
const SEED: u64 = 0x5eed_cafe_f00d_d00d;

/// What a simulation measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// Output tokens per second: over the measured waves of a closed loop, over the whole
    /// run of a burst, over the run's span for Poisson arrivals.
    pub throughput: f64,
    pub ttft_mean: f64,
    pub ttft_p50: f64,
    pub ttft_p99: f64,
    /// Time per output token after the first, per request.
    pub tpot_mean: f64,
    pub tpot_p50: f64,
    pub tpot_p99: f64,
    /// Mean time from arrival to the first step that works on a request.
    pub queue_mean: f64,
    pub completed: u64,
    /// The most requests running at once: `max_running`, or fewer when the KV cache or the
    /// arrivals keep it lower.
    pub peak_running: u64,
    /// Whether the KV cache ever kept a waiting request out while a running slot was free.
    pub kv_bound: bool,
    /// Requests preempted (their cache freed, to be recomputed).
    pub preemptions: u64,
    /// Whether the work bound stopped the run early.
    pub truncated: bool,
}

struct Request {
    arrival: f64,
    /// KV tokens the request is counted for while it runs (see [`Config::kv_tokens`]).
    footprint: u64,
    prompt: u64,
    output: u64,
    /// Prompt tokens not yet processed.
    prompt_left: u64,
    /// Tokens its current prefill covers: the prompt, or after a preemption the prompt
    /// and the output so far (recomputed).
    prefill_total: u64,
    /// Output tokens produced before its current decode run.
    generated: u64,
    /// Tokens of its prefix that come back from the prefix cache when it is admitted
    /// again after a preemption.
    cached: u64,
    /// Bumped at each preemption: its entry in `finishing` from before goes stale.
    epoch: u32,
    running: bool,
    /// The decode counter at the start of its current decode run.
    start: u64,
    first_scheduled: Option<f64>,
    first_token: Option<f64>,
}

/// Splitmix64: a small, well-mixed deterministic generator for the arrival process.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    // Nearest rank.
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        f64::NAN
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

/// Runs the simulation. `step` gives the duration of a step of a given shape, in seconds;
/// it must be positive.
pub fn simulate(config: &Config, step: &dyn Fn(Shape) -> f64) -> Outcome {
    let max_running = config.max_running.clamp(1, MAX_REQUESTS);
    let prompt = config.prompt.max(1);
    let output = config.output.max(1);
    // Every running request decodes each step, so the budget covers them all.
    let budget = config.batch_tokens.max(max_running).max(1);
    let total = match config.arrivals {
        Arrivals::Closed { clients } => clients.clamp(1, MAX_REQUESTS) * CLOSED_WAVES,
        Arrivals::Burst { requests } => requests.clamp(1, MAX_REQUESTS),
        Arrivals::Poisson { .. } => POISSON_REQUESTS,
    }
    .min(MAX_REQUESTS * CLOSED_WAVES);

    let mut requests: Vec<Request> = Vec::with_capacity(total.min(1 << 20) as usize);
    // Arrived, not yet admitted (or preempted): indices into `requests`, and the times
    // still to come.
    let mut waiting: VecDeque<usize> = VecDeque::new();
    let mut future: VecDeque<f64> = VecDeque::new();
    let mut rng = Rng(SEED);
    match config.arrivals {
        Arrivals::Closed { clients } => {
            future.extend((0..clients.clamp(1, MAX_REQUESTS)).map(|_| 0.0))
        }
        Arrivals::Burst { .. } => future.extend((0..total).map(|_| 0.0)),
        Arrivals::Poisson { rate } => {
            let rate = if rate.is_finite() && rate > 0.0 {
                rate
            } else {
                1.0
            };
            let mut t = 0.0;
            for _ in 0..total {
                future.push_back(t);
                t += -rng.unit().ln() / rate;
            }
        }
    }
    let closed = matches!(config.arrivals, Arrivals::Closed { .. });
    let mut issued = future.len() as u64;

    // Admitted requests still in their prompt, in admission order.
    let mut prefilling: VecDeque<usize> = VecDeque::new();
    // Decoding requests by the decode counter at which they finish (and the request's
    // epoch then: a preempted request's entry goes stale).
    let mut finishing: BinaryHeap<Reverse<(u64, usize, u32)>> = BinaryHeap::new();
    // Running requests in admission order, the newest last (finished ones are skipped):
    // the engine preempts from the end.
    let mut admitted: Vec<usize> = Vec::new();
    let mut running: u64 = 0;
    let mut decoding: u64 = 0;
    // Σ footprint of the running requests, and whether the cache has room for a request.
    let mut reserved: u64 = 0;
    let mut peak_running: u64 = 0;
    let mut kv_bound = false;
    let mut preemptions: u64 = 0;
    // Set when no step can run for want of cache: the newest running request is preempted.
    let mut force_preempt = false;
    let kv_tokens = config.kv_tokens.max(1);
    let room = |reserved: u64, running: u64, r: &Request| {
        running == 0 || reserved.saturating_add(r.footprint) <= kv_tokens
    };
    // Decode steps so far; over the decoding requests, Σ (prefilled tokens + 1) and Σ
    // counter at their first token: their total context is Σ (prefilled + 1) + tokens
    // per step × (decoding × counter − Σ start).
    let mut counter: u64 = 0;
    let mut sum_base: f64 = 0.0;
    let mut sum_start: f64 = 0.0;
    // Tokens the prefilling requests hold (their prompt chunks done so far).
    let mut prefill_held: f64 = 0.0;
    let per_step = if config.tokens_per_step.is_finite() {
        config.tokens_per_step.max(1.0)
    } else {
        1.0
    };
    let mut now = 0.0;
    let mut work: u64 = 0;
    let mut ttft = Vec::new();
    let mut tpot = Vec::new();
    let mut queue = Vec::new();
    // Completion times, and the output tokens produced by each.
    let mut done: Vec<f64> = Vec::new();
    let mut produced_at_done: Vec<f64> = Vec::new();
    let mut produced: f64 = 0.0;
    let mut truncated = false;

    // A share in [0, 1], or `default` when it is not a number.
    let share = |x: f64, default: f64| {
        if x.is_finite() {
            x.clamp(0.0, 1.0)
        } else {
            default
        }
    };
    let (local, reserve) = (
        share(config.kv_local_share, 0.0),
        share(config.output_reserve, 0.5),
    );
    let footprint = |tokens: u64| {
        let t = tokens as f64;
        (t * (1.0 - local) + t.min(config.kv_window as f64) * local).ceil() as u64
    };
    // The cache the running requests hold (preemption mode): `tokens` over `n` requests,
    // their sliding-window layers' share counted for at most `kv_window` tokens each.
    let held_cache = |tokens: f64, n: u64| {
        tokens * (1.0 - local) + tokens.min(n as f64 * config.kv_window as f64) * local
    };
    // Lengths come from their own stream, so arrivals do not shift them.
    let mut lengths = Rng(SEED ^ 0x00ff_00ff_00ff_00ff);
    let mut draw = |mean: u64| {
        if config.varied {
            let x = -lengths.unit().ln() * mean as f64;
            (x.round().max(1.0)).min(mean as f64 * MAX_SPREAD) as u64
        } else {
            mean
        }
    };
    loop {
        // Arrivals up to now join the queue.
        while future.front().is_some_and(|&t| t <= now) {
            let arrival = future.pop_front().unwrap_or(now);
            let (p, o) = (draw(prompt), draw(output));
            requests.push(Request {
                arrival,
                footprint: footprint(p.saturating_add((o as f64 * reserve).ceil() as u64)),
                prompt: p,
                output: o,
                prompt_left: p,
                prefill_total: p,
                generated: 0,
                cached: 0,
                epoch: 0,
                running: false,
                start: 0,
                first_scheduled: None,
                first_token: None,
            });
            waiting.push_back(requests.len() - 1);
            work += 1;
        }
        if running == 0 && waiting.is_empty() {
            match future.front() {
                Some(&t) => {
                    now = now.max(t);
                    continue;
                }
                None => break,
            }
        }
        if work > MAX_WORK {
            truncated = true;
            break;
        }
        // With preemption, the cache the running requests hold now.
        // (Its prompts in progress each count their sliding-window layers for at most the
        // window, as the decoding requests do.)
        let held = |decoding: u64,
                    counter: u64,
                    sum_base: f64,
                    sum_start: f64,
                    prefill_held: f64,
                    prefilling: usize| {
            held_cache(
                sum_base + per_step * (decoding as f64 * counter as f64 - sum_start),
                decoding,
            ) + held_cache(prefill_held, prefilling as u64)
        };
        let growth = decoding as f64 * per_step;
        // Preemption: when the next step's decode tokens do not fit, the newest running
        // request gives its cache back and waits to recompute (never the last one).
        let mut preempted = false;
        while config.preempt
            && running > 1
            && (force_preempt
                || decoding > 0
                    && held(
                        decoding,
                        counter,
                        sum_base,
                        sum_start,
                        prefill_held,
                        prefilling.len(),
                    ) + growth
                        > kv_tokens as f64)
        {
            force_preempt = false;
            let Some(id) = admitted.pop() else { break };
            if !requests[id].running {
                continue;
            }
            let r = &mut requests[id];
            if r.prompt_left == 0 {
                // Decoding: its tokens so far stay produced; its entry in `finishing`
                // goes stale.
                let steps = counter - r.start;
                r.generated = (r.generated + (per_step * steps as f64) as u64)
                    .min(r.output.saturating_sub(1));
                decoding -= 1;
                sum_base -= r.prefill_total as f64 + 1.0;
                sum_start -= r.start as f64;
            } else {
                prefill_held -= (r.prefill_total - r.prompt_left) as f64;
                prefilling.retain(|&p| p != id);
            }
            r.epoch = r.epoch.wrapping_add(1);
            if r.prompt_left == 0 {
                // Its prompt and output so far stay in the prefix cache; the last token is
                // computed again for its logits.
                r.prefill_total = r.prompt + r.generated;
                r.cached = r.prefill_total - 1;
                r.prompt_left = 1;
            } else {
                r.cached = r.prefill_total - r.prompt_left;
            }
            r.running = false;
            running -= 1;
            waiting.push_front(id);
            preempted = true;
            preemptions += 1;
            work += 1;
        }
        if decoding == 0 {
            (sum_base, sum_start) = (0.0, 0.0);
        }
        let growth = decoding as f64 * per_step;
        let held_now = held(
            decoding,
            counter,
            sum_base,
            sum_start,
            prefill_held,
            prefilling.len(),
        );
        // Room for a waiting request's first chunk (preemption) or its footprint.
        let admits = |r: &Request, left: u64, extra: f64| {
            if config.preempt {
                running == 0
                    || held_now + extra + held_cache((r.cached + r.prompt_left.min(left)) as f64, 1)
                        <= kv_tokens as f64
            } else {
                room(reserved, running, r)
            }
        };
        let fits = waiting
            .front()
            .map(|&id| admits(&requests[id], budget.saturating_sub(decoding), growth));
        kv_bound |= running < max_running && (fits == Some(false) || preempted);
        let admit = running < max_running && fits == Some(true) && !preempted;
        let prompts_pending = !prefilling.is_empty() || admit;
        let decode_this_step = match config.scheduling {
            Scheduling::Mixed => decoding > 0,
            Scheduling::PrefillFirst => decoding > 0 && !prompts_pending,
        };
        let decode_context = if decoding > 0 {
            (sum_base + per_step * (decoding as f64 * counter as f64 - sum_start)) / decoding as f64
        } else {
            0.0
        };
        // Drop stale entries (preempted requests) from the top of `finishing`.
        while let Some(&Reverse((_, id, epoch))) = finishing.peek() {
            if requests[id].epoch == epoch {
                break;
            }
            finishing.pop();
        }

        if !prompts_pending {
            // Only decodes: skip ahead to the next completion, or to the next arrival when
            // it could be admitted.
            let Some(&Reverse((finish, _, _))) = finishing.peek() else {
                // Nothing decodes and nothing waits: wait for the next arrival.
                match future.front() {
                    Some(&t) => {
                        now = now.max(t);
                        continue;
                    }
                    None => break,
                }
            };
            let mut k = finish.saturating_sub(counter).max(1);
            if config.preempt && growth > 0.0 {
                // Up to the step whose tokens would not fit.
                let fit = ((kv_tokens as f64 - held_now) / growth).floor().max(1.0);
                if fit < k as f64 {
                    k = fit as u64;
                }
            }
            let shape = |k: u64| Shape {
                decode: decoding as f64,
                decode_context: decode_context + per_step * (k as f64 - 1.0) / 2.0,
                prefill: 0.0,
                prefill_context: 0.0,
            };
            if running < max_running
                && let Some(&t) = future.front()
            {
                let per_step = step(shape(1)).max(1e-9);
                let until = ((t - now) / per_step).ceil().max(1.0);
                if until < k as f64 {
                    k = until as u64;
                }
            }
            now += k as f64 * step(shape(k)).max(1e-9);
            counter += k;
            produced += (decoding * k) as f64 * per_step;
            work += 1;
        } else {
            // One step with prompt chunks.
            let mut left = budget - if decode_this_step { decoding } else { 0 };
            // With preemption, the cache this step's tokens may still take.
            let mut free =
                kv_tokens as f64 - held_now - if decode_this_step { growth } else { 0.0 };
            let mut prefill_tokens = 0u64;
            let mut prefill_context_sum = 0.0;
            let mut completed_prompts: Vec<usize> = Vec::new();
            let mut touched = 0usize;
            // Running prompts first, in order, then admissions.
            for &id in prefilling.iter() {
                if left == 0 {
                    break;
                }
                let r = &mut requests[id];
                let mut chunk = r.prompt_left.min(left);
                if config.preempt && running > 1 {
                    chunk = chunk.min(free.max(0.0) as u64);
                    if chunk == 0 {
                        break;
                    }
                    free -= chunk as f64;
                }
                let start = (r.prefill_total - r.prompt_left) as f64;
                prefill_context_sum += chunk as f64 * (start + chunk as f64 / 2.0);
                prefill_tokens += chunk;
                prefill_held += chunk as f64;
                left -= chunk;
                r.prompt_left -= chunk;
                if r.first_scheduled.is_none() {
                    r.first_scheduled = Some(now);
                }
                if r.prompt_left == 0 {
                    completed_prompts.push(id);
                }
                touched += 1;
            }
            while left > 0 && running < max_running && !preempted {
                let Some(&id) = waiting.front() else { break };
                let fits = if config.preempt {
                    running == 0
                        || (requests[id].cached + requests[id].prompt_left.min(left)) as f64
                            <= free.max(0.0)
                } else {
                    room(reserved, running, &requests[id])
                };
                if !fits {
                    kv_bound = true;
                    break;
                }
                waiting.pop_front();
                running += 1;
                peak_running = peak_running.max(running);
                reserved += requests[id].footprint;
                prefilling.push_back(id);
                admitted.push(id);
                let r = &mut requests[id];
                r.running = true;
                prefill_held += r.cached as f64;
                free -= r.cached as f64;
                r.cached = 0;
                let chunk = r.prompt_left.min(left);
                free -= chunk as f64;
                let start = (r.prefill_total - r.prompt_left) as f64;
                prefill_context_sum += chunk as f64 * (start + chunk as f64 / 2.0);
                prefill_tokens += chunk;
                prefill_held += chunk as f64;
                left -= chunk;
                r.prompt_left -= chunk;
                if r.first_scheduled.is_none() {
                    r.first_scheduled = Some(now);
                }
                if r.prompt_left == 0 {
                    completed_prompts.push(id);
                }
                touched += 1;
            }
            work += 1 + touched as u64;
            if config.preempt && prefill_tokens == 0 && !decode_this_step && running > 1 {
                // Nothing fits: the prompts in progress wait for cache that only a
                // preemption frees.
                force_preempt = true;
                continue;
            }
            let shape = Shape {
                decode: if decode_this_step {
                    decoding as f64
                } else {
                    0.0
                },
                decode_context,
                prefill: prefill_tokens as f64,
                prefill_context: if prefill_tokens > 0 {
                    prefill_context_sum / prefill_tokens as f64
                } else {
                    0.0
                },
            };
            now += step(shape).max(1e-9);
            if decode_this_step {
                counter += 1;
                produced += decoding as f64 * per_step;
            }
            produced += completed_prompts.len() as f64;
            // Prompts done this step give their first token at its end (a preempted
            // request, its next token). Chunks go out in order, so the finished prompts
            // lead the queue.
            while prefilling
                .front()
                .is_some_and(|&id| requests[id].prompt_left == 0)
            {
                prefilling.pop_front();
            }
            for id in completed_prompts {
                let r = &mut requests[id];
                prefill_held -= r.prefill_total as f64;
                r.generated += 1;
                if r.first_token.is_none() {
                    r.first_token = Some(now);
                    ttft.push(now - r.arrival);
                    queue.push(r.first_scheduled.unwrap_or(now) - r.arrival);
                }
                let left = r.output.saturating_sub(r.generated);
                if left == 0 {
                    running -= 1;
                    reserved -= r.footprint;
                    r.running = false;
                    let first = r.first_token.unwrap_or(now);
                    tpot.push(if r.output > 1 {
                        (now - first) / (r.output - 1) as f64
                    } else {
                        0.0
                    });
                    done.push(now);
                    produced_at_done.push(produced);
                    if closed && issued < total {
                        future.push_back(now);
                        issued += 1;
                    }
                } else {
                    decoding += 1;
                    r.start = counter;
                    sum_base += r.prefill_total as f64 + 1.0;
                    sum_start += counter as f64;
                    let steps = (left as f64 / per_step).ceil().max(1.0) as u64;
                    finishing.push(Reverse((counter + steps, id, r.epoch)));
                }
            }
        }

        // Completions at this counter.
        while let Some(&Reverse((finish, id, epoch))) = finishing.peek() {
            if requests[id].epoch != epoch {
                finishing.pop();
                continue;
            }
            if finish > counter {
                break;
            }
            finishing.pop();
            let r = &mut requests[id];
            r.running = false;
            let first = r.first_token.unwrap_or(now);
            tpot.push((now - first) / (r.output - 1) as f64);
            done.push(now);
            produced_at_done.push(produced);
            running -= 1;
            reserved -= r.footprint;
            decoding -= 1;
            sum_base -= r.prefill_total as f64 + 1.0;
            sum_start -= r.start as f64;
            work += 1;
            if closed && issued < total {
                // Pushed in time order: `now` only grows.
                future.push_back(now);
                issued += 1;
            }
        }
        if decoding == 0 {
            (sum_base, sum_start) = (0.0, 0.0);
        }
        if prefilling.is_empty() {
            prefill_held = 0.0;
        }
    }

    let completed = done.len() as u64;
    let throughput = match config.arrivals {
        // Steady state: the tokens produced between the end of the first wave's worth of
        // requests and the end of the second, while every client has one in flight.
        Arrivals::Closed { clients } => {
            let clients = clients.clamp(1, MAX_REQUESTS) as usize;
            match (done.get(clients - 1), done.get(2 * clients - 1)) {
                (Some(&a), Some(&b)) if b > a => {
                    (produced_at_done[2 * clients - 1] - produced_at_done[clients - 1]) / (b - a)
                }
                _ => {
                    let last = done.iter().copied().fold(0.0, f64::max);
                    if last > 0.0 { produced / last } else { 0.0 }
                }
            }
        }
        _ => {
            let start = requests.first().map_or(0.0, |r| r.arrival);
            let last = done.iter().copied().fold(0.0, f64::max);
            if last > start {
                produced / (last - start)
            } else {
                0.0
            }
        }
    };
    let sorted = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v
    };
    let ttft = sorted(ttft);
    let tpot = sorted(tpot);
    Outcome {
        throughput,
        ttft_mean: mean(&ttft),
        ttft_p50: percentile(&ttft, 0.5),
        ttft_p99: percentile(&ttft, 0.99),
        tpot_mean: mean(&tpot),
        tpot_p50: percentile(&tpot, 0.5),
        tpot_p99: percentile(&tpot, 0.99),
        queue_mean: mean(&queue),
        completed,
        peak_running,
        kv_bound,
        preemptions,
        truncated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step of fixed cost per step, per decode and per prompt token.
    fn linear(shape: Shape) -> f64 {
        0.010 + 0.0001 * shape.decode + 0.00001 * shape.prefill
    }

    fn config(arrivals: Arrivals) -> Config {
        Config {
            max_running: 8,
            batch_tokens: 2048,
            prompt: 1000,
            output: 101,
            varied: false,
            tokens_per_step: 1.0,
            arrivals,
            scheduling: Scheduling::Mixed,
            kv_tokens: u64::MAX,
            kv_local_share: 0.0,
            kv_window: u64::MAX,
            output_reserve: 0.5,
            preempt: false,
        }
    }

    #[test]
    fn a_single_request_is_one_prefill_then_decodes() {
        let out = simulate(&config(Arrivals::Closed { clients: 1 }), &linear);
        // Prefill of 1000 tokens in one step: 10 ms + 10 ms.
        assert!((out.ttft_mean - 0.020).abs() < 1e-12, "{out:?}");
        // Then 100 decode steps of one sequence: 10.1 ms each.
        assert!((out.tpot_mean - 0.0101).abs() < 1e-12, "{out:?}");
        assert_eq!(out.completed, CLOSED_WAVES);
        // One request per 0.020 + 100 × 0.0101 s.
        let expected = 101.0 / (0.020 + 1.01);
        assert!(
            (out.throughput - expected).abs() / expected < 1e-9,
            "{out:?}"
        );
        assert_eq!(out.queue_mean, 0.0);
    }

    #[test]
    fn a_closed_loop_overlaps_prompts_with_decodes() {
        // 8 clients, 8000 prompt tokens at 2048 per step: the first wave's first tokens
        // come within four steps (2048, 2048, 2048, 1856 tokens).
        let out = simulate(&config(Arrivals::Closed { clients: 8 }), &linear);
        let step = |tokens: f64| 0.010 + 0.00001 * tokens;
        let wave_prefill = 3.0 * step(2048.0) + step(1856.0);
        assert!(out.ttft_p50 <= wave_prefill + 1e-12, "{out:?}");
        assert!(out.ttft_mean <= out.ttft_p99, "{out:?}");
        // Between waves that never overlap (every prompt, then 100 decode steps of 8) and
        // the bound of token costs plus one fixed cost per 8 requests' decode step.
        let waves = 8.0 * 101.0 / (wave_prefill + 100.0 * (0.010 + 0.0008));
        let per_request = 1000.0 * 0.00001 + 100.0 * 0.0001 + 100.0 * 0.010 / 8.0;
        let bound = 101.0 / per_request;
        assert!(
            waves * 0.98 <= out.throughput && out.throughput <= bound * 1.02,
            "{} not in [{waves}, {bound}]",
            out.throughput
        );
    }

    #[test]
    fn a_burst_queues_behind_the_running_cap() {
        let out = simulate(&config(Arrivals::Burst { requests: 32 }), &linear);
        assert_eq!(out.completed, 32);
        // Four waves of 8: the last wave waits for three before it.
        assert!(out.queue_mean > 0.5, "{out:?}");
        assert!(out.ttft_p99 > 3.0 * out.ttft_p50.min(1.0), "{out:?}");
        let closed = simulate(&config(Arrivals::Closed { clients: 8 }), &linear);
        assert!(out.ttft_mean > 2.0 * closed.ttft_mean);
        // The same per-wave work: similar throughput.
        assert!((out.throughput - closed.throughput).abs() / closed.throughput < 0.1);
    }

    #[test]
    fn poisson_latency_grows_with_the_rate() {
        let light = simulate(&config(Arrivals::Poisson { rate: 0.5 }), &linear);
        let heavy = simulate(&config(Arrivals::Poisson { rate: 6.0 }), &linear);
        assert_eq!(light.completed, POISSON_REQUESTS);
        assert!(light.ttft_mean < 0.05, "{light:?}");
        assert!(heavy.ttft_p99 > light.ttft_p99, "{heavy:?} {light:?}");
        assert!(heavy.tpot_mean > light.tpot_mean, "{heavy:?} {light:?}");
        // Deterministic.
        assert_eq!(
            light,
            simulate(&config(Arrivals::Poisson { rate: 0.5 }), &linear)
        );
        // Light load: served about as fast as it arrives.
        assert!(
            (light.throughput / (0.5 * 101.0) - 1.0).abs() < 0.2,
            "{light:?}"
        );
    }

    #[test]
    fn prefill_first_stalls_decodes() {
        let mut c = config(Arrivals::Poisson { rate: 4.0 });
        let mixed = simulate(&c, &linear);
        c.scheduling = Scheduling::PrefillFirst;
        let first = simulate(&c, &linear);
        // Decodes wait for every prompt step; a prompt's own step is shorter (no decodes
        // in it), though slower decodes hold the running slots longer.
        assert!(first.tpot_mean > mixed.tpot_mean, "{first:?} {mixed:?}");
        assert!(first.tpot_p99 >= mixed.tpot_p99, "{first:?} {mixed:?}");
        assert!(first.ttft_p50 <= mixed.ttft_p50, "{first:?} {mixed:?}");
    }

    #[test]
    fn a_small_kv_cache_admits_fewer_requests() {
        // Footprint of a request: 1000 + 51 = 1051 tokens; 3,200 tokens hold three.
        let mut c = config(Arrivals::Burst { requests: 32 });
        let roomy = simulate(&c, &linear);
        c.kv_tokens = 3_200;
        let small = simulate(&c, &linear);
        assert_eq!(small.completed, 32);
        assert_eq!((roomy.peak_running, small.peak_running), (8, 3));
        assert!(small.kv_bound && !roomy.kv_bound);
        // Fewer requests at once: faster steps, longer waits, less throughput.
        assert!(small.tpot_mean < roomy.tpot_mean, "{small:?} {roomy:?}");
        assert!(small.ttft_mean > roomy.ttft_mean, "{small:?} {roomy:?}");
        assert!(small.throughput < roomy.throughput, "{small:?} {roomy:?}");
        // Three at once: the decode steps of three sequences, 10.3 ms, when no prompt shares
        // them.
        assert!(small.tpot_p50 >= 0.0103 - 1e-12, "{small:?}");
        // A request larger than the whole cache still runs, alone.
        c.kv_tokens = 10;
        let alone = simulate(&c, &linear);
        assert_eq!(alone.completed, 32);
        assert!((alone.tpot_mean - 0.0101).abs() < 1e-12, "{alone:?}");
        // Sliding-window layers hold at most the window: half the bytes of a token are in
        // them, a 128-token window, so a request counts 1051 / 2 + 128 / 2 = 590 tokens and
        // five fit in 3,200.
        c.kv_tokens = 3_200;
        c.kv_local_share = 0.5;
        c.kv_window = 128;
        let windowed = simulate(&c, &linear);
        assert!(
            windowed.ttft_mean < small.ttft_mean,
            "{windowed:?} {small:?}"
        );
    }

    #[test]
    fn preemption_admits_by_the_cache_held_and_pays_in_waits() {
        // 3,100 tokens: three 1000-token prompts fit, their 100 output tokens each do not.
        let mut c = config(Arrivals::Burst { requests: 32 });
        c.kv_tokens = 3_100;
        let reserving = simulate(&c, &linear);
        c.preempt = true;
        let preempting = simulate(&c, &linear);
        assert_eq!((reserving.completed, preempting.completed), (32, 32));
        assert!(!preempting.truncated);
        assert_eq!(reserving.preemptions, 0);
        assert!(preempting.preemptions > 0, "{preempting:?}");
        assert!(preempting.kv_bound);
        // Footprints of 1051 tokens admit two at once; the cache held now admits a third
        // prompt, and a fourth's first chunk when the token budget leaves a small one.
        assert_eq!(reserving.peak_running, 2);
        assert!(preempting.peak_running >= 3, "{preempting:?}");
        // A preempted request waits with its first token out: its time per output token
        // carries the wait.
        assert!(
            preempting.tpot_p99 > reserving.tpot_p99,
            "{preempting:?} {reserving:?}"
        );
        // Deterministic.
        assert_eq!(preempting, simulate(&c, &linear));
        // With room for every request, admission and outcome are the same as by footprint.
        c.kv_tokens = u64::MAX;
        let roomy = simulate(&c, &linear);
        c.preempt = false;
        assert_eq!(roomy, simulate(&c, &linear));
        // A request larger than the whole cache still runs, alone, and is never preempted.
        c.preempt = true;
        c.kv_tokens = 10;
        let alone = simulate(&c, &linear);
        assert_eq!((alone.completed, alone.preemptions), (32, 0));
        assert!((alone.tpot_mean - 0.0101).abs() < 1e-12, "{alone:?}");
        // Prefill-first scheduling and Poisson arrivals under preemption terminate too.
        c.kv_tokens = 3_100;
        c.scheduling = Scheduling::PrefillFirst;
        c.arrivals = Arrivals::Poisson { rate: 4.0 };
        let poisson = simulate(&c, &linear);
        assert_eq!(poisson.completed, POISSON_REQUESTS);
        assert!(!poisson.truncated);
    }

    #[test]
    fn huge_inputs_stay_bounded() {
        let mut c = config(Arrivals::Burst { requests: u64::MAX });
        c.max_running = u64::MAX;
        c.prompt = 1 << 40;
        c.batch_tokens = 1;
        let out = simulate(&c, &linear);
        assert!(out.truncated);
        let mut c = config(Arrivals::Poisson { rate: f64::NAN });
        c.output = 1;
        let out = simulate(&c, &linear);
        assert_eq!(out.completed, POISSON_REQUESTS);
        assert_eq!(out.tpot_mean, 0.0);
    }
}
