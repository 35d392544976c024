//! Which vector instructions the heavy kernels (the matrix product behind Conv, Gemm and
//! MatMul, the depthwise convolution) are compiled for, chosen once at run time.
//!
//! The kernels are written once, as plain Rust loops over fixed-size register tiles that the
//! compiler vectorises. On x86-64 the same code is also compiled inside functions with
//! `#[target_feature(enable = "avx2")]` and `#[target_feature(enable = "avx512f")]`, and the CPU
//! is asked once (`cpuid`, and `xgetbv` for the operating system's support of the wider
//! registers) which ones it can run. Every other target (a Cortex-M, AArch64) runs the portable
//! build. A build with those features on from the start (`-C target-cpu=native`) uses them
//! without asking.
//!
//! **Every level computes the same bits.** The loops never reassociate a sum: every output
//! element of a matrix product is `((0 + a0 b0) + a1 b1) + ...` in increasing `k`, one rounded
//! multiply and one rounded add per term (Rust never contracts them into a fused multiply-add),
//! whatever the tile sizes, the vector width or the blocking of `k` (a block's partial sums go
//! through memory and are picked up exactly). Wider levels only do more elements at a time, so
//! a network gives identical results on every x86-64 machine, and on a microcontroller.
//!
//! This is the one module of the crate with `unsafe` code: calling a `#[target_feature]`
//! function, which is sound only on a CPU that has the feature (checked by [`level`] before any
//! such call), and `xgetbv`, which is available when `cpuid` says the OS enabled it.

#[cfg(target_arch = "x86_64")]
use core::sync::atomic::{AtomicU8, Ordering};

/// A set of vector instructions the kernels can be compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The target's baseline (SSE2 on x86-64; scalar on a Cortex-M4F).
    Portable,
    /// x86-64 AVX2 (256-bit vectors).
    Avx2,
    /// x86-64 AVX-512F (512-bit vectors).
    Avx512,
}

/// `0`: not asked yet; otherwise `1 + Level as u8`.
#[cfg(target_arch = "x86_64")]
static DETECTED: AtomicU8 = AtomicU8::new(0);
/// The most a caller allows ([`limit`]), as `Level as u8`.
#[cfg(target_arch = "x86_64")]
static LIMIT: AtomicU8 = AtomicU8::new(Level::Avx512 as u8);

#[cfg(target_arch = "x86_64")]
fn from_u8(v: u8) -> Level {
    match v {
        2 => Level::Avx512,
        1 => Level::Avx2,
        _ => Level::Portable,
    }
}

/// What this CPU (and its operating system) supports, asked once.
pub fn detected() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        let cached = DETECTED.load(Ordering::Relaxed);
        if cached != 0 {
            return from_u8(cached - 1);
        }
        let level = ask_cpu();
        DETECTED.store(level as u8 + 1, Ordering::Relaxed);
        level
    }
    #[cfg(not(target_arch = "x86_64"))]
    Level::Portable
}

/// The level the kernels run at: [`detected`], capped by [`limit`].
#[inline]
pub fn level() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        detected().min(from_u8(LIMIT.load(Ordering::Relaxed)))
    }
    #[cfg(not(target_arch = "x86_64"))]
    Level::Portable
}

/// Caps the level the kernels use from now on (all threads): for tests and benchmarks of the
/// narrower builds, which compute the same bits. `limit(Level::Avx512)` lifts the cap.
pub fn limit(most: Level) {
    #[cfg(target_arch = "x86_64")]
    LIMIT.store(most as u8, Ordering::Relaxed);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = most;
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code, unused_unsafe)] // `__cpuid` is safe on recent compilers, unsafe on older
fn ask_cpu() -> Level {
    use core::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};
    if cfg!(target_feature = "avx512f") {
        return Level::Avx512;
    }
    // SAFETY: `cpuid` exists on every x86-64 CPU.
    let leaf0 = unsafe { __cpuid(0) };
    // SAFETY: as above.
    let leaf1 = unsafe { __cpuid(1) };
    let osxsave = leaf1.ecx & (1 << 27) != 0;
    let avx = leaf1.ecx & (1 << 28) != 0;
    if leaf0.eax < 7 || !osxsave || !avx {
        return Level::Portable;
    }
    // SAFETY: CPUID.1:ECX.OSXSAVE (checked above) says the OS enabled XSAVE, so `xgetbv` exists.
    let xcr0 = unsafe { _xgetbv(0) };
    // SAFETY: `cpuid` exists on every x86-64 CPU; leaf 7 exists (checked above).
    let leaf7 = unsafe { __cpuid_count(7, 0) };
    let ymm = xcr0 & 0b110 == 0b110; // SSE and AVX state saved by the OS
    let zmm = xcr0 & 0b1110_0110 == 0b1110_0110; // and the opmask and upper ZMM state
    if zmm && leaf7.ebx & (1 << 16) != 0 {
        Level::Avx512
    } else if ymm && leaf7.ebx & (1 << 5) != 0 {
        Level::Avx2
    } else {
        Level::Portable
    }
}

/// `dispatch!(portable, avx2, avx512, (args..))`: a `match` on [`level`] that calls
/// `avx512(args..)` or `avx2(args..)` (the same `#[inline(always)]` body wrapped in a function
/// with `#[target_feature(enable = "avx512f")]` or `"avx2"`) on x86-64 when the CPU has the
/// feature, and `portable(args..)` otherwise. The `unsafe` call is sound because [`level`] never
/// returns a level the CPU lacks.
macro_rules! dispatch {
    ($portable:expr, $avx2:path, $avx512:path, ($($arg:expr),*)) => {{
        match $crate::simd::level() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `level` returns `Avx512` only when the CPU and OS support AVX-512F.
            $crate::simd::Level::Avx512 => {
                #[allow(unsafe_code)]
                unsafe {
                    $avx512($($arg),*)
                }
            }
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `level` returns `Avx2` only when the CPU and OS support AVX2.
            $crate::simd::Level::Avx2 => {
                #[allow(unsafe_code)]
                unsafe {
                    $avx2($($arg),*)
                }
            }
            _ => $portable($($arg),*),
        }
    }};
}
pub(crate) use dispatch;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_is_cached_and_capped() {
        let first = detected();
        assert_eq!(detected(), first);
        limit(Level::Portable);
        assert_eq!(level(), Level::Portable);
        limit(Level::Avx512);
        assert_eq!(level(), first);
    }
}
