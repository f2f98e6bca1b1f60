//! Fixed-size log-linear histograms of durations, and the four a run keeps per thread.
//!
//! Recording is a few shifts and an add into an array sized when the histogram is made, so
//! the kernel records at every job boundary without allocating, in virtual and in real time.

use std::time::Duration;

/// Sub-buckets per power of two: a bucket spans 1/8 of its power of two, so a percentile
/// read from one is at most 12.5 % above the value it stands for.
const SUB_BITS: u32 = 3;
const SUB: u64 = 1 << SUB_BITS;
/// The largest power of two cut in buckets of its own: values of 2^41 ns (about 36 minutes)
/// and more share one last bucket, whose top is the largest value recorded.
const TOP_POWER: u32 = 40;

/// How many buckets a [`Histogram`] has.
///
/// ```
/// assert_eq!(tempi::HISTOGRAM_BUCKETS, 313);
/// ```
pub const HISTOGRAM_BUCKETS: usize = (SUB + (TOP_POWER as u64 + 1 - SUB_BITS as u64) * SUB + 1) as usize;

/// The bucket of a value in nanoseconds: values below 8 ns have a bucket each; above, each
/// power of two `[2^e, 2^(e+1))` is cut in 8 equal buckets.
fn bucket_of(ns: u64) -> usize {
    if ns < SUB {
        return ns as usize;
    }
    let e = 63 - ns.leading_zeros();
    if e > TOP_POWER {
        return HISTOGRAM_BUCKETS - 1;
    }
    let sub = (ns >> (e - SUB_BITS)) & (SUB - 1);
    (SUB + u64::from(e - SUB_BITS) * SUB + sub) as usize
}

/// The largest value, in nanoseconds, that falls in bucket `b`.
fn bucket_top(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let e = (b - SUB) / SUB + u64::from(SUB_BITS);
    let sub = (b - SUB) % SUB;
    let width = 1u64 << (e - u64::from(SUB_BITS));
    (1u64 << e) + (sub + 1) * width - 1
}

/// A histogram of durations: exact count, sum, minimum and maximum, and counts in
/// [`HISTOGRAM_BUCKETS`] log-linear buckets (each an eighth of a power of two of
/// nanoseconds).
///
/// A percentile is the top of the bucket that holds the value of that rank, never above the
/// largest value recorded nor below the smallest: exact when every value of the bucket is the
/// same (a run whose jobs all respond in 4 ms reads 4 ms at every percentile), otherwise at most
/// 12.5 % above the exact value.
///
/// ```
/// use std::time::Duration;
/// let mut h = tempi::Histogram::new();
/// for ms in [1, 2, 3, 4] {
///     h.record(Duration::from_millis(ms));
/// }
/// assert_eq!(h.count(), 4);
/// assert_eq!(h.max(), Some(Duration::from_millis(4)));
/// assert_eq!(h.percentile(100.0), Some(Duration::from_millis(4)));
/// // The lowest rank reads its bucket's top: 1 ms lies in [2^19 + 7/8 of 2^19, 2^20) ns.
/// assert_eq!(h.percentile(0.0), Some(Duration::from_nanos(1_048_575)));
/// // The median is the second value's bucket: 2 ms lies in [2^20 + 7/8 of 2^20, 2^21) ns.
/// assert_eq!(h.percentile(50.0), Some(Duration::from_nanos(2_097_151)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    /// Counts per bucket; empty (no allocation) for a histogram made by [`Histogram::empty`].
    buckets: Box<[u32]>,
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

impl Histogram {
    /// A histogram with its buckets, ready to record.
    ///
    /// ```
    /// assert_eq!(tempi::Histogram::new().count(), 0);
    /// ```
    pub fn new() -> Histogram {
        Histogram { buckets: vec![0; HISTOGRAM_BUCKETS].into_boxed_slice(), ..Histogram::empty() }
    }

    /// A histogram without buckets (it allocates nothing): it keeps count, sum, minimum and
    /// maximum, and its percentiles are `None`.
    ///
    /// ```
    /// let mut h = tempi::Histogram::empty();
    /// h.record(std::time::Duration::from_millis(1));
    /// assert_eq!((h.count(), h.percentile(50.0)), (1, None));
    /// ```
    pub fn empty() -> Histogram {
        Histogram { buckets: Box::new([]), count: 0, sum_ns: 0, min_ns: u64::MAX, max_ns: 0 }
    }

    /// Record one value.
    ///
    /// ```
    /// let mut h = tempi::Histogram::new();
    /// h.record(std::time::Duration::from_micros(7));
    /// assert_eq!(h.min(), Some(std::time::Duration::from_micros(7)));
    /// ```
    #[inline]
    pub fn record(&mut self, d: Duration) {
        self.record_nanos(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    }

    /// [`Histogram::record`] of a value already in nanoseconds, as the kernel has its
    /// instants: no conversion through [`Duration`] on the job path.
    #[inline]
    pub(crate) fn record_nanos(&mut self, ns: u64) {
        self.count += 1;
        self.sum_ns += u128::from(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        if let Some(c) = self.buckets.get_mut(bucket_of(ns)) {
            *c = c.saturating_add(1);
        }
    }

    /// How many values were recorded.
    ///
    /// ```
    /// assert_eq!(tempi::Histogram::new().count(), 0);
    /// ```
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The smallest value recorded.
    ///
    /// ```
    /// assert_eq!(tempi::Histogram::new().min(), None);
    /// ```
    pub fn min(&self) -> Option<Duration> {
        (self.count > 0).then(|| Duration::from_nanos(self.min_ns))
    }

    /// The largest value recorded.
    ///
    /// ```
    /// assert_eq!(tempi::Histogram::new().max(), None);
    /// ```
    pub fn max(&self) -> Option<Duration> {
        (self.count > 0).then(|| Duration::from_nanos(self.max_ns))
    }

    /// The spread of the values recorded: the largest minus the smallest (their jitter).
    ///
    /// ```
    /// let mut h = tempi::Histogram::new();
    /// assert_eq!(h.spread(), None);
    /// h.record(std::time::Duration::from_millis(3));
    /// h.record(std::time::Duration::from_millis(5));
    /// assert_eq!(h.spread(), Some(std::time::Duration::from_millis(2)));
    /// ```
    pub fn spread(&self) -> Option<Duration> {
        (self.count > 0).then(|| Duration::from_nanos(self.max_ns - self.min_ns))
    }

    /// The sum of the values recorded (saturating at [`Duration::MAX`]).
    ///
    /// ```
    /// let mut h = tempi::Histogram::new();
    /// h.record(std::time::Duration::from_millis(1));
    /// h.record(std::time::Duration::from_millis(3));
    /// assert_eq!(h.sum(), std::time::Duration::from_millis(4));
    /// ```
    pub fn sum(&self) -> Duration {
        let secs = u64::try_from(self.sum_ns / 1_000_000_000).unwrap_or(u64::MAX);
        Duration::new(secs, (self.sum_ns % 1_000_000_000) as u32)
    }

    /// The mean of the values recorded.
    ///
    /// ```
    /// let mut h = tempi::Histogram::new();
    /// h.record(std::time::Duration::from_millis(1));
    /// h.record(std::time::Duration::from_millis(3));
    /// assert_eq!(h.mean(), Some(std::time::Duration::from_millis(2)));
    /// ```
    pub fn mean(&self) -> Option<Duration> {
        (self.count > 0)
            .then(|| Duration::from_nanos((self.sum_ns / u128::from(self.count)).try_into().unwrap_or(u64::MAX)))
    }

    /// The `p`-th percentile (`p` in 0..=100, clamped): the top of the bucket holding the
    /// value of rank `ceil(p/100 × count)` (rank 1 for `p` = 0), clamped to the smallest and
    /// largest values recorded. `None` when nothing was recorded or the histogram has no
    /// buckets.
    ///
    /// ```
    /// let mut h = tempi::Histogram::new();
    /// for _ in 0..10 {
    ///     h.record(std::time::Duration::from_millis(4));
    /// }
    /// assert_eq!(h.percentile(99.9), Some(std::time::Duration::from_millis(4)));
    /// ```
    pub fn percentile(&self, p: f64) -> Option<Duration> {
        if self.count == 0 || self.buckets.is_empty() {
            return None;
        }
        let p = if p.is_nan() { 100.0 } else { p.clamp(0.0, 100.0) };
        let rank = ((p / 100.0 * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (b, &n) in self.buckets.iter().enumerate() {
            seen += u64::from(n);
            if seen >= rank {
                let top = if b == HISTOGRAM_BUCKETS - 1 { self.max_ns } else { bucket_top(b) };
                return Some(Duration::from_nanos(top.clamp(self.min_ns, self.max_ns)));
            }
        }
        Some(Duration::from_nanos(self.max_ns))
    }

    /// The buckets that hold values: `(lowest, highest, count)` in nanoseconds, lowest first.
    ///
    /// ```
    /// let mut h = tempi::Histogram::new();
    /// h.record(std::time::Duration::from_nanos(5));
    /// h.record(std::time::Duration::from_nanos(5));
    /// assert_eq!(h.buckets().collect::<Vec<_>>(), [(5, 5, 2)]);
    /// ```
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.buckets.iter().enumerate().filter(|(_, n)| **n > 0).map(|(b, &n)| {
            let low = if b == 0 { 0 } else { bucket_top(b - 1) + 1 };
            let high = if b == HISTOGRAM_BUCKETS - 1 { u64::MAX } else { bucket_top(b) };
            (low, high, u64::from(n))
        })
    }
}

/// The distributions a run keeps for one thread, one value per job.
///
/// - `response`: release to completion, of each completed job;
/// - `start_latency`: release to the job's first dispatch, of each job that ran;
/// - `tardiness`: how late each completed job with a deadline finished (0 when on time);
/// - `execution`: the CPU time each completed job consumed.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// let t = rt.spawn(ThreadSpec::new("p").periodic(Duration::from_millis(10)), |cx| {
///     cx.work(Duration::from_millis(3))
/// }).unwrap();
/// let out = rt.run_until(Time::from_millis(100)).unwrap();
/// let d = &out.thread(t).unwrap().distributions;
/// assert_eq!(d.response.count(), 10);
/// assert_eq!(d.response.percentile(99.0), Some(Duration::from_millis(3)));
/// assert_eq!(d.start_latency.max(), Some(Duration::ZERO));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadDistributions {
    /// Response times of completed jobs.
    pub response: Histogram,
    /// Release to first dispatch, of each job that ran.
    pub start_latency: Histogram,
    /// Lateness past the deadline of completed jobs that have one (0 when on time).
    pub tardiness: Histogram,
    /// CPU time of each completed job.
    pub execution: Histogram,
}

impl ThreadDistributions {
    /// Response-time jitter: the longest response minus the shortest, over the completed
    /// jobs; `None` before a job completes. Read from what is recorded anyway (the response
    /// histogram's exact minimum and maximum), so nothing more runs per job.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut d = tempi::ThreadDistributions::default();
    /// d.response.record(Duration::from_millis(4));
    /// d.response.record(Duration::from_millis(7));
    /// assert_eq!(d.response_jitter(), Some(Duration::from_millis(3)));
    /// ```
    pub fn response_jitter(&self) -> Option<Duration> {
        self.response.spread()
    }

    /// Start jitter: the largest start latency (release to first dispatch) minus the
    /// smallest, over the jobs that ran; `None` before a job runs.
    ///
    /// ```
    /// assert_eq!(tempi::ThreadDistributions::default().start_jitter(), None);
    /// ```
    pub fn start_jitter(&self) -> Option<Duration> {
        self.start_latency.spread()
    }

    /// Four histograms without buckets: nothing allocated (see [`Histogram::empty`]).
    ///
    /// ```
    /// assert_eq!(tempi::ThreadDistributions::empty().response.percentile(50.0), None);
    /// ```
    pub fn empty() -> ThreadDistributions {
        ThreadDistributions {
            response: Histogram::empty(),
            start_latency: Histogram::empty(),
            tardiness: Histogram::empty(),
            execution: Histogram::empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_falls_in_the_bucket_whose_range_holds_it() {
        let mut last_top = None;
        for b in 0..HISTOGRAM_BUCKETS - 1 {
            let top = bucket_top(b);
            if let Some(prev) = last_top {
                assert_eq!(bucket_of(prev + 1), b, "the first value after bucket {}", b - 1);
            }
            assert_eq!(bucket_of(top), b);
            last_top = Some(top);
        }
        assert_eq!(bucket_of(u64::MAX), HISTOGRAM_BUCKETS - 1);
        assert_eq!(bucket_of((1 << 41) - 1), HISTOGRAM_BUCKETS - 2);
    }

    #[test]
    fn a_bucket_is_at_most_an_eighth_of_its_values() {
        for b in SUB as usize..HISTOGRAM_BUCKETS - 1 {
            let low = bucket_top(b - 1) + 1;
            let width = bucket_top(b) - low + 1;
            assert!(width * 8 <= low, "bucket {b}: [{low}, {}]", bucket_top(b));
        }
    }
}
