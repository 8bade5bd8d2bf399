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
/// Waves of a closed loop: every client's first request is sent at time zero, as a
/// benchmark's are, and each later one when the client's last ends. Latencies are averaged
/// over all six waves, so the first (a burst) weighs a sixth, as in a benchmark of a few
/// hundred requests at a few dozen clients; the throughput is the steady state's (the second
/// wave). Three waves weighed the burst a third, and put time to first token at 4 to 16
/// clients 1.3 to 4 times above the published runs of tests/fixtures/calibration/
/// low_concurrency.csv with varied lengths.
pub const CLOSED_WAVES: u64 = 6;
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
    let mut sim = Sim::new(config, step);
    sim.run();
    sim.outcome()
}

/// A share in [0, 1], or `default` when it is not a number.
fn share(x: f64, default: f64) -> f64 {
    if x.is_finite() {
        x.clamp(0.0, 1.0)
    } else {
        default
    }
}

/// Requests a run issues in all.
fn total_requests(arrivals: Arrivals) -> u64 {
    match arrivals {
        Arrivals::Closed { clients } => clients.clamp(1, MAX_REQUESTS) * CLOSED_WAVES,
        Arrivals::Burst { requests } => requests.clamp(1, MAX_REQUESTS),
        Arrivals::Poisson { .. } => POISSON_REQUESTS,
    }
    .min(MAX_REQUESTS * CLOSED_WAVES)
}

/// The arrival times known at the start: a closed loop's first wave, the burst, or every
/// Poisson arrival.
fn first_arrivals(arrivals: Arrivals, total: u64) -> VecDeque<f64> {
    let mut future: VecDeque<f64> = VecDeque::new();
    let mut rng = Rng(SEED);
    match arrivals {
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
    future
}

/// The prompt chunks of one step with prompts.
struct Chunks {
    /// Tokens of the step's budget still free.
    left: u64,
    /// With preemption, the cache this step's tokens may still take.
    free: f64,
    /// Prompt tokens taken, and Σ tokens × the mean context each attends to.
    tokens: u64,
    context_sum: f64,
    /// Requests whose prompt this step finishes.
    completed: Vec<usize>,
    /// Requests given a chunk.
    touched: usize,
}

impl Chunks {
    /// Take `chunk` tokens of request `id`'s prompt, in a step starting at `now`.
    fn take(&mut self, r: &mut Request, id: usize, chunk: u64, now: f64) {
        let start = (r.prefill_total - r.prompt_left) as f64;
        self.context_sum += chunk as f64 * (start + chunk as f64 / 2.0);
        self.tokens += chunk;
        self.left -= chunk;
        r.prompt_left -= chunk;
        if r.first_scheduled.is_none() {
            r.first_scheduled = Some(now);
        }
        if r.prompt_left == 0 {
            self.completed.push(id);
        }
        self.touched += 1;
    }
}

/// The state of one simulation: the server's queues and counters and what it measured.
struct Sim<'a> {
    config: &'a Config,
    step: &'a dyn Fn(Shape) -> f64,
    max_running: u64,
    prompt: u64,
    output: u64,
    /// Every running request decodes each step, so the budget covers them all.
    budget: u64,
    total: u64,
    kv_tokens: u64,
    per_step: f64,
    /// Shares of a token's KV in sliding-window layers, and of the output a footprint counts.
    local: f64,
    reserve: f64,
    closed: bool,
    requests: Vec<Request>,
    // Arrived, not yet admitted (or preempted): indices into `requests`, and the times
    // still to come.
    waiting: VecDeque<usize>,
    future: VecDeque<f64>,
    issued: u64,
    // Admitted requests still in their prompt, in admission order.
    prefilling: VecDeque<usize>,
    // Decoding requests by the decode counter at which they finish (and the request's
    // epoch then: a preempted request's entry goes stale).
    finishing: BinaryHeap<Reverse<(u64, usize, u32)>>,
    // Running requests in admission order, the newest last (finished ones are skipped):
    // the engine preempts from the end.
    admitted: Vec<usize>,
    running: u64,
    decoding: u64,
    // Σ footprint of the running requests, and whether the cache has room for a request.
    reserved: u64,
    peak_running: u64,
    kv_bound: bool,
    preemptions: u64,
    // Set when no step can run for want of cache: the newest running request is preempted.
    force_preempt: bool,
    // Decode steps so far; over the decoding requests, Σ (prefilled tokens + 1) and Σ
    // counter at their first token: their total context is Σ (prefilled + 1) + tokens
    // per step × (decoding × counter − Σ start).
    counter: u64,
    sum_base: f64,
    sum_start: f64,
    // Tokens the prefilling requests hold (their prompt chunks done so far).
    prefill_held: f64,
    now: f64,
    work: u64,
    ttft: Vec<f64>,
    tpot: Vec<f64>,
    queue: Vec<f64>,
    // Completion times, and the output tokens produced by each.
    done: Vec<f64>,
    produced_at_done: Vec<f64>,
    produced: f64,
    truncated: bool,
    // Lengths come from their own stream, so arrivals do not shift them.
    lengths: Rng,
}

impl<'a> Sim<'a> {
    /// An empty server with the run's arrivals scheduled.
    fn new(config: &'a Config, step: &'a dyn Fn(Shape) -> f64) -> Sim<'a> {
        let max_running = config.max_running.clamp(1, MAX_REQUESTS);
        let total = total_requests(config.arrivals);
        let future = first_arrivals(config.arrivals, total);
        let issued = future.len() as u64;
        Sim {
            config,
            step,
            max_running,
            prompt: config.prompt.max(1),
            output: config.output.max(1),
            budget: config.batch_tokens.max(max_running).max(1),
            total,
            kv_tokens: config.kv_tokens.max(1),
            per_step: if config.tokens_per_step.is_finite() {
                config.tokens_per_step.max(1.0)
            } else {
                1.0
            },
            local: share(config.kv_local_share, 0.0),
            reserve: share(config.output_reserve, 0.5),
            closed: matches!(config.arrivals, Arrivals::Closed { .. }),
            requests: Vec::with_capacity(total.min(1 << 20) as usize),
            waiting: VecDeque::new(),
            future,
            issued,
            prefilling: VecDeque::new(),
            finishing: BinaryHeap::new(),
            admitted: Vec::new(),
            running: 0,
            decoding: 0,
            reserved: 0,
            peak_running: 0,
            kv_bound: false,
            preemptions: 0,
            force_preempt: false,
            counter: 0,
            sum_base: 0.0,
            sum_start: 0.0,
            prefill_held: 0.0,
            now: 0.0,
            work: 0,
            ttft: Vec::new(),
            tpot: Vec::new(),
            queue: Vec::new(),
            done: Vec::new(),
            produced_at_done: Vec::new(),
            produced: 0.0,
            truncated: false,
            lengths: Rng(SEED ^ 0x00ff_00ff_00ff_00ff),
        }
    }

    /// Whether the cache has room for `r`'s footprint (reservation mode).
    fn room(&self, r: &Request) -> bool {
        self.running == 0 || self.reserved.saturating_add(r.footprint) <= self.kv_tokens
    }

    /// KV tokens counted for a request of `tokens` tokens.
    fn footprint(&self, tokens: u64) -> u64 {
        let (local, t) = (self.local, tokens as f64);
        (t * (1.0 - local) + t.min(self.config.kv_window as f64) * local).ceil() as u64
    }

    /// The cache the running requests hold (preemption mode): `tokens` over `n` requests,
    /// their sliding-window layers' share counted for at most `kv_window` tokens each.
    fn held_cache(&self, tokens: f64, n: u64) -> f64 {
        let local = self.local;
        tokens * (1.0 - local) + tokens.min(n as f64 * self.config.kv_window as f64) * local
    }

    /// With preemption, the cache the running requests hold now.
    /// (Its prompts in progress each count their sliding-window layers for at most the
    /// window, as the decoding requests do.)
    fn held(&self) -> f64 {
        self.held_cache(
            self.sum_base
                + self.per_step * (self.decoding as f64 * self.counter as f64 - self.sum_start),
            self.decoding,
        ) + self.held_cache(self.prefill_held, self.prefilling.len() as u64)
    }

    /// A length of mean `mean`: the mean, or an exponential draw when lengths vary.
    fn draw(&mut self, mean: u64) -> u64 {
        if self.config.varied {
            let x = -self.lengths.unit().ln() * mean as f64;
            (x.round().max(1.0)).min(mean as f64 * MAX_SPREAD) as u64
        } else {
            mean
        }
    }

    /// Advance to the next arrival; false when none is to come.
    fn wait_for_arrival(&mut self) -> bool {
        match self.future.front() {
            Some(&t) => {
                self.now = self.now.max(t);
                true
            }
            None => false,
        }
    }

    /// Requests finished at `now`: a closed loop's client sends its next one.
    fn reissue(&mut self) {
        if self.closed && self.issued < self.total {
            // Pushed in time order: `now` only grows.
            self.future.push_back(self.now);
            self.issued += 1;
        }
    }

    /// The engine steps, until nothing is left to run or the work bound is reached.
    fn run(&mut self) {
        loop {
            self.arrive();
            if self.running == 0 && self.waiting.is_empty() {
                if self.wait_for_arrival() {
                    continue;
                }
                break;
            }
            if self.work > MAX_WORK {
                self.truncated = true;
                break;
            }
            match self.step_once() {
                Next::Complete => {}
                Next::Again => continue,
                Next::Stop => break,
            }
            self.complete_decodes();
            if self.decoding == 0 {
                (self.sum_base, self.sum_start) = (0.0, 0.0);
            }
            if self.prefilling.is_empty() {
                self.prefill_held = 0.0;
            }
        }
    }

    /// Arrivals up to now join the queue.
    fn arrive(&mut self) {
        while self.future.front().is_some_and(|&t| t <= self.now) {
            let arrival = self.future.pop_front().unwrap_or(self.now);
            let (p, o) = (self.draw(self.prompt), self.draw(self.output));
            let footprint =
                self.footprint(p.saturating_add((o as f64 * self.reserve).ceil() as u64));
            self.requests.push(Request {
                arrival,
                footprint,
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
            self.waiting.push_back(self.requests.len() - 1);
            self.work += 1;
        }
    }

    /// Plan and run one engine step (or a run of identical decode steps).
    fn step_once(&mut self) -> Next {
        let preempted = self.preempt_for_growth();
        if self.decoding == 0 {
            (self.sum_base, self.sum_start) = (0.0, 0.0);
        }
        let decoding = self.decoding;
        let growth = decoding as f64 * self.per_step;
        let held_now = self.held();
        let fits = self.waiting.front().map(|&id| {
            self.admits(
                &self.requests[id],
                self.budget.saturating_sub(decoding),
                growth,
                held_now,
            )
        });
        let running = self.running;
        self.kv_bound |= running < self.max_running && (fits == Some(false) || preempted);
        let admit = running < self.max_running && fits == Some(true) && !preempted;
        let prompts_pending = !self.prefilling.is_empty() || admit;
        let decode_this_step = match self.config.scheduling {
            Scheduling::Mixed => decoding > 0,
            Scheduling::PrefillFirst => decoding > 0 && !prompts_pending,
        };
        let decode_context = if decoding > 0 {
            (self.sum_base
                + self.per_step * (decoding as f64 * self.counter as f64 - self.sum_start))
                / decoding as f64
        } else {
            0.0
        };
        self.drop_stale();

        if !prompts_pending {
            if self.decode_run(growth, held_now, decode_context) {
                Next::Complete
            } else if self.wait_for_arrival() {
                // Nothing decodes and nothing waits: wait for the next arrival.
                Next::Again
            } else {
                Next::Stop
            }
        } else {
            self.prompt_step(&StepPlan {
                decode_this_step,
                decode_context,
                growth,
                held_now,
                preempted,
            })
        }
    }

    /// Preemption: when the next step's decode tokens do not fit, the newest running
    /// request gives its cache back and waits to recompute (never the last one). Whether
    /// any was preempted.
    fn preempt_for_growth(&mut self) -> bool {
        let growth = self.decoding as f64 * self.per_step;
        let mut preempted = false;
        while self.config.preempt
            && self.running > 1
            && (self.force_preempt
                || self.decoding > 0 && self.held() + growth > self.kv_tokens as f64)
        {
            self.force_preempt = false;
            let Some(id) = self.admitted.pop() else { break };
            if !self.requests[id].running {
                continue;
            }
            self.preempt(id);
            preempted = true;
        }
        preempted
    }

    /// Preempt running request `id`: its cache is freed and it waits at the head of the
    /// queue to recompute.
    fn preempt(&mut self, id: usize) {
        let per_step = self.per_step;
        let r = &mut self.requests[id];
        if r.prompt_left == 0 {
            // Decoding: its tokens so far stay produced; its entry in `finishing`
            // goes stale.
            let steps = self.counter - r.start;
            r.generated =
                (r.generated + (per_step * steps as f64) as u64).min(r.output.saturating_sub(1));
            self.decoding -= 1;
            self.sum_base -= r.prefill_total as f64 + 1.0;
            self.sum_start -= r.start as f64;
        } else {
            self.prefill_held -= (r.prefill_total - r.prompt_left) as f64;
            self.prefilling.retain(|&p| p != id);
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
        self.running -= 1;
        self.waiting.push_front(id);
        self.preemptions += 1;
        self.work += 1;
    }

    /// Room for a waiting request's first chunk of at most `left` tokens, over `extra`
    /// tokens this step adds (preemption), or for its footprint.
    fn admits(&self, r: &Request, left: u64, extra: f64, held_now: f64) -> bool {
        if self.config.preempt {
            self.running == 0
                || held_now
                    + extra
                    + self.held_cache((r.cached + r.prompt_left.min(left)) as f64, 1)
                    <= self.kv_tokens as f64
        } else {
            self.room(r)
        }
    }

    /// Drop stale entries (preempted requests) from the top of `finishing`.
    fn drop_stale(&mut self) {
        while let Some(&Reverse((_, id, epoch))) = self.finishing.peek() {
            if self.requests[id].epoch == epoch {
                break;
            }
            self.finishing.pop();
        }
    }

    /// Only decodes: skip ahead to the next completion, or to the next arrival when it
    /// could be admitted. False when nothing decodes.
    fn decode_run(&mut self, growth: f64, held_now: f64, decode_context: f64) -> bool {
        let Some(&Reverse((finish, _, _))) = self.finishing.peek() else {
            return false;
        };
        let (decoding, per_step) = (self.decoding, self.per_step);
        let mut k = finish.saturating_sub(self.counter).max(1);
        if self.config.preempt && growth > 0.0 {
            // Up to the step whose tokens would not fit.
            let fit = ((self.kv_tokens as f64 - held_now) / growth)
                .floor()
                .max(1.0);
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
        if self.running < self.max_running
            && let Some(&t) = self.future.front()
        {
            let per_step = (self.step)(shape(1)).max(1e-9);
            let until = ((t - self.now) / per_step).ceil().max(1.0);
            if until < k as f64 {
                k = until as u64;
            }
        }
        self.now += k as f64 * (self.step)(shape(k)).max(1e-9);
        self.counter += k;
        self.produced += (decoding * k) as f64 * per_step;
        self.work += 1;
        true
    }

    /// One step with prompt chunks: running prompts first, in order, then admissions.
    fn prompt_step(&mut self, plan: &StepPlan) -> Next {
        let decoding = self.decoding;
        let decode_this_step = plan.decode_this_step;
        let mut c = Chunks {
            left: self.budget - if decode_this_step { decoding } else { 0 },
            // With preemption, the cache this step's tokens may still take.
            free: self.kv_tokens as f64
                - plan.held_now
                - if decode_this_step { plan.growth } else { 0.0 },
            tokens: 0,
            context_sum: 0.0,
            completed: Vec::new(),
            touched: 0,
        };
        self.chunk_running_prompts(&mut c);
        self.admit_waiting(&mut c, plan.preempted);
        self.work += 1 + c.touched as u64;
        if self.config.preempt && c.tokens == 0 && !decode_this_step && self.running > 1 {
            // Nothing fits: the prompts in progress wait for cache that only a
            // preemption frees.
            self.force_preempt = true;
            return Next::Again;
        }
        let shape = Shape {
            decode: if decode_this_step {
                decoding as f64
            } else {
                0.0
            },
            decode_context: plan.decode_context,
            prefill: c.tokens as f64,
            prefill_context: if c.tokens > 0 {
                c.context_sum / c.tokens as f64
            } else {
                0.0
            },
        };
        self.now += (self.step)(shape).max(1e-9);
        if decode_this_step {
            self.counter += 1;
            self.produced += decoding as f64 * self.per_step;
        }
        self.produced += c.completed.len() as f64;
        // Prompts done this step give their first token at its end (a preempted
        // request, its next token). Chunks go out in order, so the finished prompts
        // lead the queue.
        while self
            .prefilling
            .front()
            .is_some_and(|&id| self.requests[id].prompt_left == 0)
        {
            self.prefilling.pop_front();
        }
        self.finish_prompts(c.completed);
        Next::Complete
    }

    /// The next chunks of the prompts in progress, in order, while the budget (and with
    /// preemption the cache) lasts.
    fn chunk_running_prompts(&mut self, c: &mut Chunks) {
        for &id in self.prefilling.iter() {
            if c.left == 0 {
                break;
            }
            let r = &mut self.requests[id];
            let mut chunk = r.prompt_left.min(c.left);
            if self.config.preempt && self.running > 1 {
                chunk = chunk.min(c.free.max(0.0) as u64);
                if chunk == 0 {
                    break;
                }
                c.free -= chunk as f64;
            }
            c.take(r, id, chunk, self.now);
            self.prefill_held += chunk as f64;
        }
    }

    /// Admit waiting requests while the budget, a running slot and the cache allow, each
    /// with its first prompt chunk.
    fn admit_waiting(&mut self, c: &mut Chunks, preempted: bool) {
        while c.left > 0 && self.running < self.max_running && !preempted {
            let Some(&id) = self.waiting.front() else {
                break;
            };
            let fits = if self.config.preempt {
                self.running == 0
                    || (self.requests[id].cached + self.requests[id].prompt_left.min(c.left)) as f64
                        <= c.free.max(0.0)
            } else {
                self.room(&self.requests[id])
            };
            if !fits {
                self.kv_bound = true;
                break;
            }
            self.waiting.pop_front();
            self.running += 1;
            self.peak_running = self.peak_running.max(self.running);
            self.reserved += self.requests[id].footprint;
            self.prefilling.push_back(id);
            self.admitted.push(id);
            let r = &mut self.requests[id];
            r.running = true;
            self.prefill_held += r.cached as f64;
            c.free -= r.cached as f64;
            r.cached = 0;
            let chunk = r.prompt_left.min(c.left);
            c.free -= chunk as f64;
            c.take(r, id, chunk, self.now);
            self.prefill_held += chunk as f64;
        }
    }

    /// Requests whose prompt this step finished: their first (or next) token; each then
    /// completes or starts decoding.
    fn finish_prompts(&mut self, completed: Vec<usize>) {
        let now = self.now;
        for id in completed {
            let r = &mut self.requests[id];
            self.prefill_held -= r.prefill_total as f64;
            r.generated += 1;
            if r.first_token.is_none() {
                r.first_token = Some(now);
                self.ttft.push(now - r.arrival);
                self.queue
                    .push(r.first_scheduled.unwrap_or(now) - r.arrival);
            }
            let left = r.output.saturating_sub(r.generated);
            if left == 0 {
                self.running -= 1;
                self.reserved -= r.footprint;
                r.running = false;
                let first = r.first_token.unwrap_or(now);
                self.tpot.push(if r.output > 1 {
                    (now - first) / (r.output - 1) as f64
                } else {
                    0.0
                });
                self.done.push(now);
                self.produced_at_done.push(self.produced);
                self.reissue();
            } else {
                self.decoding += 1;
                r.start = self.counter;
                self.sum_base += r.prefill_total as f64 + 1.0;
                self.sum_start += self.counter as f64;
                let steps = (left as f64 / self.per_step).ceil().max(1.0) as u64;
                self.finishing
                    .push(Reverse((self.counter + steps, id, r.epoch)));
            }
        }
    }

    /// Completions at this counter.
    fn complete_decodes(&mut self) {
        while let Some(&Reverse((finish, id, epoch))) = self.finishing.peek() {
            if self.requests[id].epoch != epoch {
                self.finishing.pop();
                continue;
            }
            if finish > self.counter {
                break;
            }
            self.finishing.pop();
            let r = &mut self.requests[id];
            r.running = false;
            let first = r.first_token.unwrap_or(self.now);
            self.tpot.push((self.now - first) / (r.output - 1) as f64);
            self.done.push(self.now);
            self.produced_at_done.push(self.produced);
            self.running -= 1;
            self.reserved -= r.footprint;
            self.decoding -= 1;
            self.sum_base -= r.prefill_total as f64 + 1.0;
            self.sum_start -= r.start as f64;
            self.work += 1;
            self.reissue();
        }
    }

    /// Output tokens per second, as [`Outcome::throughput`] defines it.
    fn throughput(&self) -> f64 {
        let done = &self.done;
        match self.config.arrivals {
            // Steady state: the tokens produced between the end of the first wave's worth of
            // requests and the end of the second, while every client has one in flight.
            Arrivals::Closed { clients } => {
                let clients = clients.clamp(1, MAX_REQUESTS) as usize;
                match (done.get(clients - 1), done.get(2 * clients - 1)) {
                    (Some(&a), Some(&b)) if b > a => {
                        (self.produced_at_done[2 * clients - 1]
                            - self.produced_at_done[clients - 1])
                            / (b - a)
                    }
                    _ => {
                        let last = done.iter().copied().fold(0.0, f64::max);
                        if last > 0.0 {
                            self.produced / last
                        } else {
                            0.0
                        }
                    }
                }
            }
            _ => {
                let start = self.requests.first().map_or(0.0, |r| r.arrival);
                let last = done.iter().copied().fold(0.0, f64::max);
                if last > start {
                    self.produced / (last - start)
                } else {
                    0.0
                }
            }
        }
    }

    /// What the run measured.
    fn outcome(self) -> Outcome {
        let throughput = self.throughput();
        let sorted = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v
        };
        let ttft = sorted(self.ttft);
        let tpot = sorted(self.tpot);
        Outcome {
            throughput,
            ttft_mean: mean(&ttft),
            ttft_p50: percentile(&ttft, 0.5),
            ttft_p99: percentile(&ttft, 0.99),
            tpot_mean: mean(&tpot),
            tpot_p50: percentile(&tpot, 0.5),
            tpot_p99: percentile(&tpot, 0.99),
            queue_mean: mean(&self.queue),
            completed: self.done.len() as u64,
            peak_running: self.peak_running,
            kv_bound: self.kv_bound,
            preemptions: self.preemptions,
            truncated: self.truncated,
        }
    }
}

/// What the loop does after a step.
enum Next {
    /// Handle the completions at the decode counter, then go on.
    Complete,
    /// Go straight to the next turn.
    Again,
    /// The run is over.
    Stop,
}

/// What the planning of a step with prompts decided.
struct StepPlan {
    decode_this_step: bool,
    decode_context: f64,
    /// Decode tokens the step adds to the cache.
    growth: f64,
    /// With preemption, the cache the running requests hold.
    held_now: f64,
    /// Whether a request was preempted before the step (none is admitted then).
    preempted: bool,
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
