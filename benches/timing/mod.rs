//! How a Rust bench times a call: the median over runs, by a clock of its choice. CPU time
//! rather than wall time on this shared machine; `clock_gettime` rather than
//! `/proc/thread-self/schedstat`, which moves in whole scheduler ticks on this VM.

/// Seconds of `clock` so far: `libc::CLOCK_THREAD_CPUTIME_ID` (this thread's CPU time),
/// `libc::CLOCK_PROCESS_CPUTIME_ID` (all threads') or `libc::CLOCK_MONOTONIC` (wall time).
pub fn clock_secs(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime failed");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The median of `runs` timings of `f` by `clock` (seconds).
pub fn median_secs(runs: usize, clock: impl Fn() -> f64, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = clock();
            f();
            clock() - start
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}
