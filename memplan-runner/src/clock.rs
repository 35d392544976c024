//! The clock the runner measures with: the process's CPU time (`CLOCK_PROCESS_CPUTIME_ID`), which
//! the run's timing line, `--bench` and the heap interpreter's per-node profile all read. These
//! machines are shared; wall time would count the neighbours.

/// The process's CPU time in seconds (wall time where there is no such clock).
pub(crate) fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable `timespec` for the call's duration; `clock_gettime`
        // writes only it.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &raw mut ts) };
        if rc == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}
