//! Wall-clock timing helpers and thread pools for single-thread and all-core runs.

use std::time::{Duration, Instant};

/// Runs `f` at least once and again while the total stays under `budget` (at most `max_reps`
/// runs); returns the fastest run in seconds and the last result.
pub fn best_of<T>(budget: Duration, max_reps: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let start = Instant::now();
    let mut best = f64::INFINITY;
    let mut reps = 0;
    loop {
        let t0 = Instant::now();
        let out = f();
        best = best.min(t0.elapsed().as_secs_f64());
        reps += 1;
        if reps >= max_reps.max(1) || start.elapsed() >= budget {
            return (best, out);
        }
        drop(out);
    }
}

/// Throughput in GB/s (1e9 bytes per second).
pub fn gbps(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 / secs / 1e9
    } else {
        f64::NAN
    }
}

/// A rayon pool of `threads` threads.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .expect("building a rayon thread pool")
}

/// The shared deterministic generator, for random row indices.
pub use ibp_codec::prng::SplitMix64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_of_runs_at_least_once_and_respects_max_reps() {
        let mut n = 0;
        let (secs, _) = best_of(Duration::from_secs(10), 3, || n += 1);
        assert_eq!(n, 3);
        assert!(secs >= 0.0);
        let mut m = 0;
        best_of(Duration::ZERO, 5, || m += 1);
        assert_eq!(m, 1);
    }
}
